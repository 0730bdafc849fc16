"""A snapshot explains offline exactly as the cluster explains live.

For the explain scenarios the control plane reproduces (replayed as ``test_explain_cluster``
replays them: holders scheduled by the real scheduler, generated claims named by the real
controller), ``drakit explain`` is run twice on the same moment: once reading the cluster
(no ``-f``) and once on the bundle ``drakit snapshot`` wrote (redacted, as a bug report gets
it).  Verdict, headline code, every code, the holders and the exit code must be the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from drakit.cli.testing import run
from tests.integration import explainbridge as eb
from tests.integration import simbridge
from tests.integration.kube import Cluster
from tests.integration.test_explain_cluster import (
    REPRODUCED,
    Repro,
    _gate_args,
    _sentinel,
    _wait_for_scheduler,
    scenario_namespace,
)

pytestmark = pytest.mark.cluster

# Busy devices with holders, a missing class and template, constraints, alternatives, funnels,
# node-level reasons, taints, counters, gated claims, and fits: every verdict family.
CHOSEN = (
    "devices-in-use", "in-use-fragmented", "admin-access-in-use-without-admin", "class-missing", "template-missing",
    "constraint-pcie-root", "constraint-numa-in-use", "first-available-exhausted", "first-available-fallback",
    "not-enough-per-node", "memory-80gi-near-miss", "node-selector-excludes", "device-taint",
    "partitionable-counters", "claim-missing", "fits",
)
CASES = [p for p in REPRODUCED if p.id in CHOSEN]


def test_enough_scenarios_are_compared() -> None:
    assert len(CASES) == len(CHOSEN) >= 12


def _explain(*args: str) -> tuple[int, dict[str, Any]]:
    r = run("explain", *args, "-o", "json")
    assert r.stdout, r.stderr
    return r.exit_code, json.loads(r.stdout)


def _same(d: dict[str, Any]) -> dict[str, Any]:
    return {"verdict": d["verdict"], "code": d["code"], "codes": d["codes"], "owner": d["owner"],
            "holders": sorted((h["claim"], tuple(sorted(h["pods"])), h["devices"]) for h in d.get("holders") or [])}


@pytest.mark.parametrize("repro", CASES)
def test_snapshot_explains_like_the_cluster(cluster: Cluster, admin_kubeconfig: Path, repro: Repro, tmp_path: Path) -> None:
    r, k = repro, str(admin_kubeconfig)
    gates = _gate_args(cluster.plane)
    p = eb.plan(eb.load(r.name), [r.target])
    simbridge.wait_for_only_nodes(cluster, set())
    eb.create_inventory(cluster, p)
    try:
        with scenario_namespace(cluster, admin=p.admin_access) as ns:
            try:
                eb.create_holders(cluster, p, ns)
                eb.create_workload(cluster, p, ns, drop_admin_label_before_pods=r.drop_admin_label)
                for pod in r.extra_pods:
                    cluster.create(pod, ns)
                if "gated" in r.facts:
                    cluster.create(_sentinel(), ns)
                _wait_for_scheduler(cluster, ns, r, len(p.nodes))
                live_code, live = _explain(f"pod/{r.target}", "-n", ns, "--kubeconfig", k, *gates)
                snap = run("snapshot", "-n", ns, "--kubeconfig", k)
                assert snap.exit_code == 0, snap.stderr
                bundle = tmp_path / "snapshot.yaml"
                bundle.write_text(snap.stdout, encoding="utf-8")
                offline_code, offline = _explain(f"pod/{r.target}", "-n", ns, "-f", str(bundle), *gates)
            finally:
                eb.release_finalizers(cluster, p, ns)
    finally:
        eb.delete_inventory(cluster, p)
    assert live["code"] == r.code, live["headline"]
    assert (offline_code, _same(offline)) == (live_code, _same(live))
