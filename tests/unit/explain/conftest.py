"""Shared helpers for the explain tests: load a scenario bundle, diagnose a target."""

from __future__ import annotations

from pathlib import Path

from drakit.explain.diagnose import diagnose
from drakit.explain.diagnosis import Diagnosis
from drakit.features import Features
from drakit.inventory.snapshot import ClusterSnapshot
from drakit.sources import load_bundle

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios" / "explain"


def scenario_input(name: str) -> ClusterSnapshot:
    return ClusterSnapshot.from_bundle(load_bundle([str(SCENARIOS / f"{name}.yaml")]))


def explain_scenario(name: str, target: str = "pod/train", gates: str | None = None) -> Diagnosis:
    kind, obj = target.split("/", 1)
    features = Features.for_version().with_gates(gates)
    return diagnose(scenario_input(name), kind, obj, "ml", features=features)
