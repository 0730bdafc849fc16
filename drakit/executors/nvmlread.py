"""The only reader of NVML: ``nvidia-ml-py``'s ``pynvml`` module → :class:`~drakit.drivers.nvml.NvmlSnapshot`.

Thin on purpose: every value is read as the NVIDIA driver's ``nvlib.go`` reads it and nothing
is interpreted here, so the pure mapping in :mod:`drakit.drivers.nvml` is what the golden files
test, and the same calls replayed from a recording (a module-shaped fake) exercise this code.
The deprecated ``pynvml`` *distribution* is never a dependency; ``nvidia-ml-py`` ships the
module under the same import name.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

from drakit.drivers.nvml import GpuRecord, MigRecord, NvmlSnapshot, pci_bus_id
from drakit.errors import DrakitError

__all__ = ["NvmlUnavailable", "load_nvml", "read_snapshot", "sysfs_readlink"]

_INVALID = 2  # NVML_ERROR_INVALID_ARGUMENT
_NOT_SUPPORTED = 3  # NVML_ERROR_NOT_SUPPORTED
_NOT_FOUND = 6  # NVML_ERROR_NOT_FOUND
_FUNCTION_NOT_FOUND = 13  # NVML_ERROR_FUNCTION_NOT_FOUND (an older libnvidia-ml without the call)
_GI_PROFILE_COUNT = 17  # NVML_GPU_INSTANCE_PROFILE_COUNT


class NvmlUnavailable(DrakitError):
    """No NVML here: the package, the library or the kernel driver is missing."""


def load_nvml() -> Any:
    """The ``pynvml`` module of ``nvidia-ml-py``, initialised; one line of why when it cannot be."""
    try:
        import pynvml
    except ImportError:
        raise NvmlUnavailable("NVML is not installed: pip install 'drakit[nvml]' (nvidia-ml-py)") from None
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as e:
        raise NvmlUnavailable(f"NVML cannot start here: {e} (no NVIDIA driver or GPU on this machine)") from None
    return pynvml


def sysfs_readlink(bus_id: str) -> str | None:
    """``readlink /sys/bus/pci/devices/<bdf>`` as the driver's pcieRoot lookup does; ``None`` if absent."""
    try:
        return os.readlink(f"/sys/bus/pci/devices/{bus_id}")
    except OSError:
        return None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _optional(lib: Any, call: Callable[[], Any], skip: tuple[int, ...] = ()) -> Any:
    """The value, or ``None`` where NVML says the query is unsupported here (the driver skips those)."""
    try:
        return call()
    except lib.NVMLError as e:
        if getattr(e, "value", None) in (_NOT_SUPPORTED, _FUNCTION_NOT_FOUND, *skip):
            return None
        raise
    except AttributeError:  # an nvidia-ml-py without the binding
        return None


def _migs(lib: Any, handle: Any) -> tuple[MigRecord, ...]:
    profiles = {}
    for index in range(_GI_PROFILE_COUNT):
        # nvlib.go skips profiles answering NOT_SUPPORTED or INVALID_ARGUMENT alike.
        info = _optional(lib, functools.partial(lib.nvmlDeviceGetGpuInstanceProfileInfo, handle, index), (_INVALID,))
        if info is not None:
            profiles[int(info.id)] = (index, info)
    out = []
    for j in range(int(lib.nvmlDeviceGetMaxMigDeviceCount(handle))):
        try:
            mig = lib.nvmlDeviceGetMigDeviceHandleByIndex(handle, j)
        except lib.NVMLError as e:
            if getattr(e, "value", None) == _NOT_FOUND:
                continue
            raise
        gi = lib.nvmlDeviceGetGpuInstanceById(handle, lib.nvmlDeviceGetGpuInstanceId(mig))
        gi_info = lib.nvmlGpuInstanceGetInfo(gi)
        index, p = profiles[int(gi_info.profileId)]
        out.append(MigRecord(
            uuid=_text(lib.nvmlDeviceGetUUID(mig)), gi_profile=index, profile_id=int(p.id),
            placement_start=int(gi_info.placement.start), placement_size=int(gi_info.placement.size),
            memory_mib=int(p.memorySizeMB), multiprocessors=int(p.multiprocessorCount),
            copy_engines=int(p.copyEngineCount), decoders=int(p.decoderCount), encoders=int(p.encoderCount),
            jpeg_engines=int(p.jpegCount), ofa_engines=int(p.ofaCount),
        ))
    return tuple(out)


def _gpu(lib: Any, index: int, readlink: Callable[[str], str | None]) -> GpuRecord:
    h = lib.nvmlDeviceGetHandleByIndex(index)
    memory = _optional(lib, lambda: lib.nvmlDeviceGetMemoryInfo(h))
    mode = _optional(lib, lambda: lib.nvmlDeviceGetMigMode(h))
    addressing = _optional(lib, lambda: lib.nvmlDeviceGetAddressingMode(h))
    bus = _text(lib.nvmlDeviceGetPciInfo(h).busId).split("\x00", 1)[0].lower()
    short = pci_bus_id(bus)
    mig_enabled = bool(mode is not None and int(mode[0]) == 1)
    major, minor = lib.nvmlDeviceGetCudaComputeCapability(h)
    return GpuRecord(
        index=index, minor=int(lib.nvmlDeviceGetMinorNumber(h)), uuid=_text(lib.nvmlDeviceGetUUID(h)),
        name=_text(lib.nvmlDeviceGetName(h)), brand=int(lib.nvmlDeviceGetBrand(h)),
        architecture=int(lib.nvmlDeviceGetArchitecture(h)), compute_capability=(int(major), int(minor)),
        bus_id=bus, memory_total=None if memory is None else int(memory.total),
        sysfs_link=readlink(short), numa_node=_optional(lib, lambda: int(lib.nvmlDeviceGetNumaNodeId(h))),
        addressing_mode=None if addressing is None else int(getattr(addressing, "value", addressing)),
        mig_enabled=mig_enabled, migs=_migs(lib, h) if mig_enabled else (),
    )


def read_snapshot(lib: Any | None = None, readlink: Callable[[str], str | None] = sysfs_readlink) -> NvmlSnapshot:
    """Every GPU NVML shows, read once; ``lib`` is ``pynvml`` (default) or a fake with its names."""
    lib = load_nvml() if lib is None else lib
    try:
        count = int(lib.nvmlDeviceGetCount())
        return NvmlSnapshot(
            driver_version=_text(lib.nvmlSystemGetDriverVersion()),
            cuda_driver_version=int(lib.nvmlSystemGetCudaDriverVersion()),
            nvml_version=_text(_optional(lib, lib.nvmlSystemGetNVMLVersion) or ""),
            gpus=tuple(_gpu(lib, i, readlink) for i in range(count)),
        )
    except lib.NVMLError as e:
        raise NvmlUnavailable(f"NVML failed while reading the GPUs: {e}") from None
