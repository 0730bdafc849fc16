"""A small mixed fleet in the real driver schemas (NVIDIA, AMD, Intel), with claims, pods and events.

Devices come from ``drakit.inventory.templates`` (the schemas the drivers' code publishes); the
claims are allocated the way kube-scheduler writes an allocation (``matchFields metadata.name``
node selector, ``reservedFor`` the pod), the events carry the components' own reasons and the
texts of v1.37.2.
"""

from __future__ import annotations

from typing import Any

from drakit.inventory import templates as t

NS = "ml"
H100 = t.NVIDIA_SKUS["h100"]
AMD_PRODUCT = "AMD_Instinct_MI300X_OAM"
INTEL_PRODUCT = "Max 1550"
PREPARE_PREFIX = "Failed to prepare dynamic resources: prepare dynamic resources: "


def nodes_and_slices() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    out += [t.node("h100-0"), t.resource_slice(t.NVIDIA_DRIVER, "h100-0", [t.nvidia_gpu("h100-0", H100, i, 4) for i in range(4)])]
    out += [t.node("mi300-0"), t.resource_slice(t.AMD_DRIVER, "mi300-0", [t.amd_gpu("mi300-0", i) for i in range(2)])]
    out += [t.node("max-0"), t.resource_slice(t.INTEL_DRIVER, "max-0", [t.intel_gpu("max-0", i) for i in range(2)])]
    return out


def device_class(name: str, driver: str, extra: str = "") -> dict[str, Any]:
    expr = f"device.driver == '{driver}'" + (f" && {extra}" if extra else "")
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expr}}]}}


CLASSES = [
    device_class("gpu.nvidia.com", t.NVIDIA_DRIVER, "device.attributes['gpu.nvidia.com'].type == 'gpu'"),
    device_class("gpu.amd.com", t.AMD_DRIVER),
    device_class("gpu.intel.com", t.INTEL_DRIVER),
]


def claim_spec(device_class: str, count: int = 1) -> dict[str, Any]:
    return {"devices": {"requests": [{"name": "gpus", "exactly": {"deviceClassName": device_class, "count": count}}]}}


def allocated_claim(name: str, device_class: str, driver: str, node: str, devices: list[str], pod: str,
                    *, uid: str = "", admin: bool = False) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}",
                     "creationTimestamp": "2026-12-01T10:00:00Z",
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod, "uid": uid or f"uid-{pod}",
                                          "controller": True}] if uid else []},
        "spec": claim_spec(device_class, len(devices)),
        "status": {
            "allocation": {
                "devices": {"results": [{"request": "gpus", "driver": driver, "pool": node, "device": d,
                                         **({"adminAccess": True} if admin else {})} for d in devices]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [node]}]}]},
            },
            "reservedFor": [{"resource": "pods", "name": pod, "uid": f"uid-{pod}"}],
        },
    }


def pod(name: str, *, claim: str = "", template: str = "", node: str = "", generated: str = "",
        status: dict[str, Any] | None = None) -> dict[str, Any]:
    pc: dict[str, Any] = {"name": "gpus"}
    if template:
        pc["resourceClaimTemplateName"] = template
    else:
        pc["resourceClaimName"] = claim
    st: dict[str, Any] = dict(status or {"phase": "Pending"})
    if generated:
        st["resourceClaimStatuses"] = [{"name": "gpus", "resourceClaimName": generated}]
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "train:1", "resources": {"claims": [{"name": "gpus"}]}}],
                            "resourceClaims": [pc]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}", "creationTimestamp": "2026-12-01T10:00:00Z"},
            "spec": spec, "status": st}


def template(name: str, device_class: str, count: int = 1) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": NS}, "spec": {"spec": claim_spec(device_class, count)}}


def event(kind: str, name: str, reason: str, message: str, at: str, component: str,
          etype: str = "Warning", count: int = 1) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{name}.{reason.lower()}.{at[-3:-1]}", "namespace": NS},
            "involvedObject": {"kind": kind, "name": name, "namespace": NS},
            "reason": reason, "message": message, "type": etype, "count": count,
            "firstTimestamp": at, "lastTimestamp": at, "source": {"component": component}}
