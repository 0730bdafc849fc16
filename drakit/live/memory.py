"""The in-memory twin of :class:`drakit.live.client.ClusterClient`, for unit tests and demos.

It keeps what the code above the seam relies on: resourceVersions that grow, pages with
``continue`` tokens, a watch log that is compacted (so a too-old version gets a 410 ERROR
event, as the real server sends it), bookmarks, server-side apply with per-manager field
ownership and conflicts, ``dryRun`` and a status subresource.  Its SSA is deliberately
simpler than structured-merge-diff: a field is a leaf path, lists are atomic, and a field
leaves the object only when its last manager stops applying it.  Failures are injected per
``(verb, kind)`` so that error paths are tested without a broken server.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from drakit.live.client import (
    FIELD_MANAGER,
    RESOURCE_V1,
    RESOURCES,
    ClusterError,
    Conflict,
    ErrorCode,
    Obj,
    Page,
    ServerInfo,
    WatchEvent,
    resource_of,
    with_kind,
)

Key = tuple[str, str, str]  # kind, namespace, name
Leaf = tuple[str, ...]
_IDENTITY: frozenset[Leaf] = frozenset({("apiVersion",), ("kind",), ("metadata", "name"), ("metadata", "namespace")})


@dataclass
class MemoryCluster:
    """A cluster in a dict.  ``history`` is how many watch events are kept before compaction."""

    git_version: str = "v1.37.2"
    resource_v1: bool = True
    history: int = 1000
    unserved: frozenset[str] = frozenset()
    """API group/versions the twin does not serve (a cluster without Kueue's CRDs): 404 on every verb."""
    failures: dict[tuple[str, str], ClusterError] = field(default_factory=dict)
    objects: dict[Key, Obj] = field(default_factory=dict)
    owners: dict[Key, dict[str, frozenset[Leaf]]] = field(default_factory=dict)
    log: list[tuple[int, Key, WatchEvent]] = field(default_factory=list)
    revision: int = 1
    compacted: int = 0
    """The newest revision no longer in the watch log: watching from before it is 410 Gone."""
    writes: int = 0
    """How many writes changed something (an unchanged apply does not count)."""

    # -- test helpers ----------------------------------------------------------------------

    @classmethod
    def of(cls, objects: Iterable[Mapping[str, Any]], **kwargs: Any) -> MemoryCluster:
        cluster = cls(**kwargs)
        for o in objects:
            cluster.create(dict(o))
        return cluster

    def delete(self, kind: str, name: str, namespace: str | None = None) -> None:
        """The protocol's delete (gone already is fine); the twin has no garbage collector."""
        self._fail("delete", kind)
        key = self._key(kind, name, namespace)
        obj = self.objects.pop(key, None)
        if obj is None:
            return
        self.owners.pop(key, None)
        self._record("DELETED", key, obj)

    def close(self) -> None:
        """Nothing to release (the real client closes its connection pool)."""

    def compact(self) -> None:
        """Forget every watch event so far (etcd compaction): older versions become 410 Gone."""
        self.log.clear()
        self.compacted = self.revision

    # -- the protocol --------------------------------------------------------------------

    def server_info(self) -> ServerInfo:
        self._fail("discover", "")
        kinds = frozenset(k for k, r in RESOURCES.items() if (self.resource_v1 or r.api_version != RESOURCE_V1)
                          and r.api_version not in self.unserved)
        return ServerInfo(self.git_version, self.resource_v1, kinds)

    def list(
        self,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 500,
        continue_token: str = "",
    ) -> Page:
        self._fail("list", kind)
        resource = self._served(kind)
        start = 0
        if continue_token:
            token = json.loads(continue_token)
            start = int(token["start"])
        wanted = _selector(label_selector)
        fields = _selector(field_selector)
        matching = [
            o for (k, ns, _), o in sorted(self.objects.items())
            if k == kind and (namespace is None or not resource.namespaced or ns == namespace)
            and _matches(wanted, (o.get("metadata") or {}).get("labels") or {})
            and _matches(fields, _field_values(o))
        ]
        page = matching[start : start + limit] if limit else matching[start:]
        more = limit and start + limit < len(matching)
        token = json.dumps({"start": start + limit}) if more else ""
        return Page(tuple(copy.deepcopy(o) for o in page), str(self.revision), token)

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        self._fail("get", kind)
        self._served(kind)
        obj = self.objects.get(self._key(kind, name, namespace))
        return copy.deepcopy(obj) if obj is not None else None

    def watch(
        self,
        kind: str,
        *,
        namespace: str | None = None,
        resource_version: str = "",
        allow_bookmarks: bool = True,
        timeout_seconds: int = 300,
        label_selector: str = "",
    ) -> Iterator[WatchEvent]:
        self._fail("watch", kind)
        self._served(kind)
        since = int(resource_version or 0)
        if since and since < self.compacted:
            status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 410, "reason": "Expired",
                      "message": f"too old resource version: {since} ({self.compacted})"}
            yield WatchEvent("ERROR", status)
            return
        wanted = _selector(label_selector)
        for rv, (k, ns, _), event in list(self.log):
            if rv <= since or k != kind or (namespace is not None and ns != namespace):
                continue
            if _matches(wanted, (event.object.get("metadata") or {}).get("labels") or {}):
                yield WatchEvent(event.type, copy.deepcopy(event.object))
        if allow_bookmarks:
            yield WatchEvent("BOOKMARK", {"kind": kind, "metadata": {"resourceVersion": str(self.revision)}})

    def create(self, obj: Obj, *, dry_run: bool = False) -> Obj:
        kind = str(obj.get("kind") or "")
        self._fail("create", kind)
        resource = self._served(kind)
        meta = obj.get("metadata") or {}
        key = self._key(kind, str(meta.get("name") or ""), meta.get("namespace"))
        if key in self.objects:
            raise ClusterError(ErrorCode.CONFLICT, f'{resource.plural} "{key[2]}" already exists', status=409)
        stored = self._stamp(with_kind(copy.deepcopy(obj), resource), key)
        if not dry_run:
            self._store(key, stored, "ADDED")
        return copy.deepcopy(stored)

    def apply(self, obj: Obj, *, field_manager: str = FIELD_MANAGER, dry_run: bool = False, force: bool = False) -> Obj:
        kind = str(obj.get("kind") or "")
        self._fail("patch", kind)
        resource = self._served(kind)
        meta = obj.get("metadata") or {}
        key = self._key(kind, str(meta.get("name") or ""), meta.get("namespace"))
        current = self.objects.get(key)
        applied = {p: v for p, v in _leaves(obj) if p not in _IDENTITY}
        owners = dict(self.owners.get(key, {}))
        conflicts = []
        if current is not None:
            have = dict(_leaves(current))
            for manager, paths in owners.items():
                if manager == field_manager:
                    continue
                for p in sorted(paths & applied.keys()):
                    if have.get(p) != applied[p]:
                        conflicts.append(Conflict("." + ".".join(p), manager, f'conflict with "{manager}": .{".".join(p)}'))
        if conflicts and not force:
            fields = ", ".join(f"{c.field} (owned by {c.manager!r})" for c in conflicts)
            raise ClusterError(ErrorCode.CONFLICT, f"Apply failed with {len(conflicts)} conflict(s): {fields}",
                               status=409, conflicts=tuple(conflicts))
        if force:
            owners = {m: ps - applied.keys() for m, ps in owners.items()}
        mine_before = owners.get(field_manager, frozenset())
        others = frozenset().union(*(ps for m, ps in owners.items() if m != field_manager))
        result = copy.deepcopy(current) if current is not None else with_kind({}, resource)
        for p in mine_before - applied.keys() - others:
            _remove(result, p)
        for p, v in applied.items():
            _put(result, p, copy.deepcopy(v))
        result.setdefault("metadata", {}).update({"name": key[2], **({"namespace": key[1]} if key[1] else {})})
        owners[field_manager] = frozenset(applied)
        if current is not None and _content(result) == _content(current):
            if not dry_run:
                self.owners[key] = owners
            return copy.deepcopy(current)
        stored = self._stamp(result, key)
        if not dry_run:
            self.owners[key] = owners
            self._store(key, stored, "MODIFIED" if current is not None else "ADDED")
        return copy.deepcopy(stored)

    def patch_status(self, kind: str, name: str, namespace: str | None, patch: Obj) -> Obj:
        self._fail("patch", kind)
        self._served(kind)
        key = self._key(kind, name, namespace)
        if key not in self.objects:
            raise ClusterError(ErrorCode.NOT_FOUND, f'{kind} "{name}" not found', status=404)
        obj = copy.deepcopy(self.objects[key])
        obj["status"] = _merge(obj.get("status") or {}, patch.get("status") or {})
        stored = self._stamp(obj, key)
        self._store(key, stored, "MODIFIED")
        return copy.deepcopy(stored)

    # -- internals -------------------------------------------------------------------------

    def _fail(self, verb: str, kind: str) -> None:
        error = self.failures.get((verb, kind)) or self.failures.get((verb, "*"))
        if error is not None:
            raise error

    def _served(self, kind: str) -> Any:
        resource = resource_of(kind)
        if (resource.api_version == RESOURCE_V1 and not self.resource_v1) or resource.api_version in self.unserved:
            raise ClusterError(ErrorCode.NOT_FOUND, f"the server could not find the requested resource ({resource.plural})",
                               status=404)
        return resource

    def _key(self, kind: str, name: str, namespace: str | None) -> Key:
        return (kind, (namespace or "default") if resource_of(kind).namespaced else "", name)

    def _stamp(self, obj: Obj, key: Key) -> Obj:
        meta = obj.setdefault("metadata", {})
        meta["name"] = key[2]
        if key[1]:
            meta["namespace"] = key[1]
        meta.setdefault("uid", f"uid-{key[0].lower()}-{key[1]}-{key[2]}")
        meta["resourceVersion"] = str(self.revision + 1)
        return obj

    def _store(self, key: Key, obj: Obj, event: str) -> None:
        self.objects[key] = obj
        self.writes += 1
        self._record(event, key, obj)

    def _record(self, event: str, key: Key, obj: Obj) -> None:
        self.revision += 1
        if event == "DELETED":
            obj = {**obj, "metadata": {**obj.get("metadata", {}), "resourceVersion": str(self.revision)}}
        self.log.append((self.revision, key, WatchEvent(event, copy.deepcopy(obj))))
        drop = max(0, len(self.log) - self.history)
        if drop:
            self.compacted = self.log[drop - 1][0]
            del self.log[:drop]


def _content(obj: Obj) -> Obj:
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in ("resourceVersion", "managedFields")}
    return {**obj, "metadata": meta}


def _leaves(obj: Any, prefix: Leaf = ()) -> Iterator[tuple[Leaf, Any]]:
    if isinstance(obj, dict) and obj:
        for k, v in obj.items():
            if prefix == ("metadata",) and k in ("resourceVersion", "uid", "managedFields", "creationTimestamp"):
                continue
            yield from _leaves(v, (*prefix, str(k)))
    elif prefix:
        yield prefix, obj


def _put(obj: Obj, path: Leaf, value: Any) -> None:
    for k in path[:-1]:
        obj = obj.setdefault(k, {})
    if value == {} and isinstance(obj.get(path[-1]), dict):
        return  # an empty map owns no keys: it leaves other managers' keys in place
    obj[path[-1]] = value


def _remove(obj: Obj, path: Leaf) -> None:
    parents = [obj]
    for k in path[:-1]:
        obj = obj.get(k) or {}
        parents.append(obj)
    obj.pop(path[-1], None)
    for parent, k in zip(reversed(parents[:-1]), reversed(path[:-1]), strict=True):
        if parent.get(k) == {}:
            del parent[k]


def _merge(base: Obj, patch: Obj) -> Obj:
    """RFC 7386 JSON merge patch."""
    out = dict(base)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def _selector(text: str) -> Any:
    if not text:
        return ()
    from drakit.cli.options import parse_label_selector

    return parse_label_selector(text)


def _matches(requirements: Any, values: Mapping[str, Any]) -> bool:
    if not requirements:
        return True
    from drakit.cli.options import labels_match

    return labels_match(requirements, values)


def _field_values(obj: Obj) -> dict[str, Any]:
    """The field-selector keys the twin understands (the ones drakit sends)."""
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    inv = obj.get("involvedObject") or {}
    out = {"metadata.name": meta.get("name"), "metadata.namespace": meta.get("namespace"),
           "spec.nodeName": spec.get("nodeName"), "spec.driver": spec.get("driver"),
           "status.phase": (obj.get("status") or {}).get("phase"),
           "involvedObject.name": inv.get("name"), "involvedObject.kind": inv.get("kind"),
           "involvedObject.uid": inv.get("uid")}
    return {k: v for k, v in out.items() if v is not None}
