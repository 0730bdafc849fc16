"""The built-in driver schemas (gpu.nvidia.com with its history, gpu.example.com, gpu.intel.com, gpu.amd.com).

Written from the drivers' sources as summarised in the project's ecosystem notes (§1).  Every
key that is not published on *every* device of a schema version is ``required=False``, with
``on`` naming the device types that always carry it; the compiler and lint guard a key unless
the selector is already restricted to such types, because reading a missing key is a CEL
runtime error that blocks the pod rather than a non-match.
"""

from __future__ import annotations

from drakit.drivers.schema import AttributeSpec, CapacitySpec, DriverSchema, SchemaChange
from drakit.errors import NotFound
from drakit.gostr import quote

STANDARD_DOMAIN = "resource.kubernetes.io"
PCIE_ROOT = f"{STANDARD_DOMAIN}/pcieRoot"
PCI_BUS_ID = f"{STANDARD_DOMAIN}/pciBusID"
NUMA_NODE = f"{STANDARD_DOMAIN}/numaNode"


def _attrs(*specs: AttributeSpec) -> dict[str, AttributeSpec]:
    return {s.key: s for s in specs}


# --- NVIDIA ------------------------------------------------------------------------------------

# NVML names and the memory the driver publishes (binary quantities, below the marketed size).
_NVIDIA_PRODUCTS = {
    "Tesla T4": "15360Mi",
    "NVIDIA L4": "23034Mi",
    "NVIDIA A10": "23028Mi",
    "NVIDIA A10G": "23028Mi",
    "NVIDIA L40S": "46068Mi",
    "NVIDIA A100-SXM4-40GB": "40Gi",
    "NVIDIA A100-PCIE-40GB": "40Gi",
    "NVIDIA A100-SXM4-80GB": "80Gi",
    "NVIDIA A100 80GB PCIe": "80Gi",
    "NVIDIA H100 80GB HBM3": "81559Mi",
    "NVIDIA H100 PCIe": "81559Mi",
    "NVIDIA H100 NVL": "95830Mi",
    "NVIDIA H200": "143771Mi",
    "NVIDIA B200": "183359Mi",
}

# What each device type publishes, per schema version, from the kubelet plugin's
# ``GetDevice``/``Attributes`` (cmd/gpu-kubelet-plugin: deviceinfo.go, mig.go, partitions.go)
# at tags v25.3.0, v25.8.0, v25.12.0, v0.4.0 and main.  Full GPUs and MIG devices always carry
# the NVML identity (product, brand, architecture, compute capability, driver versions); vfio
# devices (v25.12+) carry only type, uuid, productName, deviceID, vendorID and numa.
_GPU = frozenset({"gpu"})
_MIG = frozenset({"mig"})
_VFIO = frozenset({"vfio"})
_GPU_MIG = _GPU | _MIG


def _nvml(required: bool) -> tuple[AttributeSpec, ...]:
    """The NVML identity: on every device before vfio devices existed, else on gpu and mig."""
    on = frozenset() if required else _GPU_MIG
    return (
        AttributeSpec("brand", "string", required=required, on=on),
        AttributeSpec("architecture", "string", required=required, on=on, note="e.g. Hopper, 'Ada Lovelace'"),
        AttributeSpec("cudaComputeCapability", "version", required=required, on=on),
        AttributeSpec("driverVersion", "version", required=required, on=on),
        AttributeSpec("cudaDriverVersion", "version", required=required, on=on),
    )


_NVIDIA_COMMON = (
    AttributeSpec("type", "string", required=True, note="gpu | mig | vfio"),
    AttributeSpec("uuid", "string", required=True),
    AttributeSpec("productName", "string", required=True, note="NVML name, verbatim (vfio: from the PCI ID)"),
    AttributeSpec("parentUUID", "string", on=_MIG),
    AttributeSpec("profile", "string", on=_MIG, note="MIG profile, e.g. 1g.10gb"),
    AttributeSpec(PCIE_ROOT, "string", note="omitted where sysfs has no pci root (e.g. Azure VMBus)"),
)
_NVIDIA_VFIO = (
    AttributeSpec("deviceID", "string", on=_VFIO),
    AttributeSpec("vendorID", "string", on=_VFIO),
    AttributeSpec("numa", "int", on=_VFIO),
)
_NVIDIA_ROLES = {
    "architecture": "architecture",
    "computeCapability": "cudaComputeCapability",
    "driverVersion": "driverVersion",
    "product": "productName",
}
_IDX_REMOVED = (
    SchemaChange("index", "v25.8", note="removed from advertised attributes; use uuid for identity"),
    SchemaChange("minor", "v25.8", note="removed from advertised attributes; use uuid for identity"),
)
_PCIEBUS_RENAMED = SchemaChange("pcieBusID", "v25.12", replacement=PCI_BUS_ID)
_MEM_REQUIRED = {"memory": CapacitySpec("memory", required=True, note="NVML framebuffer, binary units")}
_MEM_GPU_MIG = {
    "memory": CapacitySpec("memory", on=_GPU_MIG, note="NVML framebuffer; vfio devices publish addressableMemory"),
    "addressableMemory": CapacitySpec("addressableMemory", on=_VFIO),
}
_MEM_OPTIONAL = {
    "memory": CapacitySpec("memory", note="omitted when NVML cannot report it (GB10, vGPU)"),
    "addressableMemory": CapacitySpec("addressableMemory", on=_VFIO),
}


def _nvidia(version: str, extra: tuple[AttributeSpec, ...], capacities: dict[str, CapacitySpec],
            removed: tuple[SchemaChange, ...], device_types: tuple[str, ...]) -> DriverSchema:
    return DriverSchema(
        driver="gpu.nvidia.com",
        version=version,
        vendor="nvidia",
        attributes=_attrs(*_NVIDIA_COMMON, *extra),
        capacities=capacities,
        roles=_NVIDIA_ROLES,  # type: ignore[arg-type]
        device_type=("type", "gpu"),
        device_types=device_types,
        class_types={"gpu.nvidia.com": "gpu", "mig.nvidia.com": "mig", "vfio.gpu.nvidia.com": "vfio"},
        products=_NVIDIA_PRODUCTS,
        removed=removed,
        default_class="gpu.nvidia.com",
    )


_NVIDIA_VERSIONS = (
    _nvidia(
        "v25.3",
        (*_nvml(True), AttributeSpec("index", "int", required=True), AttributeSpec("minor", "int", on=_GPU),
         AttributeSpec("parentIndex", "int", on=_MIG), AttributeSpec("pcieBusID", "string", required=True)),
        _MEM_REQUIRED,
        (),
        ("gpu", "mig"),
    ),
    _nvidia("v25.8", (*_nvml(True), AttributeSpec("pcieBusID", "string", required=True)), _MEM_REQUIRED,
            _IDX_REMOVED, ("gpu", "mig")),
    _nvidia(
        "v25.12",
        (*_nvml(False), *_NVIDIA_VFIO, AttributeSpec(PCI_BUS_ID, "string", on=_GPU_MIG),
         AttributeSpec("addressingMode", "string")),
        _MEM_GPU_MIG,
        (*_IDX_REMOVED, _PCIEBUS_RENAMED),
        ("gpu", "mig", "vfio"),
    ),
    _nvidia(
        "v0.4",
        (*_nvml(False), *_NVIDIA_VFIO, AttributeSpec("iommuFDEnabled", "bool", on=_VFIO),
         AttributeSpec(PCI_BUS_ID, "string"), AttributeSpec("addressingMode", "string")),
        _MEM_OPTIONAL,
        (*_IDX_REMOVED, _PCIEBUS_RENAMED),
        ("gpu", "mig", "vfio"),
    ),
    _nvidia(
        "main",
        (*_nvml(False), *_NVIDIA_VFIO, AttributeSpec("iommuFDEnabled", "bool", on=_VFIO),
         AttributeSpec(PCI_BUS_ID, "string"), AttributeSpec("addressingMode", "string"),
         AttributeSpec(NUMA_NODE, "int")),
        _MEM_OPTIONAL,
        (*_IDX_REMOVED, _PCIEBUS_RENAMED),
        ("gpu", "mig", "vfio"),
    ),
)

# --- dra-example-driver ------------------------------------------------------------------------

_EXAMPLE = DriverSchema(
    driver="gpu.example.com",
    version="v0.4",
    vendor="example",
    attributes=_attrs(
        AttributeSpec("index", "int", required=True),
        AttributeSpec("uuid", "string", required=True),
        AttributeSpec("model", "string", required=True, note="always LATEST-GPU-MODEL"),
        AttributeSpec("driverVersion", "version", required=True),
    ),
    capacities={"memory": CapacitySpec("memory", required=True), "compute": CapacitySpec("compute", required=True)},
    roles={"product": "model", "driverVersion": "driverVersion"},
    device_type=None,
    products={"LATEST-GPU-MODEL": "80Gi"},
    default_class="gpu.example.com",
)

# --- Intel -------------------------------------------------------------------------------------

_INTEL = DriverSchema(
    driver="gpu.intel.com",
    version="v0.10",
    vendor="intel",
    attributes=_attrs(
        AttributeSpec("model", "string", required=True, note="from a PCI-ID table; 'Unknown' if absent"),
        AttributeSpec("family", "string", required=True),
        AttributeSpec("driver", "string", required=True, note="i915 | xe | vfio-pci | xe-vfio-pci"),
        AttributeSpec("sriov", "bool"),
        AttributeSpec("type", "string"),
        AttributeSpec("pciId", "string"),
        AttributeSpec("health", "string"),
        AttributeSpec("pciAddress", "string", note="deprecated; use resource.kubernetes.io/pciBusID"),
        AttributeSpec("pciRoot", "string", note="deprecated; use resource.kubernetes.io/pcieRoot"),
        AttributeSpec(PCI_BUS_ID, "string"),
        AttributeSpec(PCIE_ROOT, "string"),
    ),
    capacities={
        "memory": CapacitySpec("memory", required=True, zero_means_unknown=True,
                               note="0 when the driver runs unprivileged without xpumd"),
        "millicores": CapacitySpec("millicores", required=True),
    },
    roles={"product": "model", "architecture": "family"},
    device_type=None,
    products={"Max 1550": "131072Mi", "Max 1100": "49152Mi", "Flex 170": "16384Mi", "Flex 140": "12288Mi",
              "A770": "16384Mi", "B580": "12288Mi", "B60": "24576Mi"},
    default_class="gpu.intel.com",
)

# --- AMD ---------------------------------------------------------------------------------------

_AMD = DriverSchema(
    driver="gpu.amd.com",
    version="v1.0",
    vendor="amd",
    attributes=_attrs(
        AttributeSpec("type", "string", required=True, note="amdgpu | amdgpu-partition"),
        AttributeSpec("pciAddr", "string"),
        AttributeSpec("cardIndex", "int"),
        AttributeSpec("renderIndex", "int"),
        AttributeSpec("deviceID", "string"),
        AttributeSpec("family", "string", note="amdgpu family code; MI300X reports AI"),
        AttributeSpec("productName", "string", note="sysfs name, spaces as underscores"),
        AttributeSpec("driverVersion", "version", note="0.0.0 when the module version is unset"),
        AttributeSpec("driverSrcVersion", "string"),
        AttributeSpec("partitionProfile", "string"),
        AttributeSpec(PCIE_ROOT, "string"),
    ),
    capacities={
        "memory": CapacitySpec("memory", required=True),
        "computeUnits": CapacitySpec("computeUnits", required=True),
        "simdUnits": CapacitySpec("simdUnits", required=True),
    },
    roles={"product": "productName", "architecture": "family", "driverVersion": "driverVersion"},
    device_type=("type", "amdgpu"),
    products={"AMD_Instinct_MI300X_OAM": "196592Mi", "AMD_Instinct_MI250X": "130944Mi",
              "AMD_Instinct_MI210": "65520Mi"},
    default_class="gpu.amd.com",
)

# Driver name -> schema versions, oldest first; the last one is the default.
DRIVERS: dict[str, tuple[DriverSchema, ...]] = {
    "gpu.amd.com": (_AMD,),
    "gpu.example.com": (_EXAMPLE,),
    "gpu.intel.com": (_INTEL,),
    "gpu.nvidia.com": _NVIDIA_VERSIONS,
}

VENDORS: dict[str, str] = {s[-1].vendor: name for name, s in DRIVERS.items()}


def known_drivers() -> list[str]:
    return sorted(DRIVERS)


def schema_versions(driver: str) -> list[str]:
    return [s.version for s in DRIVERS.get(driver, ())]


def parse_driver_ref(ref: str) -> tuple[str, str | None]:
    """``gpu.nvidia.com@v25.3`` -> ("gpu.nvidia.com", "v25.3"); no ``@`` -> (driver, None)."""
    driver, sep, version = ref.partition("@")
    return driver, (version if sep else None)


def get_schema(driver: str, version: str | None = None) -> DriverSchema:
    """The schema of ``driver`` at ``version`` (default: newest); NotFound names the known ones."""
    schemas = DRIVERS.get(driver)
    if schemas is None:
        raise NotFound(f"unknown driver {quote(driver)}: known drivers are {', '.join(known_drivers())}")
    if version is None:
        return schemas[-1]
    for s in schemas:
        if s.version == version:
            return s
    raise NotFound(
        f"unknown schema version {quote(version)} of {driver}: known versions are {', '.join(schema_versions(driver))}"
    )
