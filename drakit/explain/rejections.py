"""The allocator's per-device rejections, summarised: ``8 × memory 40Gi; the selector asks >= 48Gi``.

A trace holds one reason per (request, device, code); on a node with eight identical GPUs that
is eight lines saying the same thing.  Grouping by code, request and the story with the
device's name taken out gives one line per distinct cause, with a count.  A false selector is
told by the probe (:mod:`drakit.explain.probe`): which condition failed, with the numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from drakit.explain.probe import MissingKey, Probe, Unknown, split_terms
from drakit.outcomes import Code, Reason, ReasonCode

Obj = Mapping[str, Any]
QUIET = frozenset({ReasonCode.NOT_NEEDED, ReasonCode.BACKTRACKED})
"""Search bookkeeping, not causes: left out of summaries."""


@dataclass(frozen=True)
class RejectionGroup:
    code: Code
    count: int
    request: str
    message: str
    example: str  # one device (driver/pool/name) or the first reason's message

    def text(self) -> str:
        where = f"request {self.request}: " if self.request else ""
        return f"{self.count} × {where}{self.message} [{self.code.value}]"

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code.value, "count": self.count, "request": self.request,
                "message": self.message, "example": self.example}


def device_table(slices: Iterable[Obj]) -> dict[str, tuple[str, Obj]]:
    """``driver/pool/name`` -> (driver, wire device) for every published device."""
    out: dict[str, tuple[str, Obj]] = {}
    for s in slices:
        spec = s.get("spec") or {}
        driver = str(spec.get("driver") or "")
        pool = str((spec.get("pool") or {}).get("name") or "")
        for d in spec.get("devices") or []:
            out[f"{driver}/{pool}/{d.get('name', '')}"] = (driver, d)
    return out


def summarise(reasons: Iterable[Reason], devices: Mapping[str, tuple[str, Obj]]) -> tuple[RejectionGroup, ...]:
    """Groups of reasons telling one story, most frequent first."""
    probe = Probe()
    groups: dict[tuple[Code, str, str], list[Reason]] = {}
    for r in reasons:
        if r.code in QUIET:
            continue
        groups.setdefault((r.code, r.request, _story(r, devices, probe)), []).append(r)
    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0][0].value, kv[0][1], kv[0][2]))
    return tuple(
        RejectionGroup(code, len(rs), request, story, rs[0].device or rs[0].message)
        for (code, request, story), rs in ranked
    )


def _story(r: Reason, devices: Mapping[str, tuple[str, Obj]], probe: Probe) -> str:
    expression = r.detail.get("expression")
    if r.code in (ReasonCode.REQUEST_SELECTOR_FALSE, ReasonCode.CLASS_SELECTOR_FALSE) and expression and r.device in devices:
        driver, raw = devices[r.device]
        for term in split_terms(str(expression)):
            try:
                if probe.evaluate(term, driver, raw):
                    continue
            except MissingKey:
                pass
            except Unknown:
                continue
            told, _ = probe.explain(term, driver, raw)
            if told:
                return told
        return f"selector #{r.detail.get('selector', 0)} is false: {expression}"
    text = r.message
    if r.device:
        text = text.replace(f"device {r.device}", "the device").replace(r.device, "the device")
    # A request label repeats what the group already says.
    return text.removeprefix(f"request {r.request}: ") if r.request else text
