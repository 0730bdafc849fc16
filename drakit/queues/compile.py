"""QueueCatalog → Kueue v0.19.2 objects, the Configuration patch, and the engine's Setup.

One empty ResourceFlavor (devices are chosen by DRA, not by flavors), a ClusterQueue per queue
(one resource group covering every resource it quotas, ``pods`` included when set), a Cohort per
catalog cohort, a LocalQueue per queue and namespace (named after the queue), a
WorkloadPriorityClass per priority, and ``resources.deviceClassMappings`` as a merge patch of the
Kueue Configuration (never the whole ConfigMap: the manager reads it at start, so it needs a
restart).  :func:`features` says which catalog setting Kueue enforces and which only drakit does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from drakit.queues.admission import PODS, ClusterQueue, Cohort, DeviceClassMapping, Setup
from drakit.queues.catalog import Catalog, CatalogQueue, amount, profile_classes
from drakit.queues.quota import ResourceQuota

__all__ = ["CONFIG_API", "KUEUE_API", "Feature", "compile_catalog", "configuration_patch", "features",
           "resource_classes", "setup_of"]

KUEUE_API = "kueue.x-k8s.io/v1beta2"
CONFIG_API = "config.kueue.x-k8s.io/v1beta2"
NAMESPACE_LABEL = "kubernetes.io/metadata.name"
CATALOG_LABEL = "drakit.dev/queue-catalog"


def resource_classes(catalog: Catalog, profiles: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """Each device resource's DeviceClasses: those named, then those of its profiles."""
    out: dict[str, list[str]] = {}
    for r in catalog.spec.resources:
        classes = list(r.device_classes or [])
        classes += [c for c in profile_classes(profiles, r.profiles or []) if c not in classes]
        out[r.name] = classes
    return out


def configuration_patch(catalog: Catalog, profiles: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """The Kueue Configuration fragment: a merge patch holding ``resources.deviceClassMappings`` only."""
    mappings = []
    classes = resource_classes(catalog, profiles)
    for r in catalog.spec.resources:
        entry: dict[str, Any] = {"name": r.name, "deviceClassNames": classes[r.name]}
        if r.counter is not None:
            entry["sources"] = [{"counter": {"name": r.counter.name, "driver": r.counter.driver,
                                             "deviceSelector": {"cel": {"expression": r.counter.device_selector or "true"}}}}]
        mappings.append(entry)
    return {"apiVersion": CONFIG_API, "kind": "Configuration", "resources": {"deviceClassMappings": mappings}}


def _meta(catalog: Catalog, name: str, namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {CATALOG_LABEL: catalog.name}}
    if namespace is not None:
        meta["namespace"] = namespace
    return meta


def _covered(q: CatalogQueue) -> list[str]:
    return [x.resource for x in q.quotas] + ([PODS] if q.pods is not None else [])


def compile_catalog(catalog: Catalog, profiles: Mapping[str, Sequence[str]] | None = None,
                    namespaces: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Kueue objects for the catalog, then the Configuration patch as the last item.

    ``profiles`` maps a profile name to the DeviceClasses it compiles to (``NAME.DRIVER``);
    ``namespaces`` get a LocalQueue of every queue open to all namespaces (which has no list).
    """
    profiles = profiles or {}
    s = catalog.spec
    out: list[dict[str, Any]] = [{"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": _meta(catalog, s.flavor),
                                  "spec": {}}]
    for co in s.cohorts:
        spec: dict[str, Any] = {}
        if co.parent:
            spec["parentName"] = co.parent
        out.append({"apiVersion": KUEUE_API, "kind": "Cohort", "metadata": _meta(catalog, co.name), "spec": spec})
    for p in s.priorities:
        wpc: dict[str, Any] = {"apiVersion": KUEUE_API, "kind": "WorkloadPriorityClass",
                               "metadata": _meta(catalog, p.name), "value": p.value}
        if p.description:
            wpc["description"] = p.description
        out.append(wpc)
    for q in s.queues:
        resources = []
        for x in q.quotas:
            r: dict[str, Any] = {"name": x.resource, "nominalQuota": x.nominal}
            if x.borrowing_limit is not None:
                r["borrowingLimit"] = x.borrowing_limit
            if x.lending_limit is not None:
                r["lendingLimit"] = x.lending_limit
            resources.append(r)
        if q.pods is not None:
            resources.append({"name": PODS, "nominalQuota": q.pods})
        spec = {"queueingStrategy": q.strategy, "namespaceSelector": _selector(catalog.namespaces_of(q))}
        if resources:
            spec["resourceGroups"] = [{"coveredResources": _covered(q), "flavors": [{"name": s.flavor, "resources": resources}]}]
        if q.cohort:
            spec["cohortName"] = q.cohort
        if q.preemption is not None:
            spec["preemption"] = {"withinClusterQueue": q.preemption.within_cluster_queue,
                                  "reclaimWithinCohort": q.preemption.reclaim_within_cohort}
        out.append({"apiVersion": KUEUE_API, "kind": "ClusterQueue", "metadata": _meta(catalog, q.name), "spec": spec})
    for q in s.queues:
        allowed = catalog.namespaces_of(q)
        for ns in allowed if allowed is not None else namespaces:
            out.append({"apiVersion": KUEUE_API, "kind": "LocalQueue", "metadata": _meta(catalog, q.name, ns),
                        "spec": {"clusterQueue": q.name}})
    out.append(configuration_patch(catalog, profiles))
    return out


def _selector(namespaces: list[str] | None) -> dict[str, Any]:
    # {} selects every namespace; null would select none (Kueue's convention, not Kubernetes').
    if namespaces is None:
        return {}
    return {"matchExpressions": [{"key": NAMESPACE_LABEL, "operator": "In", "values": list(namespaces)}]}


def setup_of(catalog: Catalog, profiles: Mapping[str, Sequence[str]] | None = None,
             namespaces: Sequence[str] | None = None) -> Setup:
    """The engine's view of the catalog; ``namespaces`` gives LocalQueues to queues open to every namespace."""
    profiles = profiles or {}
    s = catalog.spec
    cqs = []
    local: dict[tuple[str, str], str] = {}
    for q in s.queues:
        quotas = {(s.flavor, x.resource): ResourceQuota(
            amount(x.resource, x.nominal),
            None if x.borrowing_limit is None else amount(x.resource, x.borrowing_limit),
            None if x.lending_limit is None else amount(x.resource, x.lending_limit)) for x in q.quotas}
        if q.pods is not None:
            quotas[(s.flavor, PODS)] = ResourceQuota(q.pods)
        allowed = catalog.namespaces_of(q)
        preemption = {} if q.preemption is None else {"withinClusterQueue": q.preemption.within_cluster_queue,
                                                       "reclaimWithinCohort": q.preemption.reclaim_within_cohort}
        cqs.append(ClusterQueue(q.name, ((tuple(_covered(q)), (s.flavor,)),) if quotas else (), quotas, q.cohort,
                                q.strategy, None if allowed is None else frozenset(allowed), q.concurrency, preemption))
        for ns in allowed if allowed is not None else (namespaces or []):
            local[(ns, q.name)] = q.name
    classes = resource_classes(catalog, profiles)
    mappings = tuple(DeviceClassMapping(r.name, tuple(classes[r.name]), r.counter.name if r.counter else None,
                                        r.counter.driver if r.counter else "",
                                        (r.counter.device_selector or "true") if r.counter else "true")
                     for r in s.resources)
    return Setup(tuple(cqs), local, tuple(Cohort(c.name, c.parent) for c in s.cohorts), mappings,
                 {p.name: p.value for p in s.priorities})


Enforcer = Literal["kueue", "drakit"]


@dataclass(frozen=True)
class Feature:
    """One catalog setting and who enforces it on a cluster."""

    queue: str
    setting: str
    value: str
    enforced_by: Enforcer
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"queue": self.queue, "setting": self.setting, "value": self.value, "enforcedBy": self.enforced_by,
                "note": self.note}


def features(catalog: Catalog) -> list[Feature]:
    """What each catalog setting becomes on a cluster: a Kueue field, or a rule only drakit applies."""
    out: list[Feature] = []
    counters = {r.name for r in catalog.spec.resources if r.counter is not None}
    for q in catalog.spec.queues:
        for x in q.quotas:
            kind = "counter quota" if x.resource in counters else "device quota" if x.resource not in ("cpu", "memory") else "quota"
            out.append(Feature(q.name, f"{kind} {x.resource}", str(x.nominal), "kueue", "ClusterQueue nominalQuota"))
            if x.borrowing_limit is not None:
                out.append(Feature(q.name, f"borrowing limit {x.resource}", str(x.borrowing_limit), "kueue"))
            if x.lending_limit is not None:
                out.append(Feature(q.name, f"lending limit {x.resource}", str(x.lending_limit), "kueue"))
        if q.pods is not None:
            out.append(Feature(q.name, "pods", str(q.pods), "kueue", "sum of pod counts, not workloads"))
        if q.concurrency is not None:
            out.append(Feature(q.name, "concurrency", str(q.concurrency), "drakit",
                               "Kueue has no limit on running workloads; the pods quota equals it only for single-pod jobs"))
        out.append(Feature(q.name, "strategy", q.strategy, "kueue", "ClusterQueue queueingStrategy"))
        if q.cohort:
            out.append(Feature(q.name, "cohort", q.cohort, "kueue", "ClusterQueue cohortName"))
        allowed = catalog.namespaces_of(q)
        out.append(Feature(q.name, "namespaces", "*" if allowed is None else ",".join(allowed), "kueue",
                           "ClusterQueue namespaceSelector and one LocalQueue per namespace"))
        if q.priority:
            out.append(Feature(q.name, "default priority", q.priority, "drakit",
                               "set as the kueue.x-k8s.io/priority-class label when drakit routes a job"))
    if catalog.spec.routing.rules or catalog.spec.routing.default:
        out.append(Feature("*", "routing", f"{len(catalog.spec.routing.rules)} rules", "drakit",
                           "Kueue takes the queue from the job's kueue.x-k8s.io/queue-name label; drakit sets it"))
    return out
