"""NVML recordings: what each call answered on a real machine, and a ``pynvml``-shaped replay of it.

A recording is plain JSON, one entry per call result (``"NOT_SUPPORTED"`` where NVML said so), so
that a snapshot taken by ``drakit discover --record`` on a GPU machine replays anywhere through
the same reader, :func:`drakit.executors.nvmlread.read_snapshot`.  The golden files are such
recordings; the replay is the in-memory twin of the NVML library.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import SimpleNamespace
from typing import Any

from drakit.drivers.nvml import pci_bus_id
from drakit.errors import DrakitError

__all__ = ["NOT_SUPPORTED", "ReplayError", "ReplayNvml", "record"]

NOT_SUPPORTED = "NOT_SUPPORTED"
_CODES = {"INVALID_ARGUMENT": 2, NOT_SUPPORTED: 3, "NOT_FOUND": 6, "FUNCTION_NOT_FOUND": 13}


class ReplayError(DrakitError):
    """``pynvml.NVMLError``'s twin: ``value`` is the NVML return code."""

    def __init__(self, value: int) -> None:
        super().__init__(f"NVML error {value}")
        self.value = value


class ReplayNvml:
    """The subset of ``pynvml`` the reader calls, answering from a recording."""

    NVMLError = ReplayError

    def __init__(self, recording: Mapping[str, Any]) -> None:
        self._system = recording.get("system") or {}
        self._gpus = list(recording.get("gpus") or [])

    @staticmethod
    def _answer(value: Any) -> Any:
        if isinstance(value, str) and value in _CODES:
            raise ReplayError(_CODES[value])
        return value

    def _field(self, handle: Any, name: str) -> Any:
        return self._answer(handle.get(name, NOT_SUPPORTED))

    def readlink(self, bus_id: str) -> str | None:
        """The recorded ``readlink`` of the device's sysfs path (not an NVML call; the reader takes it apart)."""
        for gpu in self._gpus:
            if pci_bus_id(str(gpu.get("busId", ""))) == bus_id:
                link = gpu.get("sysfsLink")
                return None if link is None else str(link)
        return None

    def nvmlInit(self) -> None:
        return None

    def nvmlShutdown(self) -> None:
        return None

    def nvmlSystemGetDriverVersion(self) -> str:
        return str(self._answer(self._system["driverVersion"]))

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        return int(self._answer(self._system["cudaDriverVersion"]))

    def nvmlSystemGetNVMLVersion(self) -> str:
        return str(self._answer(self._system.get("nvmlVersion", NOT_SUPPORTED)))

    def nvmlDeviceGetCount(self) -> int:
        return len(self._gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> Any:
        return self._gpus[index]

    def nvmlDeviceGetMinorNumber(self, h: Any) -> int:
        return int(self._field(h, "minor"))

    def nvmlDeviceGetUUID(self, h: Any) -> str:
        return str(self._field(h, "uuid"))

    def nvmlDeviceGetName(self, h: Any) -> str:
        return str(self._field(h, "name"))

    def nvmlDeviceGetBrand(self, h: Any) -> int:
        return int(self._field(h, "brand"))

    def nvmlDeviceGetArchitecture(self, h: Any) -> int:
        return int(self._field(h, "architecture"))

    def nvmlDeviceGetCudaComputeCapability(self, h: Any) -> tuple[int, int]:
        major, minor = self._field(h, "computeCapability")
        return int(major), int(minor)

    def nvmlDeviceGetPciInfo(self, h: Any) -> Any:
        # nvidia-ml-py returns busId as bytes; the reader must cope with that.
        return SimpleNamespace(busId=str(self._field(h, "busId")).encode())

    def nvmlDeviceGetMemoryInfo(self, h: Any) -> Any:
        return SimpleNamespace(total=int(self._field(h, "memoryTotal")))

    def nvmlDeviceGetNumaNodeId(self, h: Any) -> int:
        return int(self._field(h, "numaNode"))

    def nvmlDeviceGetAddressingMode(self, h: Any) -> Any:
        return SimpleNamespace(value=int(self._field(h, "addressingMode")))

    def nvmlDeviceGetMigMode(self, h: Any) -> list[int]:
        return [int(v) for v in self._field(h, "migMode")]

    def nvmlDeviceGetGpuInstanceProfileInfo(self, h: Any, index: int) -> Any:
        profiles = h.get("giProfiles") or {}
        return SimpleNamespace(**self._answer(profiles.get(str(index), NOT_SUPPORTED)))

    def nvmlDeviceGetMaxMigDeviceCount(self, h: Any) -> int:
        return int(h.get("maxMigDeviceCount", len(h.get("migs") or [])))

    def nvmlDeviceGetMigDeviceHandleByIndex(self, h: Any, index: int) -> Any:
        migs = h.get("migs") or []
        if index >= len(migs):
            raise ReplayError(_CODES["NOT_FOUND"])
        return {**migs[index], "_parent": h}

    def nvmlDeviceGetGpuInstanceId(self, mig: Any) -> int:
        return int(mig["giId"])

    def nvmlDeviceGetGpuInstanceById(self, h: Any, gi_id: int) -> Any:
        return next(m for m in h.get("migs") or [] if int(m["giId"]) == gi_id)

    def nvmlGpuInstanceGetInfo(self, gi: Any) -> Any:
        info = gi["gi"]
        return SimpleNamespace(profileId=info["profileId"], placement=SimpleNamespace(**info["placement"]))


_PROFILE_FIELDS = ("id", "memorySizeMB", "multiprocessorCount", "copyEngineCount", "decoderCount",
                   "encoderCount", "jpegCount", "ofaCount")


def _try(lib: Any, call: Callable[..., Any], *args: Any) -> Any:
    """The call's answer, or the name of the NVML error it raised (what the replay raises again)."""
    try:
        value = call(*args)
    except lib.NVMLError as e:
        code = getattr(e, "value", None)
        return next((name for name, c in _CODES.items() if c == code), f"ERROR_{code}")
    except AttributeError:
        return "FUNCTION_NOT_FOUND"
    return value.decode() if isinstance(value, bytes) else value


def _int(value: Any) -> Any:
    return value if isinstance(value, str) else int(getattr(value, "value", value))


def _mig_recording(lib: Any, h: Any) -> dict[str, Any]:
    profiles = {}
    for index in range(17):
        info = _try(lib, lib.nvmlDeviceGetGpuInstanceProfileInfo, h, index)
        if not isinstance(info, str):
            profiles[str(index)] = {f: int(getattr(info, f)) for f in _PROFILE_FIELDS}
    migs = []
    for j in range(int(lib.nvmlDeviceGetMaxMigDeviceCount(h))):
        mig = _try(lib, lib.nvmlDeviceGetMigDeviceHandleByIndex, h, j)
        if isinstance(mig, str):
            continue
        gi_id = int(lib.nvmlDeviceGetGpuInstanceId(mig))
        info = lib.nvmlGpuInstanceGetInfo(lib.nvmlDeviceGetGpuInstanceById(h, gi_id))
        migs.append({"uuid": _try(lib, lib.nvmlDeviceGetUUID, mig), "giId": gi_id,
                     "gi": {"profileId": int(info.profileId),
                            "placement": {"start": int(info.placement.start), "size": int(info.placement.size)}}})
    return {"giProfiles": profiles, "migs": migs}


def record(lib: Any, readlink: Callable[[str], str | None]) -> dict[str, Any]:
    """A recording of every call the reader makes, from a live ``pynvml`` (``drakit discover --record``)."""
    gpus = []
    for i in range(int(lib.nvmlDeviceGetCount())):
        h = lib.nvmlDeviceGetHandleByIndex(i)
        raw = lib.nvmlDeviceGetPciInfo(h).busId
        bus = (raw.decode() if isinstance(raw, bytes) else str(raw)).split("\x00", 1)[0]
        memory = _try(lib, lib.nvmlDeviceGetMemoryInfo, h)
        mode = _try(lib, lib.nvmlDeviceGetMigMode, h)
        capability = _try(lib, lib.nvmlDeviceGetCudaComputeCapability, h)
        gpu: dict[str, Any] = {
            "minor": _int(_try(lib, lib.nvmlDeviceGetMinorNumber, h)),
            "uuid": _try(lib, lib.nvmlDeviceGetUUID, h),
            "name": _try(lib, lib.nvmlDeviceGetName, h),
            "brand": _int(_try(lib, lib.nvmlDeviceGetBrand, h)),
            "architecture": _int(_try(lib, lib.nvmlDeviceGetArchitecture, h)),
            "computeCapability": capability if isinstance(capability, str) else [int(v) for v in capability],
            "busId": bus,
            "sysfsLink": readlink(pci_bus_id(bus)),
            "memoryTotal": memory if isinstance(memory, str) else int(memory.total),
            "numaNode": _int(_try(lib, lib.nvmlDeviceGetNumaNodeId, h)),
            "addressingMode": _int(_try(lib, lib.nvmlDeviceGetAddressingMode, h)),
            "migMode": mode if isinstance(mode, str) else [int(v) for v in mode],
        }
        if isinstance(mode, list | tuple) and mode and int(mode[0]) == 1:
            gpu.update(_mig_recording(lib, h))
        gpus.append(gpu)
    return {
        "system": {
            "driverVersion": _try(lib, lib.nvmlSystemGetDriverVersion),
            "cudaDriverVersion": int(lib.nvmlSystemGetCudaDriverVersion()),
            "nvmlVersion": _try(lib, lib.nvmlSystemGetNVMLVersion),
        },
        "gpus": gpus,
    }
