"""Writes the explain scenario bundles (``<name>.yaml``) from the node templates.

Run ``python -m tests.scenarios.explain.build`` after changing a scenario; the bundles are
committed so that a reader can open one next to its expectations in ``cases.yaml``.  The
inventories come from :mod:`drakit.inventory.templates` (true published memory values, the
NVIDIA driver's attribute keys), so a scenario reads like a real cluster.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from drakit.inventory.templates import NVIDIA_DRIVER, expand, nvidia_device_class
from drakit.model.codec import KubeDumper

HERE = Path(__file__).resolve().parent
NS = "ml"
Obj = dict[str, Any]

MEM_80GI = "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0"
MEM_40GI = "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"


def cluster(template: str = "h100-4x", nodes: int = 2, labels: dict[str, str] | None = None) -> list[Obj]:
    out: list[Obj] = [nvidia_device_class()]
    for i in range(nodes):
        out += expand(template, f"gpu-{chr(ord('a') + i)}", labels)
    return out


def request(name: str = "gpus", count: int = 1, selectors: tuple[str, ...] = (), **extra: Any) -> Obj:
    exactly: Obj = {"deviceClassName": NVIDIA_DRIVER, "count": count}
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    exactly.update(extra)
    return {"name": name, "exactly": exactly}


def claim_spec(*requests: Obj, constraints: list[Obj] | None = None) -> Obj:
    devices: Obj = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    return {"devices": devices}


def template(name: str, spec: Obj) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"spec": spec},
    }


def claim(name: str, spec: Obj, status: Obj | None = None, **meta: Any) -> Obj:
    obj: Obj = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NS, **meta},
        "spec": spec,
    }
    if status:
        obj["status"] = status
    return obj


def pod(
    name: str = "train",
    *,
    template_name: str | None = None,
    claim_name: str | None = None,
    pod_claim: str = "gpus",
    spec: Obj | None = None,
    status: Obj | None = None,
) -> Obj:
    ref: Obj = {"name": pod_claim}
    if template_name:
        ref["resourceClaimTemplateName"] = template_name
    if claim_name:
        ref["resourceClaimName"] = claim_name
    obj: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"},
        "spec": {
            "containers": [{"name": "main", "image": "trainer:1", "resources": {"claims": [{"name": pod_claim}]}}],
            "resourceClaims": [ref],
            **(spec or {}),
        },
    }
    if status:
        obj["status"] = status
    return obj


def allocated(node: str, devices: list[str], request_name: str = "gpus", pods: list[str] = (), **result: Any) -> Obj:  # type: ignore[assignment]
    return {
        "allocation": {
            "devices": {
                "results": [
                    {"request": request_name, "driver": NVIDIA_DRIVER, "pool": node, "device": d, **result}
                    for d in devices
                ]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]
            },
        },
        "reservedFor": [{"resource": "pods", "name": p, "uid": f"uid-{p}"} for p in pods],
    }


def busy(node: str, devices: list[str], name: str) -> list[Obj]:
    """A running pod holding ``devices`` on ``node`` through its own claim."""
    c = claim(name, claim_spec(request(count=len(devices))), allocated(node, devices, pods=[name]))
    p = pod(name, claim_name=name, spec={"nodeName": node}, status={"phase": "Running"})
    return [c, p]


def event(reason: str, message: str, pod_name: str = "train", type_: str = "Warning") -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{pod_name}.{reason.lower()}", "namespace": NS},
        "involvedObject": {"kind": "Pod", "name": pod_name, "namespace": NS},
        "reason": reason,
        "message": message,
        "type": type_,
    }


def with_template(spec: Obj, *extra: Obj, base: list[Obj] | None = None) -> list[Obj]:
    """Cluster + template ``train-gpus`` + claim already generated (status entry) + pod."""
    c = claim("train-gpus", spec, ownerReferences=[
        {"apiVersion": "v1", "kind": "Pod", "name": "train", "uid": "uid-train", "controller": True}
    ])
    p = pod(template_name="train-gpus", status={
        "phase": "Pending", "resourceClaimStatuses": [{"name": "gpus", "resourceClaimName": "train-gpus"}]
    })
    return [*(base if base is not None else cluster()), template("train-gpus", spec), c, p, *extra]


# --- partitionable and consumable inventories ---------------------------------------------------


def partitioned_gpu(node: str) -> list[Obj]:
    """One GPU as a pool of a counter slice plus a device slice: the whole GPU and two halves."""
    counters = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-counters"},
        "spec": {
            "driver": NVIDIA_DRIVER,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 2},
            "nodeName": node,
            "sharedCounters": [{"name": "gpu-0-counters", "counters": {"memory": {"value": "81559Mi"}, "slices": {"value": "8"}}}],
        },
    }

    def part(name: str, profile: str, memory: str, slices: str) -> Obj:
        return {
            "name": name,
            "attributes": {
                "type": {"string": "gpu" if profile == "whole" else "mig"},
                "productName": {"string": "NVIDIA H100 80GB HBM3"},
                "profile": {"string": profile},
            },
            "capacity": {"memory": {"value": memory}},
            "consumesCounters": [{"counterSet": "gpu-0-counters", "counters": {"memory": {"value": memory}, "slices": {"value": slices}}}],
        }

    devices = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-devices"},
        "spec": {
            "driver": NVIDIA_DRIVER,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 2},
            "nodeName": node,
            "devices": [
                part("gpu-0", "whole", "81559Mi", "8"),
                part("gpu-0-half-0", "4g.40gb", "40779Mi", "4"),
                part("gpu-0-half-1", "4g.40gb", "40779Mi", "4"),
            ],
        },
    }
    node_obj = expand("h100-1x", node)[0]
    return [node_obj, counters, devices]


def any_class() -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.nvidia.com"},
        "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{NVIDIA_DRIVER}'"}}]},
    }


def shared_gpu_cluster() -> list[Obj]:
    """One node with a multi-allocatable GPU (consumable memory capacity)."""
    node_obj, slice_obj = expand("h100-1x", "gpu-a")
    dev = slice_obj["spec"]["devices"][0]
    dev["allowMultipleAllocations"] = True
    dev["capacity"]["memory"] = {
        "value": "81559Mi",
        "requestPolicy": {"default": "10Gi", "validRange": {"min": "1Gi", "step": "1Gi"}},
    }
    return [nvidia_device_class(), node_obj, slice_obj]


# --- the scenarios -------------------------------------------------------------------------------


def _scenarios() -> dict[str, list[Obj]]:
    s: dict[str, list[Obj]] = {}
    one = claim_spec(request())
    s["fits"] = [*cluster(), claim("train-gpus", one), pod(claim_name="train-gpus")]
    s["claim-not-created"] = [*cluster(), template("train-gpus", one), pod(template_name="train-gpus")]
    s["template-missing"] = [*cluster(), template("train-gpu", one), pod(template_name="train-gpus")]
    s["claim-creation-failed"] = [
        *cluster(),
        template("train-gpus", claim_spec(request(adminAccess=True))),
        pod(template_name="train-gpus"),
        event("FailedResourceClaimCreation",
              "PodResourceClaim gpus: admin access is requested, but the feature is disabled"),
    ]
    s["claim-missing"] = [*cluster(), pod(claim_name="shared-gpus")]
    s["claim-being-deleted"] = [
        *cluster(),
        claim("train-gpus", one, deletionTimestamp="2026-07-01T10:00:00Z", finalizers=["resource.kubernetes.io/delete-protection"]),
        pod(claim_name="train-gpus"),
    ]
    typo = claim_spec({"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.co", "count": 1}})
    s["class-missing"] = with_template(typo)
    s["selector-compile-error"] = with_template(claim_spec(request(selectors=("device.atributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'",))))
    s["selector-cost-limit"] = with_template(claim_spec(request(selectors=(
        "device.attributes['gpu.nvidia.com'].all(a, device.attributes['gpu.nvidia.com'].all(b, "
        "device.attributes['gpu.nvidia.com'].all(c, device.attributes['gpu.nvidia.com'].all(d, "
        "a + b + c + d != 'x'))))",
    ))))
    mixed = cluster("h100-2x", 1) + expand("example-2x", "cpu-x")[0:2]
    s["selector-runtime-error"] = with_template(
        claim_spec(request(selectors=("device.attributes['gpu.nvidia.com'].migProfile == '1g.10gb'",))),
        base=mixed,
    )
    s["memory-80gi-near-miss"] = with_template(claim_spec(request(selectors=(MEM_80GI,))))
    s["product-name-case"] = with_template(
        claim_spec(request(selectors=("device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB hbm3'",)))
    )
    s["two-condition-selector"] = with_template(claim_spec(request(selectors=(
        "device.attributes['gpu.nvidia.com'].architecture == 'Hopper' && " + MEM_80GI,
    ))))
    s["not-enough-per-node"] = with_template(claim_spec(request(count=8)))
    s["too-many-devices"] = with_template(claim_spec(request(count=12)))
    s["node-selector-excludes"] = with_template(one)
    s["node-selector-excludes"][-1]["spec"]["nodeSelector"] = {"gpu.example.com/zone": "west"}  # the pod
    tainted = cluster()
    for o in tainted:
        if o["kind"] == "Node":
            o["spec"] = {"taints": [{"key": "dedicated", "value": "training", "effect": "NoSchedule"}]}
    s["node-taint"] = with_template(one, base=tainted)
    in_use = [
        *busy("gpu-a", ["gpu-0", "gpu-1", "gpu-2", "gpu-3"], "eval-1"),
        *busy("gpu-b", ["gpu-0", "gpu-1"], "eval-2"),
        *busy("gpu-b", ["gpu-2", "gpu-3"], "eval-3"),
    ]
    s["devices-in-use"] = with_template(claim_spec(request(count=2)), *in_use)
    frag = [*busy("gpu-a", ["gpu-0", "gpu-1"], "eval-1"), *busy("gpu-b", ["gpu-2", "gpu-3"], "eval-2")]
    s["in-use-fragmented"] = with_template(claim_spec(request(count=4)), *frag)
    pcie = [{"requests": ["gpus"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}]
    s["constraint-pcie-root"] = with_template(
        claim_spec(request(count=4), constraints=pcie), base=cluster("h100-8x", 1)
    )
    numa = [{"requests": ["gpus"], "matchAttribute": "resource.kubernetes.io/numaNode"}]
    s["constraint-numa-in-use"] = with_template(
        claim_spec(request(count=4), constraints=numa),
        *busy("gpu-a", ["gpu-0", "gpu-4"], "eval-1"),
        base=cluster("h100-8x", 1),
    )
    alts = claim_spec({
        "name": "gpus",
        "firstAvailable": [
            {"name": "h200", "deviceClassName": NVIDIA_DRIVER,
             "selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H200'"}}]},
            {"name": "b200", "deviceClassName": NVIDIA_DRIVER,
             "selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].architecture == 'Blackwell'"}}]},
            {"name": "h100-pair", "deviceClassName": NVIDIA_DRIVER, "count": 2,
             "selectors": [{"cel": {"expression": MEM_80GI}}]},
        ],
    })
    s["first-available-exhausted"] = with_template(alts)
    fallback = copy.deepcopy(alts)
    fallback["devices"]["requests"][0]["firstAvailable"][2]["selectors"] = [{"cel": {"expression": MEM_40GI}}]
    s["first-available-fallback"] = with_template(fallback)
    all_busy = [
        *busy("gpu-a", ["gpu-0", "gpu-1", "gpu-2", "gpu-3"], "eval-1"),
        *busy("gpu-b", ["gpu-0", "gpu-1", "gpu-2", "gpu-3"], "eval-2"),
    ]
    s["admin-access-monitoring"] = with_template(claim_spec(request(adminAccess=True)), *all_busy)
    s["admin-access-in-use-without-admin"] = with_template(claim_spec(request()), *all_busy)
    s["admin-access-disabled"] = with_template(claim_spec(request(adminAccess=True)))
    unhealthy = cluster()
    for o in unhealthy:
        if o["kind"] == "ResourceSlice":
            for d in o["spec"]["devices"]:
                d["taints"] = [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule"}]
    s["device-taint"] = with_template(one, base=unhealthy)
    s["device-taint-tolerated"] = with_template(
        claim_spec(request(tolerations=[{"key": "gpu.nvidia.com/xid", "operator": "Exists", "effect": "NoSchedule"}])),
        base=copy.deepcopy(unhealthy),
    )
    part = [any_class(), *partitioned_gpu("gpu-a")]
    half = claim("infer-half", claim_spec(request(selectors=("device.attributes['gpu.nvidia.com'].profile == '4g.40gb'",))),
                 allocated("gpu-a", ["gpu-0-half-0"], pods=["infer"]))
    whole = claim_spec(request(selectors=("device.attributes['gpu.nvidia.com'].profile == 'whole'",)))
    s["partitionable-counters"] = with_template(whole, half, base=part)
    s["partitionable-fits-half"] = with_template(
        claim_spec(request(selectors=("device.attributes['gpu.nvidia.com'].profile == '4g.40gb'",))),
        half,
        base=[any_class(), *partitioned_gpu("gpu-a")],
    )
    share = claim("infer-share", claim_spec(request(capacity={"requests": {"memory": "60Gi"}})),
                  {"allocation": {"devices": {"results": [{"request": "gpus", "driver": NVIDIA_DRIVER, "pool": "gpu-a",
                   "device": "gpu-0", "shareID": "6f1c2d3e-0000-4000-8000-000000000001",
                   "consumedCapacity": {"memory": "60Gi"}}]}}, "reservedFor": [{"resource": "pods", "name": "infer", "uid": "uid-infer"}]})
    s["consumable-capacity-exceeded"] = with_template(
        claim_spec(request(capacity={"requests": {"memory": "40Gi"}})), share, base=shared_gpu_cluster()
    )
    s["consumable-capacity-fits"] = with_template(
        claim_spec(request(capacity={"requests": {"memory": "16Gi"}})), copy.deepcopy(share), base=shared_gpu_cluster()
    )
    s["consumable-capacity-missing"] = with_template(
        claim_spec(request(capacity={"requests": {"bandwidth": "100G"}})), base=shared_gpu_cluster()
    )
    incomplete = cluster()
    for o in incomplete:
        if o["kind"] == "ResourceSlice":
            o["spec"]["pool"]["resourceSliceCount"] = 2
    s["pool-incomplete"] = with_template(one, base=incomplete)
    bound_claim = claim("train-gpus", one, allocated("gpu-a", ["gpu-0"], pods=["train"]), ownerReferences=[
        {"apiVersion": "v1", "kind": "Pod", "name": "train", "uid": "uid-train", "controller": True}
    ])
    bound_pod = pod(template_name="train-gpus", spec={"nodeName": "gpu-a"}, status={
        "phase": "Pending", "resourceClaimStatuses": [{"name": "gpus", "resourceClaimName": "train-gpus"}]
    })
    s["prepare-driver-not-registered"] = [
        *cluster(), template("train-gpus", one), bound_claim, bound_pod,
        event("FailedPrepareDynamicResources",
              "Failed to prepare dynamic resources: prepare dynamic resources: DRA driver gpu.nvidia.com is not registered"),
    ]
    s["prepare-not-reserved"] = [
        *cluster(), template("train-gpus", one), copy.deepcopy(bound_claim), copy.deepcopy(bound_pod),
        event("FailedPrepareDynamicResources",
              "Failed to prepare dynamic resources: prepare dynamic resources: pod train (uid-train) is not "
              "allowed to use ResourceClaim train-gpus (uid-claim)"),
    ]
    s["prepare-deadline-exceeded"] = [
        *cluster(), template("train-gpus", one), copy.deepcopy(bound_claim), copy.deepcopy(bound_pod),
        event("FailedPrepareDynamicResources",
              "Failed to prepare dynamic resources: prepare dynamic resources: NodePrepareResources: rpc error: "
              "code = DeadlineExceeded desc = context deadline exceeded"),
    ]
    s["prepare-driver-error"] = [
        *cluster(), template("train-gpus", one), copy.deepcopy(bound_claim), copy.deepcopy(bound_pod),
        event("FailedPrepareDynamicResources",
              "Failed to prepare dynamic resources: prepare dynamic resources: NodePrepareResources failed for "
              "ResourceClaim train-gpus: error preparing devices for claim ml/train-gpus:uid-claim: prepare devices "
              "failed: unable to create CDI spec file for claim: failed to get CDI device specs: nvml error: "
              "Unknown Error"),
    ]
    # The claim was deleted after the scheduler allocated it and bound the pod.
    s["prepare-claim-missing"] = [
        *cluster(), template("train-gpus", one), copy.deepcopy(bound_pod),
        event("FailedPrepareDynamicResources",
              "Failed to prepare dynamic resources: prepare dynamic resources: fetch ResourceClaim train-gpus: "
              'resourceclaims.resource.k8s.io "train-gpus" not found'),
    ]
    binding = copy.deepcopy(bound_claim)
    binding["status"]["allocation"]["devices"]["results"][0]["bindingConditions"] = ["FabricAttached"]
    binding["status"]["allocation"]["devices"]["results"][0]["bindingFailureConditions"] = ["FabricFailed"]
    s["binding-conditions-pending"] = [*cluster(), template("train-gpus", one), binding, copy.deepcopy(bound_pod)]
    elsewhere = claim("shared-gpus", one, allocated("gpu-b", ["gpu-0"], pods=["other"]))
    s["claim-allocated-elsewhere"] = [
        *cluster(), elsewhere,
        pod(claim_name="shared-gpus", spec={"nodeSelector": {"kubernetes.io/hostname": "gpu-a"}}),
    ]
    running_pod = copy.deepcopy(bound_pod)
    running_pod["status"]["phase"] = "Running"
    s["running"] = [*cluster(), template("train-gpus", one), copy.deepcopy(bound_claim), running_pod]
    s["claim-target-near-miss"] = [*cluster(), claim("big-gpu", claim_spec(request(selectors=(MEM_80GI,))))]
    return s


def write(directory: Path = HERE) -> list[Path]:
    written = []
    for name, objects in _scenarios().items():
        path = directory / f"{name}.yaml"
        path.write_text(yaml.dump_all(Dumper=KubeDumper, documents=objects, sort_keys=False), encoding="utf-8")
        written.append(path)
    return written


SCENARIOS: Callable[[], dict[str, list[Obj]]] = _scenarios

if __name__ == "__main__":
    for p in write():
        print(p.name)
