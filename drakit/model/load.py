"""Documents into typed objects: the decoding half of loading, with every problem reported.

Reading files, directories and stdin is the edge's job (:mod:`drakit.sources`, whose
``load_bundle`` reads and then calls :func:`decode_documents`); text becomes documents in
:mod:`drakit.model.codec`.  This module turns documents into a :class:`Bundle` and does no I/O.

What a real manifest set holds besides DRA objects never voids the bundle
(:mod:`drakit.model.workloads`): workload kinds (Deployment, Job, CronJob, StatefulSet,
DaemonSet, ReplicaSet, JobSet) have their pod templates validated and offered as
``Bundle.workload_pods``; ``events.k8s.io/v1`` Events are read as core Events;
``resource.k8s.io/v1beta1|v1beta2`` objects are converted to v1 as the API server converts
them; any other kind is skipped with one note per kind.

Namespaces: namespaced kinds (ResourceClaim, ResourceClaimTemplate, Pod, Event) with no
``metadata.namespace`` are placed in ``default`` — what ``kubectl apply`` does with the
default context.  The object itself is not changed; :class:`Entry` carries the
effective namespace.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError

from drakit.errors import OMIT, ErrorType, FieldError, ObjectErrors, ObjectRef
from drakit.model._base import QUANTITY_ERROR, QUANTITY_SYNTAX_MESSAGE, QUANTITY_TYPE_MESSAGE, Wire
from drakit.model.claim import ResourceClaim, ResourceClaimTemplate
from drakit.model.codec import Document, Problem, dotted, find_path, is_big_int
from drakit.model.deviceclass import DeviceClass
from drakit.model.event import Event
from drakit.model.kinds import DEFAULT_NAMESPACE, NAMESPACED, KindError, model_for
from drakit.model.node import Node
from drakit.model.pod import Pod
from drakit.model.slice import ResourceSlice
from drakit.model.taintrule import DeviceTaintRule
from drakit.model.workloads import WORKLOAD_KINDS, Triage, triage

__all__ = ["Bundle", "Document", "Entry", "LocatedRef", "SourceProblem", "collector_paused", "decode_documents",
           "source_problem"]


@dataclass(frozen=True)
class LocatedRef(ObjectRef):
    """ObjectRef that also prints the line and the List item."""

    line: int | None = None
    item: int | None = None

    def location(self) -> str:
        if not self.source:
            return ""
        text = self.source if self.index is None else f"{self.source}[{self.index}]"
        if self.item is not None:
            text += f".items[{self.item}]"
        if self.line is not None:
            text += f" (line {self.line})"
        return text


@dataclass(frozen=True)
class SourceProblem(ObjectErrors):
    """A problem that is not about one object's fields (unreadable file, bad YAML)."""

    message: str = ""

    def lines(self) -> list[str]:
        loc = self.ref.location()
        return [f"{loc}: {self.message}" if loc else self.message]


@dataclass(frozen=True)
class UnknownField(FieldError):
    """kubectl strict decoding's wording for a field the schema does not have."""

    def __str__(self) -> str:
        return f'unknown field "{self.path}"'

    def to_json(self) -> dict[str, Any]:
        return {"field": self.path, "type": self.type.value, "detail": str(self)}


@dataclass(frozen=True)
class Entry:
    """One typed object of a bundle with its origin.

    ``wire`` is the object's JSON dict as decoded (after any version conversion); it equals
    ``to_wire(obj)``, so consumers that want dicts need not dump the typed object again.
    ``owner`` is set for pods made from a workload's pod template: ``Kind/name`` of it.
    """

    obj: Wire
    document: Document
    kind: str
    name: str
    namespace: str  # effective: "default" for namespaced kinds without one, "" for cluster-scoped
    wire: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    owner: str = ""
    replica: int = 0  # a template pod's index among the pods its controller makes
    replicas: int = 1
    generated: bool = False  # the controller generates the name: ``name`` stands in for it


@dataclass(frozen=True)
class Bundle:
    """Typed objects in input order, with accessors per kind.

    ``workload_pods`` are pods made from the pod templates of workload kinds (one per template,
    with an ownerReference to the workload); they are not in ``entries``/``pods``, so callers
    decide where they count.  ``notes`` say what was skipped or converted, one line per kind.
    """

    entries: tuple[Entry, ...] = field(default_factory=tuple)
    workload_pods: tuple[Entry, ...] = ()
    notes: tuple[str, ...] = ()

    def _of(self, kind: str) -> tuple[Any, ...]:
        return tuple(e.obj for e in self.entries if e.kind == kind)

    @property
    def checked_pods(self) -> tuple[Entry, ...]:
        """One template pod per template (its replicas differ only by name): what validation reads."""
        return tuple(e for e in self.workload_pods if e.replica == 0)

    @property
    def objects(self) -> tuple[Wire, ...]:
        return tuple(e.obj for e in self.entries)

    @property
    def wire_objects(self) -> tuple[dict[str, Any], ...]:
        """Every object as its JSON dict, without dumping the typed objects again."""
        return tuple(e.wire for e in self.entries)

    @property
    def nodes(self) -> tuple[Node, ...]:
        return self._of("Node")

    @property
    def slices(self) -> tuple[ResourceSlice, ...]:
        return self._of("ResourceSlice")

    @property
    def classes(self) -> tuple[DeviceClass, ...]:
        return self._of("DeviceClass")

    @property
    def claims(self) -> tuple[ResourceClaim, ...]:
        return self._of("ResourceClaim")

    @property
    def templates(self) -> tuple[ResourceClaimTemplate, ...]:
        return self._of("ResourceClaimTemplate")

    @property
    def pods(self) -> tuple[Pod, ...]:
        return self._of("Pod")

    @property
    def events(self) -> tuple[Event, ...]:
        return self._of("Event")

    @property
    def taint_rules(self) -> tuple[DeviceTaintRule, ...]:
        return self._of("DeviceTaintRule")

    def find(self, kind: str, name: str, namespace: str | None = None) -> Wire | None:
        """The object of that kind and name; namespace defaults like kubectl's."""
        if namespace is None:
            namespace = DEFAULT_NAMESPACE if kind in NAMESPACED else ""
        for e in self.entries:
            if e.kind == kind and e.name == name and e.namespace == namespace:
                return e.obj
        return None

    def entry_of(self, obj: Wire) -> Entry | None:
        for e in self.entries:
            if e.obj is obj:
                return e
        return None


# --------------------------------------------------------------------------- reading


def _problem(message: str) -> SourceProblem:
    return SourceProblem(ObjectRef("", ""), (), message)


def source_problem(p: Problem) -> SourceProblem:
    """A document that could not be decoded, as a problem of the bundle."""
    return _problem(str(p))


# --------------------------------------------------------------------------- typing


def _ref_for(doc: Document, data: dict[str, Any] | None = None) -> LocatedRef:
    data = doc.data if data is None else data
    raw_kind = data.get("kind")
    kind = raw_kind if isinstance(raw_kind, str) else "object"
    raw_meta = data.get("metadata")
    meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    name = meta.get("name") if isinstance(meta.get("name"), str) else (meta.get("generateName") or "")
    raw_ns = meta.get("namespace")
    namespace: str = raw_ns if isinstance(raw_ns, str) else ""
    if not namespace and kind in NAMESPACED:
        namespace = DEFAULT_NAMESPACE
    if kind not in NAMESPACED:
        namespace = ""
    return LocatedRef(str(kind), str(name), namespace, doc.source, doc.index, doc.line, doc.item)


def _unwrap(tp: Any) -> Any:
    """Strip Optional/Annotated to the type that decides how the next loc element reads."""
    while True:
        origin = get_origin(tp)
        if origin is None:
            return tp
        args = [a for a in get_args(tp) if a is not type(None)]
        if origin in (list, dict):
            return tp
        if str(origin).endswith("Annotated") or len(args) == 1:
            tp = args[0]
            continue
        return tp


def field_path(model: type[BaseModel], loc: Sequence[int | str]) -> str:
    """Render a pydantic loc as an API field path (``a.b[0].c[key]``) by walking the model."""
    out = ""
    tp: Any = model
    for part in loc:
        tp = _unwrap(tp)
        origin = get_origin(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            name = str(part)
            out += ("." if out else "") + name
            nxt = None
            for fname, info in tp.model_fields.items():
                if info.alias == name or fname == name:
                    nxt = info.annotation
                    break
            tp = nxt
        elif origin is list:
            out += f"[{part}]"
            tp = get_args(tp)[0]
        elif origin is dict:
            out += f"[{part}]"
            tp = get_args(tp)[1]
        else:
            out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
            tp = None
    return out


_TYPE_DETAILS = {
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "int_from_float": "must be an integer",
    "string_type": "must be a string",
    "bool_type": "must be a boolean",
    "bool_parsing": "must be a boolean",
    "list_type": "must be a list",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
}


def errors_from_validation(model: type[BaseModel], err: ValidationError) -> list[FieldError]:
    """pydantic errors as API-style field errors with paths in JSON names."""
    out: list[FieldError] = []
    for e in err.errors():
        path = field_path(model, e["loc"])
        etype = e["type"]
        if etype == "extra_forbidden":
            out.append(UnknownField(path, ErrorType.NOT_SUPPORTED, e.get("input"), "unknown field"))
        elif etype == "missing":
            out.append(FieldError(path, ErrorType.REQUIRED))
        elif etype == QUANTITY_ERROR:
            value = e.get("input")
            detail = QUANTITY_SYNTAX_MESSAGE if isinstance(value, str) else QUANTITY_TYPE_MESSAGE
            out.append(FieldError(path, ErrorType.INVALID, value, detail))
        elif etype in _TYPE_DETAILS:
            out.append(FieldError(path, ErrorType.INVALID, e.get("input"), _TYPE_DETAILS[etype]))
        else:
            out.append(FieldError(path, ErrorType.INVALID, e.get("input"), str(e["msg"])))
    return out


def _key(data: dict[str, Any]) -> tuple[str, str, str]:
    """(kind, effective namespace, name) without building a ref (the hot path)."""
    kind = data.get("kind")
    meta = data.get("metadata")
    name = ns = ""
    if isinstance(meta, dict):
        n = meta.get("name")
        name = n if isinstance(n, str) else (meta.get("generateName") or "")
        raw_ns = meta.get("namespace")
        ns = raw_ns if isinstance(raw_ns, str) else ""
    ns = (ns or DEFAULT_NAMESPACE) if kind in NAMESPACED else ""
    return str(kind), ns, str(name)


def _big_int_problem(doc: Document, data: dict[str, Any]) -> ObjectErrors | None:
    path = find_path(data, is_big_int)
    if path is None:
        return None
    value = find_value(data, path)
    return ObjectErrors(_ref_for(doc, data), (FieldError(
        dotted(path), ErrorType.INVALID, value,
        "integers must fit in 64 bits (int64), as the API server decodes them"),))


def find_value(data: Any, path: Sequence[str | int]) -> Any:
    for p in path:
        data = data[p]
    return data


def _typed(doc: Document, data: dict[str, Any], problems: list[ObjectErrors]) -> Wire | None:
    """The typed object for an owned kind, or None with the problem recorded."""
    try:
        model = model_for(data)
    except KindError as e:
        problems.append(SourceProblem(_ref_for(doc, data), (), str(e)))
        return None
    if doc.bigint:
        big = _big_int_problem(doc, data)
        if big is not None:
            problems.append(big)
            return None
    try:
        return model.model_validate(data)
    except ValidationError as e:
        problems.append(ObjectErrors(_ref_for(doc, data), tuple(errors_from_validation(model, e))))
        return None


@contextmanager
def collector_paused() -> Iterator[None]:
    """Loading builds millions of small acyclic containers; the cyclic collector would rescan
    them again and again (measured: 80% of loading a 5,000-node inventory).  Nothing here
    creates cycles, so pausing it loses nothing."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def decode_documents(
    docs: Iterable[Document], *, allow_duplicate_names: bool = False
) -> tuple[Bundle, list[ObjectErrors]]:
    """Typed objects from documents, and every problem (pure: no I/O).

    Two objects of one kind with the same namespace/name are an error (an API server could not
    hold both), unless ``allow_duplicate_names``: the allocator takes its inputs as given, like
    upstream's allocator does (its own tests feed it slices that share a name).
    """
    problems: list[ObjectErrors] = []
    entries: list[Entry] = []
    pods: list[Entry] = []
    skipped: Counter[str] = Counter()
    converted: Counter[str] = Counter()
    seen: dict[tuple[str, str, str], Document] = {}
    notes: list[str] = []
    with collector_paused():
        for doc in docs:
            if not isinstance(doc.data, dict):
                problems.append(_problem(f"{doc.where()}: document is not an object"))
                continue
            t: Triage = triage(doc.data)
            if t.error:
                problems.append(SourceProblem(_ref_for(doc), (), t.error))
                continue
            if t.skip:
                skipped[t.skip] += 1
            if t.converted:
                converted[t.converted] += 1
            notes += t.notes
            if t.template_errors:
                problems.append(ObjectErrors(_ref_for(doc), tuple(
                    FieldError(path, ErrorType.INVALID, OMIT, detail) for path, detail in t.template_errors)))
            failed: set[str] = set()
            for template in t.pods:
                if template.path in failed:
                    continue  # a replica of a template already refused: its errors are reported once
                sub: list[ObjectErrors] = []
                obj = _typed(doc, template.data, sub)
                if sub:  # reported on the workload, at the template's path
                    failed.add(template.path)
                    problems += [ObjectErrors(_ref_for(doc), tuple(
                        replace(e, path=f"{template.path}.{e.path}" if e.path else template.path)
                        for e in p.errors)) if not isinstance(p, SourceProblem) else p for p in sub]
                if obj is not None:
                    kind, ns, name = _key(template.data)
                    pods.append(Entry(obj, doc, kind, name, ns, template.data, template.owner, template.replica,
                                      template.replicas, template.generated))
            if t.data is None:
                continue
            data = t.data
            obj = _typed(doc, data, problems)
            if obj is None:
                continue
            key = _key(data)
            if key[2] and not allow_duplicate_names:
                first = seen.get(key)
                if first is not None:
                    problems.append(ObjectErrors(_ref_for(doc, data), (FieldError(
                        "metadata.name", ErrorType.DUPLICATE, key[2], f"also defined at {first.where()}"),)))
                    continue
                seen[key] = doc
            entries.append(Entry(obj, doc, key[0], key[2], key[1], data))
    notes += [f"skipped {n} {kind} object(s): {why}" for (kind, n), why in
             ((item, _skip_reason(item[0])) for item in sorted(skipped.items()))]
    notes += [f"converted {n} {what} object(s) to resource.k8s.io/v1" for what, n in sorted(converted.items())]
    return Bundle(tuple(entries), tuple(pods), tuple(notes)), problems


def _skip_reason(kind: str) -> str:
    if kind in WORKLOAD_KINDS:
        return "not a DRA kind; its pod template was checked and is offered as a pod"
    return "not a kind drakit reads"
