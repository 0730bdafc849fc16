"""The allocator's one seam to the CEL implementation in :mod:`drakit.selectors`.

The allocator compiles in the **stored-expressions** environment (every field and function of
the current version, whatever the feature gates say), evaluates per device view, and wraps
outcomes in upstream's wording at the call site.  Keeping the import here (resolved lazily)
lets tests substitute a backend via :func:`set_backend` without touching the core.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, Protocol

from drakit.features import Features


class Backend(Protocol):
    def compile_selector(self, expr: str, *, environment: str, features: Features) -> Any: ...

    def device_view(self, driver: str, device: Mapping[str, Any]) -> Any: ...


class _SelectorsModule:
    """Adapter over ``drakit.selectors`` (imported on first use)."""

    def compile_selector(self, expr: str, *, environment: str, features: Features) -> Any:
        return importlib.import_module("drakit.selectors").compile_selector(
            expr, environment=environment, features=features
        )

    def device_view(self, driver: str, device: Mapping[str, Any]) -> Any:
        return importlib.import_module("drakit.selectors").device_view(driver, device)


_backend: Backend = _SelectorsModule()


def set_backend(backend: Backend | None) -> None:
    """Swap the CEL backend (tests only); ``None`` restores :mod:`drakit.selectors`."""
    global _backend
    _backend = backend if backend is not None else _SelectorsModule()


def compile_stored(expr: str, features: Features) -> Any:
    return _backend.compile_selector(expr, environment="stored", features=features)


def device_view(driver: str, device: Mapping[str, Any]) -> Any:
    return _backend.device_view(driver, device)


def error_message(err: Any) -> str:
    """The text of a compile error object or runtime exception."""
    msg = getattr(err, "message", None)
    return str(msg) if msg else str(err)
