"""The product of ``diagnose``: a :class:`Diagnosis` and its parts, all frozen.

A diagnosis is data first (``to_json`` is the stable ``-o json`` shape); the text layout lives
in :mod:`drakit.explain.render`.  Numbers travel as fields, never only inside messages, so
tests and the web page read them without parsing prose.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from drakit.outcomes import Code, Owner, Reason, Stage, Verdict


def _frozen(d: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    return MappingProxyType(dict(d or {}))


@dataclass(frozen=True)
class FunnelStep:
    """Devices still in the running after one condition (``removed`` = dropped by this one)."""

    key: str  # stable: "inventory", "class", "class-selector-0", "selector-1", "node", ...
    label: str
    count: int
    removed: int

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "label": self.label, "count": self.count, "removed": self.removed}


@dataclass(frozen=True)
class NearMiss:
    """``count`` devices that fail exactly one condition, and by how much."""

    condition: str  # the funnel step key that rejects them
    count: int
    example: str  # one device, driver/pool/name
    product: str
    message: str
    suggestion: str = ""

    def to_json(self) -> dict[str, Any]:
        out = {
            "condition": self.condition,
            "count": self.count,
            "example": self.example,
            "product": self.product,
            "message": self.message,
        }
        if self.suggestion:
            out["suggestion"] = self.suggestion
        return out


@dataclass(frozen=True)
class Funnel:
    """One request (or firstAvailable alternative): how many devices survive each condition."""

    claim: str
    request: str  # "req" or "req/sub"
    device_class: str
    needed: int  # devices required (All: every match, shown as 0 = "all")
    mode: str
    steps: tuple[FunnelStep, ...]
    near_misses: tuple[NearMiss, ...] = ()
    admin_access: bool = False

    @property
    def matching(self) -> int:
        """Devices that match the request as written (before use, counters, capacity left)."""
        static = [s for s in self.steps if s.key in _STATIC_KEYS]
        return static[-1].count if static else 0

    @property
    def available(self) -> int:
        return self.steps[-1].count if self.steps else 0

    def count(self, key: str) -> int | None:
        for s in self.steps:
            if s.key == key:
                return s.count
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "claim": self.claim,
            "request": self.request,
            "deviceClass": self.device_class,
            "mode": self.mode,
            "needed": self.needed,
            "adminAccess": self.admin_access,
            "steps": [s.to_json() for s in self.steps],
            "matching": self.matching,
            "available": self.available,
            "nearMisses": [n.to_json() for n in self.near_misses],
        }


# Step keys that depend only on the objects as written (not on what is in use right now).
_STATIC_KEYS = frozenset({"inventory", "class", "capacity", "node", "taints", "binding"}) | {
    f"{p}-{i}" for p in ("class-selector", "selector") for i in range(32)
}


@dataclass(frozen=True)
class Holder:
    """A claim holding devices a request could use."""

    claim: str
    pods: tuple[str, ...]
    devices: int
    expected_release: float | None = None  # simulator time, when known

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"claim": self.claim, "pods": list(self.pods), "devices": self.devices}
        if self.expected_release is not None:
            out["expectedRelease"] = self.expected_release
        return out


@dataclass(frozen=True)
class Partial:
    """The best partial assignment the allocator found on one node."""

    node: str
    claim: str
    placed: tuple[tuple[str, str], ...]  # (request, driver/pool/device)
    missing: str  # what could not be added, in words

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "claim": self.claim,
            "placed": [{"request": r, "device": d} for r, d in self.placed],
            "missing": self.missing,
        }


@dataclass(frozen=True)
class NodeSummary:
    """How many nodes the pod may use at all, and why the others are out (briefly)."""

    total: int
    usable: int
    excluded: Mapping[str, int] = field(default_factory=_frozen)  # reason -> node count
    inferred: bool = False  # no Node objects in the input: nodes taken from slices

    def to_json(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "usable": self.usable,
            "excluded": dict(self.excluded),
            "inferred": self.inferred,
        }


@dataclass(frozen=True)
class Diagnosis:
    """Why a pod or claim waits: verdict, headline, owner, fix, and the evidence."""

    target: str  # "pod/ns/name" or "claim/ns/name"
    verdict: Verdict
    code: Code
    headline: str
    owner: Owner
    fix: str
    stage: Stage
    findings: tuple[Reason, ...] = ()
    funnels: tuple[Funnel, ...] = ()
    holders: tuple[Holder, ...] = ()
    partial: Partial | None = None
    nodes: NodeSummary | None = None
    placement: str = ""  # node the pod would be placed on now, when it fits
    scheduler: str = ""  # kube-scheduler's own last word in the input (PodScheduled=False message)
    origin: str = ""  # "pod template of Job ml/train" when the pod is a workload's template

    @property
    def codes(self) -> tuple[str, ...]:
        """Every code in the diagnosis, headline first, without repeats."""
        seen: list[str] = [self.code.value]
        for f in self.findings:
            if f.code.value not in seen:
                seen.append(f.code.value)
        return tuple(seen)

    def funnel(self, request: str, claim: str | None = None) -> Funnel | None:
        for f in self.funnels:
            if f.request == request and (claim is None or f.claim == claim):
                return f
        return None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "target": self.target,
            "verdict": self.verdict.value,
            "code": self.code.value,
            "headline": self.headline,
            "owner": self.owner.value,
            "fix": self.fix,
            "stage": self.stage.value,
            "codes": list(self.codes),
            "findings": [f.to_json() for f in self.findings],
            "funnels": [f.to_json() for f in self.funnels],
            "holders": [h.to_json() for h in self.holders],
        }
        if self.partial is not None:
            out["partial"] = self.partial.to_json()
        if self.nodes is not None:
            out["nodes"] = self.nodes.to_json()
        if self.placement:
            out["placement"] = self.placement
        if self.scheduler:
            out["scheduler"] = self.scheduler
        if self.origin:
            out["origin"] = self.origin
        return out
