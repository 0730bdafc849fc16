"""A watch that survives its own history being compacted: list, watch, re-list on 410 Gone.

client-go's Reflector in miniature, written against :class:`ClusterClient` so that the
behaviour does not depend on the client library.  The reflector keeps the objects it has
seen and the last resourceVersion (advanced by every event and by BOOKMARKs, which exist so
that a quiet watch does not fall behind the server's window).  When a watch is refused as too
old — an ERROR event with status 410, or HTTP 410 — it lists again and reports the difference
to what it had as ADDED / MODIFIED / DELETED events: an object created or deleted while the
watch was gone is reported, never missed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from drakit.live.client import ClusterClient, ClusterError, ErrorCode, Obj, WatchEvent
from drakit.live.snapshot import list_all

Key = tuple[str, str]  # namespace, name


def _key(obj: Obj) -> Key:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _version(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


@dataclass
class Reflector:
    """The objects of one kind (in one namespace or all) kept current by list + watch."""

    client: ClusterClient
    kind: str
    namespace: str | None = None
    label_selector: str = ""
    timeout_seconds: int = 60
    objects: dict[Key, Obj] = field(default_factory=dict)
    resource_version: str = ""
    relists: int = 0
    bookmarks: int = 0

    def relist(self) -> list[WatchEvent]:
        """List everything and return what changed against the objects kept so far."""
        items, version = list_all(self.client, self.kind, namespace=self.namespace, label_selector=self.label_selector)
        fresh = {_key(o): o for o in items}
        changes: list[WatchEvent] = []
        for key, obj in fresh.items():
            old = self.objects.get(key)
            if old is None:
                changes.append(WatchEvent("ADDED", obj))
            elif _version(old) != _version(obj):
                changes.append(WatchEvent("MODIFIED", obj))
        changes += [WatchEvent("DELETED", old) for key, old in self.objects.items() if key not in fresh]
        self.objects = fresh
        self.resource_version = version
        self.relists += 1
        return changes

    def step(self) -> list[WatchEvent]:
        """One watch stream from the kept resourceVersion to its end (timeout, or the server
        closing it), with a re-list first when there is no version yet or it is gone."""
        return list(self.stream())

    def stream(self) -> Iterator[WatchEvent]:
        """:meth:`step`'s events one at a time, as they arrive: ``objects`` is already current
        when each is yielded, so a caller can react before the stream ends."""
        if not self.resource_version:
            yield from self.relist()
            return
        try:
            for event in self.client.watch(self.kind, namespace=self.namespace, resource_version=self.resource_version,
                                           allow_bookmarks=True, timeout_seconds=self.timeout_seconds,
                                           label_selector=self.label_selector):
                if event.type == "ERROR":
                    if int(event.object.get("code") or 0) == 410:
                        yield from self.relist()
                        return
                    raise ClusterError(ErrorCode.SERVER, f"watch {self.kind}: {event.object.get('message')}")
                self.resource_version = event.resource_version or self.resource_version
                if event.type == "BOOKMARK":
                    self.bookmarks += 1
                    continue
                if event.type == "DELETED":
                    self.objects.pop(_key(event.object), None)
                else:
                    self.objects[_key(event.object)] = event.object
                yield event
        except ClusterError as e:
            if e.code is not ErrorCode.GONE:
                raise
            yield from self.relist()

    def run(self, until: Callable[[Reflector], bool], *, max_streams: int = 100) -> Iterator[WatchEvent]:
        """Events until ``until(self)`` holds after a stream (or ``max_streams`` streams)."""
        for _ in range(max_streams):
            yield from self.step()
            if until(self):
                return
