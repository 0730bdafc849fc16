"""Declarations: the functions, overloads, variables and object types a CEL environment offers.

Kept apart from the checker (as cel-go keeps ``common/decls`` apart from ``checker/``) because
every function library declares into an :class:`Env`, and the checker, the cost estimator and
the interpreter all read one; none of them should need the others to do so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from drakit.selectors import types as T
from drakit.selectors.types import CelType


@dataclass(frozen=True)
class Overload:
    """One typed signature of a function; ``params`` include the receiver for member overloads."""

    id: str
    params: tuple[CelType, ...]
    result: CelType
    member: bool = False
    impl: Callable[..., Any] | None = None

    @property
    def type_params(self) -> set[str]:
        out: set[str] = set()

        def visit(t: CelType) -> None:
            if t.kind == T.PARAM_K:
                out.add(t.name)
            for p in t.params:
                visit(p)

        for p in (*self.params, self.result):
            visit(p)
        return out


@dataclass
class Function:
    name: str
    overloads: list[Overload] = field(default_factory=list)

    def by_id(self, oid: str) -> Overload | None:
        for o in self.overloads:
            if o.id == oid:
                return o
        return None


@dataclass
class Env:
    """What a selector may refer to: variables, functions and object types."""

    variables: dict[str, CelType] = field(default_factory=dict)
    functions: dict[str, Function] = field(default_factory=dict)
    structs: dict[str, dict[str, CelType]] = field(default_factory=dict)

    def add(self, name: str, overload: Overload) -> None:
        fn = self.functions.setdefault(name, Function(name))
        fn.overloads.append(overload)

    def copy(self) -> Env:
        return Env(
            dict(self.variables),
            {k: Function(v.name, list(v.overloads)) for k, v in self.functions.items()},
            {k: dict(v) for k, v in self.structs.items()},
        )


TYPE_IDENTS: dict[str, CelType] = {
    "int": T.type_of(T.INT),
    "uint": T.type_of(T.UINT),
    "double": T.type_of(T.DOUBLE),
    "bool": T.type_of(T.BOOL),
    "string": T.type_of(T.STRING),
    "bytes": T.type_of(T.BYTES),
    "list": T.type_of(T.list_of(T.DYN_T)),
    "map": T.type_of(T.map_of(T.DYN_T, T.DYN_T)),
    "null_type": T.type_of(T.NULL),
    "type": T.type_of(T.TYPE),
    "google.protobuf.Duration": T.type_of(T.DURATION),
    "google.protobuf.Timestamp": T.type_of(T.TIMESTAMP),
    "net.IP": T.type_of(T.IP),  # registered with cel.Types by the IP/CIDR libraries
    "net.CIDR": T.type_of(T.CIDR),
}
