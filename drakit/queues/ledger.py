"""Reservations for the local executor: the admission engine's quota rules, held durably.

Where no cluster exists nothing else counts what runs, so every submitter asks the ledger first:
``reserve`` checks the demand against the queue's quota tree (nominal, cohort borrowing within
limits, the true concurrency limit) *with every reservation already held* and records it in the
same atomic step; ``release`` frees it.  The check is :func:`decide`, pure, shared by the
in-memory twin (:mod:`drakit.queues.memory`) and the SQL ledger (:mod:`drakit.store.ledger`), so
the two cannot disagree.  Unlike Kueue the ledger has no backlog: a refusal is an answer the
caller retries (the executor's own queue decides the order).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from drakit.queues.admission import PODS, Setup, format_amount
from drakit.queues.quota import FlavorResource, QuotaTree

__all__ = ["WORKLOADS", "QueueLedger", "RefusalCode", "Refused", "Reserved", "decide", "to_flavors"]


# A demand key the executors send for "one admitted workload": counted by the concurrency limit,
# not a quota resource.
WORKLOADS = "workloads"


class RefusalCode(StrEnum):
    UNKNOWN_QUEUE = "UnknownQueue"
    UNCOVERED = "ResourceNotCovered"
    EXCEEDS_MAX = "ExceedsMaxQuota"  # never fits, even with the whole cohort free
    WAITING_FOR_QUOTA = "WaitingForQuota"
    CONCURRENCY = "ConcurrencyLimit"
    DUPLICATE = "AlreadyReserved"  # the run holds a reservation in another queue


@dataclass(frozen=True)
class Reserved:
    run_id: str
    queue: str
    demand: Mapping[str, int]  # resource -> amount, ``pods`` included when the queue covers it
    at: datetime

    def to_json(self) -> dict[str, Any]:
        return {"runId": self.run_id, "queue": self.queue, "at": self.at.isoformat(),
                "demand": {r: format_amount(r, v) for r, v in sorted(self.demand.items())}}


@dataclass(frozen=True)
class Refused:
    run_id: str
    queue: str
    code: RefusalCode
    message: str  # with the numbers: "gpu-48g: needs 2, 1 free of 4 (3 held by run-a, run-b)"
    hint: str = ""
    retry: bool = field(default=True)  # False: retrying cannot help (unknown queue, too big)

    @property
    def waits(self) -> bool:
        """Retrying later may succeed (the executors' name for ``retry``)."""
        return self.retry

    @property
    def reason(self) -> str:
        return self.message

    def to_json(self) -> dict[str, Any]:
        return {"runId": self.run_id, "queue": self.queue, "code": self.code.value, "message": self.message,
                "hint": self.hint, "retry": self.retry}


class QueueLedger(Protocol):
    def reserve(self, queue: str, run_id: str, demand: Mapping[str, int], now: datetime) -> Reserved | Refused:
        """Check and record atomically; reserving again for the same run and queue returns the first reservation."""
        ...

    def release(self, run_id: str) -> bool:
        """Free the run's reservation; False when it held none (releasing twice is harmless)."""
        ...

    def held(self, queue: str | None = None) -> tuple[Reserved, ...]:
        """Reservations held, oldest first (all queues when ``queue`` is None)."""
        ...


def to_flavors(setup: Setup, queue: str, demand: Mapping[str, int]) -> dict[FlavorResource, int] | str:
    """The demand on the queue's (flavor, resource) cells, ``pods`` added; a message when uncovered."""
    cq = setup.queue(queue)
    flavor_of = {r: flavors[0] for covered, flavors in cq.groups for r in covered}
    want = {r: v for r, v in demand.items() if v and r != WORKLOADS}
    if PODS in flavor_of:
        want.setdefault(PODS, 1)
    missing = sorted(r for r in want if r not in flavor_of)
    if missing:
        return f"resource {', '.join(missing)} unavailable in ClusterQueue {queue}"
    return {(flavor_of[r], r): v for r, v in want.items()}


def decide(setup: Setup, held: Iterable[Reserved], queue: str, run_id: str,
           demand: Mapping[str, int]) -> Refused | dict[str, int]:
    """Refused, or the demand as it will be stored (``pods`` filled in), given every reservation held."""
    names = {cq.name for cq in setup.cluster_queues}
    if queue not in names:
        return Refused(run_id, queue, RefusalCode.UNKNOWN_QUEUE, f"queue {queue} is not in the catalog "
                       f"(known: {', '.join(sorted(names))})", retry=False)
    want = to_flavors(setup, queue, demand)
    if isinstance(want, str):
        return Refused(run_id, queue, RefusalCode.UNCOVERED, want, "add a quota for it to the queue", retry=False)
    tree = QuotaTree(((cq.name, cq.cohort, cq.quotas) for cq in setup.cluster_queues),
                     ((c.name, c.parent, c.quotas) for c in setup.cohorts))
    running: dict[str, list[str]] = {}
    for h in held:
        if h.queue not in names:
            continue
        have = to_flavors(setup, h.queue, h.demand)
        if isinstance(have, dict):
            tree.add(h.queue, have)
        running.setdefault(h.queue, []).append(h.run_id)
    cq = setup.queue(queue)
    mine = running.get(queue, [])
    if cq.max_running is not None and len(mine) >= cq.max_running:
        return Refused(run_id, queue, RefusalCode.CONCURRENCY,
                       f"queue {queue} runs {len(mine)} of {cq.max_running} allowed ({_names(mine)})",
                       "wait for a run to end")
    for fr, v in sorted(want.items()):
        _, r = fr
        if v > tree.potential(queue, fr):
            return Refused(run_id, queue, RefusalCode.EXCEEDS_MAX,
                           f"{r}: needs {format_amount(r, v)}, queue {queue} can never hold more than "
                           f"{format_amount(r, tree.potential(queue, fr))}", "ask for less or raise the quota",
                           retry=False)
        free = tree.available(queue, fr)
        if v > free:
            used = tree.usage(queue, fr)
            return Refused(run_id, queue, RefusalCode.WAITING_FOR_QUOTA,
                           f"{r}: needs {format_amount(r, v)}, {format_amount(r, free)} free "
                           f"(quota {format_amount(r, tree.nominal(queue, fr))}, {format_amount(r, used)} held by "
                           f"{_names(mine) or 'no run of this queue'})", "wait for a run to end")
    return {r: v for (_, r), v in want.items()}


def _names(ids: list[str], limit: int = 3) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")
