"""``(apiVersion, kind) -> model`` registry and the scope of each kind.

Kept as an explicit table (not discovered) so that an unknown kind or a wrong
apiVersion is a clear error instead of a silently ignored document.
"""

from __future__ import annotations

from typing import Any

from drakit.model._base import Wire
from drakit.model.claim import ResourceClaim, ResourceClaimTemplate
from drakit.model.deviceclass import DeviceClass
from drakit.model.event import Event
from drakit.model.list import List
from drakit.model.node import Node
from drakit.model.pod import Pod, PodTemplate
from drakit.model.slice import ResourceSlice
from drakit.model.taintrule import DeviceTaintRule

RESOURCE_V1 = "resource.k8s.io/v1"
CORE_V1 = "v1"

# Sorted by group then kind; when adding a kind, also decide its scope in NAMESPACED.
KINDS: dict[tuple[str, str], type[Wire]] = {
    (CORE_V1, "Event"): Event,
    (CORE_V1, "List"): List,
    (CORE_V1, "Node"): Node,
    (CORE_V1, "Pod"): Pod,
    (CORE_V1, "PodTemplate"): PodTemplate,
    (RESOURCE_V1, "DeviceClass"): DeviceClass,
    (RESOURCE_V1, "DeviceTaintRule"): DeviceTaintRule,
    (RESOURCE_V1, "ResourceClaim"): ResourceClaim,
    (RESOURCE_V1, "ResourceClaimTemplate"): ResourceClaimTemplate,
    (RESOURCE_V1, "ResourceSlice"): ResourceSlice,
    ("resource.k8s.io/v1alpha3", "DeviceTaintRule"): DeviceTaintRule,
    ("resource.k8s.io/v1beta2", "DeviceTaintRule"): DeviceTaintRule,
}

NAMESPACED = frozenset({"ResourceClaim", "ResourceClaimTemplate", "Pod", "PodTemplate", "Event"})
"""Kinds kubectl would put into the current (here: ``default``) namespace when unset."""

DEFAULT_NAMESPACE = "default"


class KindError(ValueError):
    """A document whose apiVersion/kind drakit cannot map to a model."""


def model_for(data: Any) -> type[Wire]:
    """The model class for a wire dict, from its apiVersion and kind."""
    if not isinstance(data, dict):
        raise KindError("document is not an object")
    api_version, kind = data.get("apiVersion"), data.get("kind")
    missing = [n for n, v in (("apiVersion", api_version), ("kind", kind)) if not v]
    if missing:
        raise KindError(", ".join(f"{n} not set" for n in missing))
    if not isinstance(api_version, str) or not isinstance(kind, str):
        raise KindError("apiVersion and kind must be strings")
    model = KINDS.get((api_version, kind))
    if model is None:
        known = sorted(v for (v, k) in KINDS if k == kind)
        hint = f" (drakit knows {kind} as {', '.join(known)})" if known else ""
        raise KindError(f'no matches for kind "{kind}" in version "{api_version}"{hint}')
    return model


def parse_object(data: dict[str, Any]) -> Wire:
    """Typed object from a wire dict; raises KindError or pydantic.ValidationError."""
    return model_for(data).model_validate(data)
