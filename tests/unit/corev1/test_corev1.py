"""``drakit.corev1`` against upstream's own tables (and the answers upstream's code gave on them).

``upstream_tables.json`` holds the cases of ``nodeaffinity_test.go`` (component-helpers) and
``toleration_test.go`` (k8s.io/api) at v0.37.2, each with the result upstream's functions
returned when the tables were run (``got``), so a disagreement names the upstream behaviour.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from drakit.allocator.nodeselector import parse_error
from drakit.corev1 import (
    cpu_millis,
    find_untolerated_taint,
    memory_bytes,
    node_selector_matches,
    parse_node_selector,
    pod_matches_node_affinity,
    tolerates,
    tolerates_device_taint,
)
from drakit.quantity import QuantityError

TABLES = json.loads((Path(__file__).parent / "upstream_tables.json").read_text(encoding="utf-8"))


def _cases(name: str) -> list[Any]:
    return [pytest.param(row, id=row["name"][:70]) for row in TABLES[name]]


@pytest.mark.parametrize("row", _cases("node_selector"))
def test_node_selector_upstream(row: dict[str, Any]) -> None:
    selector = parse_node_selector(row["nodeSelector"])
    if "error" in row:  # NewNodeSelector refuses it: the allocator's message is upstream's word for word
        assert parse_error(row["nodeSelector"]).split(": ", 1)[1] == row["error"]
        return
    assert selector.errors == ()
    assert selector.matches(row["node"] or {}) is row["got"] is row["wantMatch"]


@pytest.mark.parametrize("row", _cases("pod_affinity"))
def test_pod_node_affinity_upstream(row: dict[str, Any]) -> None:
    assert pod_matches_node_affinity(row["pod"], row["node"]) is row["got"] is row["want"]


@pytest.mark.parametrize("row", _cases("toleration"))
def test_toleration_upstream(row: dict[str, Any]) -> None:
    got = tolerates(row["toleration"], row["taint"], comparison_operators=row["comparison"])
    assert got is row["got"] is row["want"]


@pytest.mark.parametrize("row", _cases("compare_numeric"))
def test_numeric_comparison_upstream(row: dict[str, Any]) -> None:
    toleration = {"key": "k", "operator": row["operator"], "value": row["toleration"]}
    taint = {"key": "k", "value": row["taint"]}
    # compareNumericValues alone: Equal/Exists rows call it directly and get false
    got = row["operator"] in ("Lt", "Gt") and tolerates(toleration, taint, comparison_operators=True)
    assert got is row["got"] is row["want"]


NODE = {"metadata": {"name": "n1", "labels": {"zone": "a", "gpus": "8"}}}


@pytest.mark.parametrize(
    ("selector", "want"),
    [
        pytest.param({}, False, id="no-terms-matches-nothing"),
        pytest.param({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                               "values": ["n1"]}]}]}, True, id="name"),
        pytest.param({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                               "values": ["n2"]}]}]}, False, id="other-name"),
        pytest.param({"nodeSelectorTerms": [{"matchExpressions": [{"key": "x", "operator": "Exists"}]}]},
                     False, id="missing-label"),
        pytest.param({"nodeSelectorTerms": [{}]}, False, id="empty-term-matches-nothing"),
        pytest.param({"nodeSelectorTerms": [{}, {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}]},
                     True, id="empty-term-skipped"),
        pytest.param({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                               "values": ["n1", "n2"]}]}]},
                     False, id="match-fields-two-values-is-an-error"),
        pytest.param({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "Exists"}]}]},
                     False, id="match-fields-exists-not-supported"),
        pytest.param({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.uid", "operator": "NotIn",
                                                               "values": ["x"]}]}]},
                     True, id="unknown-field-reads-empty"),
        pytest.param({"nodeSelectorTerms": [{"matchExpressions": [{"key": "gpus", "operator": "Gt",
                                                                    "values": ["4"]}]}]}, True, id="gt"),
        pytest.param({"nodeSelectorTerms": [{"matchExpressions": [{"key": "gpus", "operator": "Gt",
                                                                    "values": ["4_0"]}]}]},
                     False, id="gt-parse-int-is-strict"),
        pytest.param({"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In",
                                                                    "values": []}]}]},
                     False, id="in-without-values-is-an-error"),
        pytest.param({"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "NotIn",
                                                                    "values": ["b"]}]}]}, True, id="notin"),
    ],
)  # fmt: skip
def test_node_selector_contract(selector: dict[str, Any], want: bool) -> None:
    assert node_selector_matches(NODE, selector) is want


def test_parse_errors_carry_paths() -> None:
    selector = parse_node_selector(
        {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a b", "operator": "Near"}, {"key": "ok", "operator": "Gt", "values": ["x"]}]}]},
        "spec.nodeSelector",
    )
    assert [str(e).split(":")[0] for e in selector.errors] == [
        "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].operator",
        "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[1].values[0]",
    ]


def _expr(**req: Any) -> dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchExpressions": [req]}]}


_KEY_SHAPE = (
    "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation "
    "is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
    "(e.g. 'example.com/MyName')"
)


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        pytest.param(_expr(key="a/b/c", operator="Exists"),
                     f'nodeSelectorTerms[0].matchExpressions[0].key: Invalid value: "a/b/c": {_KEY_SHAPE}',
                     id="label-key-wording-not-qualified-name"),
        pytest.param(_expr(key="k", operator="In"),
                     "nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: null: "
                     "for 'in', 'notin' operators, values set can't be empty",
                     id="absent-values-print-as-nil"),
        pytest.param(_expr(key="k", operator="Gt", values=["1", "2"]),
                     'nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: ["1","2"]: '
                     "for 'Gt', 'Lt' operators, exactly one value is required",
                     id="lists-print-as-compact-json"),
        pytest.param({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                              "values": ["é<", "x"]}]}]},
                     'nodeSelectorTerms[0].matchFields[0].values: Invalid value: ["é\\u003c","x"]: must have one element',
                     id="json-keeps-utf8-escapes-html"),
        pytest.param(_expr(key="k"),
                     'nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "": supported values: '
                     '"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
                     id="absent-operator-is-empty-string"),
    ],
)  # fmt: skip
def test_parse_error_texts(selector: dict[str, Any], message: str) -> None:
    """Go's field.Error wording for what upstream's tables do not cover (checked against v0.37.2's source)."""
    assert [str(e) for e in parse_node_selector(selector).errors] == [message]


def test_nameless_node_skips_match_fields() -> None:
    """Upstream extracts no fields from a node without a name and then ignores matchFields."""
    sel = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["x"]}]}]}
    assert node_selector_matches({"metadata": {}}, sel) is True


@pytest.mark.parametrize(
    ("spec", "want"),
    [
        pytest.param({}, True, id="no-constraint"),
        pytest.param({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}},
                     False, id="required-without-terms"),
        pytest.param({"nodeSelector": {"zone": "a"}}, True, id="node-selector"),
        pytest.param({"nodeSelector": {"zone": "b"}}, False, id="node-selector-mismatch"),
    ],
)  # fmt: skip
def test_pod_affinity_contract(spec: dict[str, Any], want: bool) -> None:
    assert pod_matches_node_affinity(spec, NODE) is want


@pytest.mark.parametrize(
    ("toleration", "want"),
    [
        pytest.param({"operator": "Exists"}, True, id="wildcard"),
        pytest.param({"key": "gpu", "operator": "Equal", "value": "bad"}, True, id="equal"),
        pytest.param({"key": "gpu", "value": "bad"}, True, id="default-operator-equal"),
        pytest.param({"value": "bad"}, True, id="empty-key-equal-compares-values-only"),
        pytest.param({"key": "gpu", "operator": "Gt", "value": "1"}, False, id="device-no-comparison"),
        pytest.param({"key": "gpu", "operator": "Exists", "effect": "NoExecute"}, False, id="other-effect"),
    ],
)
def test_device_toleration(toleration: dict[str, Any], want: bool) -> None:
    assert tolerates_device_taint(toleration, {"key": "gpu", "value": "bad", "effect": "NoSchedule"}) is want


def test_find_untolerated_taint_filters_effects() -> None:
    taints = [{"key": "a", "effect": "PreferNoSchedule"}, {"key": "b", "effect": "NoSchedule"}]
    assert find_untolerated_taint(taints, [], ("NoSchedule", "NoExecute")) == taints[1]
    assert find_untolerated_taint(taints, [{"key": "b", "operator": "Exists"}], ("NoSchedule",)) is None


@pytest.mark.parametrize(
    ("value", "millis"),
    [
        pytest.param("100m", 100, id="milli"),
        pytest.param("0.1", 100, id="decimal-exact"),
        pytest.param(2, 2000, id="int"),
        pytest.param(0.5, 500, id="yaml-float"),
        pytest.param("1u", 1, id="rounds-up"),
        pytest.param("1k", 1_000_000, id="kilo"),
    ],
)
def test_cpu_millis(value: Any, millis: int) -> None:
    assert cpu_millis(value) == millis


@pytest.mark.parametrize(
    ("value", "size"),
    [
        pytest.param("1.5Gi", 1_610_612_736, id="binary-fraction"),
        pytest.param("80G", 80_000_000_000, id="decimal"),
        pytest.param("1e3", 1000, id="exponent"),
        pytest.param("0.5", 1, id="rounds-up"),
    ],
)
def test_memory_bytes(value: str, size: int) -> None:
    assert memory_bytes(value) == size


@pytest.mark.parametrize("value", ["1 Gi", "ten", True, None, [1], float("nan"), "1GB"])
def test_bad_quantities_raise_value_errors(value: Any) -> None:
    with pytest.raises(QuantityError):
        memory_bytes(value)


# The TaintTolerationComparisonOperators gate (alpha 1.35-1.37, off by default) from the command
# line to the scheduler's TaintToleration verdict.
_ERRORS_TAINT = {"key": "gpu.example.com/errors", "value": "3", "effect": "NoSchedule"}


@pytest.mark.parametrize(("toleration", "gate", "excluded"), [
    pytest.param({"key": "gpu.example.com/errors", "operator": "Lt", "value": "5"}, True, False, id="lt-gate-on"),
    pytest.param({"key": "gpu.example.com/errors", "operator": "Lt", "value": "5"}, False, True, id="lt-gate-off"),
    pytest.param({"key": "gpu.example.com/errors", "operator": "Lt", "value": "3"}, True, True, id="lt-equal"),
    pytest.param({"key": "gpu.example.com/errors", "operator": "Gt", "value": "2"}, True, False, id="gt"),
    pytest.param({"key": "gpu.example.com/errors", "operator": "Gt", "value": "+2"}, True, True, id="gt-sign"),
    pytest.param({"operator": "Exists"}, False, False, id="exists"),
])
def test_comparison_tolerations_follow_the_gate(toleration: dict[str, Any], gate: bool, excluded: bool) -> None:
    from drakit.explain.diagnose import node_exclusion
    from drakit.features import Features

    feats = Features.for_version().with_gates(f"TaintTolerationComparisonOperators={str(gate).lower()}")
    assert feats.taint_comparison_operators is gate and not Features.for_version().taint_comparison_operators
    assert "TaintTolerationComparisonOperators" not in feats.gate_string()  # the oracle knows DRA gates only
    pod = {"spec": {"tolerations": [toleration]}}
    node = {"metadata": {"name": "n"}, "spec": {"taints": [_ERRORS_TAINT]}}
    why = node_exclusion(pod, node, comparison_operators=feats.taint_comparison_operators)
    assert bool(why) is excluded and (not why or why == "node(s) had untolerated taint(s)")
