"""The shortcuts that keep validation of a 40,000-device inventory cheap answer like the full checks."""

from __future__ import annotations

from typing import Any

import pytest

from drakit.errors import ErrorType
from drakit.features import Features
from drakit.model._base import to_wire
from drakit.model.validate import _may_drop, drop_disabled_fields, validate_object
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
