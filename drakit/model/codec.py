"""Text into documents the way kubectl reads them: strict, bounded, with lines found on demand.

YAML is read as ``sigs.k8s.io/yaml`` reads it (go-yaml v2 underneath, then YAML-to-JSON):

* plain scalars resolve with go-yaml v2's table: ``y Y yes Yes YES on On ON true True TRUE``
  are true, ``n N no No NO off Off OFF false False FALSE`` false, ``~ null Null NULL`` and the
  empty scalar null; integers as Go's ``strconv.ParseInt(s, 0, 64)`` after removing ``_``
  (``0x``, ``0o``, ``0b``, a leading ``0`` for octal), then ``ParseUint``, then floats matching
  ``^[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?$`` (so ``1e3`` is a float, ``1e400``
  and sexagesimal ``1:30`` are strings); timestamps stay strings, unknown tags are strings;
* keys that resolve to non-strings become JSON strings (``y:`` is the key ``"true"``);
* a key written twice is an error (``line 8: key "name" already set in map``, the strict
  decoder's wording); NaN and infinities cannot become JSON (``json: unsupported value``);
* aliases are budgeted like go-yaml v2, step by step (``document contains excessive aliasing``); an
  anchor that contains itself is refused; nesting is limited to ``MAX_DEPTH`` levels.

Speed: libyaml (PyYAML's C parser) composes the nodes and one tight constructor builds plain
dicts and lists; positions are not recorded while loading.  A document keeps its chunk of
text, and :meth:`Document.line_of` composes it again only when a message needs a line.
JSON goes through the C ``json`` decoder with the same checks (duplicate keys, depth,
integers, NaN).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from sys import intern as _intern
from typing import Any

import yaml

from drakit.errors import DrakitError

MAX_DEPTH = 100
"""Nesting deeper than 100 levels is refused: real manifests nest about 12 deep, and the
checks and renderers downstream walk values recursively."""

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
UINT64_MAX = (1 << 64) - 1

Path = tuple[str | int, ...]

_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_PLAIN = "?plain"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_STR = "tag:yaml.org,2002:str"

_V2_SPECIAL: dict[str, Any] = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), None),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
_NUMERIC_START = frozenset("0123456789+-.")
_YAML_FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$")
_DOT_FLOAT = re.compile(r"^\.[0-9]+(?:[eE][-+]?[0-9]+)?$")
_GO_INT = re.compile(r"^[-+]?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO]?[0-7]+|[1-9][0-9]*|0)$")
_DOC_SEPARATOR = re.compile(r"^---(?=[ \t]|\r?$)", re.MULTILINE)

# go-yaml v2's alias budget (decode.go, allowedAliasRatio): documents up to 400,000 decoded
# values may take 99% of them from aliases, above 4,000,000 only 10%, scaled in between.
_ALIAS_LOW, _ALIAS_HIGH = 400_000, 4_000_000


def allowed_alias_ratio(decoded: int) -> float:
    if decoded <= _ALIAS_LOW:
        return 0.99
    if decoded >= _ALIAS_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decoded - _ALIAS_LOW) / (_ALIAS_HIGH - _ALIAS_LOW)


class DecodeError(DrakitError):
    """A document that cannot be read; ``message`` is one line, ``line`` 1-based or None."""

    def __init__(self, message: str, line: int | None = None, path: Path = (), node: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.path = path
        self.node = node  # the collection the problem is in, located only when reported


def dotted(path: Path) -> str:
    """``("spec", "devices", 0, "name")`` -> ``spec.devices[0].name``."""
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def go_quote_key(key: Any) -> str:
    """A key as go-yaml's ``%#v`` prints it in "already set in map": strings quoted."""
    if isinstance(key, str):
        return json.dumps(key, ensure_ascii=False)
    if isinstance(key, bool) or key is None:
        return {True: "true", False: "false", None: "<nil>"}[key]
    return str(key)


# --------------------------------------------------------------------------- scalars


def _go_int(s: str) -> int | None:
    """``strconv.ParseInt(s, 0, 64)`` then ``ParseUint(s, 0, 64)``: the value or None."""
    if not _GO_INT.match(s):
        return None
    sign = -1 if s[0] == "-" else 1
    body = s[1:] if s[0] in "+-" else s
    low = body[:2].lower()
    if low == "0x":
        v = int(body[2:], 16)
    elif low == "0b":
        v = int(body[2:], 2)
    elif low == "0o":
        v = int(body[2:], 8)
    elif len(body) > 1 and body[0] == "0":
        v = int(body[1:], 8)
    elif len(body) > 20:  # beyond uint64, and past what int() converts (5,000-digit input)
        return None
    else:
        v = int(body)
    v *= sign
    if INT64_MIN <= v <= INT64_MAX or (0 < v <= UINT64_MAX and s[0] != "+" and s[0] != "-"):
        return v
    return None


def resolve_plain(s: str) -> Any:
    """A plain (unquoted, untagged) YAML scalar as go-yaml v2 resolves it."""
    try:
        return _V2_SPECIAL[s]
    except KeyError:
        pass
    if s[0] not in _NUMERIC_START:
        return s
    if s[0] == ".":
        return float(s) if _DOT_FLOAT.match(s) else s
    plain = s.replace("_", "") if "_" in s else s
    if not plain:
        return s
    v = _go_int(plain)
    if v is not None:
        return v
    if _YAML_FLOAT.match(plain):
        f = float(plain)
        return s if math.isinf(f) else f  # Go's ParseFloat fails on overflow: the text stays
    return s


def reads_back(s: str) -> bool:
    """Whether a plain (unquoted) ``s`` is read as the same string by go-yaml v2."""
    if not s or s != s.strip():
        return False
    v = resolve_plain(s)
    return v.__class__ is str


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = None if reads_back(value) else "'"
    if "\n" in value:
        style = None  # PyYAML picks a block or quoted style that keeps the text
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


class KubeDumper(yaml.SafeDumper):
    """PyYAML's safe dumper, quoting every string go-yaml v2 would read as something else.

    PyYAML resolves YAML 1.1 without ``y``/``n`` and with sexagesimal numbers, so its own
    quoting leaves ``y``, ``N`` or ``1e3`` bare; kubectl would read them as a bool or a float.
    """


KubeDumper.add_representer(str, _represent_str)


def _tagged(node: yaml.ScalarNode) -> Any:
    """A scalar with an explicit tag (``!!int "3"``); unknown tags read as strings (go-yaml v2)."""
    tag, value = node.tag, node.value
    if tag == "tag:yaml.org,2002:str":
        return value
    if tag == "tag:yaml.org,2002:binary":
        import base64
        import binascii

        try:
            return base64.b64decode("".join(value.split()), validate=True).decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            raise DecodeError(f"!!binary value is not base64: {value[:40]!r}", node.start_mark.line + 1) from None
    if tag in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool",
               "tag:yaml.org,2002:null"):
        v = resolve_plain(value) if value else None
        want = {"tag:yaml.org,2002:int": (int,), "tag:yaml.org,2002:float": (int, float),
                "tag:yaml.org,2002:bool": (bool,), "tag:yaml.org,2002:null": (type(None),)}[tag]
        if type(v) not in want:
            raise DecodeError(f"cannot decode !!str `{value[:40]}` as a {tag.rsplit(':', 1)[1]}",
                              node.start_mark.line + 1)
        return float(v) if tag.endswith(":float") and v is not None else v
    return value


def _json_key(k: Any) -> str:
    """sigs.k8s.io/yaml's key conversion: every JSON key is a string."""
    if isinstance(k, str):
        return k
    if k is None:
        return "null"
    if isinstance(k, bool):
        return "true" if k else "false"
    if isinstance(k, float) and k.is_integer():
        return str(int(k))
    return str(k)


# --------------------------------------------------------------------------- YAML construction


class _Loader(_BaseLoader):
    """libyaml's composer with a resolver that only tells plain scalars from the rest."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is yaml.ScalarNode:
            return _PLAIN if implicit[0] else _STR
        return _SEQ if kind is yaml.SequenceNode else _MAP

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        """No path-dependent resolvers: skip the per-node bookkeeping."""

    def ascend_resolver(self) -> None:
        """See :meth:`descend_resolver`."""


class _Builder:
    """Nodes to plain values; checks depth, duplicates, aliases and non-JSON numbers.

    The alias budget is go-yaml v2's (``decoder.unmarshal``), counted step by step as it
    counts: every node decoded is one step (the document, keys, an alias node itself), every
    step inside an alias expansion is also an aliased one, and the ratio is checked at each
    step, so a document can fail midway and not only on its totals.  An expansion is not
    walked again: its size is added at once and checked at its end, where the ratio is
    highest (both counts grow by one per step, the allowed ratio only falls).
    """

    def __init__(self, with_aliases: bool) -> None:
        self.memo: dict[int, tuple[Any, int]] | None = {} if with_aliases else None
        self.building: set[int] = set()
        self.decoded = 0
        self.aliased = 0
        self.nonfinite: list[yaml.Node] = []
        self.bigint = False

    def build(self, node: yaml.Node) -> Any:
        self.decoded += 1  # the document node
        value, _ = self._node(node, 1)
        return value

    def _check_aliases(self, node: yaml.Node) -> None:
        a, d = self.aliased, self.decoded
        if a > 100 and d > 1000 and a / d > allowed_alias_ratio(d):
            raise DecodeError("document contains excessive aliasing", node.start_mark.line + 1)

    def _node(self, node: yaml.Node, depth: int) -> tuple[Any, int]:
        """The value and the number of decoding steps go-yaml takes for ``node`` (its size)."""
        memo = self.memo
        if memo is not None:
            key = id(node)
            hit = memo.get(key)
            if hit is not None:  # an alias: go-yaml decodes the anchored value again
                value, size = hit
                self.decoded += 1 + size  # the alias node, then the expansion
                self.aliased += size
                self._check_aliases(node)
                return value, 1 + size
            if key in self.building:
                raise DecodeError("anchor value contains itself", node.start_mark.line + 1)
            self.decoded += 1
            self._check_aliases(node)
        else:
            self.decoded += 1  # no anchors: nothing is aliased, the ratio stays 0
        if depth > MAX_DEPTH:
            raise DecodeError(f"nesting is deeper than {MAX_DEPTH} levels", node.start_mark.line + 1)
        cls = node.__class__
        if cls is yaml.ScalarNode:
            tag = node.tag
            if tag is _PLAIN or tag == _PLAIN:
                v = resolve_plain(node.value)
            elif tag == _STR:
                v = node.value
            else:
                v = _tagged(node)  # type: ignore[arg-type]
            t = v.__class__
            if t is float and not math.isfinite(v):
                self.nonfinite.append(node)
            elif t is int and not INT64_MIN <= v <= INT64_MAX:
                self.bigint = True
            if memo is not None:  # an anchored scalar can be aliased too
                memo[id(node)] = (v, 1)
            return v, 1
        if memo is not None:
            self.building.add(id(node))
        if cls is yaml.SequenceNode:
            items = []
            size = 1
            for child in node.value:
                v, n = self._node(child, depth + 1)
                items.append(v)
                size += n
            out: Any = items
        else:
            out, size = self._mapping(node, depth)
        if memo is not None:
            self.building.discard(id(node))
            memo[id(node)] = (out, size)
        return out, size

    def _mapping(self, node: yaml.Node, depth: int) -> tuple[dict[str, Any], int]:
        out: dict[str, Any] = {}
        size = 1
        merges: list[yaml.Node] = []
        pairs = node.value
        for key_node, value_node in pairs:
            if key_node.__class__ is not yaml.ScalarNode:
                raise DecodeError("a mapping key must be a scalar (a string, number or bool)",
                                  key_node.start_mark.line + 1)
            if key_node.tag is _PLAIN and key_node.value == "<<":
                merges.append(value_node)
                continue
            k, key_size = self._node(key_node, depth + 1)
            size += key_size  # go-yaml decodes every key: one step each
            key = _intern(_json_key(k) if k.__class__ is not str else k)  # one str per key name, as json does
            if key in out:
                raise DecodeError(f"key {go_quote_key(k)} already set in map", key_node.start_mark.line + 1,
                                  (key,), node)
            v, n = self._node(value_node, depth + 1)
            out[key] = v
            size += n
        for m in merges:  # explicit keys win over merged ones (YAML's merge-key rule)
            sources = m.value if m.__class__ is yaml.SequenceNode else [m]
            for src in sources:
                v, n = self._node(src, depth + 1)
                size += n
                if not isinstance(v, dict):
                    raise DecodeError("map merge requires map or sequence of maps as the value",
                                      m.start_mark.line + 1)
                for k2, v2 in v.items():
                    out.setdefault(k2, v2)
        return out, size


def _compose(text: str) -> yaml.Node | None:
    loader = _Loader(text)
    try:
        return loader.get_single_node()
    finally:
        loader.dispose()


def _yaml_error(e: yaml.YAMLError, offset: int) -> DecodeError:
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    problem = getattr(e, "problem", None) or getattr(e, "context", None) or str(e).splitlines()[0]
    if mark is None:
        return DecodeError(f"error parsing YAML: {problem}")
    line = mark.line + 1 + offset
    return DecodeError(f"error parsing YAML at line {line}, column {mark.column + 1}: {problem}", line)


def node_lines(node: yaml.Node, offset: int = 0) -> dict[Path, int]:
    """Every path of a composed document with its 1-based line (keys: the key's line)."""
    lines: dict[Path, int] = {}
    stack: list[tuple[yaml.Node, Path, int]] = [(node, (), 0)]
    seen: set[int] = set()
    while stack:
        n, path, depth = stack.pop()
        lines.setdefault(path, n.start_mark.line + 1 + offset)
        if id(n) in seen or depth > MAX_DEPTH:
            continue
        if isinstance(n, yaml.MappingNode):
            seen.add(id(n))
            for k, v in n.value:
                if isinstance(k, yaml.ScalarNode):
                    key = k.value if k.tag == _STR else _json_key(resolve_plain(k.value) if k.value else None)
                    sub = (*path, key)
                    lines.setdefault(sub, k.start_mark.line + 1 + offset)
                    stack.append((v, sub, depth + 1))
        elif isinstance(n, yaml.SequenceNode):
            seen.add(id(n))
            for i, item in enumerate(n.value):
                stack.append((item, (*path, i), depth + 1))
    return lines


def _locate(root: yaml.Node, target: yaml.Node) -> Path:
    """The path of ``target`` below ``root`` (first occurrence), for error messages."""
    stack: list[tuple[yaml.Node, Path]] = [(root, ())]
    seen: set[int] = set()
    while stack:
        n, path = stack.pop()
        if n is target:
            return path
        if id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                key = k.value if isinstance(k, yaml.ScalarNode) else "?"
                stack.append((v, (*path, key)))
        elif isinstance(n, yaml.SequenceNode):
            stack.extend((item, (*path, i)) for i, item in enumerate(n.value))
    return ()


# --------------------------------------------------------------------------- documents


@dataclass(eq=False)
class _Chunk:
    """One document's text; composed again, once, the first time a line is asked for."""

    text: str
    offset: int  # lines before the chunk
    _map: dict[Path, int] | None = None

    def lines(self) -> dict[Path, int]:
        if self._map is None:
            try:
                node = _compose(self.text)
            except (yaml.YAMLError, RecursionError):
                node = None
            self._map = node_lines(node, self.offset) if node is not None else {}
        return self._map


@dataclass(eq=False)
class _Lines:
    """Path -> line below ``prefix`` of a chunk (a List item shares its List's chunk)."""

    chunk: _Chunk
    prefix: Path = ()
    _map: dict[Path, int] | None = None

    def get(self) -> dict[Path, int]:
        if self._map is None:
            full = self.chunk.lines()
            n = len(self.prefix)
            self._map = {p[n:]: ln for p, ln in full.items() if p[:n] == self.prefix} if n else full
        return self._map


@dataclass(frozen=True)
class Document:
    """One parsed document: its value, source, index in the source and first line.

    ``item`` is the position inside a ``kind: List``; :meth:`line_of` finds the line of a
    field path (computed on first use, from the document's own text).
    """

    source: str
    index: int
    first_line: int | None
    data: Any
    item: int | None = None
    lines_of: _Lines | None = field(default=None, compare=False, repr=False)
    bigint: bool = False  # an integer outside int64 somewhere inside

    @property
    def line(self) -> int | None:
        """The document's (or List item's) first line; for an item composed on first use."""
        if self.item is not None and self.lines_of is not None:
            return self.lines_of.chunk.lines().get(self.lines_of.prefix, self.first_line)
        return self.first_line

    def where(self) -> str:
        text = f"{self.source}[{self.index}]"
        if self.item is not None:
            text += f".items[{self.item}]"
        if self.line is not None:
            text += f" (line {self.line})"
        return text

    @property
    def lines(self) -> dict[Path, int]:
        """Every path of this document with its line (empty for JSON)."""
        return self.lines_of.get() if self.lines_of is not None else {}

    def line_of(self, path: Path) -> int | None:
        """The line of ``path`` or of its nearest written ancestor."""
        lines = self.lines
        p = tuple(path)
        while p and p not in lines:
            p = p[:-1]
        return lines.get(p, self.first_line)

    def with_item(self, item: int, data: Any) -> Document:
        """The document for ``items[item]`` of this List (its line found on demand)."""
        sub = None
        if self.lines_of is not None:
            sub = _Lines(self.lines_of.chunk, (*self.lines_of.prefix, "items", item))
        return Document(self.source, self.index, self.first_line, data, item, sub, self.bigint)


@dataclass(frozen=True)
class Problem:
    """A document (or source) that could not be decoded, as one line."""

    source: str
    index: int | None
    message: str
    line: int | None = None
    path: Path = ()

    def __str__(self) -> str:
        if not self.source:
            return self.message
        where = self.source if self.index is None else f"{self.source}[{self.index}]"
        if self.path:
            where += f": {dotted(self.path)}"
        return f"{where}: {self.message}"


def _chunks(text: str) -> Iterator[tuple[int, str]]:
    """(lines before, chunk) per ``---``-separated piece of a YAML stream.

    A separator line is blanked rather than cut, so content after it (``--- {a: 1}``) stays
    on its line and column.
    """
    starts: list[tuple[int, int]] = [(0, 0)]
    line, pos = 0, 0
    for m in _DOC_SEPARATOR.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        starts.append((pos, line))
    for i, (begin, ln) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        chunk = text[begin:end]
        yield ln, ("   " + chunk[3:]) if i else chunk


def _only_directives(chunk: str) -> bool:
    return all(not s or s.startswith(("#", "%")) for s in (raw.strip() for raw in chunk.splitlines()))


_CONTENT_LINE = re.compile(r"^[ \t]*[^\s#%]", re.MULTILINE)


def _first_line(chunk: str, offset: int) -> int:
    m = _CONTENT_LINE.search(chunk)
    return offset + 1 + (chunk.count("\n", 0, m.start()) if m else 0)


def _yaml_documents(source: str, text: str, problems: list[Problem], nonfinite_ok: bool = False) -> Iterator[Document]:
    index = 0
    for offset, chunk in _chunks(text):
        if _only_directives(chunk):
            continue
        try:
            node = _compose(chunk)
        except yaml.YAMLError as e:
            err = _yaml_error(e, offset)
            problems.append(Problem(source, index, err.message, err.line))
            index += 1
            continue
        if node is None:
            continue
        builder = _Builder(with_aliases="&" in chunk)
        try:
            data = builder.build(node)
            if builder.nonfinite and not nonfinite_ok:
                bad = builder.nonfinite[0]
                raise DecodeError(f"json: unsupported value: {bad.value} (NaN and infinities are not JSON numbers)",
                                  bad.start_mark.line + 1, _locate(node, bad))
        except DecodeError as e:
            path = (*_locate(node, e.node), *e.path) if e.node is not None else e.path
            line = None if e.line is None else e.line + offset
            problems.append(Problem(source, index, f"line {line}: {e.message}" if line else e.message, line, path))
            index += 1
            continue
        except RecursionError:
            problems.append(Problem(source, index, f"nesting is deeper than {MAX_DEPTH} levels"))
            index += 1
            continue
        if data is not None:
            yield Document(source, index, _first_line(chunk, offset), data, None, _Lines(_Chunk(chunk, offset)),
                           builder.bigint)
        index += 1


class _JsonState:
    """Flags the C decoder's hooks raise while parsing (checked once after)."""

    def __init__(self) -> None:
        self.bigint = False
        self.nonfinite: str | None = None

    def parse_int(self, s: str) -> int:
        if len(s) > 21:  # beyond int64, and int() refuses (or crawls through) 5,000+ digits
            self.bigint = True
            return HugeInt(len(s.lstrip("-")))
        v = int(s)
        if not INT64_MIN <= v <= INT64_MAX:
            self.bigint = True
        return v

    def parse_float(self, s: str) -> float:
        v = float(s)
        if not math.isfinite(v):
            self.nonfinite = s
        return v

    def parse_constant(self, s: str) -> float:
        self.nonfinite = s
        return float(s)

    @staticmethod
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        d = dict(items)
        if len(d) != len(items):
            seen: set[str] = set()
            for k, _ in items:
                if k in seen:
                    raise _DuplicateJsonKey(k)
                seen.add(k)
        return d


class _DuplicateJsonKey(ValueError):
    pass


_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"')
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _json_too_deep(text: str) -> int | None:
    """The line of the first bracket nested deeper than ``MAX_DEPTH``, or None; no recursion.

    Strings are removed and only brackets kept (in C, about 0.05 s for 30 MB); then each pass
    drops the empty pairs, so a well-formed document of depth d empties in d/2 to d passes.
    Input that never empties is malformed, and the parser says where.
    """
    b = text.encode("utf-8", "surrogatepass")
    if b"\\" in b:
        b = b.replace(b"\\\\", b"").replace(b'\\"', b"")  # escaped backslashes, then quotes
    b = b.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    if b'"' in b:
        b = re.sub(rb'"[^"]*"', b"", b)  # strings that hold brackets
    passes = 0
    while b and passes <= MAX_DEPTH:
        shorter = b.replace(b"{}", b"").replace(b"[]", b"")  # one or two levels a pass
        if shorter == b:
            return None
        b = shorter
        passes += 1
    if not b and 2 * passes <= MAX_DEPTH:
        return None
    depth = 0  # deep, or close: find the exact place (error path only)
    for m in _JSON_TOKEN.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return text.count("\n", 0, m.start()) + 1
        elif c in "]}":
            depth -= 1
    return None


def _json_documents(source: str, text: str, problems: list[Problem]) -> Iterator[Document]:
    deep = _json_too_deep(text)
    if deep is not None:
        problems.append(Problem(source, 0, f"line {deep}: nesting is deeper than {MAX_DEPTH} levels", deep))
        return
    state = _JsonState()
    try:
        data = json.loads(text, object_pairs_hook=state.pairs, parse_int=state.parse_int,
                          parse_float=state.parse_float, parse_constant=state.parse_constant)
    except json.JSONDecodeError as e:
        problems.append(Problem(source, None, f"error parsing JSON at line {e.lineno}, column {e.colno}: {e.msg}",
                                e.lineno))
        return
    except _DuplicateJsonKey as e:
        # Rare: read it again as YAML (JSON is YAML's flow style) for the line and path.
        again: list[Problem] = []
        list(_yaml_documents(source, text, again))
        dup = [p for p in again if "already set in map" in p.message]
        problems.append(dup[0] if dup else Problem(
            source, 0, f"json: duplicate field {json.dumps(e.args[0], ensure_ascii=False)}"))
        return
    except RecursionError:  # malformed and deep (an unclosed ``[[[[...``): the parser's own limit
        problems.append(Problem(source, 0, f"nesting is deeper than {MAX_DEPTH} levels"))
        return
    if state.nonfinite is not None:
        path = find_path(data, lambda v: v.__class__ is float and not math.isfinite(v)) or ()
        problems.append(Problem(source, 0, f"json: unsupported value: {state.nonfinite} (NaN and infinities "
                                           "are not JSON numbers)", None, path))
        return
    line = text[: len(text) - len(text.lstrip())].count("\n") + 1
    yield Document(source, 0, line, data, None, None, state.bigint)


def looks_like_json(source: str, text: str) -> bool:
    return source.lower().endswith(".json") or text.lstrip()[:1] in ("{", "[")


def parse_text(source: str, text: str, *, nonfinite_ok: bool = False) -> tuple[list[Document], list[Problem]]:
    """Every non-empty document of one input (JSON or a YAML stream) and the ones that failed.

    ``nonfinite_ok`` lets YAML's ``.nan``/``.inf`` through for inputs kubectl never reads
    (scenarios), whose own checks word the error for the field.
    """
    problems: list[Problem] = []
    if looks_like_json(source, text):
        docs = list(_json_documents(source, text, problems))
        if docs or source.lower().endswith(".json"):
            return docs, problems
        problems = []  # not JSON after all: YAML's flow style starts with { or [ too
    docs = list(_yaml_documents(source, text, problems, nonfinite_ok))
    return docs, problems


def find_path(value: Any, test: Callable[[Any], bool], path: Path = (), depth: int = 0) -> Path | None:
    """The first path below ``value`` whose scalar passes ``test`` (used only on the error path)."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(value, dict):
        for k, v in value.items():
            found = find_path(v, test, (*path, k), depth + 1)
            if found is not None:
                return found
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found = find_path(v, test, (*path, i), depth + 1)
            if found is not None:
                return found
    elif test(value):
        return path
    return None


class HugeInt(int):
    """A JSON integer too long to convert, standing in for it in the "must fit in 64 bits" error."""

    digits: int

    def __new__(cls, digits: int) -> HugeInt:
        obj = super().__new__(cls, INT64_MAX + 1)
        obj.digits = digits
        return obj

    def __str__(self) -> str:
        return f"<a {self.digits}-digit integer>"

    __repr__ = __str__


def is_big_int(v: Any) -> bool:
    return v.__class__ is HugeInt or (v.__class__ is int and not INT64_MIN <= v <= INT64_MAX)
