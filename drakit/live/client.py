"""The seam between drakit and a Kubernetes API server: one small Protocol and its error type.

Everything above this seam speaks wire dicts (the v1 JSON the API server sends), so a verb
answers the same on a live cluster as on the manifests ``kubectl get -o yaml`` printed.  Two
implementations exist: :mod:`drakit.live.kube` (a real server, the only importer of the client
library) and :mod:`drakit.live.memory` (the in-memory twin the unit tests run on).  Watch
resumption, snapshots and ``profile apply`` are written once, against the Protocol, in
:mod:`drakit.live.watch`, :mod:`drakit.live.snapshot` and :mod:`drakit.live.apply`.

Errors: every failure to get an answer from the server is a :class:`ClusterError` with a
stable ``code``, the HTTP status where there was one, one line of message and a hint::

    DrakitError
    └── ClusterError      code: unreachable | tls | timeout | unauthorized | forbidden |
                          not-found | conflict | gone | unsupported | invalid | server
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from drakit.errors import DrakitError

Obj = dict[str, Any]

RESOURCE_V1 = "resource.k8s.io/v1"
KUEUE_V1BETA2 = "kueue.x-k8s.io/v1beta2"  # Kueue's CRDs: served only where Kueue is installed
FIELD_MANAGER = "drakit"


@dataclass(frozen=True)
class Resource:
    """Where a kind lives in the API: its group/version, plural and scope."""

    kind: str
    api_version: str
    plural: str
    namespaced: bool

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        """The REST path: ``/api/v1/namespaces/ns/pods/name``, ``/apis/resource.k8s.io/v1/resourceslices``."""
        base = f"/api/{self.api_version}" if "/" not in self.api_version else f"/apis/{self.api_version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        return f"{base}/{name}" if name else base


RESOURCES: Mapping[str, Resource] = {
    r.kind: r
    for r in (
        Resource("Namespace", "v1", "namespaces", False),
        Resource("Node", "v1", "nodes", False),
        Resource("Pod", "v1", "pods", True),
        Resource("Event", "v1", "events", True),
        Resource("ConfigMap", "v1", "configmaps", True),
        Resource("Job", "batch/v1", "jobs", True),
        Resource("DeviceClass", RESOURCE_V1, "deviceclasses", False),
        Resource("ResourceSlice", RESOURCE_V1, "resourceslices", False),
        Resource("DeviceTaintRule", RESOURCE_V1, "devicetaintrules", False),
        Resource("ResourceClaim", RESOURCE_V1, "resourceclaims", True),
        Resource("ResourceClaimTemplate", RESOURCE_V1, "resourceclaimtemplates", True),
        Resource("Workload", KUEUE_V1BETA2, "workloads", True),
        Resource("LocalQueue", KUEUE_V1BETA2, "localqueues", True),
        Resource("ClusterQueue", KUEUE_V1BETA2, "clusterqueues", False),
    )
}


def resource_of(kind: str) -> Resource:
    try:
        return RESOURCES[kind]
    except KeyError:
        raise ClusterError(ErrorCode.INVALID, f"drakit does not read or write {kind} objects") from None


class ErrorCode(StrEnum):
    """Why the server gave no answer; stored values, never renamed."""

    UNREACHABLE = "unreachable"
    TLS = "tls"
    TIMEOUT = "timeout"
    UNAUTHORIZED = "unauthorized"
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not-found"
    CONFLICT = "conflict"
    GONE = "gone"
    UNSUPPORTED = "unsupported"
    INVALID = "invalid"
    SERVER = "server"


# Documented in docs/live.md; 1-4 are the offline verbs' codes (drakit.cli.console).
EXIT_CODES: Mapping[ErrorCode, int] = {
    ErrorCode.UNREACHABLE: 5,
    ErrorCode.TLS: 5,
    ErrorCode.TIMEOUT: 5,
    ErrorCode.UNAUTHORIZED: 6,
    ErrorCode.FORBIDDEN: 6,
    ErrorCode.UNSUPPORTED: 7,
    ErrorCode.CONFLICT: 8,
    ErrorCode.NOT_FOUND: 2,
    ErrorCode.GONE: 5,
    ErrorCode.INVALID: 1,
    ErrorCode.SERVER: 5,
}


@dataclass(frozen=True)
class Conflict:
    """One field another manager owns (an SSA conflict cause)."""

    field: str
    manager: str
    message: str


class ClusterError(DrakitError):
    """The API server could not be asked, or refused: one line, a stable code, the HTTP status."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        status: int = 0,
        hint: str = "",
        conflicts: tuple[Conflict, ...] = (),
    ) -> None:
        super().__init__(message + (f"; {hint}" if hint else ""))
        self.code = code
        self.status = status
        self.hint = hint
        self.conflicts = conflicts

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.code]


@dataclass(frozen=True)
class Page:
    """One page of a list: the items (each with ``apiVersion`` and ``kind`` set), the list's
    resourceVersion and the token for the next page (empty on the last)."""

    items: tuple[Obj, ...]
    resource_version: str
    continue_token: str = ""


@dataclass(frozen=True)
class WatchEvent:
    """``ADDED`` | ``MODIFIED`` | ``DELETED`` | ``BOOKMARK`` | ``ERROR`` and the object (a Status for ERROR)."""

    type: str
    object: Obj = field(default_factory=dict)

    @property
    def resource_version(self) -> str:
        return str((self.object.get("metadata") or {}).get("resourceVersion") or "")


@dataclass(frozen=True)
class ServerInfo:
    """What discovery says: the server's version and whether it serves ``resource.k8s.io/v1``."""

    git_version: str
    resource_v1: bool
    served_kinds: frozenset[str] = frozenset()


class ClusterClient(Protocol):
    """The eight things drakit asks of an API server.

    ``namespace=None`` on a namespaced kind means every namespace.  ``list`` returns one page;
    :func:`drakit.live.snapshot.list_all` follows ``continue``.  ``watch`` yields events from
    ``resource_version`` until the server ends the stream; a too-old version is a
    ``ClusterError`` with code ``gone`` (raised, or an ERROR event of status 410), which
    :mod:`drakit.live.watch` answers with a re-list.
    """

    def server_info(self) -> ServerInfo: ...

    def list(
        self,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 500,
        continue_token: str = "",
    ) -> Page: ...

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None: ...

    def watch(
        self,
        kind: str,
        *,
        namespace: str | None = None,
        resource_version: str = "",
        allow_bookmarks: bool = True,
        timeout_seconds: int = 300,
        label_selector: str = "",
    ) -> Iterator[WatchEvent]: ...

    def apply(self, obj: Obj, *, field_manager: str = FIELD_MANAGER, dry_run: bool = False, force: bool = False) -> Obj:
        """Server-side apply ``obj`` as ``field_manager``; a conflict is a ``ClusterError`` with ``conflicts``."""
        ...

    def create(self, obj: Obj, *, dry_run: bool = False) -> Obj: ...

    def patch_status(self, kind: str, name: str, namespace: str | None, patch: Obj) -> Obj:
        """A JSON merge patch of the status subresource."""
        ...

    def delete(self, kind: str, name: str, namespace: str | None = None) -> None:
        """Delete one object with its dependents (background propagation); gone already is fine."""
        ...


def with_kind(obj: Obj, resource: Resource) -> Obj:
    """A list item as a standalone object: the API server leaves ``apiVersion``/``kind`` off items."""
    if obj.get("kind") != resource.kind or obj.get("apiVersion") != resource.api_version:
        obj = {"apiVersion": resource.api_version, "kind": resource.kind, **obj}
    return obj


def parse_conflicts(status: Mapping[str, Any]) -> tuple[Conflict, ...]:
    """The ``FieldManagerConflict`` causes of a 409 Status: which field, which manager.

    The server words each cause ``conflict with "MANAGER" using VERSION: .spec.field`` (or
    ``conflict with "MANAGER": .spec.field`` when it has no version).
    """
    out = []
    for cause in (status.get("details") or {}).get("causes") or []:
        if cause.get("reason") != "FieldManagerConflict":
            continue
        message = str(cause.get("message") or "")
        manager = message.split('"')[1] if message.count('"') >= 2 else ""
        out.append(Conflict(str(cause.get("field") or ""), manager, message))
    return tuple(out)
