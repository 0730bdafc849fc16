"""What a diagnosis reads: a frozen snapshot of wire dicts, from a bundle or a simulator state.

The core works on wire dicts (the allocator's input shape) so that a bundle loaded from files,
the simulator's in-memory objects and, later, a live cluster all feed it the same way.  The
simulator's seam is :meth:`ExplainInput.from_state`: it hands over its objects plus, per claim
key ``namespace/name``, the simulated time its devices are expected back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

Obj = Mapping[str, Any]


def name_of(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def namespace_of(obj: Obj, default: str = "default") -> str:
    return str((obj.get("metadata") or {}).get("namespace") or default)


def key_of(obj: Obj) -> str:
    """``namespace/name`` of a namespaced object (``default`` when unset, as kubectl applies it)."""
    return f"{namespace_of(obj)}/{name_of(obj)}"


@dataclass(frozen=True)
class ExplainInput:
    """Every object a diagnosis may look at, read-only."""

    nodes: tuple[Obj, ...] = ()
    slices: tuple[Obj, ...] = ()
    classes: tuple[Obj, ...] = ()
    claims: tuple[Obj, ...] = ()
    templates: tuple[Obj, ...] = ()
    pods: tuple[Obj, ...] = ()
    events: tuple[Obj, ...] = ()
    taint_rules: tuple[Obj, ...] = ()
    expected_release: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    now: float | None = None  # simulator clock, to print "in 12 min" instead of a timestamp

    @classmethod
    def from_objects(cls, objects: Iterable[Obj]) -> ExplainInput:
        """Sort wire dicts by ``kind`` (unknown kinds are ignored)."""
        by_kind: dict[str, list[Obj]] = {}
        for o in objects:
            by_kind.setdefault(str(o.get("kind") or ""), []).append(o)
        return cls(
            nodes=tuple(by_kind.get("Node", ())),
            slices=tuple(by_kind.get("ResourceSlice", ())),
            classes=tuple(by_kind.get("DeviceClass", ())),
            claims=tuple(by_kind.get("ResourceClaim", ())),
            templates=tuple(by_kind.get("ResourceClaimTemplate", ())),
            pods=tuple(by_kind.get("Pod", ())),
            events=tuple(by_kind.get("Event", ())),
            taint_rules=tuple(by_kind.get("DeviceTaintRule", ())),
        )

    @classmethod
    def from_bundle(cls, bundle: Any) -> ExplainInput:
        """A :class:`drakit.model.load.Bundle` as wire dicts (namespaces defaulted like kubectl)."""
        from drakit.model import to_wire

        objects: list[dict[str, Any]] = []
        for entry in bundle.entries:
            # The loader keeps each object's decoded dict (== to_wire(obj)); copy what we touch.
            wire = dict(getattr(entry, "wire", None) or to_wire(entry.obj))
            wire.setdefault("kind", entry.kind)
            meta = wire.get("metadata") or {}
            if entry.namespace and "namespace" not in meta:
                wire["metadata"] = {**meta, "namespace": entry.namespace}
            objects.append(wire)
        return cls.from_objects(objects)

    @classmethod
    def from_state(
        cls,
        *,
        pods: Iterable[Obj],
        claims: Iterable[Obj],
        slices: Iterable[Obj],
        classes: Iterable[Obj] = (),
        nodes: Iterable[Obj] = (),
        templates: Iterable[Obj] = (),
        events: Iterable[Obj] = (),
        expected_release: Mapping[str, float] | None = None,
        now: float | None = None,
    ) -> ExplainInput:
        """The simulator's seam: its current objects and when each claim is expected to be freed."""
        return cls(
            nodes=tuple(nodes),
            slices=tuple(slices),
            classes=tuple(classes),
            claims=tuple(claims),
            templates=tuple(templates),
            pods=tuple(pods),
            events=tuple(events),
            expected_release=MappingProxyType(dict(expected_release or {})),
            now=now,
        )

    # -- lookups ---------------------------------------------------------------------------

    def find_pod(self, name: str, namespace: str) -> Obj | None:
        return _find(self.pods, name, namespace)

    def find_claim(self, name: str, namespace: str) -> Obj | None:
        return _find(self.claims, name, namespace)

    def find_template(self, name: str, namespace: str) -> Obj | None:
        return _find(self.templates, name, namespace)

    def find_class(self, name: str) -> Obj | None:
        for c in self.classes:
            if name_of(c) == name:
                return c
        return None

    def events_for(self, kind: str, name: str, namespace: str) -> list[Obj]:
        """The object's events, with the recorder's aggregation prefix taken off their messages."""
        out = []
        for e in self.events:
            inv = e.get("involvedObject") or {}
            if (
                inv.get("kind") == kind
                and inv.get("name") == name
                and (inv.get("namespace") or namespace_of(e)) == namespace
            ):
                message = str(e.get("message") or "")
                if message.startswith(_AGGREGATED):
                    e = {**e, "message": message[len(_AGGREGATED) :]}
                out.append(e)
        return out


# client-go's event correlator prefixes messages it folded together with this text.
_AGGREGATED = "(combined from similar events): "


def _find(objs: Iterable[Obj], name: str, namespace: str) -> Obj | None:
    for o in objs:
        if name_of(o) == name and namespace_of(o) == namespace:
            return o
    return None
