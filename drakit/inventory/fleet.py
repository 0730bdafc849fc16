"""The fleet as devices: every published device with its node, product, memory, taints and holders.

kubectl shows ResourceSlices (one object per pool part) and ResourceClaims (one per request),
never "which GPU on which node is taken, by whom" — the question a platform team asks first.
This view joins the two on the allocation's ``driver/pool/device`` identity, the same key the
scheduler uses, over the newest generation of each pool (what the scheduler would allocate from).
A device is *held* by every claim whose allocation names it; claims with ``adminAccess`` watch a
device without taking it (upstream's allocator skips them when it counts a device as in use), so
they are listed but leave it free.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from drakit.drivers.identity import product_of
from drakit.drivers.registry import DRIVERS
from drakit.inventory.devices import inventory_devices
from drakit.inventory.snapshot import ClusterSnapshot, ObjectKey, name_of, namespace_of

__all__ = ["DeviceRow", "Holding", "attribute_labels", "fleet"]


@dataclass(frozen=True)
class Holding:
    """One claim's hold on a device, and the pods the claim is reserved for."""

    claim: str  # namespace/name
    request: str
    pods: tuple[str, ...]  # namespace/name
    admin_access: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"claim": self.claim, "request": self.request, "pods": list(self.pods), "adminAccess": self.admin_access}


@dataclass(frozen=True)
class DeviceRow:
    node: str
    driver: str
    pool: str
    device: str
    product: str
    memory: str  # the published capacity as written ("81559Mi"), or "" when the driver omits it
    taints: tuple[str, ...]  # key=value:Effect, device taints then DeviceTaintRule taints
    holdings: tuple[Holding, ...]
    slice: str
    attributes: Mapping[str, str]  # name -> value as text, names as published (qualified or not)
    capacity: Mapping[str, str]  # name -> quantity as published

    @property
    def ident(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"

    @property
    def free(self) -> bool:
        return not any(not h.admin_access for h in self.holdings)

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node, "driver": self.driver, "pool": self.pool, "device": self.device,
            "product": self.product, "memory": self.memory, "taints": list(self.taints), "free": self.free,
            "holders": [h.to_json() for h in self.holdings], "slice": self.slice, "attributes": dict(self.attributes),
            "capacity": dict(self.capacity),
        }


def _value_text(value: Any) -> str:
    if isinstance(value, Mapping):
        for kind in ("string", "version", "int", "bool"):
            if kind in value and value[kind] is not None:
                v = value[kind]
                return str(v).lower() if isinstance(v, bool) else str(v)
    return ""


def _memory(driver: str, device: Mapping[str, Any]) -> str:
    schemas = DRIVERS.get(driver)
    key = (schemas[-1].memory_capacity if schemas else None) or "memory"
    capacity = device.get("capacity") or {}
    for name in (key, f"{driver}/{key}"):
        value = capacity.get(name) if isinstance(capacity, Mapping) else None
        if isinstance(value, Mapping) and value.get("value") is not None:
            return str(value["value"])
    return ""


def taint_text(taint: Mapping[str, Any]) -> str:
    value = taint.get("value")
    return f"{taint.get('key', '')}{'=' + str(value) if value else ''}:{taint.get('effect', '')}"


def _rule_taints(snapshot: ClusterSnapshot) -> list[tuple[tuple[Any, Any, Any], str]]:
    out = []
    for rule in snapshot.taint_rules:
        spec = rule.get("spec") or {}
        sel = spec.get("deviceSelector") or {}
        out.append(((sel.get("driver"), sel.get("pool"), sel.get("device")), taint_text(spec.get("taint") or {})))
    return out


def _holdings(snapshot: ClusterSnapshot) -> dict[tuple[str, str, str], list[Holding]]:
    held: dict[tuple[str, str, str], list[Holding]] = {}
    for claim in snapshot.claims:
        status = claim.get("status") or {}
        results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
        if not results:
            continue
        ns, name = namespace_of(claim), name_of(claim)
        reserved = tuple(
            f"{ns}/{r.get('name')}" for r in status.get("reservedFor") or [] if r.get("resource", "pods") == "pods"
        )
        pods = reserved or tuple(
            f"{namespace_of(p)}/{name_of(p)}" for p in snapshot.pods_by_claim.get(ObjectKey("ResourceClaim", ns, name), ())
        )
        for r in results:
            key = (str(r.get("driver") or ""), str(r.get("pool") or ""), str(r.get("device") or ""))
            held.setdefault(key, []).append(
                Holding(f"{ns}/{name}", str(r.get("request") or ""), pods, bool(r.get("adminAccess")))
            )
    return held


def attribute_labels(row: DeviceRow) -> dict[str, str]:
    """A device's attributes as labels for ``-l``: each under its published name and, for the
    driver's own attributes, also bare and qualified (``productName`` and ``gpu.nvidia.com/productName``)."""
    out: dict[str, str] = {}
    for name, value in row.attributes.items():
        out[name] = value
        bare = name.removeprefix(f"{row.driver}/")
        if "/" not in name:
            out[f"{row.driver}/{name}"] = value
        out.setdefault(bare, value)
    return out


def fleet(snapshot: ClusterSnapshot) -> tuple[DeviceRow, ...]:
    """Every device of the newest pool generations, sorted by node, driver, pool and device."""
    held = _holdings(snapshot)
    rules = _rule_taints(snapshot)
    rows = []
    for d in inventory_devices(snapshot.slices):
        dev = d.device
        taints = [taint_text(t) for t in dev.get("taints") or [] if isinstance(t, Mapping)]
        taints += [t for (drv, pool, name), t in rules
                   if drv in (None, d.driver) and pool in (None, d.pool) and name in (None, d.name)]
        attributes = dev.get("attributes") or {}
        capacity = dev.get("capacity") or {}
        rows.append(DeviceRow(
            node=d.node, driver=d.driver, pool=d.pool, device=d.name, product=product_of(d.driver, dev),
            memory=_memory(d.driver, dev), taints=tuple(taints),
            holdings=tuple(held.get((d.driver, d.pool, d.name), ())), slice=d.slice_name,
            attributes={str(k): _value_text(v) for k, v in attributes.items()} if isinstance(attributes, Mapping) else {},
            capacity={str(k): str(v.get("value")) for k, v in capacity.items() if isinstance(v, Mapping)}
            if isinstance(capacity, Mapping) else {},
        ))
    return tuple(sorted(rows, key=lambda r: (r.node, r.driver, r.pool, r.device)))
