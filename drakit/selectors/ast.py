"""The CEL abstract syntax tree (cel-go's ``common/ast`` shapes, Python classes).

Every node has an ``id`` (unique within one parse; the checker keys types and overload
references by it, as cel-go does) and the ``offset`` (code points) it was parsed at.
Macros expand into ordinary nodes, chiefly :class:`Comprehension`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


class Expr:
    __slots__ = ("id", "offset")

    def __init__(self, id: int, offset: int) -> None:
        self.id = id
        self.offset = offset

    def children(self) -> list[Expr]:
        return []


class Literal(Expr):
    __slots__ = ("value",)

    def __init__(self, id: int, offset: int, value: Any) -> None:
        super().__init__(id, offset)
        self.value = value


class Ident(Expr):
    __slots__ = ("name",)

    def __init__(self, id: int, offset: int, name: str) -> None:
        super().__init__(id, offset)
        self.name = name


class Select(Expr):
    __slots__ = ("field", "operand", "test_only")

    def __init__(self, id: int, offset: int, operand: Expr, field: str, test_only: bool = False) -> None:
        super().__init__(id, offset)
        self.operand = operand
        self.field = field
        self.test_only = test_only

    def children(self) -> list[Expr]:
        return [self.operand]


class Call(Expr):
    __slots__ = ("args", "function", "target")

    def __init__(
        self, id: int, offset: int, function: str, args: list[Expr], target: Expr | None = None
    ) -> None:
        super().__init__(id, offset)
        self.function = function
        self.args = args
        self.target = target

    def children(self) -> list[Expr]:
        return ([self.target] if self.target is not None else []) + list(self.args)


class CreateList(Expr):
    __slots__ = ("elements", "optional_indices")

    def __init__(
        self, id: int, offset: int, elements: list[Expr], optional_indices: frozenset[int] = frozenset()
    ) -> None:
        super().__init__(id, offset)
        self.elements = elements
        self.optional_indices = optional_indices

    def children(self) -> list[Expr]:
        return list(self.elements)


class MapEntry:
    __slots__ = ("id", "key", "offset", "optional", "value")

    def __init__(self, id: int, offset: int, key: Expr, value: Expr, optional: bool) -> None:
        self.id = id
        self.offset = offset
        self.key = key
        self.value = value
        self.optional = optional


class CreateMap(Expr):
    __slots__ = ("entries",)

    def __init__(self, id: int, offset: int, entries: list[MapEntry]) -> None:
        super().__init__(id, offset)
        self.entries = entries

    def children(self) -> list[Expr]:
        out: list[Expr] = []
        for e in self.entries:
            out += [e.key, e.value]
        return out


class FieldInit:
    __slots__ = ("id", "name", "offset", "optional", "value")

    def __init__(self, id: int, offset: int, name: str, value: Expr, optional: bool) -> None:
        self.id = id
        self.offset = offset
        self.name = name
        self.value = value
        self.optional = optional


class CreateStruct(Expr):
    __slots__ = ("fields", "type_name")

    def __init__(self, id: int, offset: int, type_name: str, fields: list[FieldInit]) -> None:
        super().__init__(id, offset)
        self.type_name = type_name
        self.fields = fields

    def children(self) -> list[Expr]:
        return [f.value for f in self.fields]


class Comprehension(Expr):
    __slots__ = (
        "accu_init",
        "accu_var",
        "iter_range",
        "iter_var",
        "iter_var2",
        "loop_cond",
        "loop_step",
        "result",
    )

    def __init__(
        self,
        id: int,
        offset: int,
        iter_var: str,
        iter_range: Expr,
        accu_var: str,
        accu_init: Expr,
        loop_cond: Expr,
        loop_step: Expr,
        result: Expr,
        iter_var2: str = "",
    ) -> None:
        super().__init__(id, offset)
        self.iter_var = iter_var
        self.iter_var2 = iter_var2
        self.iter_range = iter_range
        self.accu_var = accu_var
        self.accu_init = accu_init
        self.loop_cond = loop_cond
        self.loop_step = loop_step
        self.result = result

    def children(self) -> list[Expr]:
        return [self.iter_range, self.accu_init, self.loop_cond, self.loop_step, self.result]


def walk(root: Expr) -> Iterator[Expr]:
    """All nodes, iteratively (deep trees must not hit Python's recursion limit)."""
    stack = [root]
    while stack:
        e = stack.pop()
        yield e
        stack.extend(e.children())


def depth(root: Expr) -> int:
    best = 0
    stack = [(root, 1)]
    while stack:
        e, d = stack.pop()
        if d > best:
            best = d
        for c in e.children():
            stack.append((c, d + 1))
    return best
