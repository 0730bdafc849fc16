"""The scenario suite: every situation of issue 7, one bundle each, with reviewed expectations."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from drakit.explain.diagnose import diagnose
from drakit.explain.render import WIDTH, render_text
from drakit.features import Features
from tests.scenarios.explain import build
from tests.unit.explain.conftest import SCENARIOS, explain_scenario, scenario_input

CASES: list[dict[str, Any]] = yaml.safe_load((SCENARIOS / "cases.yaml").read_text(encoding="utf-8"))


def test_enough_cases() -> None:
    assert len(CASES) >= 25
    assert {c["name"] for c in CASES} == set(build.SCENARIOS()), "every bundle has expectations"


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in CASES])
def test_scenario(case: dict[str, Any]) -> None:
    d = explain_scenario(case["name"], case["target"], case.get("featureGates"))
    assert d.verdict.value == case["verdict"]
    assert d.owner.value == case["owner"]
    assert list(d.codes) == case["codes"]
    want_funnels = case.get("funnels") or {}
    got = {f.request: {s.key: s.count for s in f.steps} for f in d.funnels}
    assert got == want_funnels
    assert d.headline and (d.fix or d.verdict.value == "ok")


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in CASES])
def test_text_fits_80_columns(case: dict[str, Any]) -> None:
    text = render_text(explain_scenario(case["name"], case["target"], case.get("featureGates")))
    too_wide = [line for line in text.splitlines() if len(line) > WIDTH]
    assert not too_wide


@pytest.mark.parametrize("name", ["devices-in-use", "constraint-pcie-root", "memory-80gi-near-miss"])
def test_inputs_untouched(name: str) -> None:
    inp = scenario_input(name)
    before = copy.deepcopy((inp.claims, inp.slices, inp.pods, inp.classes))
    diagnose(inp, "pod", "train", "ml", features=Features.for_version())
    assert (inp.claims, inp.slices, inp.pods, inp.classes) == before


def test_bundles_match_builder() -> None:
    """The committed bundles are what build.py writes (regenerate with python -m ...build)."""
    for name, objects in build.SCENARIOS().items():
        on_disk = list(yaml.safe_load_all((SCENARIOS / f"{name}.yaml").read_text(encoding="utf-8")))
        assert on_disk == objects, name


def test_near_miss_quotes_numbers() -> None:
    d = explain_scenario("memory-80gi-near-miss")
    f = d.funnel("gpus")
    assert f is not None and f.near_misses
    nm = f.near_misses[0]
    assert nm.count == 8 and nm.product == "NVIDIA H100 80GB HBM3"
    assert "81559Mi" in nm.message and "80Gi = 81920Mi" in nm.message and "short by 361Mi" in nm.message
    assert "80G (decimal)" in nm.suggestion
    assert d.fix == nm.suggestion


def test_runtime_error_names_device_and_attribute() -> None:
    d = explain_scenario("selector-runtime-error")
    head = d.findings[0]
    assert head.device == "gpu.nvidia.com/gpu-a/gpu-0"
    assert head.detail["attribute"] == "migProfile"


def test_partial_assignment() -> None:
    d = explain_scenario("constraint-pcie-root")
    assert d.partial is not None
    assert len(d.partial.placed) == 2
    assert d.partial.missing == "request gpus: 2 of 4 devices fit together"


def test_holders_of_devices_in_use() -> None:
    d = explain_scenario("devices-in-use")
    assert [(h.claim, h.devices, h.pods) for h in d.holders] == [
        ("ml/eval-1", 4, ("ml/eval-1",)),
        ("ml/eval-2", 2, ("ml/eval-2",)),
        ("ml/eval-3", 2, ("ml/eval-3",)),
    ]


def test_counter_holders() -> None:
    d = explain_scenario("partitionable-counters")
    assert [(h.claim, h.devices) for h in d.holders] == [("ml/infer-half", 1)]


def test_json_shape_is_stable() -> None:
    d = explain_scenario("memory-80gi-near-miss")
    j = d.to_json()
    assert set(j) >= {"target", "verdict", "code", "headline", "owner", "fix", "stage", "codes", "findings", "funnels"}
    assert j["funnels"][0]["steps"][0] == {"key": "inventory", "label": "devices in the inventory", "count": 8, "removed": 0}
    assert j["funnels"][0]["nearMisses"][0]["condition"] == "selector-0"
