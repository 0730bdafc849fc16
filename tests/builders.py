"""Fluent builders for DRA test objects (shared by every test package).

Each builder holds the wire dict; ``.set(path, value)`` edits any field by API path
(``spec.devices[0].taints``, ``spec.devices[0].attributes[model]``), ``.wire()`` returns a
deep copy and ``.obj()`` the typed model.  Defaults produce a valid object.
"""

from __future__ import annotations

import copy
import itertools
import re
from typing import Any, Self

from drakit.model import parse_object

_TOKEN = re.compile(r"([^.\[\]]+)|\[([^\]]*)\]")
DRIVER = "driver.example.com"
_DELETE = object()


def _tokens(path: str) -> list[str | int]:
    out: list[str | int] = []
    for name, index in _TOKEN.findall(path):
        if name:
            out.append(name)
        else:
            out.append(int(index) if index.isdigit() else index)
    return out


def set_path(data: Any, path: str, value: Any) -> None:
    """Set (or with ``DELETE`` remove) the field at an API path, creating maps on the way."""
    toks = _tokens(path)
    cur = data
    for tok, nxt in itertools.pairwise(toks):
        if isinstance(tok, int):
            cur = cur[tok]
        else:
            if tok not in cur:
                cur[tok] = [] if isinstance(nxt, int) else {}
            cur = cur[tok]
    last = toks[-1]
    if value is _DELETE:
        del cur[last]
    elif isinstance(last, int) and last == len(cur):
        cur.append(value)
    else:
        cur[last] = value


class Builder:
    DELETE = _DELETE

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def set(self, path: str, value: Any) -> Self:
        set_path(self.data, path, copy.deepcopy(value))
        return self

    def delete(self, path: str) -> Self:
        set_path(self.data, path, _DELETE)
        return self

    def wire(self) -> dict[str, Any]:
        return copy.deepcopy(self.data)

    def obj(self) -> Any:
        return parse_object(self.wire())


def device(name: str = "dev-0", **fields: Any) -> dict[str, Any]:
    return {"name": name, **fields}


class SliceBuilder(Builder):
    def __init__(self, name: str = "slice-1", *, driver: str = DRIVER, pool: str = "pool-1",
                 node: str | None = "node-1", devices: int = 1) -> None:
        spec: dict[str, Any] = {
            "driver": driver,
            "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1},
            "devices": [device(f"dev-{i}") for i in range(devices)],
        }
        if node is not None:
            spec["nodeName"] = node
        super().__init__({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                          "metadata": {"name": name}, "spec": spec})

    def device(self, name: str, **fields: Any) -> Self:
        self.data["spec"]["devices"].append(device(name, **fields))
        return self

    def attribute(self, dev: int, key: str, **value: Any) -> Self:
        return self.set(f"spec.devices[{dev}].attributes[{key}]", value)

    def capacity(self, dev: int, key: str, value: str, **extra: Any) -> Self:
        return self.set(f"spec.devices[{dev}].capacity[{key}]", {"value": value, **extra})


class ClassBuilder(Builder):
    def __init__(self, name: str = "gpu", *, selectors: tuple[str, ...] = ()) -> None:
        super().__init__({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                          "metadata": {"name": name},
                          "spec": {"selectors": [{"cel": {"expression": e}} for e in selectors]}})


def request(name: str = "req-0", device_class: str = "gpu", **exactly: Any) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": device_class, **exactly}}


def first_available(name: str, *subs: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "firstAvailable": list(subs)}


def subrequest(name: str, device_class: str = "gpu", **fields: Any) -> dict[str, Any]:
    return {"name": name, "deviceClassName": device_class, **fields}


class ClaimBuilder(Builder):
    def __init__(self, name: str = "claim-1", *, namespace: str | None = "default",
                 requests: int = 1) -> None:
        meta: dict[str, Any] = {"name": name}
        if namespace is not None:
            meta["namespace"] = namespace
        super().__init__({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
                          "spec": {"devices": {"requests": [request(f"req-{i}") for i in range(requests)]}}})

    def request(self, req: dict[str, Any]) -> Self:
        self.data["spec"]["devices"]["requests"].append(req)
        return self


class TemplateBuilder(Builder):
    def __init__(self, name: str = "template-1", *, namespace: str | None = "default") -> None:
        meta: dict[str, Any] = {"name": name}
        if namespace is not None:
            meta["namespace"] = namespace
        super().__init__({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": meta,
                          "spec": {"spec": {"devices": {"requests": [request()]}}}})


class PodBuilder(Builder):
    def __init__(self, name: str = "pod-1", *, namespace: str | None = "default") -> None:
        meta: dict[str, Any] = {"name": name}
        if namespace is not None:
            meta["namespace"] = namespace
        super().__init__({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                          "spec": {"containers": [{"name": "main", "image": "busybox"}]}})

    def claim(self, name: str, *, claim: str | None = None, template: str | None = None) -> Self:
        entry: dict[str, Any] = {"name": name}
        if claim is not None:
            entry["resourceClaimName"] = claim
        if template is not None:
            entry["resourceClaimTemplateName"] = template
        self.data["spec"].setdefault("resourceClaims", []).append(entry)
        return self

    def container_claim(self, name: str, request: str | None = None, container: int = 0) -> Self:
        entry: dict[str, Any] = {"name": name}
        if request is not None:
            entry["request"] = request
        res = self.data["spec"]["containers"][container].setdefault("resources", {})
        res.setdefault("claims", []).append(entry)
        return self


class PodTemplateBuilder(PodBuilder):
    """A core/v1 PodTemplate; claim helpers act on ``template.spec``."""

    def __init__(self, name: str = "tmpl-1", *, namespace: str | None = "default") -> None:
        super().__init__(name, namespace=namespace)
        spec = self.data.pop("spec")
        self.data["kind"] = "PodTemplate"
        self.data["template"] = {"spec": spec}
        self.data["spec"] = spec  # shared with template.spec for the PodBuilder helpers

    def wire(self) -> dict[str, Any]:
        data = super().wire()
        data.pop("spec", None)
        return data


class NodeBuilder(Builder):
    def __init__(self, name: str = "node-1", **labels: str) -> None:
        super().__init__({"apiVersion": "v1", "kind": "Node",
                          "metadata": {"name": name, "labels": dict(labels)}})
