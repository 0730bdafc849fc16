"""Realistic per-driver inventories, each with the gaps real drivers leave.

Every device name says what it is, so expected sets in the tests read as prose:
``nogap-`` devices are complete, ``gap-`` devices miss something or carry an odd value.
"""

from __future__ import annotations

from typing import Any

from drakit.inventory import templates as t

SKU = t.NVIDIA_SKUS


def _named(device: dict[str, Any], name: str) -> dict[str, Any]:
    return {**device, "name": name}


def _slice(driver: str, node: str, devices: list[dict[str, Any]]) -> dict[str, Any]:
    return t.resource_slice(driver, node, devices)


def nvidia() -> list[dict[str, Any]]:
    h100 = [t.nvidia_gpu("h100-node", SKU["h100"], i, 4) for i in range(4)]
    l4 = t.nvidia_gpu("l4-node", SKU["l4"], 0, 1)
    l40s = t.nvidia_gpu("l40s-node", SKU["l40s"], 0, 2)
    a100 = t.nvidia_gpu("a100-node", SKU["a100-80gb"], 0, 2)
    t4_azure = t.without(t.nvidia_gpu("azure-t4", SKU["t4"], 0, 1), attributes=(f"{t.STANDARD_DOMAIN}/pcieRoot",))
    gb10 = t.without(t.nvidia_gpu("gb10", SKU["h100"], 0, 1), capacity=("memory",))
    gb10 = t.with_values(gb10, productName={"string": "NVIDIA GB10"}, architecture={"string": "Blackwell"},
                         cudaComputeCapability={"version": "12.1.0"})
    old_driver = t.with_values(t.nvidia_gpu("old-node", SKU["h100"], 0, 1), driverVersion={"version": "550.127.5"})
    legacy = t.nvidia_gpu_v25_3("legacy-node", SKU["a100-40gb"], 0, 1)
    mig = {
        "name": "gpu-1-mig-1g5gb-19-0",
        "attributes": {"type": {"string": "mig"}, "uuid": {"string": "MIG-1"}, "productName": {"string": "NVIDIA A100-SXM4-40GB"},
                       "architecture": {"string": "Ampere"}, "cudaComputeCapability": {"version": "8.0.0"},
                       "driverVersion": {"version": "570.172.8"}, "profile": {"string": "1g.5gb"}},
        "capacity": {"memory": {"value": "4864Mi"}},
    }
    return [
        _slice(t.NVIDIA_DRIVER, "h100-node", [_named(d, f"nogap-h100-{i}") for i, d in enumerate(h100)]),
        _slice(t.NVIDIA_DRIVER, "l4-node", [_named(l4, "nogap-l4")]),
        _slice(t.NVIDIA_DRIVER, "l40s-node", [_named(l40s, "nogap-l40s")]),
        _slice(t.NVIDIA_DRIVER, "a100-node", [_named(a100, "nogap-a100-80")]),
        _slice(t.NVIDIA_DRIVER, "azure-t4", [_named(t4_azure, "gap-t4-no-pcieroot")]),
        _slice(t.NVIDIA_DRIVER, "gb10", [_named(gb10, "gap-gb10-no-memory")]),
        _slice(t.NVIDIA_DRIVER, "old-node", [_named(old_driver, "gap-h100-driver-550")]),
        _slice(t.NVIDIA_DRIVER, "legacy-node", [_named(legacy, "gap-a100-40-v25-3")]),
        _slice(t.NVIDIA_DRIVER, "mig-node", [mig]),
    ]


def example() -> list[dict[str, Any]]:
    return [_slice(t.EXAMPLE_DRIVER, "kind-worker", [t.example_gpu("kind-worker", i) for i in range(4)])]


def intel() -> list[dict[str, Any]]:
    return [
        _slice(t.INTEL_DRIVER, "intel-node", [
            _named(t.intel_gpu("intel-node", 0), "nogap-max1550"),
            _named(t.intel_gpu("intel-node", 1, "Flex 170", "Data Center Flex", "16384Mi", pci_id="0x56c0"), "nogap-flex170"),
            _named(t.intel_gpu("intel-node", 2, "Flex 170", "Data Center Flex", "0", pci_id="0x56c0"), "gap-flex170-memory-0"),
            _named(t.intel_gpu("intel-node", 3, "B580", "Arc B-Series", "12288Mi", pci_id="0xe20b", pcie_root=False),
                   "gap-b580-no-pcieroot"),
        ]),
    ]


def amd() -> list[dict[str, Any]]:
    return [
        _slice(t.AMD_DRIVER, "amd-node", [
            _named(t.amd_gpu("amd-node", 0), "nogap-mi300x"),
            _named(t.amd_gpu("amd-node", 1, "AMD_Instinct_MI210", "65520Mi"), "nogap-mi210"),
            # Unset module version: the driver now publishes 0.0.0 instead of an invalid semver.
            _named(t.amd_gpu("amd-node", 2, driver_version="0.0.0"), "gap-mi300x-version-fallback"),
            _named(t.amd_gpu("amd-node", 3, driver_version=None, pcie_root=False), "gap-mi300x-no-version"),
            _named({**t.amd_gpu("amd-node", 4), "attributes": {**t.amd_gpu("amd-node", 4)["attributes"],
                                                                "type": {"string": "amdgpu-partition"}}},
                   "gap-partition"),
        ]),
    ]


INVENTORIES = {"gpu.nvidia.com": nvidia, "gpu.example.com": example, "gpu.intel.com": intel, "gpu.amd.com": amd}


def everything() -> list[dict[str, Any]]:
    return [s for build in INVENTORIES.values() for s in build()]
