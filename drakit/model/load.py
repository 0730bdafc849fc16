"""Manifests from files, directories and stdin into typed objects, with every problem reported.

This is the I/O edge of the model: reading is bounded (``MAX_FILE_BYTES``) and every
failure becomes one line naming file, document, line, object and field path — never a
traceback.  YAML goes through PyYAML's C loader when present (a 5,000-node inventory
must load in seconds).

YAML 1.1 decisions: ``yes``/``on``/``1.0`` are parsed as YAML 1.1 says (bool/float), and
a string field then rejects them, like kubectl's strict decoding does — quote them.
Timestamps are the exception: they stay strings, as ``sigs.k8s.io/yaml`` keeps them.
Namespaces: namespaced kinds (ResourceClaim, ResourceClaimTemplate, Pod, Event) with no
``metadata.namespace`` are placed in ``default`` — what ``kubectl apply`` does with the
default context.  The object itself is not changed; :class:`Entry` carries the
effective namespace.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError

from drakit.errors import ErrorType, FieldError, InvalidInput, ObjectErrors, ObjectRef
from drakit.model._base import Wire
from drakit.model.claim import ResourceClaim, ResourceClaimTemplate
from drakit.model.deviceclass import DeviceClass
from drakit.model.event import Event
from drakit.model.kinds import DEFAULT_NAMESPACE, NAMESPACED, KindError, model_for
from drakit.model.node import Node
from drakit.model.pod import Pod
from drakit.model.slice import ResourceSlice
from drakit.model.taintrule import DeviceTaintRule

MAX_FILE_BYTES = 64 * 1024 * 1024
"""Files (and stdin) above 64 MiB are refused before parsing: a cluster's full DRA
inventory is a few MiB, so anything larger is a mistake that would only burn memory."""

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")

try:  # pragma: no branch - depends on how PyYAML was built
    _BaseLoader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _BaseLoader = yaml.SafeLoader


class _Loader(_BaseLoader):
    """Safe loader that keeps timestamps as strings."""


_Loader.yaml_implicit_resolvers = {
    key: [r for r in resolvers if r[0] != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}

# A document separator: "---" at column 0 followed by whitespace or end of line.
_SEPARATOR = re.compile(r"^---(?:[ \t].*)?$")


@dataclass(frozen=True)
class Document:
    """One parsed document and where it came from."""

    source: str
    index: int
    line: int | None
    data: dict[str, Any]
    item: int | None = None  # position inside a ``kind: List``

    def where(self) -> str:
        text = f"{self.source}[{self.index}]"
        if self.item is not None:
            text += f".items[{self.item}]"
        if self.line is not None:
            text += f" (line {self.line})"
        return text


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
    """One typed object of a bundle with its origin."""

    obj: Wire
    document: Document
    kind: str
    name: str
    namespace: str  # effective: "default" for namespaced kinds without one, "" for cluster-scoped


@dataclass(frozen=True)
class Bundle:
    """Typed objects in input order, with accessors per kind."""

    entries: tuple[Entry, ...] = field(default_factory=tuple)

    def _of(self, kind: str) -> tuple[Any, ...]:
        return tuple(e.obj for e in self.entries if e.kind == kind)

    @property
    def objects(self) -> tuple[Wire, ...]:
        return tuple(e.obj for e in self.entries)

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


class _SourceError(Exception):
    pass


def _expand_paths(paths: Sequence[str]) -> Iterator[str]:
    for p in paths:
        if p == "-":
            yield p
            continue
        path = Path(p)
        if path.is_dir():
            found = sorted(
                str(f) for f in path.rglob("*") if f.is_file() and f.suffix.lower() in MANIFEST_SUFFIXES
            )
            if not found:
                raise _SourceError(f"{p}: directory contains no manifests (*.yaml, *.yml, *.json)")
            yield from found
        elif path.exists():
            yield p
        else:
            raise _SourceError(f"{p}: no such file or directory")


def _read(source: str, stdin: TextIO | None) -> str:
    limit_text = f"{MAX_FILE_BYTES // (1024 * 1024)} MiB"
    if source == "-":
        if stdin is None:
            import sys

            stdin = sys.stdin
        text = stdin.read(MAX_FILE_BYTES + 1)
        if len(text) > MAX_FILE_BYTES:
            raise _SourceError(f"-: input is larger than the {limit_text} limit")
        return text
    try:
        size = os.stat(source).st_size
        if size > MAX_FILE_BYTES:
            raise _SourceError(
                f"{source}: file is {size / (1024 * 1024):.0f} MiB, larger than the {limit_text} limit"
            )
        with open(source, encoding="utf-8") as fh:
            return fh.read()
    except UnicodeDecodeError as e:
        raise _SourceError(f"{source}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise _SourceError(f"{source}: {e.strerror or e}") from None


def _first_content_line(lines: list[str], start: int) -> int:
    for i in range(start, len(lines)):
        s = lines[i].strip()
        if s and not s.startswith("#") and s != "---" and not s.startswith("--- "):
            return i + 1
    return start + 1


def _split_yaml(text: str) -> Iterator[tuple[int, str]]:
    """(0-based first line, chunk) for each '---'-separated document."""
    lines = text.splitlines(keepends=True)
    start = 0
    for i, line in enumerate(lines):
        if _SEPARATOR.match(line.rstrip("\r\n")):
            if i > start:
                yield start, "".join(lines[start:i])
            start = i + 1
    if start < len(lines):
        yield start, "".join(lines[start:])


def _parse_text(source: str, text: str) -> Iterator[tuple[int | None, Any] | tuple[str, str]]:
    """Yield (line, data) per non-empty document, or ("error", message)."""
    stripped = text.lstrip()
    if source.lower().endswith(".json") or stripped.startswith(("{", "[")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            if source.lower().endswith(".json"):
                yield "error", f"{source}: error parsing JSON at line {e.lineno}, column {e.colno}: {e.msg}"
                return
        else:
            yield text[: len(text) - len(stripped)].count("\n") + 1, data
            return
    all_lines = text.splitlines()
    for offset, chunk in _split_yaml(text):
        try:
            data = yaml.load(chunk, Loader=_Loader)  # a safe loader subclass
        except yaml.MarkedYAMLError as e:
            mark = e.problem_mark or e.context_mark
            where = f" at line {mark.line + 1 + offset}, column {mark.column + 1}" if mark else ""
            problem = e.problem or e.context or "invalid YAML"
            yield "error", f"{source}: error parsing YAML{where}: {problem}"
            continue
        except yaml.YAMLError as e:
            yield "error", f"{source}: error parsing YAML: {e}"
            continue
        if data is None:
            continue
        yield _first_content_line(all_lines, offset), data


def load_documents(paths: Sequence[str], *, stdin: TextIO | None = None) -> list[Document]:
    """Parse files, directories (recursively, sorted) and ``-`` into documents.

    ``kind: List`` is expanded into its items.  Raises :class:`InvalidInput` listing
    every unreadable source or malformed document.
    """
    docs, problems = _load_documents(paths, stdin)
    if problems:
        raise InvalidInput(problems)
    return docs


def _load_documents(paths: Sequence[str], stdin: TextIO | None) -> tuple[list[Document], list[ObjectErrors]]:
    problems: list[ObjectErrors] = []
    docs: list[Document] = []
    if not paths:
        problems.append(_problem("no input given (use -f FILE, a directory, or - for stdin)"))
        return docs, problems
    sources: list[str] = []
    for p in paths:
        try:
            sources.extend(_expand_paths([p]))
        except _SourceError as e:
            problems.append(_problem(str(e)))
    for source in sources:
        try:
            text = _read(source, stdin)
        except _SourceError as e:
            problems.append(_problem(str(e)))
            continue
        index = 0
        for line, data in _parse_text(source, text):
            if line == "error":
                problems.append(_problem(str(data)))
                continue
            assert not isinstance(line, str)
            if not isinstance(data, dict):
                problems.append(_problem(f"{source}[{index}] (line {line}): document is not an object"))
                index += 1
                continue
            if data.get("kind") == "List" and data.get("apiVersion") == "v1":
                items = data.get("items")
                if not isinstance(items, list):
                    problems.append(_problem(f"{source}[{index}] (line {line}): List items must be a list"))
                for j, item in enumerate(items if isinstance(items, list) else []):
                    if isinstance(item, dict):
                        docs.append(Document(source, index, line, item, j))
                    else:
                        problems.append(_problem(f"{source}[{index}].items[{j}]: item is not an object"))
            else:
                docs.append(Document(source, index, line, data))
            index += 1
    return docs, problems


def _problem(message: str) -> SourceProblem:
    return SourceProblem(ObjectRef("", ""), (), message)


# --------------------------------------------------------------------------- typing


def _ref_for(doc: Document) -> LocatedRef:
    data = doc.data
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
        elif etype in _TYPE_DETAILS:
            out.append(FieldError(path, ErrorType.INVALID, e.get("input"), _TYPE_DETAILS[etype]))
        else:
            out.append(FieldError(path, ErrorType.INVALID, e.get("input"), str(e["msg"])))
    return out


def load_bundle(
    paths: Sequence[str], *, stdin: TextIO | None = None, allow_duplicate_names: bool = False
) -> Bundle:
    """Typed objects from manifests; raises :class:`InvalidInput` with all problems at once.

    Two objects of one kind with the same namespace/name are an error (an API server could not
    hold both), unless ``allow_duplicate_names``: the allocator takes its inputs as given, like
    upstream's allocator does (its own tests feed it slices that share a name).
    """
    docs, problems = _load_documents(paths, stdin)
    entries: list[Entry] = []
    seen: dict[tuple[str, str, str], Document] = {}
    for doc in docs:
        ref = _ref_for(doc)
        try:
            model = model_for(doc.data)
        except KindError as e:
            problems.append(SourceProblem(ref, (), str(e)))
            continue
        try:
            obj = model.model_validate(doc.data)
        except ValidationError as e:
            problems.append(ObjectErrors(ref, tuple(errors_from_validation(model, e))))
            continue
        key = (ref.kind, ref.namespace, ref.name)
        meta_name = getattr(getattr(obj, "metadata", None), "name", None)
        if meta_name and not allow_duplicate_names:
            if key in seen:
                first = seen[key]
                problems.append(
                    ObjectErrors(
                        ref,
                        (FieldError("metadata.name", ErrorType.DUPLICATE, ref.name,
                                    f"also defined at {first.where()}"),),
                    )
                )
                continue
            seen[key] = doc
        entries.append(Entry(obj, doc, ref.kind, ref.name, ref.namespace))
    if problems:
        raise InvalidInput(problems)
    return Bundle(tuple(entries))
