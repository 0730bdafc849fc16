"""The Pod a workload stands for is built once: the simulator's snapshot and the real-cluster replay agree."""

from __future__ import annotations

from pathlib import Path

from drakit.sim.snapshot import simulate_snapshot
from drakit.sources import load_scenario
from tests.integration import simbridge

AGREEMENT = Path(__file__).resolve().parents[2] / "integration" / "scenarios" / "agreement.yaml"


def test_replayed_pods_are_the_pods_the_simulator_shows() -> None:
    scenario = load_scenario(AGREEMENT)
    _, snapshot = simulate_snapshot(scenario, at=0)
    shown = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in snapshot.of_kind("Pod")}
    planned = simbridge.planned_pods(scenario)
    arrived = [p for p in planned if p.time == 0]
    assert arrived, "the agreement scenario starts pods at t=0"
    for pod in arrived:
        sim = shown[(pod.namespace, pod.name)]
        real = simbridge.pod_manifest(pod, pod.namespace)
        assert real["spec"].pop("terminationGracePeriodSeconds") == 0  # the replay's own addition
        assert real["metadata"] == {k: v for k, v in sim["metadata"].items() if k != "uid"}
        assert real["spec"] == {k: v for k, v in sim["spec"].items() if k != "nodeName"}
