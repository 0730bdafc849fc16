"""The in-memory QueueLedger: one lock around :func:`drakit.queues.ledger.decide` and a dict."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from datetime import datetime

from drakit.queues.admission import Setup
from drakit.queues.ledger import RefusalCode, Refused, Reserved, decide

__all__ = ["MemoryLedger"]


class MemoryLedger:
    def __init__(self, setup: Setup) -> None:
        self.setup = setup
        self._held: dict[str, Reserved] = {}
        self._lock = threading.Lock()

    def reserve(self, queue: str, run_id: str, demand: Mapping[str, int], now: datetime) -> Reserved | Refused:
        with self._lock:
            existing = self._held.get(run_id)
            if existing is not None:
                if existing.queue == queue:
                    return existing
                return Refused(run_id, queue, RefusalCode.DUPLICATE,
                               f"run {run_id} already holds a reservation in queue {existing.queue}", retry=False)
            outcome = decide(self.setup, self._held.values(), queue, run_id, demand)
            if isinstance(outcome, Refused):
                return outcome
            reserved = Reserved(run_id, queue, outcome, now)
            self._held[run_id] = reserved
            return reserved

    def release(self, run_id: str) -> bool:
        with self._lock:
            return self._held.pop(run_id, None) is not None

    def held(self, queue: str | None = None) -> tuple[Reserved, ...]:
        with self._lock:
            rows = [r for r in self._held.values() if queue is None or r.queue == queue]
        return tuple(sorted(rows, key=lambda r: (r.at, r.run_id)))
