"""Where the official OpenAPI schema has an opinion, drakit agrees.

Hypothesis mutates valid objects (drop a field, change a value's JSON type, add an
unknown field, put a bogus value into an enum-like field).  Whenever the schema shipped
in ``kubernetes-validate`` (resource.k8s.io/v1, 1.37, strict) rejects the result,
drakit must reject it too — at load time or in validation.  drakit is allowed to be
stricter (the schema cannot express most API-server rules).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from drakit.features import Features
from drakit.model import KindError, parse_object
from drakit.model.validate import validate_object
from tests.builders import (
    ClaimBuilder,
    ClassBuilder,
    SliceBuilder,
    TemplateBuilder,
    first_available,
    subrequest,
)

kv = pytest.importorskip("kubernetes_validate")
SCHEMA_VERSION = "1.37.0"

BASES: list[dict[str, Any]] = [
    SliceBuilder()
    .attribute(0, "model", string="a100")
    .attribute(0, "gpu.example.com/index", int=0)
    .capacity(0, "memory", "80Gi")
    .set("spec.devices[0].taints", [{"key": "example.com/t", "effect": "NoSchedule"}])
    .wire(),
    ClaimBuilder(requests=1)
    .request(first_available("fa", subrequest("a", count=2)))
    .set("spec.devices.requests[0].exactly.tolerations", [{"key": "k", "operator": "Exists"}])
    .set("spec.devices.constraints", [{"requests": ["req-0"], "matchAttribute": "example.com/numa"}])
    .set("spec.devices.config", [{"opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}])
    .wire(),
    ClassBuilder(selectors=("device.driver == 'gpu.example.com'",)).wire(),
    TemplateBuilder().set("spec.metadata", {"labels": {"team": "ml"}}).wire(),
]

ENUM_FIELDS = {"allocationMode", "operator", "effect", "source"}


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.extend(_paths(v, (*prefix, i)))
    return out


def _get(node: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        node = node[p]
    return node


OTHER_TYPES: list[Any] = [7, "seven", True, [1], {"x": 1}, 2.5]


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, Any]:
    obj = copy.deepcopy(draw(st.sampled_from(BASES)))
    paths = [p for p in _paths(obj) if p and p[0] not in ("apiVersion", "kind")]
    path = draw(st.sampled_from(paths))
    parent, last = _get(obj, path[:-1]), path[-1]
    action = draw(st.sampled_from(["drop", "retype", "unknown", "enum"]))
    if action == "drop" and isinstance(parent, dict):
        del parent[last]
    elif action == "unknown":
        target = _get(obj, path)
        if isinstance(target, dict):
            target[draw(st.sampled_from(["bogus", "exactlyy", "Name"]))] = 1
    elif action == "enum" and isinstance(parent, dict) and last in ENUM_FIELDS:
        parent[last] = "Bogus"
    else:
        current = parent[last]
        choices = [v for v in OTHER_TYPES if type(v) is not type(current)]
        parent[last] = draw(st.sampled_from(choices))
    return obj


def openapi_rejects(obj: dict[str, Any]) -> bool:
    try:
        kv.validate(copy.deepcopy(obj), SCHEMA_VERSION, strict=True)
    except kv.ValidationError:
        return True
    return False


def drakit_rejects(obj: dict[str, Any]) -> bool:
    try:
        typed = parse_object(copy.deepcopy(obj))
    except (ValidationError, KindError):
        return True
    errors, _ = validate_object(typed, Features.all_on())
    return bool(errors)


@pytest.mark.parametrize("base", BASES, ids=["slice", "claim", "class", "template"])
def test_bases_are_valid_for_both(base: dict[str, Any]) -> None:
    assert not openapi_rejects(base)
    assert not drakit_rejects(base)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_drakit_rejects_whatever_the_schema_rejects(obj: dict[str, Any]) -> None:
    if openapi_rejects(obj):
        assert drakit_rejects(obj), obj
