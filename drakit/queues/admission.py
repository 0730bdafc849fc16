"""The admission engine: which workloads Kueue v0.19.2 admits, in which order, charging what.

Pure and deterministic: no clock is read (events carry their time), ties are broken by name.
One :meth:`Engine.settle` runs scheduling cycles until nothing changes, as Kueue's scheduler
does between two events, and each cycle follows ``pkg/scheduler/scheduler.go``:

1. one head per ClusterQueue: the pending workload with the highest priority, then the oldest;
2. nomination on a snapshot of usage: per pod set and resource, *Fit* (fits unused quota,
   borrowing included), *Preempt* (needs no more than the nominal quota, but others hold it:
   with preemption off there are no candidates) or *NoFit* (more than the queue could ever get);
3. entries sorted by borrowing height, then priority, then creation time;
4. in that order: a Fit that still fits the snapshot is admitted and charged to it; one that no
   longer fits (an earlier entry took the quota) is skipped and requeued at once; a Preempt
   without candidates reserves what it is owed of nominal quota for the rest of the cycle;
5. requeue: StrictFIFO puts every head back (an old head blocks younger ones); BestEffortFIFO
   sets a NoFit or Preempt head aside until quota is freed in its cohort (a workload finishes)
   and lets the next one try.

Counting (``pkg/workload``, ``pkg/dra``): cpu, memory and extended resources are per-pod requests
times the pod set's count; ``pods`` is the count (when the queue covers it); each DRA device
request charges its count to the logical resource its DeviceClass is mapped to, or, for a counter
mapping, the largest counter consumption among the matching devices times the count.

Not modelled (refused by :func:`check_setup`): preemption (``withinClusterQueue``,
``reclaimWithinCohort``, ``borrowWithinCohort`` other than Never), more than one flavor per
resource group; and, refused where Kueue objects are read (``queues.kueue``): fair sharing,
admission checks, partial admission, topology-aware scheduling, waitForPodsReady.
drakit-only: ``max_running``, a true limit on admitted workloads per ClusterQueue.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import Any, Literal

from drakit.errors import InvalidArgument
from drakit.queues.quota import FlavorResource, QuotaTree, ResourceQuota

__all__ = [
    "Admission", "Arrive", "ClusterQueue", "Cohort", "DeviceClassMapping", "DeviceRequest", "Engine", "Finish",
    "Mode", "NotModelled", "PodSet", "PodSetAssignment", "Setup", "Step", "Wait", "WaitReason", "Workload",
    "check_setup", "replay", "workload_usage",
]

Strategy = Literal["StrictFIFO", "BestEffortFIFO"]
PODS = "pods"


class NotModelled(InvalidArgument):
    """The setup enables Kueue behaviour the engine does not model; predicting it would mislead."""


@dataclass(frozen=True)
class ClusterQueue:
    """A ClusterQueue as the engine needs it; ``groups`` are (covered resources, flavors) in order."""

    name: str
    groups: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]
    quotas: Mapping[FlavorResource, ResourceQuota]
    cohort: str | None = None
    strategy: Strategy = "BestEffortFIFO"
    namespaces: frozenset[str] | None = None  # None: every namespace ({} selector)
    max_running: int | None = None  # drakit only: Kueue has no workload-count limit
    preemption: Mapping[str, str] = field(default_factory=dict)
    inactive: str = ""  # why Kueue does not admit through it ("" when active)


@dataclass(frozen=True)
class Cohort:
    name: str
    parent: str | None = None
    quotas: Mapping[FlavorResource, ResourceQuota] = field(default_factory=dict)


@dataclass(frozen=True)
class DeviceClassMapping:
    """One ``deviceClassMappings`` entry; ``counter`` set: charge counter units instead of devices."""

    name: str
    device_classes: tuple[str, ...]
    counter: str | None = None
    driver: str = ""  # the counter source's driver and device selector
    selector: str = "true"


@dataclass(frozen=True)
class Setup:
    cluster_queues: tuple[ClusterQueue, ...]
    local_queues: Mapping[tuple[str, str], str]  # (namespace, LocalQueue) -> ClusterQueue
    cohorts: tuple[Cohort, ...] = ()
    mappings: tuple[DeviceClassMapping, ...] = ()
    priority_classes: Mapping[str, int] = field(default_factory=dict)

    def queue(self, name: str) -> ClusterQueue:
        for cq in self.cluster_queues:
            if cq.name == name:
                return cq
        raise KeyError(name)


@dataclass(frozen=True)
class DeviceRequest:
    """One ExactCount request of a pod's claim template; ``charge``: counter units per device."""

    device_class: str
    count: int = 1
    charge: Mapping[str, int] = field(default_factory=dict)  # counter-mapped resource -> per-device max


@dataclass(frozen=True)
class PodSet:
    name: str = "main"
    count: int = 1
    requests: Mapping[str, int] = field(default_factory=dict)  # per pod, canonical units
    devices: tuple[DeviceRequest, ...] = ()  # per pod
    problem: str = ""  # a reason Kueue refuses the pod set outright (plain claim, firstAvailable, ...)


@dataclass(frozen=True)
class Workload:
    name: str
    namespace: str
    queue: str  # the LocalQueue
    pod_sets: tuple[PodSet, ...] = (PodSet(),)
    priority: int = 0
    created: float = 0.0

    @cached_property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


class Mode(StrEnum):
    FIT = "Fit"
    PREEMPT = "Preempt"
    NO_FIT = "NoFit"


class WaitReason(StrEnum):
    """Why a workload is not admitted (stable: stored and printed)."""

    NO_QUEUE = "LocalQueueNotFound"
    NAMESPACE = "NamespaceMismatch"
    MISCONFIGURED = "Misconfigured"  # unmapped DeviceClass, unsupported claim, uncovered resource
    EXCEEDS_MAX = "ExceedsMaxQuota"
    WAITING_FOR_QUOTA = "WaitingForQuota"
    CONCURRENCY = "ConcurrencyLimit"
    BEHIND_HEAD = "BehindHead"  # StrictFIFO: an older head blocks
    NOT_TRIED = "NotTried"  # never a head yet (or skipped this cycle)
    INACTIVE = "Inactive"  # the ClusterQueue is held (stopPolicy) or names a missing ResourceFlavor


@dataclass(frozen=True)
class PodSetAssignment:
    """``status.admission.podSetAssignments[]``: flavor per resource and the pod set's total usage."""

    name: str
    count: int
    flavors: Mapping[str, str]
    resource_usage: Mapping[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "count": self.count, "flavors": dict(sorted(self.flavors.items())),
                "resourceUsage": {r: format_amount(r, v) for r, v in sorted(self.resource_usage.items())}}


@dataclass(frozen=True)
class Admission:
    workload: str  # namespace/name
    cluster_queue: str
    pod_sets: tuple[PodSetAssignment, ...]
    at: float
    borrowed: Mapping[FlavorResource, int] = field(default_factory=dict)  # beyond nominal when admitted

    def usage(self) -> dict[FlavorResource, int]:
        out: dict[FlavorResource, int] = {}
        for ps in self.pod_sets:
            for r, v in ps.resource_usage.items():
                fr = (ps.flavors[r], r)
                out[fr] = out.get(fr, 0) + v
        return out

    def to_json(self) -> dict[str, Any]:
        return {"workload": self.workload, "clusterQueue": self.cluster_queue,
                "podSetAssignments": [ps.to_json() for ps in self.pod_sets]}


@dataclass(frozen=True)
class Wait:
    workload: str
    cluster_queue: str
    reason: WaitReason
    message: str
    set_aside: bool = False  # BestEffortFIFO: inadmissible until quota is freed in the cohort
    ahead: tuple[str, ...] = ()  # pending workloads ordered before it in its ClusterQueue

    def to_json(self) -> dict[str, Any]:
        return {"workload": self.workload, "clusterQueue": self.cluster_queue, "reason": self.reason.value,
                "message": self.message, "setAside": self.set_aside, "ahead": list(self.ahead)}


def format_amount(resource: str, value: int) -> str:
    """Kueue's quantity text: cpu in cores or millicores, everything else a plain integer."""
    if resource == "cpu":
        return str(value // 1000) if value % 1000 == 0 else f"{value}m"
    return str(value)


# -- counting ---------------------------------------------------------------------------------


def workload_usage(wl: Workload, setup: Setup) -> tuple[list[tuple[PodSet, dict[str, int]]], str]:
    """Per pod set its total requests in Kueue's resources, or a Misconfigured message."""
    by_class: dict[str, DeviceClassMapping] = {}
    counters: dict[str, list[DeviceClassMapping]] = {}
    for m in setup.mappings:
        for dc in m.device_classes:
            if m.counter is None:
                by_class[dc] = m
            else:
                counters.setdefault(dc, []).append(m)
    out: list[tuple[PodSet, dict[str, int]]] = []
    for ps in wl.pod_sets:
        if ps.problem:
            return [], f"failed to assign flavors to pod set {ps.name}: {ps.problem}"
        per_pod: dict[str, int] = {r: v for r, v in ps.requests.items() if v}
        for req in ps.devices:
            if req.device_class in counters:
                for m in counters[req.device_class]:
                    per_pod[m.name] = per_pod.get(m.name, 0) + req.charge.get(m.name, 0) * req.count
            elif req.device_class in by_class:
                name = by_class[req.device_class].name
                per_pod[name] = per_pod.get(name, 0) + req.count
            else:
                return [], f"DeviceClass {req.device_class} is not mapped in DRA configuration for podset {ps.name}"
        total = {r: v * ps.count for r, v in per_pod.items()}
        out.append((ps, total))
    return out, ""


# -- the engine ------------------------------------------------------------------------------


@dataclass
class _Nominated:
    wl: Workload
    cq: ClusterQueue
    mode: Mode
    borrow: int
    pod_sets: list[PodSetAssignment]
    usage: dict[FlavorResource, int]
    reason: WaitReason
    message: str


@dataclass(frozen=True)
class Arrive:
    workload: Workload
    at: float


@dataclass(frozen=True)
class Finish:
    workload: str  # namespace/name
    at: float


@dataclass(frozen=True)
class Step:
    """What one event led to once the engine settled."""

    event: Arrive | Finish
    admitted_now: tuple[str, ...]  # in admission order
    admitted: tuple[str, ...]  # every workload holding quota, sorted

    def to_json(self) -> dict[str, Any]:
        kind, name = ("arrive", self.event.workload.key) if isinstance(self.event, Arrive) else ("finish", self.event.workload)
        return {"event": kind, "workload": name, "at": self.event.at, "admittedNow": list(self.admitted_now),
                "admitted": list(self.admitted)}


def check_setup(setup: Setup) -> None:
    """Refuse what the engine does not model, naming the field (``NotModelled``)."""
    for cq in setup.cluster_queues:
        for key, policy in sorted(cq.preemption.items()):
            if policy not in ("", "Never"):
                raise NotModelled(f"ClusterQueue {cq.name}: spec.preemption.{key}: {policy} is not modelled "
                                  "(preemption); drakit predicts admission with preemption off only")
        for i, (_, flavors) in enumerate(cq.groups):
            if len(flavors) != 1:
                raise NotModelled(f"ClusterQueue {cq.name}: spec.resourceGroups[{i}].flavors: {len(flavors)} flavors; "
                                  "drakit models one flavor per resource group")
    names = {c.name: c.parent for c in setup.cohorts}
    for start in names:
        seen = [start]
        parent = names.get(start)
        while parent is not None:
            if parent in seen:
                raise InvalidArgument(f"Cohort {start}: spec.parentName: cycle {' -> '.join([*seen, parent])}")
            seen.append(parent)
            parent = names.get(parent)


class Engine:
    """Kueue's queues, cache and scheduler for one setup; feed it events, read its state."""

    def __init__(self, setup: Setup, *, fast: bool = True) -> None:
        check_setup(setup)
        self.fast = fast  # False: one cycle at a time, as Kueue runs them (the reference for the fast path)
        self.setup = setup
        self._cqs = {cq.name: cq for cq in setup.cluster_queues}
        self._group_of: dict[str, dict[str, str]] = {  # cq -> resource -> flavor
            cq.name: {r: flavors[0] for covered, flavors in cq.groups for r in covered} for cq in setup.cluster_queues
        }
        self.tree = QuotaTree(((cq.name, cq.cohort, cq.quotas) for cq in setup.cluster_queues),
                              ((c.name, c.parent, c.quotas) for c in setup.cohorts))
        self.workloads: dict[str, Workload] = {}
        self.admitted: dict[str, Admission] = {}
        self._waits: dict[str, Wait] = {}
        self._dirty = False
        self._running = {name: 0 for name in self._cqs}
        self._usage_cache: dict[str, tuple[Workload, list[tuple[PodSet, dict[str, int]]], str, Any]] = {}
        self._heap: dict[str, list[tuple[int, float, str]]] = {name: [] for name in self._cqs}
        self._aside: dict[str, set[str]] = {name: set() for name in self._cqs}
        self.order: list[str] = []  # admission order
        self.cycles = 0
        self.now = 0.0

    # -- events ----------------------------------------------------------------------------

    def cluster_queue_of(self, wl: Workload) -> str | None:
        return self.setup.local_queues.get((wl.namespace, wl.queue))

    def submit(self, wl: Workload, now: float | None = None) -> None:
        if now is not None:
            self.now = now
        if wl.key in self.workloads:
            raise InvalidArgument(f"workload {wl.key} submitted twice")
        self.workloads[wl.key] = wl
        cq = self.cluster_queue_of(wl)
        self._dirty = True
        if cq is None or cq not in self._cqs:  # Kueue keeps it out of every ClusterQueue
            what = f"LocalQueue {wl.queue} doesn't exist" if cq is None else f"ClusterQueue {cq} doesn't exist"
            self._waits[wl.key] = Wait(wl.key, cq or "", WaitReason.NO_QUEUE, what)
            return
        self._push(cq, wl)
        self._waits[wl.key] = Wait(wl.key, cq, WaitReason.NOT_TRIED, "waiting for its turn")

    def finish(self, key: str, now: float | None = None) -> None:
        """The workload ended (or was deleted): its quota is freed and its cohort's set-aside retried."""
        if now is not None:
            self.now = now
        adm = self.admitted.pop(key, None)
        wl = self.workloads.pop(key, None)
        self._waits.pop(key, None)
        self._usage_cache.pop(key, None)
        self._dirty = True
        if adm is not None:
            self._running[adm.cluster_queue] -= 1
            self.tree.remove(adm.cluster_queue, adm.usage())
            self._requeue_aside(adm.cluster_queue)
        elif wl is not None:
            cq = self.cluster_queue_of(wl)
            if cq in self._heap:
                self._heap[cq] = [e for e in self._heap[cq] if e[2] != key]
                heapq.heapify(self._heap[cq])
                self._aside[cq].discard(key)

    def assume(self, wl: Workload, cluster_queue: str, now: float | None = None) -> Admission:
        """Record a workload already admitted (read from a cluster), charging its usage as Kueue's cache does."""
        per_set, problem = workload_usage(wl, self.setup)
        if problem:
            raise InvalidArgument(f"workload {wl.key}: {problem}")
        flavor_of = self._group_of[cluster_queue]
        sets = []
        for ps, total in per_set:
            if PODS in flavor_of:
                total = {**total, PODS: ps.count}
            sets.append(PodSetAssignment(ps.name, ps.count, {r: flavor_of.get(r, "") for r in total}, total))
        adm = Admission(wl.key, cluster_queue, tuple(sets), self.now if now is None else now)
        self.workloads[wl.key] = wl
        self.admitted[wl.key] = adm
        self._running[cluster_queue] += 1
        self.tree.add(cluster_queue, adm.usage())
        return adm

    def _requeue_aside(self, cq: str) -> None:
        # Kueue's QueueAssociatedInadmissibleWorkloadsAfter: every ClusterQueue of the cohort tree.
        root = self.tree.root_of(cq)
        for name in self.tree.queues_under(root) if root.startswith("cohort/") else [cq]:
            for key in sorted(self._aside[name]):
                self._push(name, self.workloads[key])
            self._aside[name].clear()

    def _push(self, cq: str, wl: Workload) -> None:
        heapq.heappush(self._heap[cq], (-wl.priority, wl.created, wl.key))

    # -- scheduling ------------------------------------------------------------------------

    def settle(self, now: float | None = None, max_cycles: int = 10_000_000) -> list[str]:
        """Run cycles until one admits nothing and sets nothing aside; returns the keys admitted."""
        if now is not None:
            self.now = now
        admitted: list[str] = []
        cycles = 0
        while cycles < max_cycles:
            if self.fast:
                cycles += self._fast_forward()
            got, changed = self.cycle()
            cycles += 1
            admitted += got
            if not got and not changed:
                break
        self._dirty = True
        return admitted

    def _fast_forward(self) -> int:
        """Skip the cycles in which every head is set aside; returns how many were skipped.

        While no cycle admits anything the quota tree does not change, so each head's outcome
        is a function of its demand alone: a BestEffortFIFO queue sets aside head after head
        until one fits.  Kueue spends one cycle per set-aside head (its #14477); the outcome of
        ``k`` such cycles, where ``k`` is the smallest run of set-asides over the queues (a
        StrictFIFO queue whose head does not fit never changes), is computed here at once.
        """
        memo: dict[tuple[str, Any], _Nominated] = {}
        runs: dict[str, list[tuple[tuple[int, float, str], _Nominated]]] = {}
        bound: int | None = None  # cycles until some queue's head fits (and the tree changes)
        for name, heap in self._heap.items():
            cq = self._cqs[name]
            taken: list[tuple[tuple[int, float, str], _Nominated]] = []
            while heap:
                if bound is not None and len(taken) >= bound:
                    break
                entry = heapq.heappop(heap)
                e = self._nominate_memo(cq, self.workloads[entry[2]], memo)
                aside = e.mode is not Mode.FIT and (cq.strategy == "BestEffortFIFO" or e.reason is WaitReason.NAMESPACE)
                if not aside:
                    heapq.heappush(heap, entry)
                    if e.mode is Mode.FIT:
                        bound = len(taken) if bound is None else min(bound, len(taken))
                    break
                taken.append((entry, e))
            runs[name] = taken
        k = bound if bound is not None else max((len(t) for t in runs.values()), default=0)
        for name, taken in runs.items():
            for entry, _ in taken[k:]:
                heapq.heappush(self._heap[name], entry)
            for _, e in taken[:k]:
                self._aside[name].add(e.wl.key)
                self._waits[e.wl.key] = Wait(e.wl.key, name, e.reason, e.message, set_aside=True)
        self.cycles += k
        return k

    def _nominate_memo(self, cq: ClusterQueue, wl: Workload, memo: dict[tuple[str, Any], _Nominated]) -> _Nominated:
        """Nomination against the unchanged tree, shared by workloads of one queue with the same demand."""
        sig = (cq.name, self._cached(wl)[3])
        hit = memo.get(sig)
        if hit is None:
            hit = memo[sig] = self._nominate(cq, wl, self.tree, self._running)
        return hit if hit.wl is wl else _Nominated(wl, cq, hit.mode, hit.borrow, hit.pod_sets, hit.usage, hit.reason, hit.message)

    def _cached(self, wl: Workload) -> tuple[Workload, list[tuple[PodSet, dict[str, int]]], str, Any]:
        hit = self._usage_cache.get(wl.key)
        if hit is None or hit[0] is not wl:
            per_set, problem = workload_usage(wl, self.setup)
            # what nomination depends on besides the tree: the demand, and the namespace when it is refused
            sig = (problem, wl.namespace, tuple((ps.name, ps.count, tuple(sorted(total.items()))) for ps, total in per_set))
            hit = self._usage_cache[wl.key] = (wl, per_set, problem, sig)
        return hit

    def _usage_of(self, wl: Workload) -> tuple[list[tuple[PodSet, dict[str, int]]], str]:
        hit = self._cached(wl)
        return hit[1], hit[2]

    def cycle(self) -> tuple[list[str], bool]:
        """One scheduling cycle; returns (admitted keys, whether anything was set aside)."""
        heads: list[tuple[str, Workload]] = []
        for name in sorted(self._heap):
            if self._heap[name]:
                _, _, key = heapq.heappop(self._heap[name])
                heads.append((name, self.workloads[key]))
        if not heads:
            return [], False
        self.cycles += 1
        snap = self.tree.copy()
        entries = [self._nominate(self._cqs[name], wl, snap, self._running) for name, wl in heads]
        entries.sort(key=lambda e: (e.borrow, -e.wl.priority, e.wl.created, e.wl.key))
        got: list[str] = []
        immediate: list[_Nominated] = []
        aside: list[_Nominated] = []
        for e in entries:
            if e.mode is Mode.NO_FIT:
                (immediate if e.cq.strategy == "StrictFIFO" and e.reason is not WaitReason.NAMESPACE else aside).append(e)
                continue
            if e.mode is Mode.PREEMPT:
                snap.add(e.cq.name, self._reserve(e, snap))
                (immediate if e.cq.strategy == "StrictFIFO" else aside).append(e)
                continue
            if not snap.fits(e.cq.name, e.usage):
                e.reason, e.message = WaitReason.WAITING_FOR_QUOTA, "Workload no longer fits after processing another workload"
                immediate.append(e)
                continue
            before = {fr: snap.borrowed(e.cq.name, fr) for fr in e.usage}
            snap.add(e.cq.name, e.usage)
            borrowed = {fr: snap.borrowed(e.cq.name, fr) - before[fr] for fr in e.usage}
            self.tree.add(e.cq.name, e.usage)
            adm = Admission(e.wl.key, e.cq.name, tuple(e.pod_sets), self.now, {fr: v for fr, v in borrowed.items() if v > 0})
            self.admitted[e.wl.key] = adm
            self._running[e.cq.name] += 1
            self._waits.pop(e.wl.key, None)
            self.order.append(e.wl.key)
            got.append(e.wl.key)
        for e in immediate:
            self._push(e.cq.name, e.wl)
            self._waits[e.wl.key] = Wait(e.wl.key, e.cq.name, e.reason, e.message)
        for e in aside:
            self._aside[e.cq.name].add(e.wl.key)
            self._waits[e.wl.key] = Wait(e.wl.key, e.cq.name, e.reason, e.message, set_aside=True)
        return got, bool(aside)

    def _reserve(self, e: _Nominated, snap: QuotaTree) -> dict[FlavorResource, int]:
        # reserveCapacityForUnreclaimablePreempt: hold what the queue is owed so that another
        # queue's borrower cannot take it in this cycle (reclaimWithinCohort is Never).
        out: dict[FlavorResource, int] = {}
        for fr, v in e.usage.items():
            q = snap.quota(e.cq.name, fr)
            nominal = q.nominal if q else 0
            used = snap.usage(e.cq.name, fr)
            if e.borrow > 0:
                out[fr] = v if q is None or q.borrowing_limit is None else min(v, nominal + q.borrowing_limit - used)
            else:
                out[fr] = max(0, min(v, nominal - used))
        return out

    def _nominate(self, cq: ClusterQueue, wl: Workload, snap: QuotaTree, running: Mapping[str, int]) -> _Nominated:
        def refuse(reason: WaitReason, message: str, mode: Mode = Mode.NO_FIT) -> _Nominated:
            return _Nominated(wl, cq, mode, 0, [], {}, reason, message)

        if cq.inactive:
            return refuse(WaitReason.INACTIVE, f"ClusterQueue {cq.name} is inactive")
        if cq.namespaces is not None and wl.namespace not in cq.namespaces:
            return refuse(WaitReason.NAMESPACE, "Workload namespace doesn't match ClusterQueue selector")
        per_set, problem = self._usage_of(wl)
        if problem:
            return refuse(WaitReason.MISCONFIGURED, problem)
        flavor_of = self._group_of[cq.name]
        worst = Mode.FIT
        borrow = 0
        assumed: dict[FlavorResource, int] = {}
        assignments: list[PodSetAssignment] = []
        messages: list[str] = []
        reason = WaitReason.WAITING_FOR_QUOTA
        for ps, total in per_set:
            if PODS in flavor_of:
                total = {**total, PODS: ps.count}
            reasons: list[str] = []
            mode = Mode.FIT
            flavors: dict[str, str] = {}
            for r, v in sorted(total.items()):
                flavor = flavor_of.get(r)
                if flavor is None:
                    reasons.append(f"resource {r} unavailable in ClusterQueue")
                    mode = Mode.NO_FIT
                    reason = WaitReason.MISCONFIGURED
                    continue
                flavors[r] = flavor
                fr = (flavor, r)
                val = assumed.get(fr, 0) + v
                maximum = snap.potential(cq.name, fr)
                if val > maximum:
                    reasons.append(f"insufficient quota for {r} in flavor {flavor}, previously considered podsets requests "
                                   f"({format_amount(r, assumed.get(fr, 0))}) + current podset request ({format_amount(r, v)}) "
                                   f"> maximum capacity ({format_amount(r, maximum)})")
                    mode = Mode.NO_FIT
                    reason = WaitReason.EXCEEDS_MAX
                    continue
                height, may_reclaim = snap.borrow_height(cq.name, fr, val)
                available = snap.available(cq.name, fr)
                if val <= available:
                    borrow = max(borrow, height)
                    continue
                reasons.append(f"insufficient unused quota for {r} in flavor {flavor}, "
                               f"{format_amount(r, val - available)} more needed")
                if snap.nominal(cq.name, fr) >= val or may_reclaim:  # only preemption could help; none is allowed
                    mode = min(mode, Mode.PREEMPT, key=_RANK.__getitem__)
                    borrow = max(borrow, height)
                else:
                    mode = Mode.NO_FIT
            for r, v in total.items():
                if r in flavors:
                    fr = (flavors[r], r)
                    assumed[fr] = assumed.get(fr, 0) + v
            if reasons:
                messages.append(f"couldn't assign flavors to pod set {ps.name}: {', '.join(sorted(reasons))}")
            worst = min(worst, mode, key=_RANK.__getitem__)
            assignments.append(PodSetAssignment(ps.name, ps.count, flavors, {r: v for r, v in total.items() if r in flavors}))
        message = "; ".join(messages)
        if worst is Mode.FIT and cq.max_running is not None and running[cq.name] >= cq.max_running:
            return refuse(WaitReason.CONCURRENCY, f"ClusterQueue {cq.name} runs {running[cq.name]} workloads, "
                          f"its concurrency limit is {cq.max_running} (enforced by drakit)")
        return _Nominated(wl, cq, worst, borrow, assignments, dict(assumed), reason, message)

    # -- reading ---------------------------------------------------------------------------

    def pending(self, cq: str) -> list[str]:
        """Pending workloads of a ClusterQueue in Kueue's order (set-aside ones included)."""
        keys = [k for _, _, k in self._heap[cq]] + sorted(self._aside[cq])
        return sorted(keys, key=lambda k: (-self.workloads[k].priority, self.workloads[k].created, k))

    @property
    def waits(self) -> dict[str, Wait]:
        """Why each workload not admitted waits, with the workloads ahead of it (kept up to date lazily)."""
        if self._dirty:
            self._refresh_positions()
            self._dirty = False
        return self._waits

    def _refresh_positions(self) -> None:
        for name in self._cqs:
            queue = self.pending(name)
            for i, key in enumerate(queue):
                w = self._waits.get(key)
                if w is None:
                    continue
                ahead = tuple(queue[:i])
                if w.reason is WaitReason.NOT_TRIED and self._cqs[name].strategy == "StrictFIFO" and ahead:
                    w = Wait(key, name, WaitReason.BEHIND_HEAD, "")  # the position says it all
                self._waits[key] = Wait(w.workload, w.cluster_queue, w.reason, w.message, w.set_aside, ahead)

    def usage(self, cq: str) -> dict[FlavorResource, int]:
        return {fr: self.tree.usage(cq, fr) for fr in self._cqs[cq].quotas}


_RANK = {Mode.NO_FIT: 0, Mode.PREEMPT: 1, Mode.FIT: 2}


def replay(setup: Setup, events: Iterable[Arrive | Finish], *, fast: bool = True) -> tuple[Engine, list[Step]]:
    """Apply events in order, settling after each; the scenario form both sides of a comparison share."""
    engine = Engine(setup, fast=fast)
    steps: list[Step] = []
    for ev in events:
        if isinstance(ev, Arrive):
            engine.submit(ev.workload, ev.at)
        else:
            engine.finish(ev.workload, ev.at)
        got = engine.settle(ev.at)
        steps.append(Step(ev, tuple(got), tuple(sorted(engine.admitted))))
    return engine, steps
