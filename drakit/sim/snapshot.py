"""The simulator as a source: the simulated cluster at one instant as a :class:`ClusterSnapshot`.

What the API server would hold at that moment: the nodes, slices, classes and templates; every
claim that still exists, with its allocation and ``reservedFor``; every pod not yet finished
(finished pods are deleted at once in a run) — bound ones with ``spec.nodeName``, pending ones
with the ``PodScheduled`` condition kube-scheduler sets (``reason`` and ``message`` as the
simulator recorded them) — and the events.  Written as a bundle, it is read back by every
offline verb, so "why does this pod still wait at t=600 s" is one ``drakit explain`` away.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

from drakit.clock import SYSTEM_CLOCK, Clock
from drakit.errors import InvalidArgument
from drakit.inventory.snapshot import ClusterSnapshot, Obj, ObjectKey, Provenance, name_of, namespace_of
from drakit.sim.cluster import SimPod
from drakit.sim.result import SimEvent, SimulationResult
from drakit.sim.runner import Run
from drakit.sim.scenario import PodClaim, Scenario

POD_IMAGE = "registry.example/drakit-sim:1"
"""Pods the simulator creates for workloads carry one container with this (never pulled) image."""


def simulate_snapshot(
    scenario: Scenario, seed: int | None = None, at: float | None = None, *, clock: Clock = SYSTEM_CLOCK
) -> tuple[SimulationResult, ClusterSnapshot]:
    """Run ``scenario`` up to simulated time ``at`` (``None``: to the end) and snapshot the cluster.

    The run stops after the last instant at or before ``at``, the way ``spec.until`` stops it.
    """
    if at is not None:
        if not math.isfinite(at) or at < 0:
            raise InvalidArgument(f"snapshot time must be a finite number of seconds >= 0, not {at}")
        until = at if scenario.until is None else min(at, scenario.until)
        scenario = dataclasses.replace(scenario, until=until)
    scenario.check_memory()
    run = Run(scenario, scenario.seed if seed is None else seed, clock=clock)
    result = run.run()
    return result, snapshot_of(run)


def snapshot_of(run: Run) -> ClusterSnapshot:
    """The run's cluster now, as API objects."""
    manifests = {ObjectKey("Pod", namespace_of(o), name_of(o)): o for o in run.manifest_pods}
    pods = [
        _pod(run, p, manifests.get(ObjectKey("Pod", p.namespace, p.name)))
        for p in run.pods
        if p.phase != "Succeeded"
    ]
    expected: dict[str, float] = {}
    for p in run.pods:
        if p.phase == "Running" and p.duration is not None and p.bound_at is not None:
            for claim in _claim_names(p):
                key = str(ObjectKey("ResourceClaim", p.namespace, claim))
                expected[key] = max(expected.get(key, 0.0), p.bound_at + p.duration)
    objects: list[Obj] = [
        *(n.obj for n in run.cluster.nodes),
        *run.classes.values(),
        *run.slices,
        *run.templates.values(),
        *(c.obj for c in run.cluster.claims.values()),
        *pods,
        *(_event(run, i, e) for i, e in enumerate(run.events)),
    ]
    source = f"simulation of {run.scenario.source or run.scenario.name} (seed {run.seed}) at t={run.now:g}s"
    return ClusterSnapshot.from_objects(
        objects, provenance=Provenance(source, run.now), expected_release=expected, now=run.now
    )


def _claim_names(pod: SimPod) -> list[str]:
    names = [pod.claim_names.get(pc.name) if pc.template is not None else pc.claim for pc in pod.claims]
    return [n for n in names if n]


def _quantity_milli(milli: int) -> str:
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def _pod(run: Run, pod: SimPod, manifest: Mapping[str, Any] | None) -> dict[str, Any]:
    if manifest is not None:
        obj = {**manifest, "metadata": dict(manifest.get("metadata") or {}), "spec": dict(manifest.get("spec") or {})}
    else:
        obj = _workload_pod(run, pod)
    obj["metadata"].setdefault("namespace", pod.namespace)
    obj["metadata"].setdefault("uid", pod.uid)
    status: dict[str, Any] = {"phase": pod.phase}
    if pod.node is not None:
        obj["spec"]["nodeName"] = pod.node
        status["conditions"] = [{"type": "PodScheduled", "status": "True"}]
    elif pod.message and not pod.gated:
        # PreEnqueue-rejected ("gated") pods never reach a scheduling cycle: no condition.
        status["conditions"] = [
            {"type": "PodScheduled", "status": "False", "reason": pod.reason or "Unschedulable", "message": pod.message}
        ]
    claim_statuses = [
        {"name": pc.name, "resourceClaimName": pod.claim_names[pc.name]}
        for pc in pod.claims
        if pc.template is not None and pc.name in pod.claim_names
    ]
    if claim_statuses:
        status["resourceClaimStatuses"] = claim_statuses
    obj["status"] = status
    return obj


def _workload_pod(run: Run, pod: SimPod) -> dict[str, Any]:
    w = run.workloads.get(pod.workload)
    return workload_pod(
        pod.name, pod.namespace, pod.workload, pod.claims,
        cpu_milli=pod.cpu, memory_bytes=pod.mem, labels=dict(w.labels) if w is not None else {},
    )  # fmt: skip


def workload_pod(
    name: str,
    namespace: str,
    workload: str,
    claims: Sequence[PodClaim],
    *,
    cpu_milli: int = 0,
    memory_bytes: int = 0,
    labels: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The Pod a workload stands for: its claims, requests and labels, one container.

    Public because whatever replays a scenario elsewhere (a real cluster) must create the very
    Pod the simulator models, not a second reading of the workload.
    """
    pod_labels = dict(labels or {})
    pod_labels.setdefault("drakit.dev/workload", workload)
    requests: dict[str, str] = {}
    if cpu_milli:
        requests["cpu"] = _quantity_milli(cpu_milli)
    if memory_bytes:
        requests["memory"] = str(memory_bytes)
    resources: dict[str, Any] = {"claims": [{"name": pc.name} for pc in claims]}
    if requests:
        resources["requests"] = requests
    entries = []
    for pc in claims:
        entry = {"name": pc.name}
        if pc.template is not None:
            entry["resourceClaimTemplateName"] = pc.template
        if pc.claim is not None:
            entry["resourceClaimName"] = pc.claim
        entries.append(entry)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": pod_labels},
        "spec": {
            "resourceClaims": entries,
            "containers": [{"name": "main", "image": POD_IMAGE, "resources": resources}],
        },
    }


def _event(run: Run, index: int, e: SimEvent) -> dict[str, Any]:
    kind, namespace, name = _split_object(e.object)
    pod = run.cluster.pods.get(f"{namespace}/{name}")
    involved = {"kind": kind, "namespace": namespace, "name": name}
    if pod is not None:
        involved["uid"] = pod.uid
    component = "default-scheduler" if e.reason in ("Scheduled", "FailedScheduling") else "resource-claim-controller"
    return {
        "apiVersion": "v1",
        "kind": "Event",
        # The recorder names events "<object>.<hex>"; the index keeps the names unique in a run.
        "metadata": {"name": f"{name}.{index:x}", "namespace": namespace},
        "involvedObject": involved,
        "reason": e.reason,
        "message": e.message,
        "type": e.type,
        "count": 1,
        "source": {"component": component},
    }


def _split_object(ref: str) -> tuple[str, str, str]:
    """``pod/<namespace>/<name>`` (SimEvent.object) → (kind, namespace, name)."""
    kind, _, rest = ref.partition("/")
    namespace, _, name = rest.partition("/")
    return {"pod": "Pod", "claim": "ResourceClaim"}.get(kind, kind), namespace, name
