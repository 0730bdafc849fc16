"""``profile apply``: server-side apply of compiled profile objects, written once on the seam.

Each object is applied as field manager ``drakit`` without force, first as a server dry run.
The dry run's answer is compared with what the cluster holds: equal means there is nothing to
write, so a second ``profile apply`` writes nothing (and shows an empty diff) instead of
bumping resourceVersions.  A field another manager owns is a conflict, reported field by field
with its owner — force would silently take it over, which is for a human to decide.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from drakit.live.client import (
    FIELD_MANAGER,
    ClusterClient,
    ClusterError,
    Conflict,
    ErrorCode,
    Obj,
    resource_of,
)

# Fields the server writes on every object: not part of what drakit applies or compares.
_SERVER_META = ("resourceVersion", "generation", "managedFields", "uid", "creationTimestamp")


class Action(StrEnum):
    """What apply did (or, with a dry run, would do) to one object; stored values."""

    CREATED = "created"
    CONFIGURED = "configured"
    UNCHANGED = "unchanged"
    CONFLICT = "conflict"


@dataclass(frozen=True)
class Applied:
    """One object's outcome: the action, the diff against the cluster, the conflicts if any."""

    kind: str
    name: str
    namespace: str
    action: Action
    diff: str = ""
    conflicts: tuple[Conflict, ...] = ()

    @property
    def ref(self) -> str:
        """kubectl's ``kind.group/name``: ``deviceclass.resource.k8s.io/gpu``."""
        group = resource_of(self.kind).api_version.rpartition("/")[0]
        return f"{self.kind.lower()}{'.' + group if group else ''}/{self.name}"

    def line(self, dry_run: bool) -> str:
        """kubectl's ``deviceclass/gpu configured`` (``(server dry run)`` appended when so)."""
        if self.action is Action.CONFLICT:
            owned = "; ".join(f"field {c.field} is owned by manager {c.manager!r}" for c in self.conflicts)
            return f"{self.ref}: conflict: {owned}"
        return f"{self.ref} {self.action.value}" + (" (server dry run)" if dry_run else "")

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "namespace": self.namespace or None, "action": self.action.value,
                "diff": self.diff, "conflicts": [{"field": c.field, "manager": c.manager} for c in self.conflicts]}


def apply_objects(client: ClusterClient, objects: Iterable[Obj], *, dry_run: bool = False,
                  field_manager: str = FIELD_MANAGER) -> list[Applied]:
    """Apply each object (dry run first); conflicts are answers, other server errors raise."""
    out = []
    for obj in objects:
        kind = str(obj.get("kind") or "")
        meta = obj.get("metadata") or {}
        name, ns = str(meta.get("name") or ""), str(meta.get("namespace") or "") if resource_of(kind).namespaced else ""
        current = client.get(kind, name, ns or None)
        try:
            planned = client.apply(obj, field_manager=field_manager, dry_run=True)
        except ClusterError as e:
            if e.code is not ErrorCode.CONFLICT or not e.conflicts:
                raise
            out.append(Applied(kind, name, ns, Action.CONFLICT, conflicts=e.conflicts))
            continue
        diff = _diff(current, planned, f"{kind} {ns + '/' if ns else ''}{name}")
        if current is not None and not diff:
            out.append(Applied(kind, name, ns, Action.UNCHANGED))
            continue
        if not dry_run:
            client.apply(obj, field_manager=field_manager)
        out.append(Applied(kind, name, ns, Action.CREATED if current is None else Action.CONFIGURED, diff))
    return out


def _comparable(obj: Obj | None) -> Obj:
    if obj is None:
        return {}
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _SERVER_META}
    return {**obj, "metadata": meta}


def _diff(current: Obj | None, planned: Obj, label: str) -> str:
    """A unified diff of the YAML the cluster holds and the YAML it would hold ('' when equal)."""
    import yaml

    def lines(o: Obj | None) -> Sequence[str]:
        return yaml.safe_dump(_comparable(o), sort_keys=True).splitlines(keepends=True) if o is not None else []

    a, b = lines(current), lines(planned)
    if a == b:
        return ""
    return "".join(difflib.unified_diff(a, b, f"live/{label}", f"applied/{label}"))
