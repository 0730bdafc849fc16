"""matchAttribute / distinctAttribute with paired add/remove, as the search needs for backtracking.

Contract (upstream's): every successful :meth:`add` is followed by exactly one :meth:`remove` with
the same request and device, in reverse order.  Both classes therefore keep a stack.

Upstream behaviour reproduced (newest ``experimental`` code):

* attribute lookup: exact key first, then the bare identifier when the domain is the driver's;
* an attribute entry without any value is an error ("unsupported attribute value");
* matchAttribute without DRAListTypeAttributes compares scalars of the same type, versions as
  exact text; with the gate, every value (scalar or list) is a set and the running intersection
  must stay non-empty;
* distinctAttribute keeps every added value (a stack, not the older map keyed by request name)
  and, without the gate, compares the new value with each stored value of the same scalar type
  (versions as exact text, as v0.37.2 does: ``2.0.0`` and ``2.0.0+build.1`` are distinct) and
  refuses a new list value once anything is stored; with the gate, sets must be pairwise
  disjoint.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from drakit.errors import AllocationError

# (kind, value): kind is int|bool|string|version (value scalar) or ints|bools|strings|versions (tuple)
AttrValue = tuple[str, Any]

_SCALARS = ("int", "bool", "string", "version")
_LISTS = ("ints", "bools", "strings", "versions")


class UnsupportedAttribute(AllocationError):
    """An attribute entry carries no value of a known type."""


def lookup_attribute(device_attrs: Mapping[str, Any], driver: str, name: str) -> AttrValue | None:
    """The typed attribute ``name`` (fully qualified) of a device, ``None`` if it is not set."""
    raw = device_attrs.get(name)
    if raw is None:
        domain, sep, ident = name.partition("/")
        if not sep or domain != driver:
            return None
        raw = device_attrs.get(ident)
        if raw is None:
            return None
    if isinstance(raw, Mapping):
        for kind in _SCALARS:
            if raw.get(kind) is not None:
                return (kind, raw[kind])
        for kind in _LISTS:
            if raw.get(kind) is not None:
                return (kind, tuple(raw[kind]))
    raise UnsupportedAttribute(f"attribute {name}: unsupported attribute value")


def _as_set(attr: AttrValue) -> tuple[str, frozenset[Any]] | None:
    kind, val = attr
    if kind in _SCALARS:
        return kind, frozenset([val])
    if not val:
        return None  # an empty list has no type to compare with
    return kind[:-1], frozenset(val)


class Constraint:
    """Base: which requests a constraint applies to."""

    kind = ""

    def __init__(self, attribute: str, requests: Collection[str], list_types: bool) -> None:
        self.attribute = attribute
        self.requests = frozenset(requests)
        self.list_types = list_types

    def applies(self, request: str, parent: str) -> bool:
        if not self.requests:
            return True
        if parent:
            return parent in self.requests or f"{parent}/{request}" in self.requests
        return request in self.requests

    def add(self, attr: AttrValue | None) -> bool:
        raise NotImplementedError

    def remove(self) -> None:
        raise NotImplementedError

    def describe(self) -> str:
        return f"{self.kind} {self.attribute}"


class MatchAttribute(Constraint):
    kind = "matchAttribute"

    def __init__(self, attribute: str, requests: Collection[str], list_types: bool) -> None:
        super().__init__(attribute, requests, list_types)
        self.first: AttrValue | None = None
        self.stack: list[tuple[str, frozenset[Any]]] = []
        self.count = 0

    def add(self, attr: AttrValue | None) -> bool:
        if attr is None:
            return False
        if self.count == 0:
            if self.list_types:
                s = _as_set(attr)
                if s is None:
                    return False
                self.stack.append(s)
            else:
                self.first = attr
            self.count = 1
            return True
        if self.list_types:
            s = _as_set(attr)
            if s is None:
                return False
            top_kind, top = self.stack[-1]
            if s[0] != top_kind:
                return False
            narrowed = top & s[1]
            if not narrowed:
                return False
            self.stack.append((top_kind, narrowed))
        else:
            kind, val = attr
            if kind not in _SCALARS or self.first is None:
                return False
            if self.first[0] != kind or self.first[1] != val:
                return False
        self.count += 1
        return True

    def remove(self) -> None:
        self.count -= 1
        if self.list_types:
            del self.stack[self.count :]

    def current(self) -> str:
        """The value the set is pinned to (for messages)."""
        if self.list_types and self.stack:
            return ",".join(sorted(map(str, self.stack[-1][1])))
        return "" if self.first is None else str(self.first[1])


class DistinctAttribute(Constraint):
    kind = "distinctAttribute"

    def __init__(self, attribute: str, requests: Collection[str], list_types: bool) -> None:
        super().__init__(attribute, requests, list_types)
        self.values: list[AttrValue] = []

    def _accepts(self, attr: AttrValue) -> bool:
        if self.list_types:
            new = _as_set(attr)
            if new is None:
                return False
            for existing in self.values:
                old = _as_set(existing)
                if old is None:
                    continue
                if old[0] == new[0] and old[1] & new[1]:
                    return False
            return True
        # v0.37.2: each stored value is compared with the new one only when both have the same
        # scalar type (versions as exact text: semver's minimal form makes that exact equality);
        # a new value of a list type is refused once anything is stored.
        kind, val = attr
        for old_kind, old_val in self.values:
            if kind not in _SCALARS:
                return False
            if old_kind == kind and old_val == val:
                return False
        return True

    def add(self, attr: AttrValue | None) -> bool:
        if attr is None or not self._accepts(attr):
            return False
        self.values.append(attr)
        return True

    def remove(self) -> None:
        self.values.pop()
