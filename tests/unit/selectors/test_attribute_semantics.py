"""Selections, indexes and overload dispatch as cel-go evaluates them.

Each row was checked against the upstream oracle (the same cases, with its answers, are in
``tests/differential/cel_regressions/``).  cel-go plans ``a.b``, ``a[i]``, ``a[?i]`` and
``a.?b`` as one attribute (a root and its qualifiers), not as function calls, and dispatches
a ``dyn`` argument on its runtime type, looking at a list's first element only.
"""

from __future__ import annotations

from typing import Any

import pytest

from drakit.selectors import CelError, CelRuntimeError, compile_any, compile_selector, device_view
from drakit.selectors.types import OPTIONAL_NONE, Duration, Optional

VIEW = device_view("gpu.example.com", {"name": "d0", "attributes": {"model": {"string": "a100"}}})


def value(expr: str) -> Any:
    try:
        return compile_any(expr).evaluate_value(VIEW)
    except (CelError, CelRuntimeError) as err:
        return err.message


def selector(expr: str) -> Any:
    try:
        return compile_selector(expr).evaluate(VIEW)
    except (CelError, CelRuntimeError) as err:
        return err.message


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        # an empty optional root answers itself; the index is never evaluated
        pytest.param("optional.none()[?(1/0)]", OPTIONAL_NONE, id="none-skips-index-error"),
        pytest.param("optional.none()[?[1][5]]", OPTIONAL_NONE, id="none-skips-index-bounds"),
        pytest.param("(true ? optional.none() : optional.of([1]))[1/0]", OPTIONAL_NONE, id="none-branch"),
        # ... but an optional met inside the chain is just a value without keys
        pytest.param("[optional.none()][0][1]", "no such key: 1", id="optional-mid-chain"),
        pytest.param("[optional.none()][0][1/0]", "division by zero", id="mid-chain-index-evaluated"),
        # an optional step makes every later step a presence test
        pytest.param('{"a": {}}[?"a"]["b"]', OPTIONAL_NONE, id="optional-propagates-index"),
        pytest.param('dyn({"a": 1}).?a.?b', OPTIONAL_NONE, id="optional-select-on-int"),
        pytest.param('dyn({"a": [1]}).?a[0]', Optional(1), id="optional-then-index"),
        pytest.param("dyn(1).?f", OPTIONAL_NONE, id="optional-select-non-container"),
        pytest.param('dyn("a")[?1]', OPTIONAL_NONE, id="optional-index-non-container"),
        # qualifier kinds: bools look up maps, lists take integers only
        pytest.param("optional.of({1: 1})[?dyn(true)]", OPTIONAL_NONE, id="bool-key-absent"),
        pytest.param("optional.of([1])[?dyn(true)]", "unsupported index type 'bool' in list", id="bool-list"),
        pytest.param("[[1]][0][?dyn(true)]", "unsupported index type 'bool' in list", id="bool-list-chain"),
        pytest.param("dyn([1]).a", "unsupported index type 'string' in list", id="select-on-list"),
        pytest.param("dyn([1, 2])[5u]", "index out of bounds: 5", id="uint-bounds-text"),
        pytest.param('dyn({"a": 1})[2.0]', "no such key: 2", id="double-key-text"),
        pytest.param("dyn({1: 1})[5u]", "no such key: 5", id="uint-key-text"),
        # a computed index of any other type is not a qualifier
        pytest.param("{1: 1}[dyn(optional.of(1))]", "invalid qualifier type: *types.Optional", id="q-optional"),
        pytest.param("{1: 1}[?dyn(optional.of(1))]", "invalid qualifier type: *types.Optional", id="q-opt-opt"),
        pytest.param("dyn([1])[optional.none()]", "invalid qualifier type: *types.Optional", id="q-none"),
        pytest.param('[1][dyn(semver("1.0.0"))]', "invalid qualifier type: cel.Semver", id="q-semver"),
        pytest.param('dyn({1: 1})[dyn(quantity("1"))]', "invalid qualifier type: cel.Quantity", id="q-quantity"),
        pytest.param('device.attributes[dyn(optional.none())]', "invalid qualifier type: *types.Optional", id="q-dra"),
        # the common selector shape keeps its fast path and its texts
        pytest.param('device.attributes["gpu.example.com"].model', "a100", id="dra-attribute"),
        pytest.param('device.attributes["gpu.example.com"].nope', "no such key: nope", id="dra-missing"),
        pytest.param('device.attributes["other.io"]', {}, id="dra-unknown-domain"),
        # runtime dispatch of dyn arguments: the first element decides the overload
        pytest.param("dyn([[1], [2]]).isSorted()", "no such overload: isSorted(list)", id="isSorted-lists"),
        pytest.param("dyn([null]).isSorted()", "no such overload: isSorted(list)", id="isSorted-nulls"),
        pytest.param("dyn([]).isSorted()", True, id="isSorted-empty"),
        pytest.param('[dyn(1), dyn("a")].isSorted()', True, id="isSorted-mixed-pairs-ignored"),
        pytest.param('[dyn(2), dyn("a"), dyn(1)].isSorted()', True, id="isSorted-mixed-skip"),
        pytest.param("[dyn(2), dyn(null)].isSorted()", "no such overload", id="isSorted-late-null"),
        pytest.param('[1.0, double("NaN")].isSorted()', True, id="isSorted-nan"),
        pytest.param('[1.0, double("NaN"), 0.5].min()', 0.5, id="min-nan"),
        pytest.param('[1.0, double("NaN"), 0.5].max()', 1.0, id="max-nan"),
        pytest.param('dyn(["a"]).sum()', "no such overload: sum(list)", id="sum-strings"),
        pytest.param("[dyn(1), dyn(2.0)].sum()", "no such overload", id="sum-mixed"),
        pytest.param("dyn([[1]]).min()", "no such overload: min(list)", id="min-lists"),
        pytest.param('dyn("a").flatten(1)', "no such overload: string.flatten(int)", id="flatten-depth-text"),
        pytest.param('dyn("a").flatten()', "no such overload: string.flatten()", id="flatten-text"),
        # trait-bound operators: a duration negates although '-' is declared for numbers only
        pytest.param('-dyn(duration("1s"))', Duration(-1_000_000_000), id="negate-duration"),
        pytest.param("-dyn(timestamp(1))", "no such overload", id="negate-timestamp"),
        # Go's time.Parse accepts offsets up to 24:60
        pytest.param('string(timestamp("2020-01-01T00:00:00+24:00"))', "2020-01-01T00:00:00+24:00", id="tz-24"),
        pytest.param('string(timestamp("2020-01-01T00:00:00-24:60"))', "2020-01-01T00:00:00-25:00", id="tz-24-60"),
        pytest.param(
            'timestamp(dyn("2020-01-01T00:00:00+25:00"))',
            "program instantiation failed: type conversion error from 'string' to 'google.protobuf.Timestamp'",
            id="tz-25",
        ),
    ],
)
def test_value(expr: str, want: Any) -> None:
    got = value(expr)
    assert _plain(got) == _plain(want) and type(got) is type(want)


def _plain(v: Any) -> Any:
    """Optionals compare by identity in CEL's equality; here by content."""
    return ("optional", v.present, _plain(v.value)) if type(v) is Optional else v


P = "CEL result of type optional_type could not be converted to bool"


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        # DeviceMatches converts the result with ConvertToNative(bool): an optional converts
        # as its value
        pytest.param("dyn(optional.of(true))", True, id="optional-true"),
        pytest.param("dyn(optional.of(optional.of(false)))", False, id="nested-optional"),
        pytest.param("dyn(optional.none())", f"{P}: optional.none() dereference", id="optional-none"),
        pytest.param(
            "dyn(optional.of(1))", f"{P}: unsupported type conversion from 'int' to bool", id="optional-int"
        ),
        pytest.param(
            "dyn(timestamp(1))",
            "CEL result of type google.protobuf.Timestamp could not be converted to bool: "
            "type conversion error from 'Timestamp' to 'bool'",
            id="timestamp",
        ),
        pytest.param(
            'dyn(ip("1.2.3.4"))',
            "CEL result of type net.IP could not be converted to bool: type conversion error from 'IP' to 'bool'",
            id="ip",
        ),
        pytest.param(
            "dyn(int)",
            "CEL result of type type could not be converted to bool: type conversion not supported for 'type'",
            id="type",
        ),
    ],
)
def test_selector_result(expr: str, want: Any) -> None:
    assert selector(expr) == want
