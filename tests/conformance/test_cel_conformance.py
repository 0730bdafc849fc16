"""Upstream's CEL selector and library test tables, run against drakit.selectors.

Data: ``../shared/conformance/cel/{cases,library-cases}.json`` (restated from
dynamic-resource-allocation ``cel/compile_test.go`` and apiserver ``library/*_test.go``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from drakit.features import Features
from drakit.quantity import Quantity
from drakit.selectors import CelRuntimeError, compile_selector, device_view, evaluate_expression
from drakit.semver import Semver


def _conformance_dir() -> Path:
    env = os.environ.get("DRAKIT_CONFORMANCE_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance"


CEL_DIR = _conformance_dir() / "cel"
if not (CEL_DIR / "cases.json").exists():  # pragma: no cover - data not present
    pytest.skip(f"conformance data not found at {CEL_DIR}", allow_module_level=True)

CASES: list[dict[str, Any]] = json.loads((CEL_DIR / "cases.json").read_text())
LIBRARY: list[dict[str, Any]] = json.loads((CEL_DIR / "library-cases.json").read_text())


def _selector_params() -> list[Any]:
    out = []
    for case in CASES:
        for lt in case["features"]["listTypeAttributes"]:
            out.append(pytest.param(case, lt, id=f"{case['name']}[listTypeAttributes={lt}]"))
    return out


@pytest.mark.parametrize(("case", "list_type_attributes"), _selector_params())
def test_selector_case(case: dict[str, Any], list_type_attributes: bool) -> None:
    features = Features(
        list_type_attributes=list_type_attributes,
        consumable_capacity=case["features"]["consumableCapacity"],
    )
    env = "stored" if case["environment"] == "StoredExpressions" else "new"
    compiled = compile_selector(case["expression"], environment=env, features=features)
    expect = case["expect"]
    if "compileError" in expect:
        assert compiled.error is not None, "expected a compile error"
        assert expect["compileError"] in compiled.error.message
        return
    assert compiled.error is None, compiled.error.message
    if "costEstimate" in case:
        assert compiled.cost_estimate == case["costEstimate"]
    device = case["device"]
    view = device_view(device["driver"], device)
    if "runtimeError" in expect:
        with pytest.raises(CelRuntimeError) as info:
            compiled.evaluate(view)
        assert expect["runtimeError"] in info.value.message
    else:
        assert compiled.evaluate(view) is expect["result"]


def _expected_value(expect: dict[str, Any]) -> Any:
    if expect["type"] == "quantity":
        return Quantity.parse(expect["value"])
    if expect["type"] == "semver":
        return Semver.parse(expect["value"])
    return expect["value"]


@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"]) for c in LIBRARY])
def test_library_case(case: dict[str, Any]) -> None:
    result = evaluate_expression(case["expression"])
    expect = case["expect"]
    if "error" in expect:
        assert result.error is not None, f"expected an error, got {result.value!r}"
        assert result.error.phase == expect["phase"]
        assert expect["error"] in result.error.message
        return
    assert result.error is None, result.error.message
    assert result.type == expect["type"]
    want = _expected_value(expect)
    if expect["type"] == "quantity":
        assert result.value.cmp(want) == 0
    elif expect["type"] in ("int", "bool"):
        assert type(result.value) is type(want)
        assert result.value == want
    else:
        assert result.value == want
