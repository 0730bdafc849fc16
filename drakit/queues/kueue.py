"""Plain Kueue objects → the engine's values, so an existing Kueue setup can be simulated and explained.

Reads ``kueue.x-k8s.io/v1beta2`` ClusterQueue, Cohort, LocalQueue, WorkloadPriorityClass and
Workload, a ``config.kueue.x-k8s.io/v1beta2`` Configuration (its ``deviceClassMappings``), and
``batch/v1`` Jobs with the ResourceClaimTemplates their pod templates name — counted as Kueue's
``pkg/dra`` counts them: ExactCount requests only; a plain ResourceClaim, ``firstAvailable``,
``allocationMode: All`` or admin access make the pod set inadmissible with Kueue's words.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from drakit.errors import DrakitError, InvalidArgument
from drakit.profiles.eligibility import Evaluator, cel_evaluator
from drakit.quantity import Quantity, QuantityError
from drakit.queues.admission import (
    ClusterQueue,
    Cohort,
    DeviceClassMapping,
    DeviceRequest,
    NotModelled,
    PodSet,
    Setup,
    Workload,
)
from drakit.queues.quota import FlavorResource, ResourceQuota

__all__ = [
    "PRIORITY_LABEL",
    "QUEUE_LABEL",
    "counter_charges",
    "pod_set_of",
    "setup_from_objects",
    "workload_from_job",
    "workload_from_object",
]

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
NAMESPACE_LABEL = "kubernetes.io/metadata.name"


def _amount(resource: str, value: Any, where: str) -> int:
    try:
        q = Quantity.parse(str(value))
    except QuantityError as e:
        raise InvalidArgument(f"{where}: {value!r} is not a quantity: {e}") from None
    # Kueue keeps cpu in millicores and everything else as the integer value (rounded up).
    return q.milli_value() if resource == "cpu" else q.value()


def _namespaces(selector: Any, cq: str) -> frozenset[str] | None:
    if selector is None:
        return frozenset()  # Kueue: a null selector selects no namespace
    if selector == {}:
        return None
    labels = selector.get("matchLabels") or {}
    exprs = selector.get("matchExpressions") or []
    names: set[str] | None = None
    if set(labels) - {NAMESPACE_LABEL}:
        raise InvalidArgument(f"ClusterQueue {cq}: spec.namespaceSelector: only {NAMESPACE_LABEL} is modelled")
    if NAMESPACE_LABEL in labels:
        names = {labels[NAMESPACE_LABEL]}
    for e in exprs:
        if e.get("key") != NAMESPACE_LABEL or e.get("operator") != "In":
            raise InvalidArgument(f"ClusterQueue {cq}: spec.namespaceSelector.matchExpressions: only "
                                  f"{NAMESPACE_LABEL} In [...] is modelled")
        vals = set(e.get("values") or [])
        names = vals if names is None else names & vals
    return frozenset(names or ())


def _groups(spec: Mapping[str, Any], where: str) -> tuple[tuple[tuple[tuple[str, ...], tuple[str, ...]], ...],
                                                         dict[FlavorResource, ResourceQuota]]:
    groups = []
    quotas: dict[FlavorResource, ResourceQuota] = {}
    for g in spec.get("resourceGroups") or []:
        flavors = tuple(f["name"] for f in g.get("flavors") or [])
        groups.append((tuple(g.get("coveredResources") or []), flavors))
        for f in g.get("flavors") or []:
            for r in f.get("resources") or []:
                name = r["name"]

                amounts = [None if r.get(k) is None else _amount(name, r[k], f"{where}: {k} of {name}")
                           for k in ("nominalQuota", "borrowingLimit", "lendingLimit")]
                quotas[(f["name"], name)] = ResourceQuota(amounts[0] or 0, amounts[1], amounts[2])
    return tuple(groups), quotas


def setup_from_objects(objects: Iterable[Mapping[str, Any]], namespaces: Sequence[str] = (),
                       max_running: Mapping[str, int] | None = None) -> Setup:
    """The engine's Setup from Kueue objects (other kinds are ignored)."""
    cqs: list[ClusterQueue] = []
    cohorts: list[Cohort] = []
    local: dict[tuple[str, str], str] = {}
    mappings: list[DeviceClassMapping] = []
    priorities: dict[str, int] = {}
    objects = list(objects)
    flavors = {(o.get("metadata") or {}).get("name") for o in objects if o.get("kind") == "ResourceFlavor"}
    for o in objects:
        kind, meta, spec = o.get("kind"), o.get("metadata") or {}, o.get("spec") or {}
        _refuse_unmodelled(kind, meta, o)
        if kind == "ClusterQueue":
            name = meta["name"]
            groups, quotas = _groups(spec, f"ClusterQueue {name}")
            preemption = {k: v for k, v in (spec.get("preemption") or {}).items() if isinstance(v, str)}
            if (spec.get("preemption") or {}).get("borrowWithinCohort"):
                preemption["borrowWithinCohort"] = spec["preemption"]["borrowWithinCohort"].get("policy", "Never")
            missing = sorted({f for _, fs in groups for f in fs} - flavors)
            held = spec.get("stopPolicy") in ("Hold", "HoldAndDrain")
            inactive = (f"spec.stopPolicy is {spec['stopPolicy']}" if held else
                        f"ResourceFlavor {', '.join(missing)} not found" if missing else "")
            cqs.append(ClusterQueue(name, groups, quotas, spec.get("cohortName") or None,
                                    spec.get("queueingStrategy") or "BestEffortFIFO",
                                    _namespaces(spec.get("namespaceSelector"), name),
                                    (max_running or {}).get(name), preemption, inactive))
        elif kind == "Cohort":
            _, quotas = _groups(spec, f"Cohort {meta['name']}")
            cohorts.append(Cohort(meta["name"], spec.get("parentName") or None, quotas))
        elif kind == "LocalQueue":
            local[(meta.get("namespace") or "default", meta["name"])] = spec["clusterQueue"]
        elif kind == "WorkloadPriorityClass":
            priorities[meta["name"]] = int(o.get("value", 0))
        elif kind == "Configuration":
            for m in (o.get("resources") or {}).get("deviceClassMappings") or []:
                counters = [s["counter"] for s in m.get("sources") or [] if s.get("counter")]
                c = counters[0] if counters else {}
                mappings.append(DeviceClassMapping(m["name"], tuple(m.get("deviceClassNames") or []), c.get("name"),
                                                   c.get("driver", ""),
                                                   ((c.get("deviceSelector") or {}).get("cel") or {}).get("expression", "true")))
    del namespaces  # LocalQueues are explicit in Kueue; kept for symmetry with setup_of
    return Setup(tuple(cqs), local, tuple(cohorts), tuple(mappings), priorities)


MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"  # partial admission

# Kueue settings that change admission and that the engine does not model: predicting admission
# with them switched on would mislead, so they are refused by field path (as preemption is).
_UNMODELLED: Mapping[str, tuple[tuple[str, str], ...]] = {
    # A queue's fairSharing weight or admissionScope acts only where the Configuration turns fair
    # sharing on, so the Configuration is what is refused.
    "ClusterQueue": (("spec.admissionChecks", "admission checks"), ("spec.admissionChecksStrategy", "admission checks")),
    "ResourceFlavor": (("spec.topologyName", "topology-aware scheduling"),),
    "Configuration": (("fairSharing", "fair sharing"), ("admissionFairSharing", "admission fair sharing"),
                      ("waitForPodsReady", "waitForPodsReady eviction and back-off")),
}


def _refuse_unmodelled(kind: Any, meta: Mapping[str, Any], obj: Mapping[str, Any]) -> None:
    for path, what in _UNMODELLED.get(str(kind), ()):
        node: Any = obj
        for part in path.split("."):
            node = node.get(part) if isinstance(node, Mapping) else None
        # Presence turns a v1beta2 setting on ({} included); v1beta1 spelled it enable: false.
        if node is None or node is False or node == [] or (isinstance(node, Mapping) and node.get("enable") is False):
            continue
        raise NotModelled(f"{kind} {meta.get('name', '')}: {path}: {what} is not modelled; drakit predicts "
                          f"admission without it (remove it to compare, or trust Kueue's own status)")


def _pod_requests(pod_spec: Mapping[str, Any]) -> dict[str, int]:
    total: dict[str, int] = {}
    for c in pod_spec.get("containers") or []:
        for r, v in ((c.get("resources") or {}).get("requests") or {}).items():
            total[r] = total.get(r, 0) + _amount(r, v, f"container {c.get('name')}")
    for c in pod_spec.get("initContainers") or []:
        for r, v in ((c.get("resources") or {}).get("requests") or {}).items():
            total[r] = max(total.get(r, 0), _amount(r, v, f"init container {c.get('name')}"))
    for r, v in (pod_spec.get("overhead") or {}).items():
        total[r] = total.get(r, 0) + _amount(r, v, "overhead")
    return total


def pod_set_of(name: str, count: int, pod_spec: Mapping[str, Any], templates: Mapping[str, Mapping[str, Any]],
               charges: Mapping[tuple[str, str], Mapping[str, int]] | None = None) -> PodSet:
    """A pod set as Kueue counts it; ``templates``: ResourceClaimTemplate name → object (same namespace)."""
    devices: list[DeviceRequest] = []
    problem = ""
    for prc in pod_spec.get("resourceClaims") or []:
        if prc.get("resourceClaimName"):
            problem = "DRA resource claims not supported"
            break
        tname = prc.get("resourceClaimTemplateName")
        tmpl = templates.get(tname or "")
        if tmpl is None:
            problem = f"resourceclaimtemplate {tname} not found"
            break
        for req in (((tmpl.get("spec") or {}).get("spec") or {}).get("devices") or {}).get("requests") or []:
            if req.get("firstAvailable"):
                problem = "FirstAvailable device selection is not supported"
                break
            exactly = req.get("exactly") or {}
            if exactly.get("adminAccess"):
                problem = "AdminAccess is not supported"
                break
            if exactly.get("allocationMode", "ExactCount") != "ExactCount":
                problem = "AllocationMode 'All' is not supported"
                break
            dc = exactly.get("deviceClassName", "")
            devices.append(DeviceRequest(dc, int(exactly.get("count", 1)), dict((charges or {}).get((tname or "", req.get("name", "")), {}))))
        if problem:
            break
    return PodSet(name, count, _pod_requests(pod_spec), tuple(devices), problem)


Charges = dict[tuple[str, str], dict[str, int]]


def counter_charges(setup: Setup, templates: Mapping[str, Mapping[str, Any]], classes: Mapping[str, Mapping[str, Any]],
                    slices: Sequence[Mapping[str, Any]], evaluate: Evaluator | None = None) -> Charges:
    """Per (template, request), the counter units one device charges: Kueue's ``computeCounterCharges``.

    For each counter mapping of the request's DeviceClass: the devices of the source's driver that
    match its device selector, the class's selectors and the request's; the charge is the largest
    value of the counter in any of their ``consumesCounters`` entries (0 when none has it).
    """
    evaluate = evaluate or cel_evaluator()
    by_class: dict[str, list[DeviceClassMapping]] = {}
    for m in setup.mappings:
        if m.counter is not None:
            for dc in m.device_classes:
                by_class.setdefault(dc, []).append(m)
    out: Charges = {}
    for tname, tmpl in templates.items():
        for req in (((tmpl.get("spec") or {}).get("spec") or {}).get("devices") or {}).get("requests") or []:
            exactly = req.get("exactly") or {}
            dc = exactly.get("deviceClassName", "")
            if dc not in by_class:
                continue
            class_sel = [(s.get("cel") or {}).get("expression", "true") for s in ((classes.get(dc) or {}).get("spec") or {}).get("selectors") or []]
            req_sel = [(s.get("cel") or {}).get("expression", "true") for s in exactly.get("selectors") or []]
            for m in by_class[dc]:
                best = 0
                for sl in slices:
                    spec = sl.get("spec") or {}
                    if spec.get("driver") != m.driver:
                        continue
                    for dev in spec.get("devices") or []:
                        if not all(_matches(evaluate, e, m.driver, dev) for e in (m.selector, *class_sel, *req_sel)):
                            continue
                        for cc in dev.get("consumesCounters") or []:
                            value = ((cc.get("counters") or {}).get(m.counter or "") or {}).get("value")
                            if value is not None:
                                best = max(best, _amount(m.name, value, f"device {dev.get('name')}"))
                out.setdefault((tname, req.get("name", "")), {})[m.name] = best
    return out


def _matches(evaluate: Evaluator, expression: str, driver: str, device: Mapping[str, Any]) -> bool:
    try:
        return evaluate(expression, driver, device)
    except DrakitError:
        return False  # a selector that errs on a device does not match it (Kueue logs and skips)


def _created(meta: Mapping[str, Any], default: float) -> float:
    ts = meta.get("creationTimestamp")
    if not ts:
        return default
    return datetime.fromisoformat(str(ts).replace("Z", "+00:00")).timestamp()


def workload_from_object(obj: Mapping[str, Any], templates: Mapping[str, Mapping[str, Any]],
                         priorities: Mapping[str, int] | None = None, charges: Charges | None = None) -> Workload:
    """A ``kueue.x-k8s.io`` Workload (its pod sets, queue, priority and creation time)."""
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    pod_sets = tuple(pod_set_of(ps.get("name", "main"), int(ps.get("count", 1)), (ps.get("template") or {}).get("spec") or {},
                                templates, charges) for ps in spec.get("podSets") or [])
    priority = spec.get("priority")
    if priority is None:
        priority = (priorities or {}).get(((spec.get("priorityClassRef") or {}).get("name")) or "", 0)
    return Workload(meta["name"], meta.get("namespace") or "default", spec.get("queueName", ""), pod_sets,
                    int(priority), _created(meta, 0.0))


def workload_from_job(job: Mapping[str, Any], templates: Mapping[str, Mapping[str, Any]],
                      priorities: Mapping[str, int] | None = None, created: float | None = None,
                      charges: Charges | None = None) -> Workload:
    """The Workload Kueue creates for a ``batch/v1`` Job: one pod set ``main`` of ``parallelism`` pods."""
    meta, spec = job.get("metadata") or {}, job.get("spec") or {}
    labels = meta.get("labels") or {}
    if MIN_PARALLELISM in (meta.get("annotations") or {}):
        raise NotModelled(f"Job {meta.get('namespace') or 'default'}/{meta.get('name', '')}: metadata.annotations"
                          f"[{MIN_PARALLELISM}]: partial admission is not modelled; drakit predicts whole-Job admission")
    count = int(spec.get("parallelism", 1))
    completions = spec.get("completions")
    if completions is not None:
        count = min(count, int(completions))
    pod = pod_set_of("main", count, ((spec.get("template") or {}).get("spec") or {}), templates, charges)
    priority = (priorities or {}).get(labels.get(PRIORITY_LABEL, ""), 0)
    return Workload(meta["name"], meta.get("namespace") or "default", labels.get(QUEUE_LABEL, ""), (pod,), priority,
                    _created(meta, 0.0) if created is None else created)
