"""The shared conformance vectors, answered by the upstream code itself (``dra-oracle``).

This checks the transcription and the harness, not drakit: every allocator case goes through
the same ``case_to_bundle``/``compare`` as drakit's own conformance test, and every CEL case
through the upstream DRA CEL package.  A failure here means the vectors, the conversion or
the comparison is wrong — or the pinned upstream release differs from the commit the vectors
were taken from; such known differences are listed below as strict xfails, so they are
noticed the day they disappear.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.convert import case_gates, case_to_bundle, compare, conformance_dir, iter_cases
from tests.oracle.client import DETERMINISTIC_ALLOCATORS, Oracle

pytestmark = pytest.mark.oracle

# The vectors come from kubernetes/dynamic-resource-allocation master (2026-07-01); the
# oracle pins the v0.37.2 release, which predates two CEL changes:
# - `includes()` refuses lists longer than 48 values (v0.37.2 just answers false);
# - the cost estimate of `includes()` (v0.37.2 estimates 16 more).
PINNED_RELEASE_LACKS_INCLUDES_LIMIT = "v0.37.2 has no 48-value limit in includes(); vector is from master"
PINNED_RELEASE_INCLUDES_COST = "v0.37.2 estimates includes() 16 higher than master, where the vector is from"


def _allocator_params() -> list[Any]:
    return [pytest.param(case, id=name) for name, case in iter_cases()]


def _only_sorting_allocators(case: dict[str, Any]) -> bool:
    """Upstream runs the lexicographical cases only on the implementations that sort."""
    return any('"stable"' in note for note in case.get("notes") or [])


@pytest.mark.parametrize("case", _allocator_params())
def test_allocator_case(oracle: Oracle, case: dict[str, Any]) -> None:
    allocators = DETERMINISTIC_ALLOCATORS if _only_sorting_allocators(case) else ""
    outcome = oracle.allocate(case_to_bundle(case), gates=case_gates(case), allocators=allocators)
    assert outcome["status"] in ("allocated", "unsatisfiable", "error"), outcome["message"]
    problems = compare(case, outcome)
    assert not problems, "\n".join(problems)


def _load(name: str) -> list[dict[str, Any]]:
    path: Path = conformance_dir() / "cel" / name
    with path.open(encoding="utf-8") as f:
        data: list[dict[str, Any]] = json.load(f)
    return data


def _cel_request(case: dict[str, Any], list_type: bool) -> dict[str, Any]:
    features = case["features"]
    gates = (
        f"DRAConsumableCapacity={str(features['consumableCapacity']).lower()},"
        f"DRAListTypeAttributes={str(list_type).lower()}"
    )
    return {
        "expression": case["expression"],
        "device": case["device"],
        "environment": "new" if case["environment"] == "NewExpressions" else "stored",
        "featureGates": gates,
        "mode": "selector",
    }


def _selector_params() -> list[Any]:
    params = []
    for case in _load("cases.json"):
        for list_type in case["features"]["listTypeAttributes"]:
            marks = []
            if case["name"] == "includes-function-on-very-long-list-runtime-error":
                marks.append(pytest.mark.xfail(strict=True, reason=PINNED_RELEASE_LACKS_INCLUDES_LIMIT))
            params.append(
                pytest.param(case, list_type, id=f"{case['name']}[listType={list_type}]", marks=marks)
            )
    return params


def _check_expectation(expect: dict[str, Any], answer: dict[str, Any]) -> None:
    error = answer.get("error")
    if "result" in expect:
        assert error is None, f"unexpected {error}"
        assert (answer["type"], answer["value"]) == ("bool", expect["result"])
    elif "compileError" in expect:
        assert error is not None and error["phase"] == "compile", f"want a compile error, got {answer}"
        assert expect["compileError"] in error["message"]
    else:
        assert error is not None and error["phase"] == "runtime", f"want a runtime error, got {answer}"
        assert expect["runtimeError"] in error["message"]


@pytest.mark.parametrize(("case", "list_type"), _selector_params())
def test_cel_selector_case(oracle: Oracle, case: dict[str, Any], list_type: bool) -> None:
    answer = oracle.cel(_cel_request(case, list_type))
    assert "invalid" not in answer, answer
    assert answer["mode"] == "selector"
    _check_expectation(case["expect"], answer)


def _cost_params() -> list[Any]:
    params = []
    for case in _load("cases.json"):
        if case.get("costEstimate") is None:
            continue
        marks = []
        if "includes(" in case["expression"]:
            marks.append(pytest.mark.xfail(strict=True, reason=PINNED_RELEASE_INCLUDES_COST))
        params.append(pytest.param(case, id=case["name"], marks=marks))
    return params


@pytest.mark.parametrize("case", _cost_params())
def test_cel_cost_estimate(oracle: Oracle, case: dict[str, Any]) -> None:
    answer = oracle.cel(_cel_request(case, case["features"]["listTypeAttributes"][0]))
    assert answer.get("cost", {}).get("estimated") == case["costEstimate"], answer


@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"]) for c in _load("library-cases.json")])
def test_cel_library_case(oracle: Oracle, case: dict[str, Any]) -> None:
    answer = oracle.cel({"expression": case["expression"], "environment": "stored", "mode": "value"})
    assert "invalid" not in answer, answer
    expect = case["expect"]
    error = answer.get("error")
    if "error" in expect:
        assert error is not None and error["phase"] == expect["phase"], (
            f"want a {expect['phase']} error, got {answer}"
        )
        assert expect["error"] in error["message"]
        return
    assert error is None, f"unexpected {error}"
    assert answer["type"] == expect["type"]
    if expect["type"] in ("quantity", "semver"):
        # Compared by value: ask upstream whether the two are equal.
        ctor = expect["type"]
        check = oracle.cel(
            {
                "expression": f"({case['expression']}) == {ctor}({json.dumps(expect['value'])})",
                "mode": "value",
            }
        )
        assert check.get("value") is True, check
    else:
        assert answer["value"] == expect["value"]
