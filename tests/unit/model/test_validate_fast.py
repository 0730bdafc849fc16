"""The shortcuts that keep validation of a 40,000-device inventory cheap answer like the full checks."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from drakit.errors import ErrorType
from drakit.features import Features
from drakit.model._base import to_wire
from drakit.model.slice import Device, DeviceAttribute, ResourceSlice
from drakit.model.validate import (
    _Errs,
    _may_drop,
    _plain_device,
    _validate_device,
    drop_disabled_fields,
    validate_object,
)
from tests.builders import Builder, ClaimBuilder, NodeBuilder, PodBuilder, SliceBuilder

OFF = Features()  # every gate a slice field hangs on is off
INV = ErrorType.INVALID
TAINT = {"key": "example.com/broken", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("builder", "may_drop"),
    [
        pytest.param(SliceBuilder(), False, id="plain-slice"),
        pytest.param(SliceBuilder().attribute(0, "model", string="x"), False, id="scalar-attribute"),
        pytest.param(NodeBuilder(), False, id="node"),
        pytest.param(PodBuilder(), False, id="pod"),
        pytest.param(SliceBuilder().set("spec.devices[0].taints", [TAINT]), True, id="taints"),
        pytest.param(SliceBuilder().set("spec.devices[0].allNodes", None), True, id="all-nodes-null"),
        pytest.param(SliceBuilder().set("spec.devices[0].bindsToNode", True), True, id="binds-to-node"),
        pytest.param(SliceBuilder().set("spec.devices[0].bindingConditions", ["a"]), True, id="binding-conditions"),
        pytest.param(SliceBuilder().set("spec.devices[0].allowMultipleAllocations", True), True, id="multiple-allocations"),
        pytest.param(SliceBuilder().set("spec.devices[0].consumesCounters", []), True, id="consumes-counters"),
        pytest.param(SliceBuilder().set("spec.perDeviceNodeSelection", True), True, id="per-device-node-selection"),
        pytest.param(SliceBuilder().set("spec.sharedCounters", []), True, id="shared-counters"),
        pytest.param(SliceBuilder().capacity(0, "mem", "10", requestPolicy={"default": "1"}), True, id="request-policy"),
        pytest.param(SliceBuilder().set("spec.devices[0].attributes", {"a": {"ints": [1]}}), True, id="list-attribute"),
        pytest.param(ClaimBuilder(), True, id="claim-always-dumped"),
    ],
)
def test_may_drop_never_misses_a_field_the_drop_removes(builder: Builder, may_drop: bool) -> None:
    obj = builder.obj()
    assert _may_drop(obj, OFF) is may_drop
    if not may_drop:
        assert drop_disabled_fields(str(obj.kind), to_wire(obj), OFF) == []


def _attributes(attrs: dict[str, Any]) -> list[tuple[str, ErrorType]]:
    errs, _ = validate_object(SliceBuilder().set("spec.devices[0].attributes", attrs).obj(), Features.all_on())
    return [(e.path, e.type) for e in errs]


@pytest.mark.parametrize(
    ("attrs", "want"),
    [
        pytest.param({"a": {"string": "x"}}, [], id="string"),
        pytest.param({"a": {"version": "1.2.3"}}, [], id="version"),
        pytest.param({"a": {"version": "1.2"}}, [("spec.devices[0].attributes[a].version", INV)], id="not-semver"),
        pytest.param({"a": {"string": None}}, [("spec.devices[0].attributes[a]", INV)], id="explicit-null-only"),
        pytest.param({"a": {"int": 1, "string": None}}, [], id="explicit-null-beside-a-value"),
        pytest.param({"a": {"int": 1, "bool": True}}, [("spec.devices[0].attributes[a]", INV)], id="two-values"),
        pytest.param({"a": {}}, [("spec.devices[0].attributes[a]", INV)], id="no-value"),
        pytest.param({"a": {"ints": None, "int": 2}}, [], id="null-list-beside-a-value"),
        pytest.param({"a": {"ints": [], "int": 2}},
                     [("spec.devices[0].attributes[a].ints", INV), ("spec.devices[0].attributes[a]", INV)],
                     id="empty-list-beside-a-value"),
        pytest.param({"a": {"string": "x" * 65}}, [("spec.devices[0].attributes[a].string", ErrorType.TOO_LONG)],
                     id="string-too-long"),
    ],
)
def test_attribute_shortcut_agrees_with_the_full_checks(attrs: dict[str, Any], want: list[tuple[str, ErrorType]]) -> None:
    assert _attributes(attrs) == want


def _device_errors(builder: SliceBuilder) -> tuple[bool, list[str]]:
    """The device shortcut's answer and what the full per-device checks find (run first: they
    record the names found valid, as the first device of a slice does)."""
    slice_ = builder.obj()
    assert isinstance(slice_, ResourceSlice)
    device = slice_.spec.devices[0]
    errs = _Errs()
    _validate_device(errs, device, "spec.devices[0]", False)
    return _plain_device(device), [e.path for e in errs.items]


@pytest.mark.parametrize(
    ("builder", "plain"),
    [
        pytest.param(SliceBuilder(), True, id="plain-device"),
        pytest.param(SliceBuilder().attribute(0, "model", string="x").attribute(0, "v", version="1.2.3")
                     .attribute(0, "n", int=3).attribute(0, "b", bool=True), True, id="scalar-attributes"),
        pytest.param(SliceBuilder().capacity(0, "memory", "80Gi"), True, id="capacity"),
        pytest.param(SliceBuilder().set("spec.devices[0].name", "GPU_0"), False, id="bad-name"),
        pytest.param(SliceBuilder().attribute(0, "a/b/c", string="x"), False, id="bad-attribute-name"),
        pytest.param(SliceBuilder().attribute(0, "v", version="1.2"), False, id="not-semver"),
        pytest.param(SliceBuilder().attribute(0, "s", string="x" * 65), False, id="string-too-long"),
        pytest.param(SliceBuilder().attribute(0, "s", string="é" * 40), False, id="non-ascii-string"),
        pytest.param(SliceBuilder().set("spec.devices[0].attributes", {f"a{i}": {"int": i} for i in range(33)}),
                     False, id="too-many-attributes"),
        pytest.param(SliceBuilder().set("spec.devices[0].attributes", {"a": {"ints": [1]}}), False, id="list-attribute"),
        pytest.param(SliceBuilder().set("spec.devices[0].taints", [TAINT]), False, id="taints"),
        pytest.param(SliceBuilder().set("spec.devices[0].nodeName", "n1"), False, id="node-name-without-per-device"),
        pytest.param(SliceBuilder().set("spec.devices[0].allNodes", False), False, id="all-nodes"),
        pytest.param(SliceBuilder().set("spec.devices[0].bindingConditions", ["a"]), False, id="binding-conditions"),
        pytest.param(SliceBuilder().set("spec.devices[0].consumesCounters", [{"counterSet": "x", "counters": {}}]),
                     False, id="consumes-counters"),
        pytest.param(SliceBuilder().capacity(0, "mem", "10", requestPolicy={"default": "1"}), False, id="request-policy"),
    ],
)
def test_device_shortcut_is_taken_only_where_the_full_checks_find_nothing(builder: SliceBuilder, plain: bool) -> None:
    shortcut, found = _device_errors(builder)
    assert shortcut is plain
    if shortcut:
        assert found == []


_SCHEMA = TypeAdapter(dict[str, DeviceAttribute])  # the attributes' schema without the shortcut
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=False),
                     st.text(max_size=3), st.lists(st.integers(0, 3), max_size=2))
_ATTRIBUTE = st.one_of(
    st.dictionaries(st.sampled_from(["int", "bool", "string", "version", "ints", "strings", "other"]), _SCALARS,
                    max_size=2),
    _SCALARS,
)


def _typed_attributes(attrs: Any) -> tuple[Any, list[tuple[Any, ...]]]:
    """The device's typed attributes, or the errors (location and type) that refuse them."""
    try:
        return Device.model_validate({"name": "d", "attributes": attrs}).attributes, []
    except ValidationError as e:
        return None, [(e_["loc"], e_["type"]) for e_ in e.errors()]


def _schema_attributes(attrs: Any) -> tuple[Any, list[tuple[Any, ...]]]:
    try:
        return _SCHEMA.validate_python(attrs), []
    except ValidationError as e:
        return None, [(("attributes", *e_["loc"]), e_["type"]) for e_ in e.errors()]


@pytest.mark.parametrize(
    "attrs",
    [
        pytest.param({"a": {"string": "x"}, "b": {"int": 3}, "c": {"bool": False}, "d": {"version": "1.0.0"}}, id="scalars"),
        pytest.param({"a": {"int": True}}, id="bool-as-int"),
        pytest.param({"a": {"bool": 1}}, id="int-as-bool"),
        pytest.param({"a": {"string": 1.5}}, id="float-as-string"),
        pytest.param({"a": {"string": None}}, id="null"),
        pytest.param({"a": {"ints": [1]}}, id="list-form"),
        pytest.param({"a": {"colour": "red"}}, id="unknown-key"),
        pytest.param({"a": "x"}, id="not-an-object"),
        pytest.param({1: {"int": 1}}, id="int-name"),
        pytest.param([], id="not-a-map"),
    ],
)
def test_attribute_typing_shortcut_answers_like_the_schema(attrs: Any) -> None:
    assert _typed_attributes(attrs) == _schema_attributes(attrs)


@given(st.dictionaries(st.text(max_size=2), _ATTRIBUTE, max_size=3))
def test_attribute_typing_shortcut_answers_like_the_schema_everywhere(attrs: dict[str, Any]) -> None:
    assert _typed_attributes(attrs) == _schema_attributes(attrs)
