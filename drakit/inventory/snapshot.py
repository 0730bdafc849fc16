"""``ClusterSnapshot``: the cluster as drakit sees it, one frozen value every verb and core entry takes.

Whatever the source — manifests on disk, the simulator's state at some instant, later a live
cluster — it becomes one snapshot: wire dicts per kind, namespaces defaulted once (the way
``kubectl apply`` places a namespaced object without one into ``default``), and where the
objects came from.  Cores read it through lookups and lazy indexes instead of rebuilding their
own dict shapes, so "which pods use this claim" has one answer.

Object identity has one type and one spelling, :class:`ObjectKey`, printed as klog's
``KObj`` prints it (``namespace/name``, or ``name`` for a cluster-scoped object): the
allocator's messages must read like kube-scheduler's, and every other key agrees with them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from drakit.model.kinds import DEFAULT_NAMESPACE, NAMESPACED

if TYPE_CHECKING:
    from drakit.model.load import Bundle

Obj = Mapping[str, Any]

# Snapshot fields per kind, in the order a bundle written from a snapshot lists them.
KIND_FIELDS: tuple[tuple[str, str], ...] = (
    ("Node", "nodes"),
    ("DeviceClass", "classes"),
    ("ResourceSlice", "slices"),
    ("DeviceTaintRule", "taint_rules"),
    ("ResourceClaimTemplate", "templates"),
    ("ResourceClaim", "claims"),
    ("Pod", "pods"),
    ("Event", "events"),
)
_FIELD_OF = dict(KIND_FIELDS)

# client-go's event correlator prefixes messages it folded together with this text.
_AGGREGATED = "(combined from similar events): "


def name_of(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def namespace_of(obj: Obj, default: str = DEFAULT_NAMESPACE) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or default)


class ObjectKey(NamedTuple):
    """``(kind, namespace, name)``; ``str()`` is klog's ``KObj`` form, ``namespace/name`` or ``name``.

    ``kind`` takes part in equality (a Pod and a ResourceClaim may share a name) but not in the
    printed form, which is what upstream's messages show.
    """

    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @classmethod
    def of(cls, obj: Obj, kind: str | None = None) -> ObjectKey:
        """The key of a wire dict as given: no namespace is invented (the snapshot defaults them once)."""
        meta = obj.get("metadata") or {}
        return cls(str(kind if kind is not None else obj.get("kind") or ""), str(meta.get("namespace") or ""),
                   str(meta.get("name") or ""))


def key_of(obj: Obj) -> str:
    """``namespace/name`` of a namespaced object (``default`` when unset, as kubectl applies it)."""
    return str(ObjectKey(str(obj.get("kind") or ""), namespace_of(obj), name_of(obj)))


@dataclass(frozen=True)
class Provenance:
    """Where a snapshot came from and when: a description, the read time, a resourceVersion if any.

    ``read_at`` is seconds: wall-clock Unix time for files, simulated time for the simulator.
    """

    source: str = ""
    read_at: float | None = None
    resource_version: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "readAt": self.read_at, "resourceVersion": self.resource_version}


def with_namespace(obj: Obj) -> Obj:
    """``obj`` with the namespace the API server would store: ``default`` for a namespaced kind
    without one (as ``kubectl apply`` places it), none for a cluster-scoped kind.

    The object itself is left untouched: a changed copy shares everything but ``metadata``.
    """
    meta = obj.get("metadata") or {}
    if obj.get("kind") in NAMESPACED:
        if meta.get("namespace"):
            return obj
        return {**obj, "metadata": {**meta, "namespace": DEFAULT_NAMESPACE}}
    if "namespace" not in meta:
        return obj
    return {**obj, "metadata": {k: v for k, v in meta.items() if k != "namespace"}}


@dataclass(frozen=True)
class ClusterSnapshot:
    """Every object a verb may look at, read-only, with namespaces defaulted.

    ``expected_release`` (per claim key, the simulated time its devices are expected back) and
    ``now`` (the simulator clock, to print "in 12 min" rather than a timestamp) are set when the
    snapshot is the simulator's.  Room for queue objects later: add a kind to ``KIND_FIELDS``.
    """

    nodes: tuple[Obj, ...] = ()
    slices: tuple[Obj, ...] = ()
    classes: tuple[Obj, ...] = ()
    claims: tuple[Obj, ...] = ()
    templates: tuple[Obj, ...] = ()
    pods: tuple[Obj, ...] = ()
    events: tuple[Obj, ...] = ()
    taint_rules: tuple[Obj, ...] = ()
    expected_release: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    now: float | None = None
    provenance: Provenance = field(default_factory=Provenance)
    origins: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """Pod key (``namespace/name``) -> the workload whose pod template it is (``Job ml/train``)."""

    # -- construction ------------------------------------------------------------------------

    @classmethod
    def from_objects(
        cls,
        objects: Iterable[Obj],
        *,
        provenance: Provenance | None = None,
        expected_release: Mapping[str, float] | None = None,
        now: float | None = None,
        as_given: bool = False,
        origins: Mapping[str, str] | None = None,
    ) -> ClusterSnapshot:
        """Wire dicts sorted by ``kind``, namespaces defaulted (kinds drakit does not model are left out).

        ``as_given`` keeps the namespaces as written: upstream's allocator test tables use claims
        without one, and its messages then name them without a namespace.
        """
        by_field: dict[str, list[Obj]] = {}
        for o in objects:
            name = _FIELD_OF.get(str(o.get("kind") or ""))
            if name is not None:
                by_field.setdefault(name, []).append(o if as_given else with_namespace(o))
        return cls(
            **{name: tuple(objs) for name, objs in by_field.items()},
            expected_release=MappingProxyType(dict(expected_release or {})),
            now=now,
            provenance=provenance or Provenance(),
            origins=MappingProxyType(dict(origins or {})),
        )

    @classmethod
    def from_bundle(cls, bundle: Bundle, *, provenance: Provenance | None = None, as_given: bool = False) -> ClusterSnapshot:
        """A loaded :class:`drakit.model.load.Bundle`, in input order.

        The strict loader accepted each document exactly as written, so its parsed dict *is* the
        wire form: it is used as is (dumping 40,000 typed devices again costs seconds).  Only an
        object the loader changed (another apiVersion converted to v1) is dumped from its type.
        """
        from drakit.model import to_wire

        objects: list[Obj] = []
        for entry in bundle.entries:
            data = entry.document.data
            if data.get("apiVersion") == getattr(entry.obj, "api_version", None) and data.get("kind") == entry.kind:
                objects.append(data)
            else:
                wire = to_wire(entry.obj)
                wire.setdefault("kind", entry.kind)
                objects.append(wire)
        # A workload's pod template counts as the pods its controller would make (owner
        # referenced), so explain and trial answer for a Job or Deployment before any pod
        # exists.  A pod given with the same name is the real one and wins.
        given = {key_of(with_namespace(o)) for o in objects if o.get("kind") == "Pod"}
        origins: dict[str, str] = {}
        for entry in bundle.workload_pods:
            pod = entry.wire if as_given else with_namespace(entry.wire)
            key = key_of(with_namespace(pod))
            if key in given or key in origins:
                continue
            kind, _, workload = entry.owner.partition("/")
            origins[key] = f"{kind} {key.split('/', 1)[0]}/{workload}"
            objects.append(pod)
        return cls.from_objects(objects, provenance=provenance, as_given=as_given, origins=origins)

    # -- reading ------------------------------------------------------------------------------

    def objects(self) -> Iterator[Obj]:
        """Every object, kind by kind in ``KIND_FIELDS`` order (the order a written bundle uses)."""
        for _, name in KIND_FIELDS:
            yield from getattr(self, name)

    def of_kind(self, kind: str) -> tuple[Obj, ...]:
        name = _FIELD_OF.get(kind)
        return getattr(self, name) if name else ()

    def to_list(self) -> dict[str, Any]:
        """The snapshot as a ``v1`` List, which every offline command reads back."""
        return {"apiVersion": "v1", "kind": "List", "items": [dict(o) for o in self.objects()]}

    # -- lazy indexes (a frozen dataclass keeps cached_property's values in __dict__) ----------

    @cached_property
    def _by_key(self) -> Mapping[ObjectKey, Obj]:
        index: dict[ObjectKey, Obj] = {}
        for o in self.objects():
            index.setdefault(ObjectKey.of(o), o)  # duplicates: the first one, as input order gives it
        return index

    @cached_property
    def slices_by_node(self) -> Mapping[str, tuple[Obj, ...]]:
        """ResourceSlices by ``spec.nodeName`` (slices for all nodes or a node selector are not here)."""
        return _group(self.slices, lambda s: str((s.get("spec") or {}).get("nodeName") or ""))

    @cached_property
    def slices_by_pool(self) -> Mapping[tuple[str, str], tuple[Obj, ...]]:
        """ResourceSlices by ``(driver, pool name)``."""
        def pool(s: Obj) -> tuple[str, str]:
            spec = s.get("spec") or {}
            return str(spec.get("driver") or ""), str((spec.get("pool") or {}).get("name") or "")

        return _group(self.slices, pool)

    @cached_property
    def claims_by_namespace(self) -> Mapping[str, tuple[Obj, ...]]:
        return _group(self.claims, namespace_of)

    @cached_property
    def pods_by_claim(self) -> Mapping[ObjectKey, tuple[Obj, ...]]:
        """Pods per claim they use: by ``resourceClaimName``, or by the generated name in status."""
        index: dict[ObjectKey, list[Obj]] = {}
        for pod in self.pods:
            ns = namespace_of(pod)
            generated = {
                s.get("name"): s.get("resourceClaimName")
                for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []
            }
            for rc in (pod.get("spec") or {}).get("resourceClaims") or []:
                claim = rc.get("resourceClaimName") or generated.get(rc.get("name"))
                if claim:
                    index.setdefault(ObjectKey("ResourceClaim", ns, str(claim)), []).append(pod)
        return MappingProxyType({k: tuple(v) for k, v in index.items()})

    @cached_property
    def events_by_object(self) -> Mapping[ObjectKey, tuple[Obj, ...]]:
        """Events per ``involvedObject``, in input order."""
        def involved(e: Obj) -> ObjectKey:
            inv = e.get("involvedObject") or {}
            ns = str(inv.get("namespace") or namespace_of(e))
            return ObjectKey(str(inv.get("kind") or ""), ns, str(inv.get("name") or ""))

        return _group(self.events, involved)

    # -- lookups ---------------------------------------------------------------------------

    def find(self, kind: str, name: str, namespace: str = "") -> Obj | None:
        namespace = (namespace or DEFAULT_NAMESPACE) if kind in NAMESPACED else ""
        return self._by_key.get(ObjectKey(kind, namespace, name))

    def find_pod(self, name: str, namespace: str) -> Obj | None:
        return self.find("Pod", name, namespace)

    def find_claim(self, name: str, namespace: str) -> Obj | None:
        return self.find("ResourceClaim", name, namespace)

    def find_template(self, name: str, namespace: str) -> Obj | None:
        return self.find("ResourceClaimTemplate", name, namespace)

    def workload_pod(self, kind: str, name: str, namespace: str) -> Obj | None:
        """The first pod made from the template of workload ``kind`` (``Job``) ``namespace/name``."""
        origin = f"{kind} {namespace}/{name}"
        for key, of in self.origins.items():
            if of == origin:
                pod_ns, _, pod_name = key.partition("/")
                return self.find_pod(pod_name, pod_ns)
        return None

    def find_class(self, name: str) -> Obj | None:
        return self.find("DeviceClass", name)

    def events_for(self, kind: str, name: str, namespace: str) -> list[Obj]:
        """The object's events, with the recorder's aggregation prefix taken off their messages."""
        out = []
        for e in self.events_by_object.get(ObjectKey(kind, namespace, name), ()):
            message = str(e.get("message") or "")
            if message.startswith(_AGGREGATED):
                e = {**e, "message": message[len(_AGGREGATED) :]}
            out.append(e)
        return out


def _group(objs: Iterable[Obj], key: Any) -> Mapping[Any, tuple[Obj, ...]]:
    index: dict[Any, list[Obj]] = {}
    for o in objs:
        index.setdefault(key(o), []).append(o)
    return MappingProxyType({k: tuple(v) for k, v in index.items()})
