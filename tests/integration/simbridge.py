"""A drakit scenario replayed on the real control plane: the same Nodes, ResourceSlices, classes,
claims and pods that ``drakit.sim`` builds, created through the API server in the same order.

The simulator's own expansion (node templates, pod names, arrival times) is reused rather than
re-derived, so a difference found by the agreement test is a difference in *behaviour*, never in
how the two sides read the scenario file.  Only ``kind: Pod`` workloads and mixed-in manifests
are supported: Job pods get random names, which the real Job controller would choose
differently.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from drakit.inventory import templates
from drakit.sim.scenario import PodClaim, Scenario
from drakit.sim.snapshot import workload_pod
from tests.integration.kube import Cluster

V1 = "resource.k8s.io/v1"


@dataclass(frozen=True)
class PlannedPod:
    """One pod of the scenario: when it arrives and what it asks for."""

    time: float
    order: int  # creation order among pods arriving at the same time (the simulator's)
    namespace: str
    name: str
    workload: str
    claims: tuple[PodClaim, ...]
    cpu_milli: int
    memory_bytes: int
    labels: tuple[tuple[str, str], ...]

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class Inventory:
    nodes: tuple[dict[str, Any], ...]
    slices: tuple[dict[str, Any], ...]
    classes: tuple[dict[str, Any], ...]


def planned_pods(scenario: Scenario) -> list[PlannedPod]:
    """Pods in the order the simulator creates them: by arrival time, then workload order, then index."""
    out: list[PlannedPod] = []
    order = 0
    for w in scenario.workloads:
        if w.kind != "Pod":
            raise ValueError(f"workload {w.name}: only kind Pod can be replayed on a real cluster")
        for i in range(w.count):
            name = w.name if w.count == 1 else f"{w.name}-{i}"
            out.append(
                PlannedPod(
                    time=w.start + i * w.interval,
                    order=order,
                    namespace=w.namespace,
                    name=name,
                    workload=w.name,
                    claims=w.claims,
                    cpu_milli=w.cpu_milli,
                    memory_bytes=w.memory_bytes,
                    labels=w.labels,
                )
            )
            order += 1
    for obj in scenario.objects:
        if obj.get("kind") == "Pod":
            raise ValueError("mixed-in Pod manifests are not replayed here; use workloads")
    return sorted(out, key=lambda p: (p.time, p.order))


def batches(pods: Sequence[PlannedPod]) -> list[tuple[float, list[PlannedPod]]]:
    """Pods grouped by arrival time, in time order."""
    groups: dict[float, list[PlannedPod]] = {}
    for p in pods:
        groups.setdefault(p.time, []).append(p)
    return sorted(groups.items())


def inventory(scenario: Scenario) -> Inventory:
    """Nodes, slices and device classes exactly as the simulator expands them."""
    nodes: list[dict[str, Any]] = []
    slices: list[dict[str, Any]] = []
    for group in scenario.nodes:
        for i in range(group.count):
            node, *node_slices = templates.expand(
                group.template, f"{group.name_prefix}{i}", dict(group.labels)
            )
            nodes.append(node)
            slices.extend(node_slices)
    classes: list[dict[str, Any]] = []
    for std in scenario.standard_classes:
        classes.append(
            templates.nvidia_device_class()
            if std == templates.NVIDIA_DRIVER
            else templates.example_device_class()
        )
    for obj in scenario.objects:
        kind = obj.get("kind")
        if kind == "Node":
            nodes.append(obj)
        elif kind == "ResourceSlice":
            slices.append(obj)
        elif kind == "DeviceClass":
            classes.append(obj)
    return Inventory(tuple(nodes), tuple(slices), tuple(classes))


def namespaced_objects(scenario: Scenario, kind: str, namespace: str) -> list[dict[str, Any]]:
    """The scenario's ResourceClaimTemplates or ResourceClaims, moved into ``namespace``."""
    out = []
    for obj in scenario.objects:
        if obj.get("kind") != kind:
            continue
        copied = copy.deepcopy(obj)
        copied["metadata"]["namespace"] = namespace
        out.append(copied)
    return out


def pod_manifest(pod: PlannedPod, namespace: str) -> dict[str, Any]:
    """The Pod the simulator models (its own builder), in ``namespace``, deleted without grace."""
    manifest = workload_pod(
        pod.name, namespace, pod.workload, pod.claims,
        cpu_milli=pod.cpu_milli, memory_bytes=pod.memory_bytes, labels=dict(pod.labels),
    )  # fmt: skip
    manifest["spec"]["terminationGracePeriodSeconds"] = 0
    return manifest


def node_resources(node: Mapping[str, Any]) -> dict[str, str]:
    alloc = (node.get("status") or {}).get("allocatable") or {}
    return {k: str(alloc[k]) for k in ("cpu", "memory", "pods") if k in alloc}


def pod_claim_names(pod: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    """(pod claim name, ResourceClaim name) in ``spec.resourceClaims`` order (None: not created)."""
    statuses = {
        s.get("name"): s.get("resourceClaimName")
        for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []
    }
    out: list[tuple[str, str | None]] = []
    for rc in (pod.get("spec") or {}).get("resourceClaims") or []:
        if rc.get("resourceClaimName"):
            out.append((rc["name"], rc["resourceClaimName"]))
        else:
            out.append((rc["name"], statuses.get(rc["name"])))
    return out


def pod_scheduled_condition(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled":
            return dict(c)
    return None


def wait_for_only_nodes(cluster: Cluster, keep: set[str], timeout: float = 60.0) -> None:
    """Wait until no Node outside ``keep`` exists (other modules delete theirs at teardown)."""
    cluster.wait_for(
        f"nodes other than {sorted(keep)} to be deleted",
        lambda: all(n["metadata"]["name"] in keep for n in cluster.list_objects("v1", "Node")) or None,
        timeout=timeout,
    )


@contextmanager
def installed(cluster: Cluster, objects: list[dict[str, Any]],
              node_annotations: Mapping[str, str] | None = None) -> Iterator[list[dict[str, Any]]]:
    """An inventory's Nodes registered (annotated, e.g. for kwok) and its other objects applied,
    all deleted again on the way out; waits first until no other file's nodes are left."""
    nodes = [o for o in objects if o["kind"] == "Node"]
    rest = [o for o in objects if o["kind"] != "Node"]
    wait_for_only_nodes(cluster, {n["metadata"]["name"] for n in nodes})
    for n in nodes:
        name = n["metadata"]["name"]
        cluster.add_node(name, n["metadata"].get("labels") or {}, **node_resources(n))
        if node_annotations:
            cluster.core.patch_node(name, {"metadata": {"annotations": dict(node_annotations)}})
    cluster.apply_all(rest)
    try:
        yield objects
    finally:
        for o in rest:
            cluster.delete(o)
        for n in nodes:
            cluster.delete(n)
