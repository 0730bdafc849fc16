"""What a run produces: per-pod outcomes, events, samples over time, and the summaries.

Everything here is a frozen value computed from the run's records; no wall-clock time is
stored, so the same scenario and seed give the same bytes (reports are tested for that).
Percentiles use the nearest-rank method: it returns an observed wait, never an
interpolated one, which keeps reports stable and easy to check by hand.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

MAX_REPORT_SAMPLES = 1000
"""Time series longer than this are thinned (evenly, deterministically) in reports and
charts; a chart cannot show more points than it has pixels anyway."""


@dataclass(frozen=True)
class PodResult:
    """One pod: where it ran and on which devices, or why it is still Pending."""

    namespace: str
    name: str
    workload: str
    recipe: str
    phase: str  # Pending | Running | Succeeded
    node: str | None
    devices: tuple[str, ...]  # "<driver>/<pool>/<device>", in claim then result order
    products: tuple[str, ...]  # the product of each device (productName, model or driver)
    claims: tuple[str, ...]
    arrival: float
    scheduled: float | None
    finished: float | None
    message: str  # PodScheduled=False message (or the PreEnqueue reason) while Pending
    reason: str  # Unschedulable | SchedulerError | Gated | ""
    attempts: int

    @property
    def wait(self) -> float | None:
        return None if self.scheduled is None else self.scheduled - self.arrival

    def to_json(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "name": self.name,
            "workload": self.workload,
            "recipe": self.recipe,
            "phase": self.phase,
            "node": self.node,
            "devices": list(self.devices),
            "products": list(self.products),
            "claims": list(self.claims),
            "arrival": _num(self.arrival),
            "scheduled": _num(self.scheduled),
            "finished": _num(self.finished),
            "wait": _num(self.wait),
            "message": self.message,
            "reason": self.reason,
            "attempts": self.attempts,
        }


@dataclass(frozen=True)
class SimEvent:
    """An event as ``kubectl get events`` shows it (repeats of the same message are folded)."""

    time: float
    type: str  # Normal | Warning
    reason: str  # Scheduled | FailedScheduling | FailedResourceClaimCreation | ...
    object: str  # "pod/<namespace>/<name>"
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"time": _num(self.time), "type": self.type, "reason": self.reason, "object": self.object, "message": self.message}


@dataclass(frozen=True)
class Sample:
    """Cluster state right after everything at ``time`` was processed."""

    time: float
    pending: int
    running: int
    by_class: tuple[tuple[str, int], ...]  # allocated devices per device class
    by_product: tuple[tuple[str, int], ...]  # allocated devices per device product


@dataclass(frozen=True)
class Stranded:
    """Large devices held by claims that would have fit a smaller device in this cluster."""

    devices: int = 0  # allocations of a device larger than needed
    device_seconds: float = 0.0
    excess_gib_hours: float = 0.0  # (memory held - smallest memory that fits) x time

    def to_json(self) -> dict[str, Any]:
        return {
            "devices": self.devices,
            "deviceSeconds": _num(self.device_seconds),
            "excessGiBHours": _num(self.excess_gib_hours),
        }


@dataclass(frozen=True)
class GroupStats:
    """Summary of the pods of one workload or recipe.

    Waits of pods still Pending at the end are *censored*: they count with the time waited so
    far (a lower bound), so a backlog raises the percentiles instead of vanishing from them.
    ``lower_bounds`` names the statistics that such a wait makes a lower bound.
    """

    name: str
    pods: int
    scheduled: int
    pending: int
    wait_p50: float | None
    wait_p90: float | None
    wait_p99: float | None
    wait_max: float | None
    wait_mean: float | None
    placement: tuple[tuple[str, int], ...]  # device product -> devices
    stranded: Stranded
    censored: int = 0  # waits still open at the end
    lower_bounds: tuple[str, ...] = ()  # of "p50", "p90", "p99", "max", "mean"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "pods": self.pods,
            "scheduled": self.scheduled,
            "pending": self.pending,
            "wait": {
                "p50": _num(self.wait_p50),
                "p90": _num(self.wait_p90),
                "p99": _num(self.wait_p99),
                "max": _num(self.wait_max),
                "mean": _num(self.wait_mean),
                "censored": self.censored,
                "lowerBounds": list(self.lower_bounds),
            },
            "placement": dict(self.placement),
            "stranded": self.stranded.to_json(),
        }


@dataclass(frozen=True)
class QueueRecord:
    unit: str
    workload: str
    queue: str
    arrived: float
    admitted: float | None
    reason: str = ""  # why it still waits at the end (a stable code), "" when admitted
    message: str = ""
    borrowed: Mapping[str, int] | None = None

    @property
    def wait(self) -> float | None:
        return None if self.admitted is None else self.admitted - self.arrived

    def to_json(self) -> dict[str, Any]:
        return {"unit": self.unit, "workload": self.workload, "queue": self.queue, "arrived": _num(self.arrived),
                "admitted": _num(self.admitted), "queueWait": _num(self.wait), "reason": self.reason, "message": self.message,
                "borrowed": dict(self.borrowed or {})}


@dataclass(frozen=True)
class QuotaSample:
    time: float
    used: tuple[tuple[str, str, int], ...]  # (queue, resource, used)
    borrowed: tuple[tuple[str, str, int], ...]  # (queue, resource, beyond nominal)

    def to_json(self) -> dict[str, Any]:
        return {"time": _num(self.time), "used": [list(u) for u in self.used], "borrowed": [list(b) for b in self.borrowed]}


@dataclass(frozen=True)
class SimulationResult:
    """A finished run (see :func:`drakit.sim.run_scenario`)."""

    scenario: str
    seed: int
    nodes: int
    devices: int
    end_time: float
    pods: tuple[PodResult, ...]
    events: tuple[SimEvent, ...]
    samples: tuple[Sample, ...]
    class_capacity: tuple[tuple[str, int | None], ...]  # devices each class can select (None: unknown)
    product_capacity: tuple[tuple[str, int], ...]
    stranded: tuple[tuple[str, Stranded], ...]  # per workload
    attempts: int = 0
    allocator_calls: int = 0
    cache_hits: int = 0
    workload_recipes: tuple[tuple[str, str], ...] = field(default=())
    kubernetes_version: str = ""  # whose control-plane behaviour the run reproduced
    queue_records: tuple[QueueRecord, ...] = ()  # with a queue engine: one per queued Job or pod
    quota_samples: tuple[QuotaSample, ...] = ()

    # -- summaries ------------------------------------------------------------------------------

    def by_workload(self) -> list[GroupStats]:
        return _groups(self.pods, lambda p: p.workload, dict(self.stranded), self.end_time)

    def by_recipe(self) -> list[GroupStats]:
        recipe_of = dict(self.workload_recipes)
        stranded: dict[str, Stranded] = {}
        for wl, s in self.stranded:
            r = recipe_of.get(wl, "") or "(none)"
            stranded[r] = _add_stranded(stranded.get(r, Stranded()), s)
        return _groups(self.pods, lambda p: p.recipe or "(none)", stranded, self.end_time)

    def pending(self) -> list[PodResult]:
        return [p for p in self.pods if p.phase == "Pending"]

    def utilisation(self) -> dict[str, float | None]:
        """Mean allocated fraction per device class over the run (time-weighted)."""
        return self._utilisation(self.class_capacity, lambda s: s.by_class)

    def product_utilisation(self) -> dict[str, float | None]:
        """Mean allocated fraction per device product (of every device of that product)."""
        return self._utilisation(self.product_capacity, lambda s: s.by_product)

    def _utilisation(
        self, capacity: Sequence[tuple[str, int | None]], series: Callable[[Sample], tuple[tuple[str, int], ...]]
    ) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for key, cap in capacity:
            if not cap:
                out[key] = None
                continue
            out[key] = _time_weighted(self.samples, lambda s, k=key: dict(series(s)).get(k, 0), self.end_time) / cap
        return out

    def queues_json(self) -> dict[str, Any]:
        """Queue wait (arrival → admission) apart from scheduling wait (admission → bound), and quota over time."""
        by_queue: dict[str, list[QueueRecord]] = {}
        for rec in self.queue_records:
            by_queue.setdefault(rec.queue, []).append(rec)
        sched: dict[str, list[float]] = {}
        for p in self.pods:
            if p.scheduled is not None:
                sched.setdefault(p.workload, []).append(p.scheduled - p.arrival)
        summary = {}
        for queue, recs in sorted(by_queue.items()):
            waits = sorted(r.wait for r in recs if r.wait is not None)
            sw = sorted(w for r in recs for w in sched.get(r.workload, []))
            summary[queue] = {
                "units": len(recs), "admitted": len(waits), "waiting": len(recs) - len(waits),
                "queueWaitP50": _num(percentile(waits, 50)), "queueWaitP90": _num(percentile(waits, 90)),
                "queueWaitMax": _num(waits[-1] if waits else None),
                "schedulingWaitP50": _num(percentile(sw, 50)), "schedulingWaitMax": _num(sw[-1] if sw else None),
                "borrowedUnits": sum(1 for r in recs if r.borrowed),
            }
        return {"byQueue": summary, "units": [r.to_json() for r in self.queue_records],
                "quota": [s.to_json() for s in thin(self.quota_samples)]}

    def placements(self) -> dict[str, str]:
        """``namespace/name`` -> node or the Pending message (for comparisons with a real cluster)."""
        return {f"{p.namespace}/{p.name}": (p.node or f"Pending: {p.message}") for p in self.pods}

    def to_json(self, *, pods: bool = True, events: bool = True) -> dict[str, Any]:
        util, by_product = self.utilisation(), self.product_utilisation()
        doc: dict[str, Any] = {
            "scenario": self.scenario,
            "seed": self.seed,
            "kubernetesVersion": self.kubernetes_version,
            "nodes": self.nodes,
            "devices": self.devices,
            "endTime": _num(self.end_time),
            "totals": {
                "pods": len(self.pods),
                "scheduled": sum(1 for p in self.pods if p.scheduled is not None),
                "pending": len(self.pending()),
                "attempts": self.attempts,
                "allocatorCalls": self.allocator_calls,
                "cacheHits": self.cache_hits,
            },
            "workloads": [g.to_json() for g in self.by_workload()],
            "recipes": [g.to_json() for g in self.by_recipe()],
            "utilisation": {
                "byClass": {
                    cls: {"capacity": cap, "meanUtilisation": _num(util.get(cls))} for cls, cap in self.class_capacity
                },
                "byProduct": {
                    product: {"capacity": cap, "meanUtilisation": _num(by_product.get(product))}
                    for product, cap in self.product_capacity
                },
            },
            "series": [
                {
                    "time": _num(s.time),
                    "pending": s.pending,
                    "running": s.running,
                    "byClass": dict(s.by_class),
                    "byProduct": dict(s.by_product),
                }
                for s in thin(self.samples)
            ],
        }
        if self.queue_records:
            doc["queues"] = self.queues_json()
        if pods:
            doc["pods"] = [p.to_json() for p in self.pods]
        if events:
            doc["events"] = [e.to_json() for e in self.events]
        return doc


# --- helpers ----------------------------------------------------------------------------------


def percentile(sorted_values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile of already sorted values (None for no values)."""
    if not sorted_values:
        return None
    return sorted_values[_rank(len(sorted_values), q) - 1]


def _rank(n: int, q: float) -> int:
    """The 1-based nearest rank of percentile ``q`` among ``n`` values."""
    return min(max(1, math.ceil(q / 100 * n)), n)


_S = TypeVar("_S")


def thin(samples: Sequence[_S], limit: int = MAX_REPORT_SAMPLES) -> list[_S]:
    """At most ``limit`` samples, evenly spaced by index, always keeping the first and last."""
    n = len(samples)
    if n <= limit:
        return list(samples)
    idx = sorted({round(i * (n - 1) / (limit - 1)) for i in range(limit)})
    return [samples[i] for i in idx]


def _time_weighted(samples: Sequence[Sample], value: Any, end: float) -> float:
    if not samples:
        return 0.0
    span = end - samples[0].time
    if span <= 0:
        return float(value(samples[-1]))
    total = 0.0
    for a, b in zip(samples, [*samples[1:], None], strict=True):
        until = b.time if b is not None else end
        total += value(a) * max(0.0, until - a.time)
    return total / span


def _add_stranded(a: Stranded, b: Stranded) -> Stranded:
    return Stranded(a.devices + b.devices, a.device_seconds + b.device_seconds, a.excess_gib_hours + b.excess_gib_hours)


def _groups(pods: Iterable[PodResult], key: Any, stranded: Mapping[str, Stranded], end: float) -> list[GroupStats]:
    groups: dict[str, list[PodResult]] = {}
    for p in pods:
        groups.setdefault(key(p), []).append(p)
    out = []
    for name in sorted(groups):
        members = groups[name]
        # (wait, open): a pod still waiting at the end counts with the time it has waited so
        # far; sorting puts an open wait after an equal closed one, so ties stay exact.
        ranked = sorted((w, False) if (w := p.wait) is not None else (max(0.0, end - p.arrival), True) for p in members)
        waits = [w for w, _ in ranked]
        censored = sum(1 for _, is_open in ranked if is_open)
        bounds: list[str] = []
        if censored:
            # A quantile is exact only if no open wait ranks at or below it.
            first_open = next(i for i, (_, is_open) in enumerate(ranked) if is_open)
            for label, q in (("p50", 50), ("p90", 90), ("p99", 99)):
                if first_open < _rank(len(ranked), q):
                    bounds.append(label)
            bounds += ["max", "mean"]
        placement: dict[str, int] = {}
        for p in members:
            for product in p.products:
                placement[product] = placement.get(product, 0) + 1
        out.append(
            GroupStats(
                name=name,
                pods=len(members),
                scheduled=sum(1 for p in members if p.scheduled is not None),
                pending=sum(1 for p in members if p.phase == "Pending"),
                wait_p50=percentile(waits, 50),
                wait_p90=percentile(waits, 90),
                wait_p99=percentile(waits, 99),
                wait_max=waits[-1] if waits else None,
                wait_mean=(sum(waits) / len(waits)) if waits else None,
                placement=tuple(sorted(placement.items())),
                stranded=stranded.get(name, Stranded()),
                censored=censored,
                lower_bounds=tuple(bounds),
            )
        )
    return out


def _num(value: float | None) -> float | int | None:
    """Stable JSON numbers: integers stay integers, floats are rounded to microseconds."""
    if value is None:
        return None
    if float(value).is_integer():
        return int(value)
    return round(float(value), 6)
