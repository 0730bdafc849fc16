"""The CEL type checker (cel-go ``checker/``), with cel-go's error texts.

Kubernetes decides at compile time whether a selector is acceptable (``device.driver == 1``,
``memory < quantity("1Gi")``, unknown variables, non-bool results), so drakit needs a real
checker rather than runtime duck typing.  This follows cel-go's algorithm: overload
resolution over all declared overloads with type-parameter substitution, homogeneous
aggregate literals (the Kubernetes base environment enables them), comprehension scoping,
and the final substitution of free type parameters by ``dyn``.  For every call it records all
overloads that may apply, which the cost estimator and the interpreter both use.
"""

from __future__ import annotations

from dataclasses import dataclass

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
from drakit.selectors.decls import TYPE_IDENTS, Env, Function
from drakit.selectors.parser import ParsedExpr
from drakit.selectors.types import CelType

# ---------------------------------------------------------------------------------------------
# Type relations (cel-go checker/types.go)

Mapping = dict[str, CelType]


def _is_dyn(t: CelType) -> bool:
    return t.kind in (T.DYN_K, T.ANY_K)


def _is_dyn_or_error(t: CelType) -> bool:
    return t.kind in (T.DYN_K, T.ANY_K, T.ERROR_K)


def _exact(a: CelType, b: CelType) -> bool:
    return a == b


def _type_assignable(t1: CelType, t2: CelType) -> bool:
    """cel-go Type.IsAssignableType: can a ``t2`` be used where ``t1`` is wanted?"""
    if t1 == t2 or _is_dyn(t1):
        return True
    if t1.kind != t2.kind or t1.name != t2.name or len(t1.params) != len(t2.params):
        return False
    return all(_type_assignable(a, b) for a, b in zip(t1.params, t2.params, strict=True))


def _assignable_null(t: CelType) -> bool:
    """cel-go's internalIsAssignableNull: the legacy nullable kinds, and null itself."""
    return t.kind in (
        T.ANY_K,
        T.DURATION_K,
        T.NULL_K,
        T.OPAQUE_K,
        T.STRUCT_K,
        T.TIMESTAMP_K,
    )


def is_assignable(m: Mapping, t1: CelType, t2: CelType) -> bool:
    if t2.kind == T.PARAM_K:
        valid, has_sub = _valid_substitution(m, t1, t2)
        if valid:
            return True
        if has_sub:
            return False
    if t1.kind == T.PARAM_K:
        return _valid_substitution(m, t2, t1)[0]
    if _is_dyn_or_error(t1) or _is_dyn_or_error(t2):
        return True
    if t1.kind == T.NULL_K:
        return _assignable_null(t2)
    if t2.kind == T.NULL_K:
        return _assignable_null(t1)
    k = t1.kind
    if k in (
        T.BOOL_K,
        T.BYTES_K,
        T.DOUBLE_K,
        T.INT_K,
        T.STRING_K,
        T.UINT_K,
        T.ANY_K,
        T.DURATION_K,
        T.TIMESTAMP_K,
        T.STRUCT_K,
    ):
        return _type_assignable(t1, t2)
    if k == T.TYPE_K:
        return t2.kind == T.TYPE_K
    if k in (T.OPAQUE_K, T.LIST_K, T.MAP_K):
        return (
            t1.kind == t2.kind
            and t1.name == t2.name
            and len(t1.params) == len(t2.params)
            and all(is_assignable(m, a, b) for a, b in zip(t1.params, t2.params, strict=True))
        )
    return t1 == t2


def _valid_substitution(m: Mapping, t1: CelType, t2: CelType) -> tuple[bool, bool]:
    if t1.kind == t2.kind and t1 == t2:
        return True, True
    sub = m.get(t2.name)
    if sub is not None:
        if t1.kind == sub.kind and t1 == sub:
            return True, True
        if is_assignable(m, t1, sub):
            new = most_general(t1, sub)
            if _not_referenced_in(m, t2, new):
                m[t2.name] = new
            return True, True
        return False, True
    if _not_referenced_in(m, t2, t1):
        m[t2.name] = t1
        return True, False
    return False, False


def most_general(t1: CelType, t2: CelType) -> CelType:
    return t1 if _less_specific(t1, t2) else t2


def _less_specific(t1: CelType, t2: CelType) -> bool:
    if _is_dyn(t1) or t1.kind == T.PARAM_K:
        return True
    if _is_dyn(t2) or t2.kind == T.PARAM_K:
        return False
    if t1.kind != t2.kind:
        return False
    if t1.kind == T.OPAQUE_K:
        return (
            t1.name == t2.name
            and len(t1.params) == len(t2.params)
            and all(_less_specific(a, b) for a, b in zip(t1.params, t2.params, strict=True))
        )
    if t1.kind == T.LIST_K:
        return _less_specific(t1.params[0], t2.params[0])
    if t1.kind == T.MAP_K:
        return _less_specific(t1.params[0], t2.params[0]) and _less_specific(t1.params[1], t2.params[1])
    if t1.kind == T.TYPE_K:
        return True
    return t1 == t2


def _not_referenced_in(m: Mapping, t: CelType, within: CelType) -> bool:
    if t == within:
        return False
    if within.kind == T.PARAM_K:
        sub = m.get(within.name)
        if sub is None:
            return True
        return _not_referenced_in(m, t, sub)
    if within.kind in (T.OPAQUE_K, T.LIST_K, T.MAP_K, T.TYPE_K):
        return all(_not_referenced_in(m, t, p) for p in within.params)
    return True


def substitute(m: Mapping, t: CelType, to_dyn: bool) -> CelType:
    if t.kind == T.PARAM_K:
        sub = m.get(t.name)
        if sub is not None:
            return substitute(m, sub, to_dyn)
        return T.DYN_T if to_dyn else t
    if t.params:
        return CelType(t.kind, t.name, tuple(substitute(m, p, to_dyn) for p in t.params))
    return t


def _instantiate(t: CelType, subs: dict[str, CelType]) -> CelType:
    if t.kind == T.PARAM_K:
        return subs.get(t.name, t)
    if t.params:
        return CelType(t.kind, t.name, tuple(_instantiate(p, subs) for p in t.params))
    return t


def unwrap_optional(t: CelType) -> tuple[CelType, bool]:
    if t.kind == T.OPAQUE_K and t.name == "optional_type":
        return t.params[0], True
    return t, False


# ---------------------------------------------------------------------------------------------
# The checker


@dataclass
class CheckedExpr:
    """A type-checked expression: node types, overload candidates, resolved identifiers."""

    parsed: ParsedExpr
    types: dict[int, CelType]
    overloads: dict[int, list[str]]
    functions: dict[int, str]  # call id -> resolved (possibly qualified) function name
    idents: dict[int, str]  # ident/select id -> variable name it resolves to
    env: Env

    @property
    def expr(self) -> Expr:
        return self.parsed.expr

    @property
    def output_type(self) -> CelType:
        return self.types[self.parsed.expr.id]


class Checker:
    def __init__(self, env: Env, parsed: ParsedExpr) -> None:
        self.env = env
        self.parsed = parsed
        self.types: dict[int, CelType] = {}
        self.overloads: dict[int, list[str]] = {}
        self.functions: dict[int, str] = {}
        self.idents: dict[int, str] = {}
        self.mapping: Mapping = {}
        self.scopes: list[dict[str, CelType]] = []
        self.errors: list[tuple[int, str]] = []
        self.fresh = 0

    # helpers -------------------------------------------------------------------------------
    def error(self, e: Expr | int, msg: str) -> None:
        off = e if isinstance(e, int) else e.offset
        self.errors.append((off, msg))

    def new_var(self) -> CelType:
        self.fresh += 1
        return T.param(f"_var{self.fresh - 1}")

    def assignable(self, t1: CelType, t2: CelType) -> bool:
        m = dict(self.mapping)
        if is_assignable(m, t1, t2):
            self.mapping = m
            return True
        return False

    def set(self, e: Expr, t: CelType) -> CelType:
        self.types[e.id] = t
        return t

    def lookup_var(self, name: str) -> tuple[CelType | None, bool]:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name], True
        if name in self.env.variables:
            return self.env.variables[name], False
        if name in TYPE_IDENTS:
            return TYPE_IDENTS[name], False
        return None, False

    def fmt(self, t: CelType) -> str:
        return T.format_type(substitute(self.mapping, t, True))

    # entry ---------------------------------------------------------------------------------
    def run(self) -> CheckedExpr:
        self.check(self.parsed.expr)
        final = {i: substitute(self.mapping, t, True) for i, t in self.types.items()}
        return CheckedExpr(self.parsed, final, self.overloads, self.functions, self.idents, self.env)

    def check(self, e: Expr) -> CelType:
        if isinstance(e, Literal):
            return self.set(e, _literal_type(e.value))
        if isinstance(e, Ident):
            return self.check_ident(e)
        if isinstance(e, Select):
            return self.check_select(e)
        if isinstance(e, Call):
            return self.check_call(e)
        if isinstance(e, CreateList):
            return self.check_list(e)
        if isinstance(e, CreateMap):
            return self.check_map(e)
        if isinstance(e, CreateStruct):
            return self.check_struct(e)
        if isinstance(e, Comprehension):
            return self.check_comprehension(e)
        raise AssertionError(f"unknown node {e!r}")

    def check_ident(self, e: Ident) -> CelType:
        name = e.name[1:] if e.name.startswith(".") else e.name
        t, _local = self.lookup_var(name)
        if t is None:
            self.error(e, f"undeclared reference to '{e.name}' (in container '')")
            return self.set(e, T.ERROR)
        self.idents[e.id] = name
        return self.set(e, t)

    def _qualified(self, e: Expr) -> str | None:
        parts = []
        while isinstance(e, Select) and not e.test_only:
            parts.append(e.field)
            e = e.operand
        if not isinstance(e, Ident):
            return None
        parts.append(e.name.lstrip("."))
        return ".".join(reversed(parts))

    def check_select(self, e: Select) -> CelType:
        if not e.test_only:
            q = self._qualified(e)
            if q is not None and "." in q:
                root = q.split(".", 1)[0]
                if not any(root in s for s in self.scopes):
                    if q in self.env.variables:
                        self.idents[e.id] = q
                        return self.set(e, self.env.variables[q])
                    if q in TYPE_IDENTS:  # google.protobuf.Duration, google.protobuf.Timestamp
                        self.idents[e.id] = q
                        return self.set(e, TYPE_IDENTS[q])
        operand_t = substitute(self.mapping, self.check(e.operand), False)
        inner, is_opt = unwrap_optional(operand_t)
        if e.test_only:
            self._field_type(e, inner)
            return self.set(e, T.BOOL)
        ft = self._field_type(e, inner)
        if is_opt:
            ft = T.optional_of(ft)
        return self.set(e, ft)

    def _field_type(self, e: Expr, t: CelType, fieldname: str | None = None) -> CelType:
        name = fieldname if fieldname is not None else e.field  # type: ignore[attr-defined]
        if t.kind == T.MAP_K:
            return t.params[1]
        if t.kind == T.STRUCT_K:
            fields = self.env.structs.get(t.name)
            if fields is None:  # a library's object type without a field schema
                self.error(e, f"unexpected failed resolution of '{t.name}'")
                return T.ERROR
            if name not in fields:
                self.error(e, f"undefined field '{name}'")
                return T.ERROR
            return fields[name]
        if t.kind == T.PARAM_K:
            self.assignable(T.DYN_T, t)
            return T.DYN_T
        if not _is_dyn_or_error(t):
            self.error(e, f"type '{self.fmt(t)}' does not support field selection")
        return T.DYN_T

    def check_call(self, e: Call) -> CelType:
        fn_name = e.function
        if fn_name == "_?._" and len(e.args) == 2 and e.target is None:
            operand_t = substitute(self.mapping, self.check(e.args[0]), False)
            self.check(e.args[1])
            inner, _ = unwrap_optional(operand_t)
            field_lit = e.args[1]
            fname = (
                field_lit.value if isinstance(field_lit, Literal) and isinstance(field_lit.value, str) else ""
            )
            ft = self._field_type(e, inner, fname)
            self.overloads[e.id] = ["select_optional_field"]
            self.functions[e.id] = fn_name
            return self.set(e, T.optional_of(ft))
        for a in e.args:
            self.check(a)
        if e.target is not None:
            q = self._qualified(e.target)
            if q is not None:
                root = q.split(".", 1)[0]
                qfn = self.env.functions.get(q + "." + fn_name)
                if qfn is not None and not any(root in s for s in self.scopes):
                    self.functions[e.id] = qfn.name
                    return self.resolve(e, qfn, None)
            self.check(e.target)
            fn = self.env.functions.get(fn_name)
            if fn is None:
                self.error(e, f"undeclared reference to '{fn_name}' (in container '')")
                return self.set(e, T.ERROR)
            self.functions[e.id] = fn_name
            return self.resolve(e, fn, e.target)
        name = fn_name.lstrip(".")
        fn = self.env.functions.get(name)
        if fn is None:
            self.error(e, f"undeclared reference to '{name}' (in container '')")
            return self.set(e, T.ERROR)
        self.functions[e.id] = name
        return self.resolve(e, fn, None)

    def resolve(self, e: Call, fn: Function, target: Expr | None) -> CelType:
        arg_types = ([self.types[target.id]] if target is not None else []) + [
            self.types[a.id] for a in e.args
        ]
        if fn.name in ("_&&_", "_||_"):
            ok = True
            for a, t in zip(e.args, arg_types, strict=True):
                if not self.assignable(t, T.BOOL):
                    # cel-go's typeMismatch prints the recorded type as is (free type variables
                    # keep their _varN names).
                    self.error(a, f"expected type 'bool' but found '{T.format_type(t)}'")
                    ok = False
            self.overloads[e.id] = ["logical_and" if fn.name == "_&&_" else "logical_or"]
            return self.set(e, T.BOOL if ok else T.ERROR)
        result: CelType | None = None
        ids: list[str] = []
        for o in fn.overloads:
            if o.member != (target is not None) or len(o.params) != len(arg_types):
                continue
            tparams = o.type_params
            params: tuple[CelType, ...] = o.params
            res = o.result
            if tparams:
                subs = {p: self.new_var() for p in sorted(tparams)}
                params = tuple(_instantiate(p, subs) for p in params)
                res = _instantiate(res, subs)
            m = dict(self.mapping)
            if all(is_assignable(m, a, p) for a, p in zip(arg_types, params, strict=True)):
                self.mapping = m
                ids.append(o.id)
                fr = substitute(self.mapping, res, False)
                if result is None:
                    result = fr
                elif not _is_dyn(result) and fr != result:
                    result = T.DYN_T
        if result is None:
            shown = [self.fmt(t) for t in arg_types]
            sig = f"{shown[0]}.({', '.join(shown[1:])})" if target is not None else f"({', '.join(shown)})"
            self.error(e, f"found no matching overload for '{fn.name}' applied to '{sig}'")
            return self.set(e, T.ERROR)
        self.overloads[e.id] = ids
        return self.set(e, result)

    def _join(self, e: Expr, prev: CelType | None, cur: CelType) -> CelType:
        if prev is None:
            return cur
        if self.assignable(prev, cur):
            return most_general(prev, cur)
        # cel-go's checker joins mixed element types to dyn; the Kubernetes environment rejects
        # mixed literals afterwards, in the homogeneous-literal validator (``validate`` below),
        # which exempts the arguments of format().
        return T.DYN_T

    def check_list(self, e: CreateList) -> CelType:
        elem: CelType | None = None
        for i, x in enumerate(e.elements):
            t = self.check(x)
            if i in e.optional_indices:
                inner, is_opt = unwrap_optional(t)
                if not is_opt and not _is_dyn(inner):
                    self.error(
                        x, f"expected type '{self.fmt(T.optional_of(inner))}' but found '{self.fmt(inner)}'"
                    )
                t = inner
            elem = self._join(x, elem, t)
        return self.set(e, T.list_of(elem if elem is not None else self.new_var()))

    def check_map(self, e: CreateMap) -> CelType:
        kt: CelType | None = None
        vt: CelType | None = None
        for ent in e.entries:
            k = self.check(ent.key)
            kt = self._join(ent.key, kt, k)
            v = self.check(ent.value)
            if ent.optional:
                inner, is_opt = unwrap_optional(v)
                if not is_opt and not _is_dyn(inner):
                    self.error(
                        ent.value,
                        f"expected type '{self.fmt(T.optional_of(inner))}' but found '{self.fmt(inner)}'",
                    )
                v = inner
            vt = self._join(ent.value, vt, v)
        return self.set(
            e, T.map_of(kt if kt is not None else self.new_var(), vt if vt is not None else self.new_var())
        )

    def check_struct(self, e: CreateStruct) -> CelType:
        for f in e.fields:
            self.check(f.value)
        name = e.type_name.lstrip(".")
        if name not in self.env.structs:
            self.error(e, f"undeclared reference to '{name}' (in container '')")
            return self.set(e, T.ERROR)
        fields = self.env.structs[name]
        for f in e.fields:
            if f.name not in fields:
                self.error(f.offset, f"undefined field '{f.name}'")
        return self.set(e, T.struct(name))

    def check_comprehension(self, e: Comprehension) -> CelType:
        self.check(e.iter_range)
        self.check(e.accu_init)
        range_t = substitute(self.mapping, self.types[e.iter_range.id], False)
        accu_t = self.types[e.accu_init.id]
        self.scopes.append({e.accu_var: accu_t})
        v2: CelType | None = None
        if range_t.kind == T.LIST_K:
            v1 = range_t.params[0]
            if e.iter_var2:
                v2, v1 = v1, T.INT
        elif range_t.kind == T.MAP_K:
            v1 = range_t.params[0]
            if e.iter_var2:
                v2 = range_t.params[1]
        elif range_t.kind in (T.DYN_K, T.ERROR_K, T.PARAM_K):
            self.assignable(T.DYN_T, range_t)
            v1 = T.DYN_T
            v2 = T.DYN_T if e.iter_var2 else None
        else:
            self.error(
                e.iter_range,
                f"expression of type '{self.fmt(range_t)}' cannot be range of a comprehension "
                "(must be list, map, or dynamic)",
            )
            v1 = T.ERROR
            v2 = T.ERROR if e.iter_var2 else None
        scope = {e.iter_var: v1}
        if e.iter_var2 and v2 is not None:
            scope[e.iter_var2] = v2
        self.scopes.append(scope)
        ct = self.check(e.loop_cond)
        if not self.assignable(T.BOOL, ct):
            self.error(e.loop_cond, f"expected type 'bool' but found '{self.fmt(ct)}'")
        st = self.check(e.loop_step)
        if not self.assignable(accu_t, st):
            self.error(e.loop_step, f"expected type '{self.fmt(accu_t)}' but found '{self.fmt(st)}'")
        self.scopes.pop()
        rt = self.check(e.result)
        self.scopes.pop()
        return self.set(e, substitute(self.mapping, rt, False))


def _literal_type(v: object) -> CelType:
    if v is None:
        return T.NULL
    if type(v) is bool:
        return T.BOOL
    if type(v) is T.Uint:
        return T.UINT
    if type(v) is int:
        return T.INT
    if type(v) is float:
        return T.DOUBLE
    if type(v) is str:
        return T.STRING
    if type(v) is bytes:
        return T.BYTES
    raise AssertionError(f"literal {v!r}")


def check(env: Env, parsed: ParsedExpr) -> tuple[CheckedExpr, list[tuple[int, str]]]:
    """Type-check ``parsed``; the AST validators (:mod:`.validators`) run after a clean check."""
    c = Checker(env, parsed)
    checked = c.run()
    return checked, c.errors
