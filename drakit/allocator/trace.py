"""A collector for the allocator's rejections.

The search calls :meth:`Trace.reject` at exactly the points where upstream's allocator logs
"Device in use", "Insufficient counters" and the like and moves on.  ``allocate(trace=None)``
(the default) skips every call site behind a single ``is not None`` test, so tracing costs
nothing when off.  The first reason per (claim, request, device, code) is kept: backtracking
revisits the same device many times and the repeats say nothing new.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from drakit.outcomes import Code, Reason, ReasonCode


class Trace:
    """Collects :class:`Reason` records in the order the search met them."""

    def __init__(self) -> None:
        self._reasons: list[Reason] = []
        self._seen: set[tuple[str, str, str, ReasonCode]] = set()
        self._devices_with_reason: set[str] = set()

    def reject(
        self,
        code: ReasonCode,
        message: str,
        *,
        claim: str = "",
        request: str = "",
        device: str = "",
        detail: Mapping[str, Any] | None = None,
    ) -> None:
        key = (claim, request, device, code)
        if key in self._seen:
            return
        self._seen.add(key)
        if device:
            self._devices_with_reason.add(device)
        self._reasons.append(Reason.of(code, message, claim=claim, request=request, device=device, detail=detail))

    def has_reason(self, device: str) -> bool:
        return device in self._devices_with_reason

    @property
    def reasons(self) -> tuple[Reason, ...]:
        return tuple(self._reasons)

    def codes(self) -> set[Code]:
        return {r.code for r in self._reasons}

    def __iter__(self) -> Iterator[Reason]:
        return iter(self._reasons)

    def __len__(self) -> int:
        return len(self._reasons)

    def clear(self) -> None:
        self._reasons.clear()
        self._seen.clear()
        self._devices_with_reason.clear()
