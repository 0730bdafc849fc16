"""What is already allocated, derived from claims that carry ``status.allocation``.

Mirrors the scheduler's ``AllocatedState``: exclusive devices, device shares (with a
``shareID``) and, per shared device, the summed ``consumedCapacity`` of its shares.  Results
with ``adminAccess: true`` are not counted (the scheduler skips them).  A result counts as a share
only when ConsumableCapacity is on and it carries a ``shareID``; otherwise the device is taken
exclusively.  Counts are kept so :meth:`remove_claim` can undo :meth:`add_claim` exactly.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from drakit.allocator import quantity

DeviceKey = tuple[str, str, str]  # (driver, pool, device)


def qualify(name: str, driver: str) -> str:
    """Capacity names without a domain belong to the driver's domain."""
    return name if "/" in name else f"{driver}/{name}"


class AllocatedState:
    """Exclusive devices, shares and aggregated consumed capacity (mutable, with counts)."""

    def __init__(self) -> None:
        self.devices: Counter[DeviceKey] = Counter()
        self.shares: Counter[tuple[DeviceKey, str]] = Counter()
        self.shared_devices: Counter[DeviceKey] = Counter()
        self.capacity: dict[DeviceKey, dict[str, Fraction]] = {}
        self.version = 0

    def copy(self) -> AllocatedState:
        other = AllocatedState()
        other.devices = self.devices.copy()
        other.shares = self.shares.copy()
        other.shared_devices = self.shared_devices.copy()
        other.capacity = {k: dict(v) for k, v in self.capacity.items()}
        return other

    def is_allocated(self, key: DeviceKey) -> bool:
        """Upstream's ``IsDeviceAllocated``: exclusive, any share, or consumed capacity recorded."""
        return key in self.devices or key in self.shared_devices or key in self.capacity

    def _apply(self, claim: Mapping[str, Any], consumable: bool, sign: int) -> None:
        allocation = (claim.get("status") or {}).get("allocation") or {}
        for r in (allocation.get("devices") or {}).get("results") or []:
            if r.get("adminAccess"):
                continue
            key: DeviceKey = (r.get("driver", ""), r.get("pool", ""), r.get("device", ""))
            share = r.get("shareID")
            if consumable and share:
                self.shares[(key, share)] += sign
                self.shared_devices[key] += sign
                if self.shares[(key, share)] <= 0:
                    del self.shares[(key, share)]
                if self.shared_devices[key] <= 0:
                    del self.shared_devices[key]
                consumed = r.get("consumedCapacity")
                if consumed is not None:
                    agg = self.capacity.setdefault(key, {})
                    for name, q in consumed.items():
                        fq = qualify(name, key[0])
                        agg[fq] = agg.get(fq, Fraction(0)) + sign * quantity.value(str(q))
                    if sign < 0 and all(v == 0 for v in agg.values()):
                        del self.capacity[key]
            else:
                self.devices[key] += sign
                if self.devices[key] <= 0:
                    del self.devices[key]
        self.version += 1

    def add_claim(self, claim: Mapping[str, Any], *, consumable: bool) -> None:
        self._apply(claim, consumable, +1)

    def remove_claim(self, claim: Mapping[str, Any], *, consumable: bool) -> None:
        self._apply(claim, consumable, -1)
