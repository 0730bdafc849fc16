"""Live queue explain from Workload status: table-driven on Kueue-shaped objects, plus the
objects recorded from real Kueue v0.19.2 (``tests/integration/fixtures/kueue_workloads.json``,
written by ``tests/integration/test_kueue_explain.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drakit.queues.workload_status import LiveVerdict, explain_workload

RECORDED = Path(__file__).resolve().parents[2] / "integration" / "fixtures" / "kueue_workloads.json"
RES = "example.com/gpu-48g"
MAPPINGS = [{"name": RES, "deviceClassNames": ["gpu-48g"]}]


def _cq(
    strategy: str = "StrictFIFO", total: str = "4", borrowed: str = "0", stop: str | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "cohortName": "research",
        "queueingStrategy": strategy,
        "resourceGroups": [
            {"coveredResources": [RES], "flavors": [{"name": "default", "resources": [
                {"name": RES, "nominalQuota": "4", "borrowingLimit": "2"}]}]}
        ],
    }  # fmt: skip
    if stop:
        spec["stopPolicy"] = stop
    return {
        "metadata": {"name": "training"},
        "spec": spec,
        "status": {
            "flavorsUsage": [
                {"name": "default", "resources": [{"name": RES, "total": total, "borrowed": borrowed}]}
            ]
        },
    }


_LQ = {"metadata": {"name": "lq", "namespace": "team"}, "spec": {"clusterQueue": "training"}}


def _wl(job: str, *, created: str, priority: int = 0, conditions: list[dict[str, Any]] | None = None,
        admitted: str | None = None, requests: str = "2", queue: str = "lq") -> dict[str, Any]:  # fmt: skip
    status: dict[str, Any] = {
        "conditions": conditions or [],
        "resourceRequests": [{"name": "main", "resources": {RES: requests}}],
    }
    if admitted:
        status["admission"] = {
            "clusterQueue": "training",
            "podSetAssignments": [
                {"name": "main", "flavors": {RES: "default"}, "resourceUsage": {RES: admitted}}
            ],
        }
    return {
        "metadata": {"name": f"job-{job}-abcde", "namespace": "team", "creationTimestamp": created,
                     "ownerReferences": [{"kind": "Job", "name": job}]},
        "spec": {"queueName": queue, "priority": priority},
        "status": status,
    }  # fmt: skip


def _cond(kind: str, status: str, reason: str, message: str = "") -> dict[str, Any]:
    return {"type": kind, "status": status, "reason": reason, "message": message}


RESERVED = _cond("QuotaReserved", "True", "QuotaReserved")
PENDING = _cond(
    "QuotaReserved", "False", "Pending",
    f"couldn't assign flavors to pod set main: insufficient unused quota for {RES} in flavor default, 2 more needed",
)  # fmt: skip
# The shape real Kueue v0.19.2 writes (see the recorded fixture).
UNMAPPED_MSG = (
    "spec.podSets[0].template.spec.resourceClaims[0].resourceClaimTemplateName: Not found: "
    '"DeviceClass gpu-odd is not mapped in DRA configuration for podset main"'
)
PARKED = [
    _cond("QuotaReserved", "False", "Inadmissible", UNMAPPED_MSG),
    _cond("Requeued", "False", "Inadmissible", UNMAPPED_MSG),
]

A = _wl("a", created="2026-12-01T10:00:00Z", conditions=[RESERVED], admitted="2")
B = _wl("b", created="2026-12-01T10:00:01Z", conditions=[RESERVED], admitted="2")
HEAD = _wl("head", created="2026-12-01T10:00:02Z", conditions=[PENDING])
YOUNG = _wl("young", created="2026-12-01T10:00:03Z", requests="1")
URGENT = _wl("urgent", created="2026-12-01T10:00:09Z", priority=1000, requests="1")


@pytest.mark.parametrize(
    ("target", "others", "cq", "mappings", "verdict", "expect"),
    [
        pytest.param(A, [B], _cq(), MAPPINGS, LiveVerdict.ADMITTED, "holding 2 × gpu-48g", id="admitted"),
        pytest.param(
            HEAD, [A, B, YOUNG], _cq(), MAPPINGS, LiveVerdict.WAITING_FOR_QUOTA,
            "ClusterQueue training: quota 4 × gpu-48g, 4 used by jobs a, b", id="quota-full",
        ),
        pytest.param(
            YOUNG, [A, B, HEAD], _cq(), MAPPINGS, LiveVerdict.BEHIND_OTHERS, "1 ahead of you (StrictFIFO)",
            id="strict-fifo-behind-head",
        ),
        pytest.param(
            YOUNG, [A, B, HEAD, URGENT], _cq(), MAPPINGS, LiveVerdict.BEHIND_OTHERS, "2 ahead of you (StrictFIFO)",
            id="younger-but-higher-priority-is-ahead",
        ),
        pytest.param(
            URGENT, [A, B, HEAD, YOUNG], _cq("BestEffortFIFO"), MAPPINGS, LiveVerdict.PENDING, "ClusterQueue training",
            id="highest-priority-nothing-ahead",
        ),
        pytest.param(
            HEAD, [A, B], _cq(total="6", borrowed="2"), MAPPINGS, LiveVerdict.WAITING_FOR_QUOTA,
            "(2 borrowed from cohort research), may borrow up to 2", id="borrowed",
        ),
        pytest.param(
            HEAD, [A, B], _cq(), [], LiveVerdict.WAITING_FOR_QUOTA, f"quota 4 × {RES}",
            id="no-mappings-known-shows-resource-name",
        ),
        pytest.param(
            _wl("parked", created="2026-12-01T10:00:05Z", conditions=PARKED), [], _cq(), MAPPINGS,
            LiveVerdict.INADMISSIBLE, "refused its device requests", id="unmapped-class",
        ),
        pytest.param(
            _wl("parked", created="2026-12-01T10:00:05Z", conditions=PARKED), [], _cq(),
            [*MAPPINGS, {"name": "example.com/odd", "deviceClassNames": ["gpu-odd"]}],
            LiveVerdict.STUCK_INADMISSIBLE, "mapped now", id="kueue-13969-after-the-fix",
        ),
        pytest.param(
            _wl("held", created="2026-12-01T10:00:05Z"), [], _cq(stop="Hold"), MAPPINGS, LiveVerdict.QUEUE_STOPPED,
            "stopPolicy Hold", id="queue-held",
        ),
        pytest.param(
            _wl("lost", created="2026-12-01T10:00:05Z", queue="nope"), [], _cq(), MAPPINGS, LiveVerdict.NO_QUEUE,
            "LocalQueue 'nope'", id="no-local-queue",
        ),
        pytest.param(
            _wl("done", created="2026-12-01T10:00:05Z", conditions=[_cond("Finished", "True", "Succeeded", "Job finished successfully")]),
            [], _cq(), MAPPINGS, LiveVerdict.FINISHED, "finished: Job finished successfully", id="finished",
        ),
    ],
)  # fmt: skip
def test_explain(
    target: dict[str, Any], others: list[dict[str, Any]], cq: dict[str, Any], mappings: list[dict[str, Any]],
    verdict: LiveVerdict, expect: str,
) -> None:  # fmt: skip
    got = explain_workload(target, cluster_queues=[cq], local_queues=[_LQ], workloads=[target, *others],
                           device_class_mappings=mappings)  # fmt: skip
    assert got.verdict is verdict, got.text()
    assert expect in got.text(), got.text()
    assert got.to_json()["verdict"] == verdict.value
    assert "\n" not in got.summary


def test_stuck_state_has_remedy_and_keeps_kueues_message() -> None:
    parked = _wl("parked", created="2026-12-01T10:00:05Z", conditions=PARKED)
    fixed = [*MAPPINGS, {"name": "example.com/odd", "deviceClassNames": ["gpu-odd"]}]
    got = explain_workload(parked, cluster_queues=[_cq()], local_queues=[_LQ], device_class_mappings=fixed)
    assert got.kueue_message == UNMAPPED_MSG
    assert "kubectl delete workload -n team job-parked-abcde" in got.remedy and "restart the Kueue manager" in got.remedy


def test_verdict_values_are_stable() -> None:
    """Stored values: changing one is a migration, not a refactor."""
    assert [v.value for v in LiveVerdict] == [
        "Admitted", "Finished", "WaitingForQuota", "BehindOthers", "Inadmissible", "StuckInadmissible",
        "QueueStopped", "NoQueue", "Pending", "NoWorkload", "NotManagedByKueue",
    ]  # fmt: skip


@settings(derandomize=True, max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 59)), min_size=1, max_size=12, unique=True))
def test_ahead_count_is_queue_order(entries: list[tuple[int, int]]) -> None:
    """ "N ahead of you" is the number of pending workloads Kueue orders first: higher priority,
    then older — checked against a direct sort for arbitrary queues."""
    pending = [
        _wl(f"w{i}", created=f"2026-12-01T10:00:{sec:02d}Z", priority=p) for i, (p, sec) in enumerate(entries)
    ]
    order = sorted(range(len(entries)), key=lambda i: (-entries[i][0], entries[i][1]))
    for rank, i in enumerate(order):
        got = explain_workload(pending[i], cluster_queues=[_cq()], local_queues=[_LQ], workloads=pending,
                               device_class_mappings=MAPPINGS)  # fmt: skip
        assert (f"{rank} ahead of you" in got.summary) == (rank > 0), (rank, got.summary)


def test_recorded_real_states() -> None:
    """The objects real Kueue produced, explained offline: same verdicts as live."""
    state = json.loads(RECORDED.read_text())
    by_job = {w["metadata"]["ownerReferences"][0]["name"]: w for w in state["workloads"]}

    def explain(job: str) -> Any:
        return explain_workload(by_job[job], cluster_queues=state["clusterQueues"], local_queues=state["localQueues"],
                                workloads=state["workloads"], device_class_mappings=state["deviceClassMappings"])  # fmt: skip

    assert explain("holder").verdict is LiveVerdict.ADMITTED
    assert explain("first").verdict is LiveVerdict.WAITING_FOR_QUOTA
    assert "1 ahead of you (StrictFIFO)" in explain("second").summary
    assert explain("unmapped").verdict is LiveVerdict.INADMISSIBLE
