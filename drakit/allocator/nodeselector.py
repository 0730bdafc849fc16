"""core/v1 NodeSelector parsing and matching as ``component-helpers/scheduling/corev1/nodeaffinity``.

The allocator parses every node selector it meets (``nodeaffinity.NewNodeSelector``), and a
selector that does not parse aborts pool gathering with upstream's message: the selector
printed as Go's generated ``String()`` and the flattened field errors (``matchFields`` take
one value and only ``In``/``NotIn``; ``matchExpressions`` follow ``labels.NewRequirement``).
The API server rejects such selectors, but a bundle on disk can hold anything.

Matching is :mod:`drakit.corev1`'s (``nodeSelectorTerm.match``, shared with the scheduler and
explain); this module adds what only the allocator needs, upstream's error message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from drakit.corev1 import node_selector_matches
from drakit.model.names import label_key, label_value

_LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_FIELD_OPERATORS = ("In", "NotIn")
_INT64 = re.compile(r"[+-]?[0-9]+")


def _go_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``, or None where Go reports an error."""
    if not _INT64.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def _bad_value(value: Any) -> str:
    """How ``field.Error`` prints a bad value: Go strings quoted, lists as JSON (nil is ``null``)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _invalid(path: str, value: Any, detail: str) -> str:
    return f"{path}: Invalid value: {_bad_value(value)}: {detail}"


def _not_supported(path: str, value: str, supported: Sequence[str]) -> str:
    quoted = ", ".join(json.dumps(v) for v in supported)
    return f"{path}: Unsupported value: {json.dumps(value)}: supported values: {quoted}"


def _label_requirement_errors(req: Mapping[str, Any], path: str) -> list[str]:
    key = str(req.get("key", ""))
    op = req.get("operator")
    raw = req.get("values")
    values = [str(v) for v in raw] if isinstance(raw, list) else []
    if op not in _LABEL_OPERATORS:
        return [_not_supported(f"{path}.operator", str(op or ""), _LABEL_OPERATORS)]
    errs = []
    key_problems = label_key(key)
    if key_problems:
        errs.append(_invalid(f"{path}.key", key, "; ".join(key_problems)))
    if op in ("In", "NotIn") and not values:
        errs.append(_invalid(f"{path}.values", raw, "for 'in', 'notin' operators, values set can't be empty"))
    elif op in ("Exists", "DoesNotExist") and values:
        errs.append(_invalid(f"{path}.values", raw, "values set must be empty for exists and does not exist"))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(
                _invalid(f"{path}.values", raw, "for 'Gt', 'Lt' operators, exactly one value is required")
            )
        for i, v in enumerate(values):
            if _go_int(v) is None:
                errs.append(
                    _invalid(
                        f"{path}.values[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer"
                    )
                )
    for i, v in enumerate(values):
        problems = label_value(v)
        if problems:
            errs.append(_invalid(f"{path}.values[{i}][{key}]", v, "; ".join(problems)))
    return errs


def _field_requirement_errors(req: Mapping[str, Any], path: str) -> list[str]:
    op = req.get("operator")
    raw = req.get("values")
    if op not in _FIELD_OPERATORS:
        return [_not_supported(f"{path}.operator", str(op or ""), _FIELD_OPERATORS)]
    if not isinstance(raw, list) or len(raw) != 1:
        return [_invalid(f"{path}.values", raw, "must have one element")]
    return []


def _is_empty(term: Mapping[str, Any]) -> bool:
    return not term.get("matchExpressions") and not term.get("matchFields")


def _flatten(errs: list[str]) -> str:
    """``errors.Flatten(errors.NewAggregate(errs)).Error()``: deduplicated, bracketed when several."""
    unique = list(dict.fromkeys(errs))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _term_errors(term: Mapping[str, Any], i: int) -> list[str]:
    errs: list[str] = []
    for j, req in enumerate(term.get("matchExpressions") or []):
        errs += _label_requirement_errors(req, f"nodeSelectorTerms[{i}].matchExpressions[{j}]")
    for j, req in enumerate(term.get("matchFields") or []):
        errs += _field_requirement_errors(req, f"nodeSelectorTerms[{i}].matchFields[{j}]")
    return errs


def parse_error(selector: Mapping[str, Any]) -> str:
    """Why ``nodeaffinity.NewNodeSelector`` rejects ``selector``; empty when it parses."""
    errs: list[str] = []
    for i, term in enumerate(selector.get("nodeSelectorTerms") or []):
        if not _is_empty(term):
            errs += _term_errors(term, i)
    if not errs:
        return ""
    return f"failed to parse node selector {go_string(selector)}: {_flatten(errs)}"


def _go_requirements(reqs: Sequence[Mapping[str, Any]]) -> str:
    out = "[]NodeSelectorRequirement{"
    for r in reqs:
        values = " ".join(str(v) for v in r.get("values") or [])
        out += f"NodeSelectorRequirement{{Key:{r.get('key', '')},Operator:{r.get('operator', '')},Values:[{values}],}},"
    return out + "}"


def go_string(selector: Mapping[str, Any]) -> str:
    """The selector as Go's generated ``(*v1.NodeSelector).String()`` prints it."""
    terms = "".join(
        f"NodeSelectorTerm{{MatchExpressions:{_go_requirements(t.get('matchExpressions') or [])},"
        f"MatchFields:{_go_requirements(t.get('matchFields') or [])},}},"
        for t in selector.get("nodeSelectorTerms") or []
    )
    return f"&NodeSelector{{NodeSelectorTerms:[]NodeSelectorTerm{{{terms}}},}}"


def matches(node: Mapping[str, Any], selector: Mapping[str, Any] | None) -> bool:
    """Whether ``node`` satisfies ``selector`` (:func:`drakit.corev1.node_selector_matches`, the one contract)."""
    return selector is not None and node_selector_matches(node, selector)
