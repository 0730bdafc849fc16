"""``record-env``: the environment as the application sees it, and whether its GPUs are the claim's.

Run inside the container (or the local executor's child): Python, the frameworks that import
(torch, jax, tensorflow with the CUDA runtime, cuDNN and NCCL they were built against or load),
the visible-device variables, and NVML's view.  The claim's devices are known by UUID (the
executor passes ``DRAKIT_CLAIM_DEVICES``); NVML indexes GPUs from 0 inside a DRA container, so
only the UUID ties the two together.  A mismatch is recorded, never smoothed over.

Everything here is read-only probing; nothing is imported unless it is installed.
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.util
import platform
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drakit.drivers.nvml import NvmlSnapshot, coerce_version, cuda_driver_version, pci_bus_id
from drakit.records.run import RunEnv

__all__ = ["CROSS_CHECK", "CrossCheck", "collect", "cross_check", "frameworks", "nvml_view"]

CROSS_CHECK = "drakit.crossCheck"  # the frameworks key the verdict is stored under
_VISIBLE = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES")


@dataclass(frozen=True)
class CrossCheck:
    """``match``, ``mismatch`` or ``unchecked`` (no claim devices known, or no NVML here)."""

    status: str
    expected: tuple[str, ...]
    seen: tuple[str, ...]
    message: str


def _version(module: str, attribute: str = "__version__") -> str | None:
    if importlib.util.find_spec(module) is None:
        return None
    try:
        value = getattr(importlib.import_module(module), attribute, None)
    except Exception as e:  # a broken install is part of the environment, not a crash of record-env
        return f"import failed: {type(e).__name__}"
    return None if value is None else str(value)


def _call(fn: Callable[[], Any]) -> str | None:
    try:
        value = fn()
    except Exception:
        return None
    return None if value is None else str(value)


def _native(library: str, symbol: str) -> int | None:
    """A ``int f(int*)`` version getter from a shared library the process could load (CUDA runtime, NCCL)."""
    try:
        lib = ctypes.CDLL(library)
        out = ctypes.c_int()
        return out.value if getattr(lib, symbol)(ctypes.byref(out)) == 0 else None
    except (OSError, AttributeError):
        return None


def frameworks() -> dict[str, str]:
    """What is importable or loadable, by name; absent entries were not found."""
    found: dict[str, str | None] = {"numpy": _version("numpy")}
    torch = _version("torch")
    if torch is not None:
        import torch as t  # type: ignore[import-not-found,unused-ignore]

        found.update(torch=torch, **{
            "torch.cuda": _call(lambda: t.version.cuda),
            "torch.cudnn": _call(lambda: t.backends.cudnn.version()),
            "torch.nccl": _call(lambda: ".".join(map(str, t.cuda.nccl.version()))),
        })
    found["jax"] = _version("jax")
    found["jaxlib"] = _version("jaxlib")
    tf = _version("tensorflow")
    if tf is not None:
        import tensorflow as tfm  # type: ignore[import-not-found,unused-ignore]

        info = _call(lambda: tfm.sysconfig.get_build_info())
        found.update(tensorflow=tf, **({"tensorflow.build": info} if info else {}))
    runtime = _native("libcudart.so", "cudaRuntimeGetVersion")
    if runtime is not None:
        found["cudaRuntime"] = cuda_driver_version(runtime)
    nccl = _native("libnccl.so.2", "ncclGetVersion")
    if nccl is not None:
        found["nccl"] = f"{nccl // 10000}.{nccl % 10000 // 100}.{nccl % 100}" if nccl >= 10000 else str(nccl)
    try:
        cudnn = ctypes.CDLL("libcudnn.so").cudnnGetVersion()
        found["cudnn"] = str(cudnn)
    except (OSError, AttributeError):
        pass
    return {k: v for k, v in found.items() if v is not None}


def nvml_view(snapshot: NvmlSnapshot) -> tuple[dict[str, str], ...]:
    """One entry per GPU and per MIG device NVML shows, in the driver's spelling of each value."""
    out = []
    for g in snapshot.gpus:
        base = {"index": str(g.index), "minor": str(g.minor), "uuid": g.uuid, "name": g.name,
                "pciBusID": pci_bus_id(g.bus_id), "driverVersion": coerce_version(snapshot.driver_version),
                "cudaDriverVersion": coerce_version(cuda_driver_version(snapshot.cuda_driver_version)),
                "memory": "" if g.memory_total is None else str(g.memory_total),
                "numaNode": "" if g.numa_node is None else str(g.numa_node)}
        out.append(base)
        out += [{"uuid": m.uuid, "parentUUID": g.uuid, "name": g.name, "memory": str(m.memory_mib * 2**20)}
                for m in g.migs]
    return tuple(out)


def _visible(view: Sequence[Mapping[str, str]], env: Mapping[str, str]) -> tuple[str, ...]:
    """The UUIDs CUDA would use: NVML's, narrowed by ``CUDA_VISIBLE_DEVICES`` (UUIDs or indices)."""
    uuids = [g["uuid"] for g in view]
    listed = env.get("CUDA_VISIBLE_DEVICES")
    if listed is None:
        return tuple(uuids)
    by_index = {g["index"]: g["uuid"] for g in view if "index" in g}
    out = []
    for item in (s.strip() for s in listed.split(",") if s.strip()):
        uuid = by_index.get(item) if item.isdigit() else next((u for u in uuids if u.startswith(item)), None)
        if uuid is None:
            break  # CUDA stops at the first entry it cannot resolve
        out.append(uuid)
    return tuple(out)


def cross_check(expected: Sequence[str], view: Sequence[Mapping[str, str]] | None,
                env: Mapping[str, str]) -> CrossCheck:
    want = tuple(sorted(expected))
    if not want:
        return CrossCheck("unchecked", want, (), "no claim devices are known (DRAKIT_CLAIM_DEVICES is unset)")
    if view is None:
        return CrossCheck("unchecked", want, (), "NVML is not available here, so the devices cannot be seen")
    seen = tuple(sorted(_visible(view, env)))
    if seen == want:
        return CrossCheck("match", want, seen, f"the {len(want)} claimed device(s) are the ones visible")
    missing, extra = sorted(set(want) - set(seen)), sorted(set(seen) - set(want))
    return CrossCheck("mismatch", want, seen,
                      f"MISMATCH: claimed {len(want)}, visible {len(seen)}; "
                      f"not visible: {', '.join(missing) or 'none'}; visible but not claimed: {', '.join(extra) or 'none'}")


def collect(env: Mapping[str, str], snapshot: NvmlSnapshot | None, *, image_digest: str = "") -> tuple[RunEnv, CrossCheck]:
    """The run environment to record, with the cross-check's verdict stored beside the frameworks."""
    view = None if snapshot is None else nvml_view(snapshot)
    expected = [u for u in env.get("DRAKIT_CLAIM_DEVICES", "").split(",") if u]
    check = cross_check(expected, view, env)
    found = frameworks()
    found.update({f"env.{k}": env[k] for k in _VISIBLE if k in env})
    found[CROSS_CHECK] = check.status
    found[f"{CROSS_CHECK}.message"] = check.message
    python = f"{platform.python_implementation()} {platform.python_version()}"
    return RunEnv(image_digest=image_digest or env.get("DRAKIT_IMAGE_DIGEST", ""), python=python,
                  frameworks=found, nvml=view or ()), check

