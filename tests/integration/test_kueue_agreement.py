"""Agreement with real Kueue v0.19.2: the scenario in ``kueue_scenario.py`` (60 Jobs, three
ClusterQueues, a cohort with borrowing, StrictFIFO and BestEffortFIFO, two priorities, quotas on
two DeviceClasses, pods that finish and free quota) run through Kueue + kube-scheduler + the job
and resourceclaim controllers, and through drakit's admission engine.

The real run's trace is the golden file ``fixtures/kueue_agreement.json`` (``DRAKIT_RECORD=1``
rewrites it); a rerun must reproduce it, and the engine must reproduce it without a cluster.
"""

from __future__ import annotations

import os

import pytest

from tests.integration.kube import Cluster
from tests.integration.kueue import KueueManager
from tests.integration.kueue_scenario import (
    GOLDEN,
    QUEUES,
    RealKueueDriver,
    compare,
    cq_name,
    engine_trace,
    jobs,
    read_golden,
    scenario_installed,
    write_golden,
)

pytestmark = pytest.mark.cluster


def test_scenario_shape() -> None:
    """What the issue asks of the scenario, checked on the data rather than trusted."""
    all_jobs = jobs()
    assert len(all_jobs) >= 60
    assert {q.strategy for q in QUEUES} == {"StrictFIFO", "BestEffortFIFO"}
    assert len({q.cohort for q in QUEUES if q.cohort}) == 1
    assert any(q.borrowing_limit for q in QUEUES)
    assert len({j.priority for j in all_jobs}) == 2
    assert len({j.device_class for j in all_jobs}) == 2


def test_real_kueue_reproduces_golden(cluster: Cluster, kueue: KueueManager) -> None:
    with scenario_installed(cluster):
        trace = RealKueueDriver(cluster, kueue.log_file).run()
    assert kueue.alive(), kueue.log_tail()
    if os.environ.get("DRAKIT_RECORD") == "1" or not GOLDEN.exists():
        write_golden(trace)
        if not GOLDEN.exists():
            pytest.fail(f"could not write {GOLDEN.name}", pytrace=False)
    golden = read_golden()
    # Every Job but the one that can never fit was admitted and finished.
    assert trace.pending == {
        cq_name(q.name): (["inference-huge"] if q.name == "inference" else []) for q in QUEUES
    }
    differences = [d for d in compare(golden, trace) if d.kind != "order-across-queues"]
    assert not differences, "real Kueue did not reproduce its own golden trace:\n" + "\n".join(
        map(str, differences)
    )


def test_engine_agrees_with_real_kueue() -> None:
    """drakit's engine on the same scenario against the recorded real trace (no cluster needed)."""
    if not GOLDEN.exists():
        pytest.skip(f"{GOLDEN.name} not recorded yet: run test_real_kueue_reproduces_golden")
    golden = read_golden()
    differences = compare(golden, engine_trace(golden.created))
    assert not differences, "engine disagrees with real Kueue:\n" + "\n".join(map(str, differences))
