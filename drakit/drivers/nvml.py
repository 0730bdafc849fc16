"""NVML's view of a machine → the ResourceSlice the NVIDIA DRA driver (``gpu.nvidia.com``) publishes.

Pure: the input is an :class:`NvmlSnapshot` (the values NVML and sysfs report, as plain data, so
that a recording replays exactly), the output a ``resource.k8s.io/v1`` ResourceSlice dict.  The
mapping follows the driver's ``cmd/gpu-kubelet-plugin`` (``nvlib.go`` reads, ``deviceinfo.go``
and ``mig.go`` publish) and go-nvlib's string forms, so a local run's devices carry the same
names, attribute values and capacities a cluster run's would, and records compare on one key:

* a full GPU is ``gpu-<minor>`` (the minor number, not the NVML index); a MIG-enabled GPU is
  published only as its MIG devices, ``gpu-<minor>-mig-<profile>-<profileId>-<placementStart>``;
* versions are Masterminds/semver's lenient parse printed back (``535.104.05`` → ``535.104.5``,
  ``9.0`` → ``9.0.0``); the CUDA driver version integer 12040 is ``12.4``;
* the PCI bus id is lower-cased and a 8-digit domain loses its leading ``0000``; ``pcieRoot`` is
  the first ``pci…`` component of the device's sysfs link and is left out when unresolvable;
* ``memory`` is NVML's total in bytes as a BinarySI quantity (``81559Mi``), left out when NVML
  does not support the query; MIG memory is the profile's MiB.

The driver publishes no NUMA attribute for GPU and MIG devices (only its VFIO devices carry an
unqualified ``numa``); the snapshot keeps NUMA for the run environment, the slice does not.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from drakit.errors import DrakitError
from drakit.quantity import Format, Quantity

__all__ = [
    "DRIVER",
    "GpuRecord",
    "MigRecord",
    "NvmlError",
    "NvmlSnapshot",
    "architecture_name",
    "brand_name",
    "coerce_version",
    "cuda_driver_version",
    "device_entries",
    "mig_profile_name",
    "pci_bus_id",
    "pcie_root",
    "resource_slice",
]

DRIVER = "gpu.nvidia.com"
_STD = "resource.kubernetes.io/"


class NvmlError(DrakitError):
    """A snapshot value the driver itself would refuse (it fails enumeration the same way)."""


# go-nvlib GetArchitectureAsString: NVML_DEVICE_ARCH_* → name.  Any other value is an error there.
_ARCH = {2: "Kepler", 3: "Maxwell", 4: "Pascal", 5: "Volta", 6: "Turing", 7: "Ampere", 8: "Ada Lovelace",
         9: "Hopper", 10: "Blackwell", 0xFFFFFFFF: "Unknown"}
# go-nvlib GetBrandAsString: NVML_BRAND_* → name (VGAMING is an alias of CLOUD_GAMING, 11).
_BRAND = {0: "Unknown", 1: "Quadro", 2: "Tesla", 3: "NVS", 4: "Grid", 5: "GeForce", 6: "Titan",
          7: "NvidiaVApps", 8: "NvidiaVPC", 9: "NvidiaVCS", 10: "NvidiaVWS", 11: "NvidiaCloudGaming",
          12: "QuadroRTX", 13: "NvidiaRTX", 14: "Nvidia", 15: "GeForceRTX", 16: "TitanRTX"}
_ADDRESSING = {0: "None", 1: "HMM", 2: "ATS"}
# NVML_GPU_INSTANCE_PROFILE_* index → (GPU slices, attribute suffix) as go-nvlib's NewMigProfile builds it.
_GI_PROFILE = {0: (1, ""), 1: (2, ""), 2: (3, ""), 3: (4, ""), 4: (7, ""), 5: (8, ""), 6: (6, ""),
               7: (1, "+me"), 8: (2, "+me"), 9: (1, ""), 10: (1, "+gfx"), 11: (2, "+gfx"), 12: (4, "+gfx"),
               13: (1, "-me"), 14: (2, "-me"), 15: (1, "+me.all"), 16: (2, "+me.all")}
_LOOSE = re.compile(r"^v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?"
                    r"(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?$")
_BDF = re.compile(r"^([0-9a-f]{4}):([0-9a-f]{2}):([0-9a-f]{2})\.([0-9a-f])$")


@dataclass(frozen=True)
class MigRecord:
    """One live MIG device and the GPU-instance profile it was created from."""

    uuid: str
    gi_profile: int  # NVML_GPU_INSTANCE_PROFILE_* index: the slice count and attribute suffix
    profile_id: int  # GpuInstanceProfileInfo.id: the number in the device name
    placement_start: int
    placement_size: int
    memory_mib: int  # GpuInstanceProfileInfo.memorySizeMB (MiB, as nvml.h documents it)
    multiprocessors: int
    copy_engines: int
    decoders: int
    encoders: int
    jpeg_engines: int
    ofa_engines: int


@dataclass(frozen=True)
class GpuRecord:
    """One physical GPU as NVML and sysfs describe it."""

    index: int
    minor: int
    uuid: str
    name: str
    brand: int
    architecture: int
    compute_capability: tuple[int, int]
    bus_id: str  # NVML pciInfo.busId as text, e.g. 00000000:65:00.0
    memory_total: int | None = None  # bytes; None where NVML answers NOT_SUPPORTED (GB10)
    sysfs_link: str | None = None  # readlink /sys/bus/pci/devices/<bdf>, None where unreadable
    numa_node: int | None = None  # not published; kept for the run environment
    addressing_mode: int | None = None  # None where the platform does not support the query
    mig_enabled: bool = False
    migs: tuple[MigRecord, ...] = ()


@dataclass(frozen=True)
class NvmlSnapshot:
    driver_version: str
    cuda_driver_version: int  # nvmlSystemGetCudaDriverVersion, e.g. 12040
    gpus: tuple[GpuRecord, ...] = ()
    nvml_version: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "driverVersion": self.driver_version,
            "cudaDriverVersion": self.cuda_driver_version,
            "nvmlVersion": self.nvml_version,
            "gpus": [
                {"index": g.index, "minor": g.minor, "uuid": g.uuid, "name": g.name,
                 "pciBusID": pci_bus_id(g.bus_id), "memory": g.memory_total, "numaNode": g.numa_node,
                 "migEnabled": g.mig_enabled, "migs": [m.uuid for m in g.migs]}
                for g in self.gpus
            ],
        }


def coerce_version(text: str) -> str:
    """Masterminds/semver v3 ``MustParse(v).String()`` with coercion on, as the driver prints versions."""
    m = _LOOSE.match(text)
    if m is None:
        raise NvmlError(f"version {text!r} is not a semantic version the driver can parse")
    major = int(m.group(1))
    minor = int(m.group(2)[1:]) if m.group(2) else 0
    patch = int(m.group(3)[1:]) if m.group(3) else 0
    pre = f"-{m.group(5)}" if m.group(5) else ""
    meta = f"+{m.group(8)}" if m.group(8) else ""
    return f"{major}.{minor}.{patch}{pre}{meta}"


def cuda_driver_version(value: int) -> str:
    """nvlib.go: ``"%v.%v", v/1000, (v%1000)/10`` — 12040 is ``12.4``, 13000 is ``13.0``."""
    return f"{value // 1000}.{(value % 1000) // 10}"


def pci_bus_id(bus_id: str) -> str:
    """go-nvlib GetPCIBusID: up to the first NUL, lower-cased, a leading ``0000`` dropped (not from ``0000``)."""
    text = bus_id.split("\x00", 1)[0].lower()
    return text if text == "0000" else text.removeprefix("0000")


def pcie_root(bus_id: str, sysfs_link: str | None) -> str | None:
    """deviceattribute.resolvePCIeRoot on a recorded ``readlink``; ``None`` when the driver would skip it."""
    if sysfs_link is None or not _BDF.match(bus_id):
        return None
    base = "bus/pci/devices"
    target = sysfs_link if sysfs_link.startswith("/") else _clean(f"{base}/{sysfs_link}")
    if not target.startswith("devices/pci") or target.rsplit("/", 1)[-1] != bus_id:
        return None
    return target.removeprefix("devices/").split("/", 1)[0]


def _clean(path: str) -> str:
    """Go's ``filepath.Clean`` for a relative path: resolve ``.`` and ``..`` textually."""
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            else:
                parts.append(part)
        else:
            parts.append(part)
    return "/".join(parts)


def architecture_name(value: int) -> str:
    try:
        return _ARCH[value]
    except KeyError:
        raise NvmlError(f"architecture {value} has no name in go-nvlib; the driver refuses the GPU") from None


def brand_name(value: int) -> str:
    try:
        return _BRAND[value]
    except KeyError:
        raise NvmlError(f"brand {value} has no name in go-nvlib; the driver refuses the GPU") from None


def mig_profile_name(mig: MigRecord, gpu_memory: int) -> str:
    """go-nvlib MigProfileInfo.String for a C == G profile: ``<g>g.<gb>gb[+attr|-attr]``."""
    if mig.gi_profile not in _GI_PROFILE:
        raise NvmlError(f"GPU instance profile {mig.gi_profile} is not one go-nvlib knows")
    slices, suffix = _GI_PROFILE[mig.gi_profile]
    # getMigMemorySizeGB: the profile's share of the GPU rounded up to eighths, times whole GiB.
    fraction = math.ceil(mig.memory_mib * 1024 * 1024 / gpu_memory * 8) / 8
    total_gb = (gpu_memory + 2**30 - 1) // 2**30
    return f"{slices}g.{_go_round(fraction * total_gb)}gb{suffix}"


def _go_round(x: float) -> int:
    """Go's ``math.Round``: half away from zero (Python's ``round`` is half to even)."""
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def _rfc1123(name: str) -> str:
    name = re.sub(r"[^a-z0-9-.]", "-", name.lower()).strip("-").removesuffix(".")
    return name[:253]


def _binary(n: int) -> dict[str, str]:
    return {"value": str(Quantity.from_int(n, Format.BinarySI))}


def _common(gpu: GpuRecord, snap: NvmlSnapshot) -> dict[str, dict[str, Any]]:
    """What a GPU and its MIG devices share: product, brand, architecture, versions, PCI placement."""
    major, minor = gpu.compute_capability
    attrs: dict[str, dict[str, Any]] = {
        "productName": {"string": gpu.name},
        "brand": {"string": brand_name(gpu.brand)},
        "architecture": {"string": architecture_name(gpu.architecture)},
        "cudaComputeCapability": {"version": coerce_version(f"{major}.{minor}")},
        "driverVersion": {"version": coerce_version(snap.driver_version)},
        "cudaDriverVersion": {"version": coerce_version(cuda_driver_version(snap.cuda_driver_version))},
    }
    if gpu.addressing_mode is not None:
        attrs["addressingMode"] = {"string": _ADDRESSING.get(gpu.addressing_mode, "")}
        if not attrs["addressingMode"]["string"]:
            raise NvmlError(f"addressing mode {gpu.addressing_mode} has no name in go-nvlib")
    bus = pci_bus_id(gpu.bus_id)
    if not _BDF.match(bus):
        raise NvmlError(f"PCI bus id {bus!r} is not domain:bus:device.function; the driver refuses the GPU")
    attrs[f"{_STD}pciBusID"] = {"string": bus}
    root = pcie_root(bus, gpu.sysfs_link)
    if root is not None:
        attrs[f"{_STD}pcieRoot"] = {"string": root}
    return attrs


def _gpu_device(gpu: GpuRecord, snap: NvmlSnapshot) -> dict[str, Any]:
    device: dict[str, Any] = {
        "name": f"gpu-{gpu.minor}",
        "attributes": {"type": {"string": "gpu"}, "uuid": {"string": gpu.uuid}, **_common(gpu, snap)},
    }
    if gpu.memory_total is not None:
        device["capacity"] = {"memory": _binary(gpu.memory_total)}
    return device


def _mig_device(gpu: GpuRecord, mig: MigRecord, snap: NvmlSnapshot) -> dict[str, Any]:
    if gpu.memory_total is None:
        raise NvmlError(f"GPU {gpu.uuid} has MIG devices but no memory total to name their profiles by")
    profile = mig_profile_name(mig, gpu.memory_total)
    attrs = {"type": {"string": "mig"}, "parentUUID": {"string": gpu.uuid}, "profile": {"string": profile},
             **_common(gpu, snap), "uuid": {"string": mig.uuid}}
    capacity = {
        "multiprocessors": _binary(mig.multiprocessors), "copyEngines": _binary(mig.copy_engines),
        "decoders": _binary(mig.decoders), "encoders": _binary(mig.encoders),
        "jpegEngines": _binary(mig.jpeg_engines), "ofaEngines": _binary(mig.ofa_engines),
        "memory": _binary(mig.memory_mib * 1024 * 1024),
    }
    for i in range(mig.placement_start, mig.placement_start + mig.placement_size):
        capacity[f"memorySlice{i}"] = _binary(1)
    name = f"gpu-{gpu.minor}-mig-{_rfc1123(profile.replace('.', ''))}-{mig.profile_id}-{mig.placement_start}"
    return {"name": name, "attributes": attrs, "capacity": capacity}


def device_entries(snap: NvmlSnapshot) -> list[dict[str, Any]]:
    """Every device the driver announces, sorted by name (its own order comes from a Go map)."""
    devices: list[dict[str, Any]] = []
    for gpu in snap.gpus:
        if gpu.mig_enabled:
            devices += [_mig_device(gpu, mig, snap) for mig in gpu.migs]
        else:
            devices.append(_gpu_device(gpu, snap))
    names = [d["name"] for d in devices]
    if len(set(names)) != len(names):
        raise NvmlError(f"two devices share a name: {sorted(n for n in names if names.count(n) > 1)[0]}")
    return sorted(devices, key=lambda d: str(d["name"]))


def resource_slice(snap: NvmlSnapshot, node: str, *, generation: int = 1,
                   name: str | None = None) -> dict[str, Any]:
    """The node's one slice: pool = node name, ``nodeName`` set, as the driver's non-DynamicMIG path publishes."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name or f"{node}-{DRIVER}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": generation, "resourceSliceCount": 1},
            "devices": device_entries(snap),
        },
    }


def visible_uuids(devices: Sequence[Mapping[str, Any]]) -> list[str]:
    """The UUIDs of published devices, in order (what ``CUDA_VISIBLE_DEVICES`` lists)."""
    out = []
    for d in devices:
        uuid = ((d.get("attributes") or {}).get("uuid") or {}).get("string")
        if uuid:
            out.append(str(uuid))
    return out
