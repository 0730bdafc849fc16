"""Small wire-dict builders for allocator tests (allocator-specific; the shared ones live in tests/builders.py)."""

from __future__ import annotations

from typing import Any

DRIVER = "gpu.example.com"


def node(name: str = "node-1", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels or {"region": "r1"}},
    }


def device(name: str, **fields: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"name": name}
    attrs = fields.pop("attrs", None)
    if attrs:
        d["attributes"] = {
            k: (
                {"int": v}
                if isinstance(v, int) and not isinstance(v, bool)
                else {"bool": v}
                if isinstance(v, bool)
                else {"string": v}
            )
            for k, v in attrs.items()
        }
    cap = fields.pop("capacity", None)
    if cap:
        d["capacity"] = {k: (v if isinstance(v, dict) else {"value": v}) for k, v in cap.items()}
    d.update(fields)
    return d


def slice_(
    name: str,
    devices: list[dict[str, Any]],
    *,
    node_name: str | None = "node-1",
    pool: str = "pool-1",
    driver: str = DRIVER,
    generation: int = 1,
    count: int = 1,
    **spec: Any,
) -> dict[str, Any]:
    s: dict[str, Any] = {
        "driver": driver,
        "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
    }
    if node_name is not None:
        s["nodeName"] = node_name
    if devices:
        s["devices"] = devices
    s.update(spec)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": s,
    }


def device_class(
    name: str = "gpu", expr: str | None = None, config: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": expr or f'device.driver == "{DRIVER}"'}}]}
    if config:
        spec["config"] = config
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": spec,
    }


def exact(name: str, count: int = 1, cls: str = "gpu", **fields: Any) -> dict[str, Any]:
    e: dict[str, Any] = {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count}
    if fields.get("allocationMode") == "All":
        e.pop("count")
    e.update(fields)
    return {"name": name, "exactly": e}


def first_available(name: str, *subs: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "firstAvailable": list(subs)}


def sub(name: str, count: int = 1, cls: str = "gpu", **fields: Any) -> dict[str, Any]:
    s: dict[str, Any] = {"name": name, "deviceClassName": cls, "allocationMode": "ExactCount", "count": count}
    s.update(fields)
    return s


def claim(
    name: str,
    *requests: dict[str, Any],
    constraints: list[dict[str, Any]] | None = None,
    config: list[dict[str, Any]] | None = None,
    namespace: str = "default",
    allocation: dict[str, Any] | None = None,
) -> dict[str, Any]:
    devices: dict[str, Any] = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    c: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"devices": devices},
    }
    if allocation is not None:
        c["status"] = {"allocation": allocation}
    return c


def in_use(
    name: str, *devices: str, pool: str = "pool-1", driver: str = DRIVER, **result: Any
) -> dict[str, Any]:
    results = [{"request": "r", "driver": driver, "pool": pool, "device": d, **result} for d in devices]
    return claim(name, exact("r"), allocation={"devices": {"results": results}})


def chosen(outcome: Any) -> list[list[tuple[str, str]]]:
    """Per claim: (request, device) pairs in result order."""
    return [[(r["request"], r["device"]) for r in res["devices"]["results"]] for res in outcome.results]
