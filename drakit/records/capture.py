"""An allocation joined to the ResourceSlices it came from, as RunDevice rows.

On the NVIDIA path nothing in the API keeps a device's identity once a template claim is deleted
with its pod, and a pool may be republished with other attributes later.  So the join is made
from the slices *as they were when the claim was allocated* and copied into the record.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from drakit.drivers.identity import product_of
from drakit.inventory.devices import inventory_devices
from drakit.quantity import Quantity
from drakit.records.run import RunDevice

__all__ = ["capture_devices"]

_STANDARD = "resource.kubernetes.io"


def _attr(driver: str, attributes: Mapping[str, Any], name: str) -> Any:
    """An attribute's value whether published bare, qualified by the driver, or as a standard attribute."""
    for key in (name, f"{driver}/{name}", f"{_STANDARD}/{name}"):
        value = attributes.get(key)
        if isinstance(value, Mapping):
            for kind in ("string", "version", "int", "bool"):
                if kind in value:
                    return value[kind]
    return None


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _memory_bytes(capacity: Mapping[str, Any]) -> int | None:
    entry = capacity.get("memory")
    if not isinstance(entry, Mapping) or "value" not in entry:
        return None
    return Quantity.parse(str(entry["value"])).value()


def capture_devices(allocation: Mapping[str, Any], slices: Iterable[Mapping[str, Any]]) -> tuple[RunDevice, ...]:
    """One row per result of a claim's ``status.allocation``, joined to the newest slice of its pool."""
    objects = [s for s in slices if s.get("kind", "ResourceSlice") == "ResourceSlice"]
    generation = {
        (s["spec"].get("driver", ""), s["spec"].get("pool", {}).get("name", "")): int(
            s["spec"].get("pool", {}).get("generation", 0)
        )
        for s in objects
        if isinstance(s.get("spec"), Mapping)
    }
    published = {d.ident: d for d in inventory_devices([{**s, "kind": "ResourceSlice"} for s in objects])}
    rows = []
    for result in (allocation.get("devices") or {}).get("results") or []:
        driver, pool, name = str(result.get("driver", "")), str(result.get("pool", "")), str(result.get("device", ""))
        consumed = {k: str(v) for k, v in (result.get("consumedCapacity") or {}).items()}
        base: dict[str, Any] = {"request": str(result.get("request", "")), "driver": driver, "pool": pool, "device": name,
                "share_id": str(result.get("shareID", "")), "consumed_capacity": consumed}
        found = published.get(f"{driver}/{pool}/{name}")
        if found is None:
            rows.append(RunDevice(**base, joined=False))
            continue
        attributes = dict(found.device.get("attributes") or {})
        capacity = {k: str((v or {}).get("value", "")) for k, v in (found.device.get("capacity") or {}).items()}
        numa = _attr(driver, attributes, "numaNode")
        rows.append(
            RunDevice(
                **base,
                product=product_of(driver, found.device),
                uuid=_text(_attr(driver, attributes, "uuid")),
                memory_bytes=_memory_bytes(found.device.get("capacity") or {}),
                driver_version=_text(_attr(driver, attributes, "driverVersion")),
                cuda_driver_version=_text(_attr(driver, attributes, "cudaDriverVersion")),
                compute_capability=_text(_attr(driver, attributes, "cudaComputeCapability")),
                pcie_root=_text(_attr(driver, attributes, "pcieRoot")),
                numa_node=numa if isinstance(numa, int) and not isinstance(numa, bool) else None,
                slice_name=found.slice_name,
                pool_generation=generation.get((driver, pool)),
                attributes=attributes,
                capacity=capacity,
            )
        )
    for i, row in enumerate(rows):
        row.check(f"devices[{i}]")
    return tuple(rows)
