"""Allocator corners beyond what the API server stores, each answered as DRA v0.37.2 answers it.

Expected texts are the oracle's (upstream's allocator behind ``dra-oracle``); the end-to-end
scenarios with the recorded oracle answers are in ``tests/differential/regressions/``.
"""

from __future__ import annotations

from typing import Any

import pytest

from drakit.allocator import allocate, has_allocation
from drakit.allocator.nodeselector import go_string, parse_error
from drakit.corev1 import node_selector_matches
from drakit.features import Features
from tests.unit.allocator.builders import (
    claim,
    device,
    device_class,
    exact,
    first_available,
    node,
    slice_,
    sub,
)

GATES = Features().with_gates("DRAPrioritizedList=true,DRAPartitionableDevices=true,DRAAdminAccess=true")
FORTY = [device(f"d{i}") for i in range(40)]


def run(
    slices: list[dict[str, Any]], claims: list[dict[str, Any]], classes: list[dict[str, Any]] | None = None
) -> Any:
    return allocate(
        node=node(), slices=slices, classes=classes or [device_class()], claims=claims, features=GATES
    )


# --- the 32-devices-per-claim limit, request by request ---------------------------------------


@pytest.mark.parametrize(
    ("requests", "message"),
    [
        pytest.param(
            [exact("r0", count=33)],
            "claim default/c, request r0: adding 33 devices exceeds the claim limit of 32, with 0 already accounted for",
            id="first-request",
        ),
        pytest.param(
            [exact("r0", count=20), exact("r1", count=20), exact("r2", cls="no-such-class")],
            "claim default/c, request r1: adding 20 devices exceeds the claim limit of 32, with 20 already accounted for",
            id="limit-before-a-later-requests-own-error",
        ),
        pytest.param(
            [exact("r0", count=30), first_available("r1", sub("a", count=5), sub("b", count=3))],
            "claim default/c, request r1: adding 3 devices exceeds the claim limit of 32, with 30 already accounted for",
            id="subrequests-count-their-minimum",
        ),
        pytest.param(
            [exact("r0", count=20), exact("r1", cls="no-such-class"), exact("r2", count=20)],
            "claim default/c, request r1: could not retrieve device class no-such-class: "
            'deviceclass.resource.k8s.io "no-such-class" not found',
            id="an-earlier-requests-error-comes-first",
        ),
        pytest.param(
            [exact("r0", allocationMode="All"), exact("r1")],
            "claim default/c, request r0: adding 40 devices exceeds the claim limit of 32, with 0 already accounted for",
            id="all-mode-counts-matching-devices",
        ),
    ],
)
def test_claim_limit_is_checked_per_request(requests: list[dict[str, Any]], message: str) -> None:
    out = run([slice_("s", FORTY)], [claim("c", *requests)])
    assert (out.status, out.message) == ("error", message)


def test_exactly_32_devices_fit() -> None:
    out = run([slice_("s", FORTY)], [claim("c", exact("r0", count=16), exact("r1", count=16))])
    assert out.status == "allocated", out.message


# --- a present but empty allocation counts as allocated ---------------------------------------


@pytest.mark.parametrize(
    ("status", "allocated"),
    [
        pytest.param({"allocation": {}}, True, id="empty-allocation"),
        pytest.param({"allocation": {"devices": {}}}, True, id="empty-devices"),
        pytest.param({"allocation": {"devices": {"results": []}}}, True, id="no-results"),
        pytest.param({"allocation": None}, False, id="null-allocation"),
        pytest.param({}, False, id="empty-status"),
        pytest.param(
            {"reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]}, False, id="reserved-only"
        ),
    ],
)
def test_allocation_is_key_presence(status: dict[str, Any], allocated: bool) -> None:
    odd = claim("odd", exact("r", cls="gone"))  # a class that no longer exists: fatal only if allocated now
    odd["status"] = status
    assert has_allocation(odd) is allocated
    out = run([slice_("s", FORTY[:1])], [odd, claim("c", exact("r"))])
    if allocated:
        assert out.status == "allocated", out.message
        assert [c["metadata"]["name"] for c in out.claims] == ["c"]
    else:
        assert out.status == "error"
        assert "could not retrieve device class gone" in out.message


# --- pool gathering -----------------------------------------------------------------------------

_COUNTERS = [{"name": "set", "counters": {"mem": {"value": "10"}}}]
_CONSUMER = device("d0", consumesCounters=[{"counterSet": "set", "counters": {"mem": {"value": "5"}}}])


@pytest.mark.parametrize(
    ("slices", "status", "message"),
    [
        pytest.param(
            [
                slice_("s", [], count=2, node_name="node-2", sharedCounters=_COUNTERS),
                slice_("s", [_CONSUMER], count=2),
            ],
            "error",
            "invalid resource pools were encountered",
            id="same-name-counter-slice-elsewhere-is-skipped",
        ),
        pytest.param(
            [
                slice_("s", [_CONSUMER], count=2),
                slice_("s", [], count=2, node_name="node-2", sharedCounters=_COUNTERS),
            ],
            "error",
            "invalid resource pools were encountered",
            id="same-name-either-order",
        ),
        pytest.param(
            [slice_("s", [], count=2, sharedCounters=_COUNTERS), slice_("s", [_CONSUMER], count=2)],
            "allocated",
            "",
            id="same-name-both-on-the-node-count-twice",
        ),
        pytest.param(
            [
                slice_("c", [], count=2, node_name="node-2", sharedCounters=_COUNTERS),
                slice_("s", [_CONSUMER], count=2),
            ],
            "allocated",
            "",
            id="distinct-names-counter-slice-elsewhere",
        ),
    ],
)
def test_slices_sharing_a_name(slices: list[dict[str, Any]], status: str, message: str) -> None:
    out = run(slices, [claim("c", exact("r"))])
    assert (out.status, out.message) == (status, message)


def _terms(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeSelectorTerms": list(terms)}


_TWO_NAMES = _terms(
    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1", "node-2"]}]}
)
_TWO_NAMES_GO = (
    "&NodeSelector{NodeSelectorTerms:[]NodeSelectorTerm{NodeSelectorTerm{MatchExpressions:[]NodeSelectorRequirement{},"
    "MatchFields:[]NodeSelectorRequirement{NodeSelectorRequirement{Key:metadata.name,Operator:In,Values:[node-1 node-2],},},},},}"
)
_QNAME = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


@pytest.mark.parametrize(
    ("selector", "errors"),
    [
        pytest.param(
            _TWO_NAMES,
            'nodeSelectorTerms[0].matchFields[0].values: Invalid value: ["node-1","node-2"]: must have one element',
            id="multi-valued-matchFields",
        ),
        pytest.param(
            _terms({"matchFields": [{"key": "metadata.name", "operator": "In"}]}),
            "nodeSelectorTerms[0].matchFields[0].values: Invalid value: null: must have one element",
            id="matchFields-without-values-prints-nil-as-null",
        ),
        pytest.param(
            _terms({"matchFields": [{"key": "metadata.name", "operator": "Exists"}]}),
            'nodeSelectorTerms[0].matchFields[0].operator: Unsupported value: "Exists": supported values: "In", "NotIn"',
            id="matchFields-operator",
        ),
        pytest.param(
            _terms({"matchExpressions": [{"key": "region", "operator": "Gt", "values": ["x"]}]}),
            "nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer",
            id="gt-needs-an-integer",
        ),
        pytest.param(
            _terms({"matchExpressions": [{"key": "region", "operator": "In", "values": ["a b"]}]}),
            'nodeSelectorTerms[0].matchExpressions[0].values[0][region]: Invalid value: "a b": a valid label must be an '
            "empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
            "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            id="label-value",
        ),
        pytest.param(
            _terms(
                {
                    "matchExpressions": [{"key": "-x", "operator": "In", "values": []}],
                    "matchFields": [{"key": "metadata.name", "operator": "Exists"}],
                }
            ),
            f'[nodeSelectorTerms[0].matchExpressions[0].key: Invalid value: "-x": {_QNAME}, '
            "nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty, "
            'nodeSelectorTerms[0].matchFields[0].operator: Unsupported value: "Exists": supported values: "In", "NotIn"]',
            id="every-error-flattened",
        ),
        pytest.param(
            _terms(
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": []}]},
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": []}]},
            ),
            "[nodeSelectorTerms[0].matchFields[0].values: Invalid value: []: must have one element, "
            "nodeSelectorTerms[1].matchFields[0].values: Invalid value: []: must have one element]",
            id="one-per-term",
        ),
    ],
)
def test_unparsable_slice_node_selector_fails_pool_gathering(selector: dict[str, Any], errors: str) -> None:
    out = run([slice_("s", FORTY[:1], node_name=None, nodeSelector=selector)], [claim("c", exact("r"))])
    assert out.status == "error"
    prefix = "gather pool information: failed to perform node selection for slice s: failed to parse node selector "
    assert out.message == f"{prefix}{go_string(selector)}: {errors}"


def test_go_string_of_a_selector() -> None:
    assert go_string(_TWO_NAMES) == _TWO_NAMES_GO


def test_per_device_selector_errors() -> None:
    gathered = slice_(
        "s",
        [device("d0", nodeSelector=_TWO_NAMES), device("d1", nodeName="node-1")],
        node_name=None,
        perDeviceNodeSelection=True,
    )
    out = run([gathered], [claim("c", exact("r"))])
    # Upstream prints the whole Device struct here (with pointer addresses); drakit names it.
    assert out.message == (
        f"gather pool information: failed to perform node selection for device d0 in slice s: "
        f"failed to parse node selector {_TWO_NAMES_GO}: {parse_error(_TWO_NAMES).split(': ', 1)[1]}"
    )
    # A slice already relevant through an earlier device is gathered; the bad device fails
    # when the search reaches it, with the bare parse error.
    later = slice_(
        "s",
        [device("d0", nodeName="node-1"), device("d1", nodeSelector=_TWO_NAMES)],
        node_name=None,
        perDeviceNodeSelection=True,
    )
    out = run([later], [claim("c", exact("r", count=2))])
    assert (out.status, out.message) == ("error", parse_error(_TWO_NAMES))


def test_multi_term_selector_names_the_claim() -> None:
    selector = _terms({}, {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]})
    out = run([slice_("s", FORTY[:1], node_name=None, nodeSelector=selector)], [claim("c", exact("r"))])
    assert (
        out.message == "create NodeSelector for claim c: unsupported ResourceSlice.NodeSelector with 2 terms"
    )


@pytest.mark.parametrize(
    ("selector", "want"),
    [
        pytest.param(
            _terms({"matchExpressions": [{"key": "signed", "operator": "Gt", "values": ["3"]}]}),
            True,
            id="gt-signed-label",
        ),
        pytest.param(
            _terms({"matchExpressions": [{"key": "n", "operator": "Lt", "values": ["1_0"]}]}),
            False,
            id="go-int-syntax",
        ),
        pytest.param(
            _terms({"matchExpressions": [{"key": "n", "operator": "Gt", "values": ["+3"]}]}),
            False,
            id="not-a-label-value",
        ),
        pytest.param(
            _terms({"matchFields": [{"key": "spec.unschedulable", "operator": "NotIn", "values": ["x"]}]}),
            True,
            id="unknown-field-reads-empty",
        ),
        pytest.param(
            _terms(
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]},
                {"matchExpressions": [{"key": "n", "operator": "Exists"}]},
            ),
            True,
            id="an-unparsable-term-alone-matches-nothing",
        ),
        pytest.param(_terms({}), False, id="empty-term"),
    ],
)
def test_matching(selector: dict[str, Any], want: bool) -> None:
    assert node_selector_matches(node("node-1", n="5", signed="+5"), selector) is want


# --- distinctAttribute, as v0.37.2's matchesAttribute -------------------------------------------


def _versioned(name: str, **attrs: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "attributes": attrs}


@pytest.mark.parametrize(
    ("first", "second", "distinct"),
    [
        pytest.param({"version": "2.0.0"}, {"version": "2.0.0+build.1"}, True, id="build-metadata-is-another-version"),
        pytest.param({"version": "2.0.0"}, {"version": "2.0.0"}, False, id="same-version"),
        pytest.param({"string": "2.0.0"}, {"version": "2.0.0"}, True, id="different-types-never-collide"),
        pytest.param({"int": 1}, {"int": 1}, False, id="same-int"),
    ],
)
def test_distinct_attribute_values(first: dict[str, Any], second: dict[str, Any], distinct: bool) -> None:
    devices = [_versioned("d0", v=first), _versioned("d1", v=second)]
    constraint = [{"distinctAttribute": "gpu.example.com/v"}]
    out = run([slice_("s", devices)], [claim("c", exact("r", count=2), constraints=constraint)])
    assert out.status == ("allocated" if distinct else "unsatisfiable"), out.message
