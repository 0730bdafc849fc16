"""Checker error texts, host checks and the cost estimator."""

from __future__ import annotations

import pytest

from drakit.features import Features
from drakit.selectors import compile_any, compile_selector


@pytest.mark.parametrize(
    ("expr", "fragment"),
    [
        pytest.param("noSuchVar", "undeclared reference to 'noSuchVar' (in container '')", id="undeclared"),
        pytest.param("foo(1)", "undeclared reference to 'foo' (in container '')", id="undeclared-fn"),
        pytest.param(
            'device.capacity["d"].m < quantity("1Gi")',
            "found no matching overload for '_<_' applied to '(kubernetes.Quantity, kubernetes.Quantity)'",
            id="quantity-less",
        ),
        pytest.param(
            "device.driver == 1",
            "found no matching overload for '_==_' applied to '(string, int)'",
            id="het-eq",
        ),
        pytest.param(
            '"a".contains(1)',
            "found no matching overload for 'contains' applied to 'string.(int)'",
            id="member",
        ),
        pytest.param(
            "quantity(1)", "found no matching overload for 'quantity' applied to '(int)'", id="quantity-int"
        ),
        pytest.param("[1, 'a']", "expected type 'int' but found 'string'", id="homogeneous-list"),
        pytest.param(
            "1.all(x, true)", "expression of type 'int' cannot be range of a comprehension", id="range"
        ),
        pytest.param("device.foo", "undefined field 'foo'", id="undefined-field"),
        pytest.param("1.x", "type 'int' does not support field selection", id="select-int"),
        pytest.param("1 && true", "expected type 'bool' but found 'int'", id="logic-int"),
    ],
)
def test_type_errors(expr: str, fragment: str) -> None:
    c = compile_any(expr)
    assert c.error is not None
    assert fragment in c.error.message, c.error.message


@pytest.mark.parametrize(
    ("expr", "type_name"),
    [
        pytest.param("1", "int", id="int"),
        pytest.param("device.driver", "string", id="string"),
        pytest.param("[1, 2]", "list(int)", id="list"),
        pytest.param("{'a': 1}", "map(string, int)", id="map"),
    ],
)
def test_selectors_must_be_bool(expr: str, type_name: str) -> None:
    c = compile_selector(expr)
    assert c.error is not None
    assert c.error.message == f"must evaluate to bool or the unknown type, not {type_name}"


def test_attribute_result_is_accepted_in_both_environments() -> None:
    expr = 'device.attributes["d"].flag'
    assert compile_selector(expr).error is None
    assert compile_selector(expr, environment="new", features=Features()).error is None


def test_new_environment_gates() -> None:
    off = Features(list_type_attributes=False, consumable_capacity=False)
    on = Features(list_type_attributes=True, consumable_capacity=True)
    inc = 'device.attributes["d"].x.includes(1)'
    multi = "device.allowMultipleAllocations"
    assert compile_selector(inc, environment="new", features=off).error is not None
    assert compile_selector(inc, environment="new", features=on).error is None
    assert compile_selector(inc, environment="stored", features=off).error is None
    assert compile_selector(multi, environment="new", features=off).error is not None
    assert compile_selector(multi, environment="new", features=on).error is None


def test_length_limit_is_validation_of_new_expressions_only() -> None:
    ok = "true" + " " * (10240 - 4)
    assert compile_selector(ok, environment="new").error is None
    c = compile_selector(ok + " ", environment="new")
    assert c.error is not None and "may not be more than 10240 bytes" in c.error.message
    # A stored expression is evaluated whatever its length, up to cel-go's code point limit.
    assert compile_selector(ok + " ").error is None
    huge = compile_selector("true" + " " * 100_000)
    assert huge.error is not None and huge.error.message == (
        "compilation failed: ERROR: <input>:-1:0: expression code point size exceeds limit: "
        "size: 100004, limit 100000"
    )


def test_cost_limit_rejects_new_expressions_only() -> None:
    expr = (
        "[1,2,3,4,5,6,7,8,9,10].all(x, [1,2,3,4,5,6,7,8,9,10].all(y, [1,2,3,4,5,6,7,8,9,10].all(z, "
        "[1,2,3,4,5,6,7,8,9,10].all(w, [1,2,3,4,5,6,7,8,9,10].all(v, [1,2,3,4,5,6,7,8,9,10].all(u, u > 0))))))"
    )
    new = compile_selector(expr, environment="new")
    assert new.error is not None and "too complex, exceeds cost limit" in new.error.message
    stored = compile_selector(expr)
    assert stored.error is None
    assert stored.cost_estimate is not None and stored.cost_estimate > 1_000_000


@pytest.mark.parametrize(
    ("expr", "cost"),
    [
        pytest.param("true", 0, id="literal"),
        pytest.param("device.driver == ''", 2, id="select"),
        pytest.param("[1, 2].size() == 2", 12, id="list-literal"),
        pytest.param("{'a': 1}.size() == 1", 32, id="map-literal"),
        pytest.param('"abc".contains("b")', 1, id="contains"),
        pytest.param('device.driver.matches("^a+$")', 7 * 1 + 2, id="matches"),
        pytest.param('device.attributes["d"].s.startsWith("abc")', 5, id="startsWith"),
        pytest.param(
            "has(device.attributes.x)", 2, id="has"
        ),  # has() is free in Kubernetes (PresenceTestHasCost(false))
        pytest.param("[1,2,3].exists(x, x == 2)", 10 + 1 + 3 * (3 + 3), id="exists-literal-range"),
    ],
)
def test_cost_estimates(expr: str, cost: int) -> None:
    c = compile_selector(expr)
    assert c.error is None, c.error
    assert c.cost_estimate == cost
