"""Program instantiation, string.format (static and runtime) and result conversion, as upstream.

Expected texts are what the oracle (k8s.io/dynamic-resource-allocation v0.37.2 with cel-go
v0.29.2) answered for the same expressions.
"""

from __future__ import annotations

from typing import Any

import pytest

from drakit.selectors import CelRuntimeError, compile_any, compile_selector, device_view, evaluate_expression

_VIEW = device_view("gpu.example.com", {"name": "dev-0"})


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        pytest.param("double('') == 1.0", "type conversion error from 'string' to 'double'", id="double"),
        pytest.param("uint(-1) == 1u", "unsigned integer overflow", id="uint"),
        pytest.param("int(1e300) == 1", "integer overflow", id="int-overflow"),
        pytest.param(
            "false ? int('x') == 1 : true", "type conversion error from 'string' to 'int'", id="dead-branch"
        ),
        pytest.param(
            "[].all(x, int('y') == 1)", "type conversion error from 'string' to 'int'", id="in-macro"
        ),
        pytest.param("1 in [int('x')]", "type conversion error from 'string' to 'int'", id="in-list-literal"),
        pytest.param("'a'.find('(') == ''", "error parsing regexp: missing closing ): `(`", id="find"),
        pytest.param(
            "matches('a', '(')", "error parsing regexp: missing closing ): `(`", id="matches-global"
        ),
        pytest.param(
            "'a'.matches(string('['))",
            "error parsing regexp: missing closing ]: `[`",
            id="matches-folded-pattern",
        ),
        pytest.param("[int].all(x, x == int)", "reference to undefined type: x", id="type-valued-local"),
        pytest.param("[1][dyn(b'x')] == 1", "invalid qualifier type: types.Bytes", id="bytes-index"),
    ],
)
def test_program_instantiation_failures_are_compile_errors(expr: str, message: str) -> None:
    sel = compile_selector(expr)
    assert sel.error is not None
    assert str(sel.error) == f"program instantiation failed: {message}"
    assert sel.cost_estimate is None


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        pytest.param(
            "quantity('bad') == quantity('1')",
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
            id="quantity-not-folded",
        ),
        pytest.param(
            "int([1][0] + 0) == int('x' + device.driver)",
            "type conversion error from 'string' to 'int'",
            id="non-constant",
        ),
        pytest.param(
            "'a'.find('(' + device.driver) == ''",
            "Illegal regex: error parsing regexp: missing closing ): `(gpu.example.com`",
            id="find-runtime",
        ),
        pytest.param(
            "'a'.matches('a**' + device.driver)",
            "error parsing regexp: invalid nested repetition operator: `**`",
            id="go-wording",
        ),
        pytest.param(
            "'a'.matches('\\\\C' + device.driver)",
            "error parsing regexp: invalid escape sequence: `\\C`",
            id="no-any-byte",
        ),
        pytest.param(
            "semver('1.0.0')",
            "CEL result of type kubernetes.Semver could not be converted to bool: "
            "type conversion error from 'Semver' to 'bool'",
            id="non-bool-result",
        ),
    ],
)
def test_runtime_errors(expr: str, message: str) -> None:
    sel = compile_any(expr) if expr.startswith("semver") else compile_selector(expr)
    assert sel.error is None, sel.error
    with pytest.raises(CelRuntimeError) as info:
        sel.evaluate(_VIEW)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("expr", "column", "message"),
    [
        pytest.param(
            "'%%'.format([1])",
            12,
            "too many arguments supplied to string.format (expected 0, got 1)",
            id="too-many",
        ),
        pytest.param(
            "'%d'.format(['x'])",
            14,
            "error during formatting: decimal clause can only be used on integers, was given string",
            id="decimal",
        ),
        pytest.param(
            "'%e'.format([1])",
            14,
            "error during formatting: scientific clause can only be used on doubles, was given int",
            id="scientific",
        ),
        pytest.param("'%d %d'.format([1])", 15, "index 1 out of range", id="too-few"),
        pytest.param("'%'.format([1])", 11, "unexpected end of string", id="dangling"),
        pytest.param(
            "'%.2'.format([1])",
            13,
            "could not parse formatting clause: error while parsing precision: could not find end of precision specifier",
            id="precision",
        ),
        pytest.param(
            "'%s'.format([[optional.of(1)]])",
            26,
            "error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, "
            "maps, lists, types, durations, and timestamps, was given optional_type",
            id="nested-string-clause",
        ),
    ],
)
def test_literal_format_calls_are_validated(expr: str, column: int, message: str) -> None:
    err = compile_any(expr).error
    assert err is not None
    assert str(err).startswith(f"compilation failed: ERROR: <input>:1:{column}: {message}\n"), str(err)


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        pytest.param("'%.2f'.format([1234567.0])", "1,234,567.00", id="grouping"),
        pytest.param("'%f'.format([-0.0])", "0.000000", id="negative-zero"),
        pytest.param("'%f'.format(['-Infinity'])", "-∞", id="infinity-string"),
        pytest.param("'%e'.format([1234567.0])", "1.234567×10⁰⁶", id="scientific"),
        pytest.param("'%.2e'.format([0.000123])", "1.230000×10⁻⁰⁴", id="precision-is-width"),
        pytest.param("'%e'.format([double('NaN')])", "   NaN", id="nan-padded"),
        pytest.param(
            "'%s'.format([[1.5, 'a', b'x', null, true, {'k': 2}]])",
            '[1.500000, "a", b"x", null, true, {"k":2}]',
            id="quoted-elements",
        ),
        pytest.param("'%s'.format([{1: 'a', 2: 'b'}])", '{1:"a", 2:"b"}', id="map"),
        pytest.param("'%s=%d'.format(['x', 1].map(v, dyn(v)))", "x=1", id="dynamic-list"),
        pytest.param("{'a': 1, 'a': 2}['a']", 2, id="repeated-map-key"),
        pytest.param("device.attributes['x.y'].absent in []", False, id="empty-list-membership-skips-left"),
        pytest.param("optional.none().orValue(false)", False, id="none-is-generic"),
        pytest.param(
            "list == type([1]) && google.protobuf.Duration == type(duration('1s'))", True, id="type-names"
        ),
    ],
)
def test_values(expr: str, value: Any) -> None:
    r = evaluate_expression(expr)
    assert r.error is None, r.error
    assert r.value == value


def test_dyn_is_not_a_type_name() -> None:
    err = compile_any("dyn == int").error
    assert err is not None
    assert "undeclared reference to 'dyn'" in str(err)
