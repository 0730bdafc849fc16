"""A realistic mixed cluster in NVIDIA's published schema, for the issue-12 explain/allocate tables.

Generations: A100 40 GB and 80 GB, L40S and H100, each node as the NVIDIA driver publishes it
(:mod:`drakit.inventory.templates`).  ``h100-quad`` has four GPUs per PCIe root (two roots);
every other node keeps the template's two GPUs per root, so a 4-GPU same-root request fits
only on ``h100-quad``.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from drakit.inventory.templates import NVIDIA_DRIVER, expand, nvidia_device_class

NS = "ml"
Obj = dict[str, Any]
PCIE = "resource.kubernetes.io/pcieRoot"
H100 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"
MEM = "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('{q}')) >= 0"

NODES = {
    "a100-40": "a100-40gb-8x",
    "a100-80": "a100-80gb-8x",
    "l40s-0": "l40s-4x",
    "h100-pair": "h100-8x",
    "h100-quad": "h100-8x",
}


def cluster() -> list[Obj]:
    out: list[Obj] = [nvidia_device_class()]
    for name, template in NODES.items():
        node, slice_ = expand(template, name)
        if name == "h100-quad":
            for i, dev in enumerate(slice_["spec"]["devices"]):
                dev["attributes"][PCIE] = {"string": f"pci0000:{0x15 + 0x40 * (i // 4):02x}"}
        out += [node, slice_]
    return out


def request(name: str = "gpus", count: int = 1, *selectors: str, **extra: Any) -> Obj:
    exactly: Obj = {"deviceClassName": NVIDIA_DRIVER, "count": count, **extra}
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return {"name": name, "exactly": exactly}


def spec(*requests: Obj, constraints: Sequence[Obj] = ()) -> Obj:
    devices: Obj = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = list(constraints)
    return {"devices": devices}


def same_root(*requests: str) -> Obj:
    return {"requests": list(requests or ["gpus"]), "matchAttribute": PCIE}


def claim(name: str, claim_spec: Obj, status: Obj | None = None, **meta: Any) -> Obj:
    obj: Obj = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NS, **meta},
        "spec": copy.deepcopy(claim_spec),
    }
    if status:
        obj["status"] = status
    return obj


def template(name: str, claim_spec: Obj) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"spec": copy.deepcopy(claim_spec)},
    }


def pod(name: str, *, claim_name: str = "", template_name: str = "", node: str = "", phase: str = "Pending",
        labels: dict[str, str] | None = None, **spec_fields: Any) -> Obj:
    ref: Obj = {"name": "gpus"}
    if claim_name:
        ref["resourceClaimName"] = claim_name
    if template_name:
        ref["resourceClaimTemplateName"] = template_name
    obj: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}", "labels": dict(labels or {})},
        "spec": {
            "containers": [{"name": "main", "image": "trainer:1", "resources": {"claims": [{"name": "gpus"}]}}],
            "resourceClaims": [ref],
            **spec_fields,
        },
        "status": {"phase": phase},
    }
    if node:
        obj["spec"]["nodeName"] = node
    return obj


def busy(node: str, gpus: Sequence[int], name: str) -> list[Obj]:
    """A running pod holding GPUs ``gpus`` of ``node`` through its own allocated claim."""
    status = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpus", "driver": NVIDIA_DRIVER, "pool": node, "device": f"gpu-{g}"} for g in gpus
                ]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]
            },
        },
        "reservedFor": [{"resource": "pods", "name": name, "uid": f"uid-{name}"}],
    }
    return [claim(name, spec(request(count=len(gpus))), status), pod(name, claim_name=name, node=node, phase="Running")]


def pending(name: str, claim_spec: Obj, *, via_template: bool = False, **pod_fields: Any) -> list[Obj]:
    """A pending pod ``name`` with claim ``name`` (or template ``name``, no claim generated yet)."""
    if via_template:
        return [template(name, claim_spec), pod(name, template_name=name, **pod_fields)]
    return [claim(name, claim_spec), pod(name, claim_name=name, **pod_fields)]
