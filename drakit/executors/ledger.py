"""Admission through a queue's ledger: the seam the executors reserve a queue slot through.

The queue engine owns the durable ledger (its SQL form lives in the store); this module holds
the Protocol the executors code against, ``reserve(queue, run_id, demand, now) -> Reserved |
Refused`` and ``release(run_id)``, and its in-memory twin.  A reservation is atomic: either the
whole demand fits under every limit of the queue and is held until released, or nothing is.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from drakit.gostr import quote

__all__ = ["WORKLOADS", "MemoryQueueLedger", "QueueLedger", "Refused", "Reserved"]

# The demand every run makes: one admitted workload (Kueue's "N concurrent workloads" is a count).
WORKLOADS = "workloads"


@dataclass(frozen=True)
class Reserved:
    queue: str
    run_id: str
    at: datetime
    demand: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Refused:
    """Not now: ``code`` is stable (``QuotaExhausted`` waits, ``UnknownQueue`` never fits)."""

    queue: str
    run_id: str
    code: str
    reason: str

    @property
    def waits(self) -> bool:
        return self.code == "QuotaExhausted"


class QueueLedger(Protocol):
    def reserve(self, queue: str, run_id: str, demand: Mapping[str, int], now: datetime) -> Reserved | Refused:
        """Hold ``demand`` of ``queue`` for ``run_id`` if it fits under every limit; idempotent per run."""
        ...

    def release(self, run_id: str) -> None:
        """Give back what ``run_id`` holds (nothing if it holds nothing)."""
        ...


class MemoryQueueLedger:
    """The twin: limits per queue and resource, one lock, usage as the sum of live reservations."""

    def __init__(self, limits: Mapping[str, Mapping[str, int]]) -> None:
        self._limits = {q: dict(v) for q, v in limits.items()}
        self._held: dict[str, Reserved] = {}
        self._lock = threading.Lock()

    def usage(self, queue: str) -> dict[str, int]:
        with self._lock:
            return self._usage(queue)

    def _usage(self, queue: str) -> dict[str, int]:
        used: dict[str, int] = {}
        for r in self._held.values():
            if r.queue == queue:
                for k, v in r.demand.items():
                    used[k] = used.get(k, 0) + v
        return used

    def reserve(self, queue: str, run_id: str, demand: Mapping[str, int], now: datetime) -> Reserved | Refused:
        with self._lock:
            if run_id in self._held:
                return self._held[run_id]
            limits = self._limits.get(queue)
            if limits is None:
                known = ", ".join(sorted(self._limits)) or "none"
                return Refused(queue, run_id, "UnknownQueue", f"queue {quote(queue)} is not defined (known: {known})")
            used = self._usage(queue)
            for resource, want in sorted(demand.items()):
                limit = limits.get(resource)
                if limit is None:
                    continue
                if want > limit:
                    return Refused(queue, run_id, "ExceedsLimit",
                                   f"{resource}: {want} requested, queue {quote(queue)} allows {limit} in all")
                if used.get(resource, 0) + want > limit:
                    return Refused(queue, run_id, "QuotaExhausted",
                                   f"{resource}: {used.get(resource, 0)} of {limit} in use, {want} more requested")
            held = Reserved(queue, run_id, now, dict(demand))
            self._held[run_id] = held
            return held

    def release(self, run_id: str) -> None:
        with self._lock:
            self._held.pop(run_id, None)
