"""The admission engine as the simulator's Admitter: scenarios gain queues, as a cluster gains Kueue.

A scenario workload goes through a queue when it carries ``kueue.x-k8s.io/queue-name`` or when
the catalog's routing sends it somewhere; a Job is one Kueue Workload of ``parallelism`` pods
(quota held until its last pod ends), each pod of a ``kind: Pod`` workload is one of its own.
Device requests are read from the scenario's ResourceClaimTemplates as Kueue reads them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from drakit.queues.admission import Engine, PodSet, Setup
from drakit.queues.admission import Workload as QueuedWorkload
from drakit.queues.catalog import Catalog
from drakit.queues.kueue import PRIORITY_LABEL, QUEUE_LABEL, Charges, counter_charges, pod_set_of
from drakit.queues.routing import route
from drakit.sim.result import QueueRecord, QuotaSample
from drakit.sim.scenario import Workload

__all__ = ["EngineAdmitter"]


class EngineAdmitter:
    """:class:`drakit.sim.admission.Admitter` over :class:`drakit.queues.Engine`."""

    def __init__(self, setup: Setup, templates: Iterable[Mapping[str, Any]] = (), catalog: Catalog | None = None) -> None:
        self.engine = Engine(setup)
        self.catalog = catalog
        self._templates: dict[str, dict[str, Mapping[str, Any]]] = {}
        for t in templates:
            meta = t.get("metadata") or {}
            self._templates.setdefault(meta.get("namespace") or "default", {})[meta.get("name", "")] = t
        self._arrived: dict[str, tuple[str, str, float]] = {}  # unit -> (workload, key, time)
        self._admitted: dict[str, tuple[float, str, dict[str, int]]] = {}  # unit -> (when, ClusterQueue, borrowed)
        self._keys: dict[str, str] = {}  # engine key -> unit
        self._charges: dict[str, Charges] = {}  # namespace -> counter charges of its templates

    def observe_inventory(self, classes: Mapping[str, Mapping[str, Any]], slices: Sequence[Mapping[str, Any]]) -> None:
        """Counter quotas charge what the matching devices consume (Kueue's computeCounterCharges)."""
        if not any(m.counter for m in self.engine.setup.mappings):
            return
        for namespace, templates in self._templates.items():
            self._charges[namespace] = counter_charges(self.engine.setup, templates, classes, slices)

    def _queue(self, w: Workload) -> str | None:
        labels = dict(w.labels)
        if QUEUE_LABEL in labels:
            return labels[QUEUE_LABEL]
        if self.catalog is not None:
            return route(self.catalog, profile=w.profile or None, namespace=w.namespace, labels=labels).queue
        return None

    def accepts(self, workload: Workload) -> bool:
        return self._queue(workload) is not None

    def arrive(self, unit: str, workload: Workload, now: float) -> None:
        queue = self._queue(workload) or ""
        count = min(workload.parallelism, workload.count) if workload.kind == "Job" else 1
        spec = {"resourceClaims": [{"name": c.name, "resourceClaimTemplateName": c.template, "resourceClaimName": c.claim}
                                   for c in workload.claims]}
        ps = pod_set_of("main", count, spec, self._templates.get(workload.namespace, {}),
                        self._charges.get(workload.namespace))
        requests = {r: v for r, v in (("cpu", workload.cpu_milli), ("memory", workload.memory_bytes)) if v}
        ps = PodSet(ps.name, ps.count, requests, ps.devices, ps.problem)
        labels = dict(workload.labels)
        priority = self.engine.setup.priority_classes.get(labels.get(PRIORITY_LABEL, ""), 0)
        if not labels.get(PRIORITY_LABEL) and self.catalog is not None and queue in {q.name for q in self.catalog.spec.queues}:
            default = self.catalog.queue(queue).priority
            priority = self.engine.setup.priority_classes.get(default or "", 0)
        wl = QueuedWorkload(unit, workload.namespace, queue, (ps,), priority, now)
        self.engine.submit(wl, now)
        self._arrived[unit] = (workload.name, wl.key, now)
        self._keys[wl.key] = unit

    def finish(self, unit: str, now: float) -> None:
        self.engine.finish(self._arrived[unit][1], now)

    def settle(self, now: float) -> list[str]:
        out = []
        for key in self.engine.settle(now):
            adm = self.engine.admitted[key]
            unit = self._keys[key]
            self._admitted[unit] = (now, adm.cluster_queue, {r: v for (_, r), v in adm.borrowed.items()})
            out.append(unit)
        return out

    def sample(self, now: float) -> QuotaSample:
        used, borrowed = [], []
        tree = self.engine.tree
        for cq in self.engine.setup.cluster_queues:
            for fr in sorted(cq.quotas):
                used.append((cq.name, fr[1], tree.usage(cq.name, fr)))
                if tree.borrowed(cq.name, fr):
                    borrowed.append((cq.name, fr[1], tree.borrowed(cq.name, fr)))
        return QuotaSample(now, tuple(used), tuple(borrowed))

    def record(self, unit: str) -> QueueRecord:
        workload, key, arrived = self._arrived[unit]
        if unit in self._admitted:
            at, cq, borrowed = self._admitted[unit]
            return QueueRecord(unit, workload, cq, arrived, at, borrowed=borrowed)
        wait = self.engine.waits[key]
        return QueueRecord(unit, workload, wait.cluster_queue or self.engine.workloads[key].queue, arrived, None,
                           wait.reason.value, wait.message)
