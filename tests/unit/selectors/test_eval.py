"""Evaluation semantics: DRA device view, error absorption, overflow, cost limit, libraries."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drakit.features import Features
from drakit.selectors import CelRuntimeError, compile_selector, device_view, evaluate_expression

NVIDIA: dict[str, Any] = {
    "name": "gpu-0",
    "attributes": {
        "productName": {"string": "NVIDIA A100"},
        "index": {"int": 0},
        "migCapable": {"bool": True},
        "driverVersion": {"version": "550.54.15"},
        "cores": {"ints": [1, 2, 3]},
        "other.example.com/zone": {"string": "a"},
    },
    "capacity": {"memory": {"value": "80Gi"}},
}
D = "gpu.nvidia.com"
VIEW = device_view(D, NVIDIA)


def run(expr: str) -> Any:
    return compile_selector(expr).evaluate(VIEW)


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        pytest.param(f'device.attributes["{D}"].productName == "NVIDIA A100"', True, id="string"),
        pytest.param(f'device.attributes["{D}"].index < 4.5', True, id="cross-type-numeric"),
        pytest.param(f'device.attributes["{D}"].index == 0u', True, id="int-uint-eq"),
        pytest.param(f'device.attributes["{D}"].productName == 1', False, id="heterogeneous-eq"),
        pytest.param('"other.domain" in device.attributes', False, id="domain-in"),
        pytest.param('device.attributes["other.domain"] == {}', True, id="unknown-domain-empty"),
        pytest.param('has(device.attributes["other.domain"].x)', False, id="has-unknown-domain"),
        pytest.param(f'has(device.attributes["{D}"].productName)', True, id="has"),
        pytest.param('device.attributes["other.example.com"].zone == "a"', True, id="qualified"),
        pytest.param(
            f'device.attributes["{D}"].driverVersion.isGreaterThan(semver("550.0.0"))', True, id="semver"
        ),
        pytest.param(
            f'device.attributes["{D}"].driverVersion == semver("550.54.15+b")', True, id="semver-build"
        ),
        pytest.param(f'device.capacity["{D}"].memory.compareTo(quantity("48Gi")) >= 0', True, id="quantity"),
        pytest.param(f'device.capacity["{D}"].memory == quantity("81920Mi")', True, id="quantity-eq"),
        pytest.param(f'device.attributes["{D}"].cores.exists(c, c == 2)', True, id="list-attr"),
        pytest.param(f'cel.bind(a, device.attributes["{D}"], a.index < 4 && a.migCapable)', True, id="bind"),
        pytest.param(f'device.attributes["{D}"].missing > 1 && false', False, id="error-and-false"),
        pytest.param(f'false && device.attributes["{D}"].missing > 1', False, id="false-and-error"),
        pytest.param(f'device.attributes["{D}"].missing > 1 || true', True, id="error-or-true"),
        pytest.param(f'device.attributes["{D}"].?missing.orValue(3) == 3', True, id="optional"),
        pytest.param(f'device.attributes["{D}"].all(k, v, k != "")', True, id="two-var"),
        pytest.param(f'device.attributes["{D}"].exists(k, k == "index")', True, id="map-keys"),
        pytest.param(
            'device.driver.startsWith("gpu") && device.driver.matches("^gpu\\\\.")', True, id="regex"
        ),
    ],
)
def test_selectors_on_device(expr: str, want: bool) -> None:
    assert run(expr) is want


@pytest.mark.parametrize(
    ("expr", "fragment"),
    [
        pytest.param('device.attributes["other.domain"].x', "no such key: x", id="unknown-id"),
        pytest.param(
            f'device.attributes["{D}"].missing && true', "no such key: missing", id="error-and-true"
        ),
        pytest.param(f'device.attributes["{D}"].productName < 1', "no such overload", id="string-lt-int"),
        pytest.param(
            f'device.attributes["{D}"].index + 9223372036854775807 + 1 > 0', "integer overflow", id="overflow"
        ),
        pytest.param("1 / 0 == 0", "division by zero", id="div-zero"),
        pytest.param("1 % 0 == 0", "modulus by zero", id="mod-zero"),
        pytest.param('sign(quantity("200K")) == 1', "unable to parse quantity's suffix", id="bad-quantity"),
        pytest.param(
            f'device.attributes["{D}"].index.exists(x, true)',
            "got 'types.Int', expected iterable type",
            id="iterable",
        ),
        pytest.param(
            "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, "
            "[1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, f > 0))))))",
            "operation cancelled: actual cost limit exceeded",
            id="comprehension-bomb",
        ),
        pytest.param(
            "lists.range(1000).all(a, lists.range(1000).all(b, true)) || true",
            "operation cancelled: actual cost limit exceeded",
            id="cost-limit-not-absorbed",
        ),
    ],
)
def test_runtime_errors(expr: str, fragment: str) -> None:
    with pytest.raises(CelRuntimeError) as info:
        run(expr)
    assert fragment in info.value.message
    assert info.value.phase == "runtime"


def test_list_attribute_without_feature_in_new_environment() -> None:
    c = compile_selector(
        f'device.attributes["{D}"].index == 0',
        environment="new",
        features=Features(list_type_attributes=False),
    )
    with pytest.raises(CelRuntimeError, match="attribute cores: unsupported attribute value"):
        c.evaluate(VIEW)


def test_bad_version_attribute_is_runtime_error() -> None:
    view = device_view(D, {"attributes": {"v": {"version": "v1"}}})
    with pytest.raises(CelRuntimeError, match="attribute v: parse semantic version"):
        compile_selector("true").evaluate(view)


def test_allow_multiple_allocations_defaults_false() -> None:
    c = compile_selector("device.allowMultipleAllocations == false")
    assert c.evaluate(device_view(D, {})) is True
    assert c.evaluate(device_view(D, {"allowMultipleAllocations": True})) is False


@pytest.mark.parametrize(
    ("expr", "value", "type_name"),
    [
        pytest.param("'a,b'.split(',')", ["a", "b"], "list", id="split"),
        pytest.param("'Hello'.lowerAscii()", "hello", "string", id="lowerAscii"),
        pytest.param("'abc'.substring(1, 2)", "b", "string", id="substring"),
        pytest.param("['a', 'b'].join('-')", "a-b", "string", id="join"),
        pytest.param("'abc'.indexOf('c')", 2, "int", id="indexOf"),
        pytest.param(
            "'%s=%d'.format(['x', 1].map(v, dyn(v)))", "x=1", "string", id="format-mixed-list-exempt"
        ),
        pytest.param("['x', 1].map(v, dyn(v)).size()", None, "", id="mixed-list-rejected"),
        pytest.param("strings.quote('a\"b')", '"a\\"b"', "string", id="quote"),
        pytest.param("[1, 3, 2].isSorted()", False, "bool", id="isSorted"),
        pytest.param("[1, 2, 3].sum()", 6, "int", id="sum"),
        pytest.param("[3, 1].min()", 1, "int", id="min"),
        pytest.param("'a1b22'.findAll('[0-9]+')", ["1", "22"], "list", id="findAll"),
        pytest.param("'abc123'.find('[0-9]+')", "123", "string", id="find"),
        pytest.param("sets.intersects([1, 2], [2, 3])", True, "bool", id="sets"),
        pytest.param("[[1], [2, 3]].flatten()", [1, 2, 3], "list", id="flatten"),
        pytest.param("lists.range(3)", [0, 1, 2], "list", id="range"),
        pytest.param("[1, 2, 2].distinct()", [1, 2], "list", id="distinct"),
        pytest.param("{'a': 1}.transformMap(k, v, v * 2)", {"a": 2}, "map", id="transformMap"),
        pytest.param("[1, 2].transformList(i, v, i + v)", [1, 3], "list", id="transformList"),
        pytest.param("optional.of(1).optMap(x, x + 1).value()", 2, "int", id="optMap"),
        pytest.param("string(1.0)", "1", "string", id="string-double"),
        pytest.param("int('42') + int(2.9)", 44, "int", id="conversions"),
        pytest.param("type(1u) == uint", True, "bool", id="type"),
        pytest.param("duration('1h30m') > duration('90m')", False, "bool", id="duration"),
        pytest.param("'é'.size()", 1, "int", id="size-code-points"),
    ],
)
def test_library_functions(expr: str, value: Any, type_name: str) -> None:
    r = evaluate_expression(expr)
    if not type_name:
        assert r.error is not None
        return
    assert r.error is None, r.error
    assert r.value == value
    assert r.type == type_name


attr_values = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1).map(lambda v: {"int": v}),
    st.booleans().map(lambda v: {"bool": v}),
    st.text(max_size=8).map(lambda v: {"string": v}),
)


@settings(max_examples=150, deadline=None)
@given(
    attrs=st.dictionaries(st.sampled_from(["a", "b", "c", "x.io/d"]), attr_values, max_size=4),
    key=st.sampled_from(["a", "b", "c"]),
    bound=st.integers(min_value=-100, max_value=100),
)
def test_evaluation_matches_reference(attrs: dict[str, Any], key: str, bound: int) -> None:
    """``has(x) && x is int && x > bound`` against a plain-Python reference."""
    view = device_view("drv", {"attributes": attrs})
    expr = f'"{key}" in device.attributes["drv"] && device.attributes["drv"].{key} > {bound}'
    c = compile_selector(expr)
    raw = attrs.get(key)
    if raw is None:
        assert c.evaluate(view) is False
    elif "int" in raw:
        assert c.evaluate(view) is (raw["int"] > bound)
    else:
        with pytest.raises(CelRuntimeError, match="no such overload"):
            c.evaluate(view)
    eq = compile_selector(f'device.attributes["drv"].?{key}.orValue(null) == {bound}')
    want = raw is not None and "int" in raw and raw["int"] == bound
    assert eq.evaluate(view) is want


@pytest.mark.parametrize(
    "expr",
    [
        pytest.param("", id="empty"),
        pytest.param("(" * 10_000 + "true" + ")" * 10_000, id="deep-parens"),
        pytest.param("true" + " " * 10_240, id="too-long"),
        pytest.param("'\udcff' == ''", id="lone-surrogate"),
        pytest.param("1 + " * 2000 + "1 > 0", id="long-chain"),
    ],
)
def test_bad_input_is_a_clear_compile_error(expr: str) -> None:
    c = compile_selector(expr, environment="new")
    assert c.error is not None
    assert c.error.phase == "compile"
    assert c.error.message


# cel-go ext.Lists/ext.Sets runtime trackers, charged before the call (oracle-measured).
@pytest.mark.parametrize(
    "expr",
    [
        pytest.param("lists.range(1000).sort().size() > 0", id="sort-quadratic"),
        pytest.param("lists.range(2000).distinct().size() > 0", id="distinct-quadratic"),
        pytest.param("lists.range(1000000).size() > 0", id="range-output-size"),
        pytest.param("lists.range(700).map(x, string(x)).sort().size() > 0", id="sort-strings"),
    ],
)
def test_list_library_costs_hit_the_limit(expr: str) -> None:
    c = compile_selector(expr)
    assert c.error is None
    with pytest.raises(CelRuntimeError, match="actual cost limit exceeded"):
        c.evaluate(VIEW)


def test_range_limit_is_upstreams() -> None:
    c = compile_selector("lists.range(1000000000).size() > 0")
    with pytest.raises(CelRuntimeError, match=r"size 1000000000 exceeds maximum allowed \(1000000\)"):
        c.evaluate(VIEW)


# Upstream's answers (oracle-measured), one per root cause.
@pytest.mark.parametrize(
    ("expr", "value"),
    [
        pytest.param(
            "string(timestamp('2020-01-01T00:00:00.5+01:30') - duration('1h'))",
            "2019-12-31T23:00:00.5+01:30",
            id="offset-kept",
        ),
        pytest.param(
            "string(timestamp('0001-01-01T00:00:00Z'))", "0001-01-01T00:00:00Z", id="four-digit-year"
        ),
        pytest.param("timestamp('2020-01-01T00:00:00Z').getHours('Europe/Paris')", 1, id="zone-name"),
        pytest.param("timestamp('2020-01-01T00:00:00Z').getDayOfWeek('-05:00')", 2, id="zone-offset"),
        pytest.param(
            "timestamp('2020-01-01T00:00:00Z').getMinutes('+01:70')", 10, id="zone-minutes-unchecked"
        ),
        pytest.param("has(device.allowMultipleAllocations)", True, id="has-device-field"),
        pytest.param("[1] in {[1]: 2}", False, id="list-key-by-identity"),
    ],
)
def test_upstream_values(expr: str, value: object) -> None:
    assert evaluate_expression(expr).value == value


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        pytest.param("-9223372036854775808 % -1 == 0", "integer overflow", id="mod-overflow"),
        pytest.param(
            "lists.range(-1).size() == 0",
            "lists.range: size must be non-negative, got -1",
            id="range-negative",
        ),
        pytest.param("dyn(1).lowerAscii() == ''", "no such overload: lowerAscii(int)", id="bound-overload"),
        pytest.param("dyn(1).size() == 0", "no such overload: size", id="trait-unary"),
        pytest.param("dyn(1) + 'a' == ''", "no such overload", id="trait-operator"),
        pytest.param("dyn(1).x == 1", "no such key: x", id="select-non-container"),
        pytest.param(
            "timestamp('2020-01-01T00:00:00Z').getHours('bad') == 1", "unknown time zone bad", id="bad-zone"
        ),
        pytest.param(
            "duration('1h') - duration('-2562047h') > duration('0s')",
            "integer overflow",
            id="go-duration-range",
        ),
    ],
)
def test_upstream_runtime_errors(expr: str, message: str) -> None:
    result = evaluate_expression(expr)
    assert result.error is not None and result.error.message == message
