"""What is already allocated, derived from claims that carry ``status.allocation``.

Mirrors the scheduler's ``AllocatedState``: exclusive devices, device shares (with a
``shareID``) and, per shared device, the summed ``consumedCapacity`` of its shares.  Results
with ``adminAccess: true`` are not counted (the scheduler skips them).  A result counts as a share
only when ConsumableCapacity is on and it carries a ``shareID``; otherwise the device is taken
exclusively.  Counts are kept so :meth:`remove_claim` can undo :meth:`add_claim` exactly.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from drakit.quantity import Quantity

DeviceKey = tuple[str, str, str]  # (driver, pool, device)


@functools.lru_cache(maxsize=8192)
def _parse(text: str) -> Quantity:
    return Quantity.parse(text)


def has_allocation(claim: Mapping[str, Any]) -> bool:
    """Whether a claim counts as allocated: ``status.allocation`` is present, even if empty.

    Upstream tests the decoded pointer (``claim.Status.Allocation != nil``), so an empty
    ``allocation: {}`` is an allocation (of no devices) and only ``null`` or absence is not.
    """
    return (claim.get("status") or {}).get("allocation") is not None


def quantity_of(value: Any) -> Quantity:
    """A wire quantity (string, or a number YAML produced) as Go's ``resource.Quantity``."""
    return _parse(str(value))


def quantity_sum(a: Quantity | None, b: Quantity) -> Quantity:
    """``a + b`` the way upstream accumulates: a missing entry starts as a copy of ``b``."""
    return b if a is None else a.add(b)


class AllocatedState:
    """Exclusive devices, shares and aggregated consumed capacity (mutable, with counts)."""

    def __init__(self) -> None:
        self.devices: Counter[DeviceKey] = Counter()
        self.shares: Counter[tuple[DeviceKey, str]] = Counter()
        self.shared_devices: Counter[DeviceKey] = Counter()
        # Summed consumedCapacity of each shared device (upstream's AggregatedCapacity), and the
        # same with exact numbers for readers that only compare amounts.
        self.aggregated: dict[DeviceKey, dict[str, Quantity]] = {}
        self.capacity: dict[DeviceKey, dict[str, Fraction]] = {}
        self.version = 0

    def copy(self) -> AllocatedState:
        other = AllocatedState()
        other.devices = self.devices.copy()
        other.shares = self.shares.copy()
        other.shared_devices = self.shared_devices.copy()
        other.aggregated = {k: dict(v) for k, v in self.aggregated.items()}
        other.capacity = {k: dict(v) for k, v in self.capacity.items()}
        return other

    def is_allocated(self, key: DeviceKey) -> bool:
        """Upstream's ``IsDeviceAllocated``: exclusive, any share, or consumed capacity recorded."""
        return key in self.devices or key in self.shared_devices or key in self.aggregated

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
                    # Keyed by the name as recorded; upstream matches it to the device's
                    # capacity map by exact name.
                    agg = self.aggregated.setdefault(key, {})
                    for name, q in consumed.items():
                        amount = quantity_of(q)
                        agg[name] = quantity_sum(agg.get(name), amount if sign > 0 else amount.neg())
                    if sign < 0 and all(v.is_zero() for v in agg.values()):
                        del self.aggregated[key]
                        self.capacity.pop(key, None)
                    else:
                        self.capacity[key] = {name: v.exact() for name, v in agg.items()}
            else:
                self.devices[key] += sign
                if self.devices[key] <= 0:
                    del self.devices[key]
        self.version += 1

    def add_claim(self, claim: Mapping[str, Any], *, consumable: bool) -> None:
        self._apply(claim, consumable, +1)

    def remove_claim(self, claim: Mapping[str, Any], *, consumable: bool) -> None:
        self._apply(claim, consumable, -1)
