"""Devices of an inventory as a flat list: driver, pool, node and the v1 Device, plus a product label.

Several tools (``drakit match``, profile eligibility, lint) group devices "by node and product";
they share this one walk over ResourceSlices so that they agree on what a device's node and
product are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


# Attribute keys that name a device's product, per driver, most specific first.  Drivers not
# listed fall back to the generic keys.
@dataclass(frozen=True)
class InventoryDevice:
    driver: str
    node: str
    pool: str
    device: Mapping[str, Any]
    slice_name: str = ""

    @property
    def name(self) -> str:
        return str(self.device.get("name", ""))

    @property
    def ident(self) -> str:
        """``driver/pool/device``, the identity allocation results use."""
        return f"{self.driver}/{self.pool}/{self.name}"


def _node_of(spec: Mapping[str, Any], device: Mapping[str, Any]) -> str:
    if spec.get("perDeviceNodeSelection"):
        spec = device
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    if spec.get("allNodes"):
        return "(all nodes)"
    return "(node selector)"


def inventory_devices(objects: Iterable[Mapping[str, Any]]) -> list[InventoryDevice]:
    """Devices of ResourceSlices in wire form, keeping only the newest generation of each pool."""
    slices = [o for o in objects if o.get("kind") == "ResourceSlice"]
    newest: dict[tuple[str, str], int] = {}
    for s in slices:
        spec = s.get("spec") or {}
        key = (spec.get("driver", ""), (spec.get("pool") or {}).get("name", ""))
        newest[key] = max(newest.get(key, 0), int((spec.get("pool") or {}).get("generation", 0)))
    out = []
    for s in slices:
        spec = s.get("spec") or {}
        pool = spec.get("pool") or {}
        key = (spec.get("driver", ""), pool.get("name", ""))
        if int(pool.get("generation", 0)) != newest[key]:
            continue
        for dev in spec.get("devices") or []:
            out.append(InventoryDevice(key[0], _node_of(spec, dev), key[1], dev, (s.get("metadata") or {}).get("name", "")))
    return out
