"""The allocator's message for a node selector that does not parse.

The allocator parses every node selector it meets (``nodeaffinity.NewNodeSelector``), and a
selector that does not parse aborts pool gathering with upstream's message: the selector
printed as Go's generated ``String()`` and the flattened field errors.  The API server
rejects such selectors, but a bundle on disk can hold anything.

Parsing, its field errors and matching are :mod:`drakit.corev1`'s (the one contract, shared
with the scheduler and explain); this module only words the allocator's error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from drakit.corev1 import parsed_node_selector


def _flatten(errs: Sequence[str]) -> str:
    """``errors.Flatten(errors.NewAggregate(errs)).Error()``: deduplicated, bracketed when several."""
    unique = list(dict.fromkeys(errs))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def parse_error(selector: Mapping[str, Any]) -> str:
    """Why ``nodeaffinity.NewNodeSelector`` rejects ``selector``; empty when it parses."""
    errors = parsed_node_selector(selector).errors
    if not errors:
        return ""
    return f"failed to parse node selector {go_string(selector)}: {_flatten([str(e) for e in errors])}"


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
