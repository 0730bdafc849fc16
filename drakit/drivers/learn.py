"""Learn a driver schema from the devices an inventory publishes.

Useful for drivers the registry does not know, and to check a cluster's real schema against
the registry: a key is required only if every device publishes it, so the compiler guards
everything that any device lacks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from drakit.drivers.schema import AttributeSpec, AttrType, CapacitySpec, DriverSchema

_VALUE_FIELDS: tuple[AttrType, ...] = ("string", "int", "bool", "version")


def _attr_type(value: Mapping[str, Any]) -> AttrType | None:
    for f in _VALUE_FIELDS:
        if f in value:
            return f
    return None


def learn_schema(driver: str, devices: Iterable[Mapping[str, Any]], base: DriverSchema | None = None) -> DriverSchema:
    """A schema for ``driver`` from wire-form devices (``{name, attributes, capacity}``).

    ``base`` (e.g. the registry's schema) contributes roles, device type and product table;
    types and optionality always come from the observed devices.  A key seen with two value
    types is recorded as ``string`` (the compiler then refuses to compare it as a version).
    """
    devices = list(devices)
    n = len(devices)
    attr_seen: dict[str, int] = {}
    attr_types: dict[str, set[AttrType]] = {}
    cap_seen: dict[str, int] = {}
    cap_zero: set[str] = set()
    for dev in devices:
        for key, value in (dev.get("attributes") or {}).items():
            bare = key[len(driver) + 1 :] if key.startswith(driver + "/") else key
            attr_seen[bare] = attr_seen.get(bare, 0) + 1
            t = _attr_type(value or {})
            if t is not None:
                attr_types.setdefault(bare, set()).add(t)
        for key, value in (dev.get("capacity") or {}).items():
            bare = key[len(driver) + 1 :] if key.startswith(driver + "/") else key
            cap_seen[bare] = cap_seen.get(bare, 0) + 1
            if str((value or {}).get("value", "")).strip() in ("0", "0Mi", "0Gi"):
                cap_zero.add(bare)
    attributes = {
        k: AttributeSpec(k, next(iter(attr_types.get(k, {"string"}))) if len(attr_types.get(k, ())) == 1 else "string",
                         required=(c == n and n > 0))
        for k, c in sorted(attr_seen.items())
    }
    capacities = {
        k: CapacitySpec(k, required=(c == n and n > 0), zero_means_unknown=k in cap_zero)
        for k, c in sorted(cap_seen.items())
    }
    roles = dict(base.roles) if base else {}
    roles = {r: k for r, k in roles.items() if k in attributes}
    device_type = base.device_type if base and base.device_type and base.device_type[0] in attributes else None
    return DriverSchema(
        driver=driver,
        version="learned",
        vendor=base.vendor if base else "",
        attributes=attributes,
        capacities=capacities,
        roles=roles,
        device_type=device_type,
        memory_capacity="memory" if "memory" in capacities else None,
        products=dict(base.products) if base else {},
        removed=base.removed if base else (),
        default_class=base.default_class if base else driver,
        learned=True,
    )
