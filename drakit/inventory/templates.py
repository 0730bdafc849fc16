"""Node templates: Nodes and ResourceSlices as real DRA drivers publish them.

A template name such as ``h100-8x`` expands to one Node plus one ResourceSlice per driver, in
the shape the driver itself writes: one pool per node named after the node, ``nodeName`` set,
device names ``gpu-<minor>``, the driver's attribute keys and true published memory values
(which sit below the marketing sizes — see the SKU table).  The simulator, the demo cluster and
the benchmarks all build their inventories here so that every tool sees the same schema.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from drakit.gostr import quote

NVIDIA_DRIVER = "gpu.nvidia.com"
EXAMPLE_DRIVER = "gpu.example.com"
STANDARD_DOMAIN = "resource.kubernetes.io"

# Versions a current DRA-capable NVIDIA node reports (driver >= 565 is required for DRA).
NVIDIA_DRIVER_VERSION = "580.126.20"
NVIDIA_CUDA_DRIVER_VERSION = "13.0.0"


@dataclass(frozen=True)
class NvidiaSku:
    """What NVML reports for one GPU model, as the NVIDIA DRA driver publishes it."""

    key: str
    product_name: str
    architecture: str
    compute_capability: str
    memory: str  # NVML total framebuffer as the driver prints it (binary quantity)


# True published memory values: e.g. an "80GB" H100 reports 81559Mi (< 80Gi = 81920Mi).
NVIDIA_SKUS: dict[str, NvidiaSku] = {
    s.key: s
    for s in (
        NvidiaSku("t4", "Tesla T4", "Turing", "7.5.0", "15360Mi"),
        NvidiaSku("l4", "NVIDIA L4", "Ada Lovelace", "8.9.0", "23034Mi"),
        NvidiaSku("a10g", "NVIDIA A10G", "Ampere", "8.6.0", "23028Mi"),
        NvidiaSku("l40s", "NVIDIA L40S", "Ada Lovelace", "8.9.0", "46068Mi"),
        NvidiaSku("a100-40gb", "NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", "40Gi"),
        NvidiaSku("a100-80gb", "NVIDIA A100-SXM4-80GB", "Ampere", "8.0.0", "80Gi"),
        NvidiaSku("h100", "NVIDIA H100 80GB HBM3", "Hopper", "9.0.0", "81559Mi"),
        NvidiaSku("h200", "NVIDIA H200", "Hopper", "9.0.0", "143771Mi"),
        NvidiaSku("b200", "NVIDIA B200", "Blackwell", "10.0.0", "183359Mi"),
    )
}


def _gpu_uuid(node: str, minor: int) -> str:
    # Deterministic per node and GPU, so generated inventories are reproducible byte for byte.
    return "GPU-" + str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{node}/gpu-{minor}"))


@dataclass(frozen=True)
class Topology:
    """How a node's GPUs sit behind PCIe roots and NUMA nodes (``numaNode``, ``pcieRoot``).

    The default is the common 8-GPU server: pairs of GPUs behind one PCIe root (switch), the
    first half of the GPUs on NUMA node 0 and the rest on 1.  Other servers differ -- four
    GPUs per PCIe switch, one socket, four sockets -- and a ``matchAttribute`` constraint on
    ``pcieRoot`` or ``numaNode`` fits or not depending on exactly that.
    """

    gpus_per_pcie_root: int = 2
    numa_nodes: int = 2

    def check(self, gpus: int) -> str:
        """Why this topology cannot describe a node with ``gpus`` GPUs ("" when it can)."""
        if self.gpus_per_pcie_root < 1 or self.numa_nodes < 1:
            return "gpusPerPcieRoot and numaNodes must be at least 1"
        if gpus % self.numa_nodes:
            return f"{gpus} GPUs do not split evenly over {self.numa_nodes} NUMA nodes"
        per_numa = gpus // self.numa_nodes
        if per_numa % self.gpus_per_pcie_root:
            return (f"{per_numa} GPUs per NUMA node do not fill PCIe roots of {self.gpus_per_pcie_root} "
                    "(a PCIe root belongs to one NUMA node)")
        return ""

    def label(self) -> str:
        """The ``drakit.dev/node-topology`` label value, e.g. ``root4-numa1``."""
        return f"root{self.gpus_per_pcie_root}-numa{self.numa_nodes}"

    def place(self, minor: int, gpus: int) -> tuple[int, int]:
        """(NUMA node, PCIe root index) of GPU ``minor``."""
        return minor // (gpus // self.numa_nodes), minor // self.gpus_per_pcie_root


def _default_place(minor: int, gpus: int) -> tuple[int, int]:
    # GPUs 0..n/2-1 on NUMA node 0, the rest on 1; pairs of GPUs share a PCIe root.  Also used
    # for odd GPU counts, which no explicit Topology accepts.
    return (0 if minor < max(1, gpus // 2) else 1), minor // 2


def nvidia_gpu(node: str, sku: NvidiaSku, minor: int, gpus_per_node: int, topology: Topology | None = None) -> dict[str, Any]:
    """One full GPU (``type: gpu``) as the driver's main branch publishes it."""
    numa, root = topology.place(minor, gpus_per_node) if topology is not None else _default_place(minor, gpus_per_node)
    per_root = topology.gpus_per_pcie_root if topology is not None else 2
    root_bus = 0x15 + 0x10 * -(-(per_root + 3) // 0x10) * root  # buses of one root never reach the next
    bus = root_bus + 3 + minor - root * per_root
    return {
        "name": f"gpu-{minor}",
        "attributes": {
            "type": {"string": "gpu"},
            "uuid": {"string": _gpu_uuid(node, minor)},
            "productName": {"string": sku.product_name},
            "brand": {"string": "Nvidia"},
            "architecture": {"string": sku.architecture},
            "cudaComputeCapability": {"version": sku.compute_capability},
            "driverVersion": {"version": NVIDIA_DRIVER_VERSION},
            "cudaDriverVersion": {"version": NVIDIA_CUDA_DRIVER_VERSION},
            "addressingMode": {"string": "None"},
            f"{STANDARD_DOMAIN}/pciBusID": {"string": f"0000:{bus:02x}:00.0"},
            f"{STANDARD_DOMAIN}/pcieRoot": {"string": f"pci0000:{root_bus:02x}"},
            f"{STANDARD_DOMAIN}/numaNode": {"int": numa},
        },
        "capacity": {"memory": {"value": sku.memory}},
    }


def example_gpu(node: str, index: int) -> dict[str, Any]:
    """One device of kubernetes-sigs/dra-example-driver's default ``gpu`` profile."""
    return {
        "name": f"gpu-{index}",
        "attributes": {
            "index": {"int": index},
            "uuid": {"string": "gpu-" + str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{node}/example-{index}"))},
            "model": {"string": "LATEST-GPU-MODEL"},
            "driverVersion": {"version": "1.0.0"},
        },
        "capacity": {"memory": {"value": "80Gi"}, "compute": {"value": "100"}},
    }


def node(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A Node as the scheduler needs it: labels and allocatable cpu/memory/pods, Ready."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "status": {
            "allocatable": {"cpu": "96", "memory": "1Ti", "pods": "110"},
            "capacity": {"cpu": "96", "memory": "1Ti", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def resource_slice(driver: str, node_name: str, devices: list[dict[str, Any]]) -> dict[str, Any]:
    """The single slice of a node-local pool (pool name = node name), as both drivers write it."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-{driver}"},
        "spec": {
            "driver": driver,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "nodeName": node_name,
            "devices": devices,
        },
    }


def parse_template(template: str) -> tuple[str, int]:
    """``h100-8x`` -> ("h100", 8); ``example-8x`` -> ("example", 8)."""
    base, sep, count = template.rpartition("-")
    if not sep or not count.endswith("x") or not count[:-1].isdigit() or int(count[:-1]) < 1:
        raise ValueError(f"node template {quote(template)}: want <sku>-<N>x, e.g. h100-8x")
    if base != "example" and base not in NVIDIA_SKUS:
        known = ", ".join(sorted([*NVIDIA_SKUS, "example"]))
        raise ValueError(f"node template {quote(template)}: unknown SKU {quote(base)} (known: {known})")
    return base, int(count[:-1])


def driver_of(template: str) -> str:
    """The driver whose ResourceSlice ``template``'s nodes carry."""
    return EXAMPLE_DRIVER if parse_template(template)[0] == "example" else NVIDIA_DRIVER


def check_topology(template: str, topology: Topology) -> str:
    """Why ``topology`` does not fit ``template`` ("" when it does)."""
    sku_key, count = parse_template(template)
    if sku_key == "example":
        return "dra-example-driver publishes no PCIe or NUMA attributes"
    return topology.check(count)


def expand(
    template: str, node_name: str, labels: dict[str, str] | None = None, topology: Topology | None = None
) -> list[dict[str, Any]]:
    """A Node and its ResourceSlice for ``template`` (e.g. ``h100-8x``), optionally with ``topology``."""
    sku_key, count = parse_template(template)
    node_labels = {"drakit.dev/node-template": template}
    if sku_key == "example":
        devices = [example_gpu(node_name, i) for i in range(count)]
        driver = EXAMPLE_DRIVER
    else:
        sku = NVIDIA_SKUS[sku_key]
        devices = [nvidia_gpu(node_name, sku, i, count, topology) for i in range(count)]
        driver = NVIDIA_DRIVER
        if topology is not None:
            node_labels["drakit.dev/node-topology"] = topology.label()
    return [node(node_name, {**node_labels, **(labels or {})}), resource_slice(driver, node_name, devices)]


def nvidia_device_class(name: str = NVIDIA_DRIVER, device_type: str = "gpu") -> dict[str, Any]:
    """The DeviceClass the NVIDIA chart installs for full GPUs."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {
            "selectors": [
                {
                    "cel": {
                        "expression": f"device.driver == '{NVIDIA_DRIVER}' && "
                        f"device.attributes['{NVIDIA_DRIVER}'].type == '{device_type}'"
                    }
                }
            ]
        },
    }


def example_device_class() -> dict[str, Any]:
    """The DeviceClass dra-example-driver's chart installs."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": EXAMPLE_DRIVER},
        "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{EXAMPLE_DRIVER}'"}}]},
    }


# --- Intel, AMD and older/imperfect schemas (for profile and lint tests) ------------------------
# Shapes follow the drivers' sources as summarised in the ecosystem notes (§1.3, §1.4, §1.1 history);
# product memory values are illustrative where no public slice dump was available.

INTEL_DRIVER = "gpu.intel.com"
AMD_DRIVER = "gpu.amd.com"


def intel_gpu(
    node: str,
    index: int,
    model: str = "Max 1550",
    family: str = "Data Center Max",
    memory: str = "131072Mi",
    *,
    pci_id: str = "0x0bd5",
    pcie_root: bool = True,
) -> dict[str, Any]:
    """One Intel GPU; ``memory="0"`` is what the driver publishes when it runs unprivileged."""
    bus = 0x3A + 0x10 * index
    attributes: dict[str, Any] = {
        "model": {"string": model},
        "family": {"string": family},
        "driver": {"string": "xe"},
        "sriov": {"bool": False},
        "pciId": {"string": pci_id},
        "health": {"string": "Healthy"},
        f"{STANDARD_DOMAIN}/pciBusID": {"string": f"0000:{bus:02x}:00.0"},
    }
    if pcie_root:
        attributes[f"{STANDARD_DOMAIN}/pcieRoot"] = {"string": f"pci0000:{bus - 1:02x}"}
    return {
        "name": f"0000-{bus:02x}-00-0-{pci_id}",
        "attributes": attributes,
        "capacity": {"memory": {"value": memory}, "millicores": {"value": "1k"}},
    }


def amd_gpu(
    node: str,
    card: int,
    product: str = "AMD_Instinct_MI300X_OAM",
    memory: str = "196592Mi",
    *,
    driver_version: str | None = "6.12.12",
    family: str = "AI",
    pcie_root: bool = True,
) -> dict[str, Any]:
    """One AMD full GPU (``type: amdgpu``); ``driver_version=None`` leaves the attribute out."""
    attributes: dict[str, Any] = {
        "type": {"string": "amdgpu"},
        "pciAddr": {"string": f"0000:{0x11 + card:02x}:00.0"},
        "cardIndex": {"int": card},
        "renderIndex": {"int": 128 + card},
        "deviceID": {"string": str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{node}/amd-{card}").int % 10**16)},
        "family": {"string": family},
        "productName": {"string": product},
        "driverSrcVersion": {"string": "0A1B2C3D4E5F60718293A4B"},
        "partitionProfile": {"string": "spx_nps1"},
    }
    if driver_version is not None:
        attributes["driverVersion"] = {"version": driver_version}
    if pcie_root:
        attributes[f"{STANDARD_DOMAIN}/pcieRoot"] = {"string": f"pci0000:{0x10 + card:02x}"}
    return {
        "name": f"gpu-{card}-{128 + card}",
        "attributes": attributes,
        "capacity": {"memory": {"value": memory}, "computeUnits": {"value": "304"}, "simdUnits": {"value": "1216"}},
    }


def nvidia_gpu_v25_3(node: str, sku: NvidiaSku, minor: int, gpus_per_node: int) -> dict[str, Any]:
    """A GPU as driver releases up to v25.3 published it: ``index``/``minor``, driver-local ``pcieBusID``."""
    dev = nvidia_gpu(node, sku, minor, gpus_per_node)
    attrs = dict(dev["attributes"])
    bus_id = attrs.pop(f"{STANDARD_DOMAIN}/pciBusID")
    attrs.pop(f"{STANDARD_DOMAIN}/numaNode")
    attrs.pop("addressingMode")
    attrs["index"] = {"int": minor}
    attrs["minor"] = {"int": minor}
    attrs["pcieBusID"] = bus_id
    return {**dev, "attributes": attrs}


def without(device: dict[str, Any], *, attributes: tuple[str, ...] = (), capacity: tuple[str, ...] = ()) -> dict[str, Any]:
    """A copy of ``device`` lacking some keys (the gaps real drivers leave: no pcieRoot, no memory)."""
    return {
        **device,
        "attributes": {k: v for k, v in device.get("attributes", {}).items() if k not in attributes},
        "capacity": {k: v for k, v in device.get("capacity", {}).items() if k not in capacity},
    }


def with_values(device: dict[str, Any], **attributes: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``device`` with some attributes replaced (e.g. an old driverVersion)."""
    return {**device, "attributes": {**device.get("attributes", {}), **attributes}}
