"""CEL behaviours the differential run against the upstream oracle pinned down."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from drakit.selectors import clear_cache, compile_selector, device_view, interpreter

D = "gpu.example.com"
A = f'device.attributes["{D}"]'
C = f'device.capacity["{D}"]'
VIEW = device_view(
    D, {"name": "d0", "attributes": {"index": {"int": 1}}, "capacity": {"memory": {"value": "8Gi"}}}
)


def outcome(expr: str) -> Any:
    try:
        return compile_selector(expr).evaluate(VIEW)
    except Exception as err:
        return getattr(err, "message", str(err))


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        # cel-go's logical operators keep the first error they meet; a later one never replaces it.
        pytest.param(f'{A}.model == "a" && {A}.healthy', "no such key: model", id="and-left-error-wins"),
        pytest.param(f"{A}.healthy || {A}.model", "no such key: healthy", id="or-left-error-wins"),
        pytest.param(f"dyn(1) && {A}.healthy", "no such overload", id="and-non-bool-left-wins"),
        pytest.param(f"dyn(1) || {A}.x", "no such overload", id="or-non-bool-left-wins"),
        pytest.param(f"{A}.healthy && false", False, id="and-absorbs-left-error"),
        pytest.param(f"{A}.healthy || dyn(1) == 1", True, id="or-absorbs-left-error"),
        pytest.param(f"{A}.healthy && dyn(2)", "no such key: healthy", id="and-error-then-non-bool"),
    ],
)
def test_logical_operators_report_first_error(expr: str, want: Any) -> None:
    assert outcome(expr) == want


FOLDED = [
    f'{C}.?compute.orValue(quantity("0")).isGreaterThan(quantity("60"))',
    f'{C}.?memory.orValue(quantity("0")).compareTo(quantity("16Gi")) >= 0',
    f'{C}.memory.isLessThan(quantity("20Gi")) && quantity("1").isLessThan(quantity("2"))',
    f'{A}.?model.orValue("none") == "l4" || [1, 2, 3].size() == 3',
]


def test_planner_keeps_folded_constants_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    """Constant folding is keyed by ``id()`` of closures; a freed constant's id must not be reused.

    When it was, a later non-constant closure could inherit a dropped constant's id and be
    "folded" into the wrong value (seen as ``'str' object has no attribute 'cmp'``), depending on
    what the process had allocated before.
    """
    planners: list[interpreter.Planner] = []
    original = interpreter.Planner.__init__

    def spy(self: interpreter.Planner, *args: Any, **kw: Any) -> None:
        original(self, *args, **kw)
        planners.append(self)

    monkeypatch.setattr(interpreter.Planner, "__init__", spy)
    clear_cache()
    for expr in FOLDED:
        compile_selector(expr)
    assert planners
    for p in planners:
        assert set(p.consts) <= {id(f) for f in p._pinned}


@pytest.mark.parametrize("rounds", [10])
def test_folded_constants_evaluate_consistently(rounds: int) -> None:
    want = [outcome(e) for e in FOLDED]
    assert want == [False, False, True, True]
    for _ in range(rounds):
        clear_cache()
        garbage = [object() for _ in range(100)]
        del garbage
        gc.collect()
        assert [outcome(e) for e in FOLDED] == want


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        # add/sub results are pointer-typed upstream; Quantity's Equal only takes the plain value.
        pytest.param(f"{C}.memory.add(quantity('0')) == {C}.memory", True, id="result-on-left"),
        pytest.param(
            f"{C}.memory == {C}.memory.add(quantity('0'))", "no such overload", id="result-on-right"
        ),
        pytest.param(
            f"{C}.memory.sub(1).add(1) == {C}.memory.add(0)", "no such overload", id="results-both-sides"
        ),
        pytest.param(f"{C}.memory != {C}.memory.add(0)", True, id="not-equal-absorbs-overload-error"),
        pytest.param(f"{C}.memory.compareTo({C}.memory.add(0)) == 0", True, id="compare-to-accepts-results"),
    ],
)
def test_quantity_arithmetic_results_in_equality(expr: str, want: Any) -> None:
    assert outcome(expr) == want
