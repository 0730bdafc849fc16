"""Pods the input binds already (``spec.nodeName``) stay where they are in a run.

kube-scheduler never schedules a pod with ``nodeName`` set: it only counts on its node.  A
snapshot read back (``drakit trial``, a scenario of manifests) must therefore not move them,
nor make their claims again, nor let another pod take what they hold.
"""

from __future__ import annotations

from typing import Any

import pytest

from drakit.sim import SimOptions, scenario_from_objects
from drakit.sim.runner import Run

HEADER = {"apiVersion": "drakit.dev/v1alpha1", "kind": "Scenario", "metadata": {"name": "bound"}, "spec": {}}
CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
         "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}}
TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}}


def node(name: str, *, taint: bool = False, cpu: str = "8") -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                           "status": {"allocatable": {"cpu": cpu, "memory": "64Gi", "pods": "110"}}}
    if taint:
        obj["spec"] = {"taints": [{"key": "drain", "effect": "NoSchedule"}]}
    return obj


def one_gpu_slice(node_name: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-gpu"},
            "spec": {"driver": "gpu.example.com", "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0"}]}}


def held_claim(name: str, node_name: str, owner_uid: str = "") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if owner_uid:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "bound", "uid": owner_uid,
                                    "controller": True}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
            "status": {"allocation": {"devices": {"results": [
                {"request": "gpu", "driver": "gpu.example.com", "pool": node_name, "device": "gpu-0"}]}}}}


def pod(name: str, *, node_name: str = "", claim: str = "", template: str = "", cpu: str = "",
        status_claim: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "x"}]}
    if cpu:
        spec["containers"][0]["resources"] = {"requests": {"cpu": cpu}}
    if node_name:
        spec["nodeName"] = node_name
    if claim:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
    if template:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": template}]
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                           "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}, "spec": spec}
    if status_claim:
        obj["status"] = {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": status_claim}]}
    return obj


CASES = [
    pytest.param(
        [node("a", taint=True), node("b")],
        [pod("bound", node_name="a")],
        {"default/bound": ("a", ())},
        id="stays-on-a-node-it-does-not-tolerate",
    ),
    pytest.param(
        [node("a", cpu="4"), node("b", cpu="4")],
        [pod("new", cpu="3"), pod("bound", node_name="a", cpu="3")],
        {"default/bound": ("a", ()), "default/new": ("b", ())},
        id="its-requests-count-on-its-node",
    ),
    pytest.param(
        [node("a"), one_gpu_slice("a"), CLASS, TEMPLATE, held_claim("bound-gpu-x", "a", "uid-bound")],
        [pod("bound", node_name="a", template="one", status_claim="bound-gpu-x"), pod("late", template="one")],
        {"default/bound": ("a", ("gpu.example.com/a/gpu-0",)), "default/late": (None, ())},
        id="its-generated-claim-is-not-made-again",
    ),
    pytest.param(
        [node("a"), one_gpu_slice("a"), node("b"), one_gpu_slice("b"), CLASS, held_claim("shared", "b")],
        [pod("bound", node_name="b", claim="shared")],
        {"default/bound": ("b", ("gpu.example.com/b/gpu-0",))},
        id="its-claim-holds-the-allocated-device",
    ),
]


@pytest.mark.parametrize(("cluster", "pods", "want"), CASES)
@pytest.mark.parametrize("fast", [pytest.param(False, id="plain"), pytest.param(True, id="fast")])
def test_bound_pods_are_not_scheduled(cluster: list[dict[str, Any]], pods: list[dict[str, Any]],
                                      want: dict[str, tuple[str | None, tuple[str, ...]]], fast: bool) -> None:
    run = Run(scenario_from_objects(HEADER, [*cluster, *pods]), 0, options=SimOptions(fast=fast))
    result = run.run()
    assert {f"{p.namespace}/{p.name}": (p.node, p.devices) for p in result.pods} == want
    bound = next(p for p in result.pods if p.name == "bound")
    assert (bound.phase, bound.scheduled, bound.attempts) == ("Running", 0.0, 0)
    assert not [e for e in result.events if e.object == "pod/default/bound"]  # no scheduler event


def test_claim_of_a_bound_pod_names_it_in_reserved_for() -> None:
    cluster = [node("a"), one_gpu_slice("a"), CLASS, held_claim("shared", "a")]
    run = Run(scenario_from_objects(HEADER, [*cluster, pod("bound", node_name="a", claim="shared")]), 0)
    run.run()
    assert run.cluster.claims["default/shared"].reserved_for == [{"resource": "pods", "name": "bound",
                                                                   "uid": "uid-bound"}]
