"""What cel-go evaluates while it *builds* a program, so that a failure there is a compile error.

The Kubernetes environment creates programs with ``cel.EvalOptions(cel.OptOptimize)``, and
its regex library adds ``cel.OptimizeRegex`` for ``find``/``findAll``.  cel-go's planner then
decorates every node it plans, children first (``interpreter/decorators.go``,
``interpreter/optimizations.go``):

- a list or map literal whose elements (keys and values) are all constants becomes a constant;
- a call of a type-conversion function (``bool bytes double duration dyn int string timestamp
  type uint``) on one constant argument is evaluated; an error stops program creation;
- a constant string pattern (argument 1, the receiver counting as 0) of ``matches``, ``find``
  or ``findAll`` is compiled; a bad pattern stops program creation;
- an identifier typed as a type is looked up as a type name; a name that is not one (a
  comprehension variable holding a type, as in ``[int].all(x, x == int)``) stops it too.

Nothing else is folded: ``quantity('bad')`` or ``'bad'.matches(x)`` stay runtime errors.  The
DRA compiler reports these failures as ``program instantiation failed: <message>``.  drakit's
own planner folds far more (lazily, raising at run time), so this pass mirrors exactly cel-go's
set, visiting nodes in cel-go's planning order so that the first failure reported is the same.
"""

from __future__ import annotations

from typing import Any

from drakit.selectors import types as T
from drakit.selectors.ast import (
    Call,
    Comprehension,
    CreateList,
    CreateMap,
    CreateStruct,
    Expr,
    Ident,
    Literal,
    Select,
)
from drakit.selectors.checker import CheckedExpr
from drakit.selectors.decls import TYPE_IDENTS
from drakit.selectors.types import EvalError, TypeValue
from drakit.selectors.values import type_name

_CONVERSIONS = frozenset(
    {"bool", "bytes", "double", "duration", "dyn", "int", "string", "timestamp", "type", "uint"}
)
_REGEX_FUNCTIONS = frozenset({"matches", "find", "findAll"})


class _Failed(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _Const:
    """A value cel-go knows while planning (``InterpretableConst``); ``error`` when folding a
    literal produced an error value rather than failing."""

    __slots__ = ("error", "value")

    def __init__(self, value: Any = None, error: str | None = None) -> None:
        self.value = value
        self.error = error


def instantiation_error(checked: CheckedExpr) -> str | None:
    """The message cel-go's program creation fails with, or None when it succeeds."""
    try:
        _Walker(checked).walk(checked.expr)
    except _Failed as f:
        return f.message
    return None


class _Walker:
    def __init__(self, checked: CheckedExpr) -> None:
        self.c = checked

    def walk(self, e: Expr) -> _Const | None:
        if isinstance(e, Literal):
            return _Const(e.value)
        if isinstance(e, Ident):
            return self._ident(e.id, self.c.idents.get(e.id, e.name.lstrip(".")))
        if isinstance(e, Select):
            if e.id in self.c.idents and not e.test_only:
                return self._ident(e.id, self.c.idents[e.id])
            self.walk(e.operand)
            return None
        if isinstance(e, CreateList):
            elems = [self.walk(x) for x in e.elements]
            if e.optional_indices:
                return None
            return self._aggregate(elems, lambda vs: list(vs))
        if isinstance(e, CreateMap):
            parts: list[_Const | None] = []
            for ent in e.entries:
                parts.append(self.walk(ent.key))
                parts.append(self.walk(ent.value))
            if any(ent.optional for ent in e.entries):
                return None
            return self._aggregate(parts, _build_map)
        if isinstance(e, CreateStruct):
            for f in e.fields:
                self.walk(f.value)
            return None
        if isinstance(e, Comprehension):
            # cel-go plans the accumulator's initial value before the range.
            for part in (e.accu_init, e.iter_range, e.loop_cond, e.loop_step, e.result):
                self.walk(part)
            return None
        if isinstance(e, Call):
            return self._call(e)
        return None

    def _ident(self, node: int, name: str) -> _Const | None:
        t = self.c.types.get(node)
        if t is None or t.kind != T.TYPE_K:
            return None
        if name in TYPE_IDENTS:
            return _Const(TypeValue(name))
        raise _Failed(f"reference to undefined type: {name}")

    @staticmethod
    def _aggregate(parts: list[_Const | None], build: Any) -> _Const | None:
        consts = [p for p in parts if p is not None]
        if len(consts) != len(parts):
            return None
        for p in consts:
            if p.error is not None:
                return _Const(error=p.error)
        try:
            return _Const(build([p.value for p in consts]))
        except EvalError as err:
            return _Const(error=err.message)

    def _call(self, e: Call) -> _Const | None:
        fname = self.c.functions.get(e.id, e.function)
        member = e.target is not None and fname == e.function
        operands = [e.target, *e.args] if member and e.target is not None else list(e.args)
        args = [self.walk(a) for a in operands]
        if fname in _CONVERSIONS and len(args) == 1 and args[0] is not None:
            arg = args[0]
            if arg.error is not None:
                raise _Failed(arg.error)
            try:
                return _Const(self._convert(e, fname, arg.value))
            except EvalError as err:
                raise _Failed(err.message) from None
        if fname in ("_[_]", "_[?_]") and len(args) == 2 and args[1] is not None:
            # A constant index becomes an attribute qualifier; cel-go has qualifiers for
            # strings, integers, bools and doubles only.
            key = args[1]
            kind = _go_type(key.value) if key.error is None else "*types.Err"
            if kind:
                raise _Failed(f"invalid qualifier type: {kind}")
            return None
        if fname in _REGEX_FUNCTIONS and len(args) > 1 and args[1] is not None:
            pattern = args[1].value
            if args[1].error is None and type(pattern) is str:
                from drakit.selectors.library.standard import compile_re2

                try:
                    compile_re2(pattern)
                except EvalError as err:
                    raise _Failed(err.message) from None
        return None

    def _convert(self, e: Call, fname: str, value: Any) -> Any:
        from drakit.selectors.interpreter import _dispatcher

        decl = self.c.env.functions.get(fname)
        if decl is None:
            raise EvalError("no such overload")
        ids = self.c.overloads.get(e.id, [])
        overloads = [o for o in (decl.by_id(i) for i in ids) if o is not None]
        return _dispatcher(overloads, fname)(value)


def _go_type(v: Any) -> str:
    """Go's ``%T`` of a constant that cannot qualify an attribute; empty when it can."""
    t = type(v)
    if t in (str, int, T.Uint, bool, float):
        return ""
    if t is bytes:
        return "types.Bytes"
    if v is None:
        return "types.Null"
    if t is TypeValue:
        return "*types.Type"
    if t is T.Duration:
        return "types.Duration"
    if t is T.Timestamp:
        return "types.Timestamp"
    if isinstance(v, dict):
        return "*types.baseMap"
    if isinstance(v, list | tuple):
        return "*types.baseList"
    return f"{type_name(v)}"


def _build_map(flat: list[Any]) -> dict[Any, Any]:
    """A constant map literal as cel-go builds it: later duplicates replace earlier ones."""
    out: dict[Any, Any] = {}
    for i in range(0, len(flat), 2):
        out[T.map_key(flat[i])] = flat[i + 1]
    return out
