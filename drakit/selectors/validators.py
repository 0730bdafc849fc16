"""AST validators: what cel-go runs on a successfully type-checked AST (``cel/validator.go``).

The Kubernetes base environment turns on the literal validators (``matches``, ``duration``,
``timestamp`` arguments) and homogeneous aggregate literals; ext.Strings adds its ``format``
validator.  They need the function libraries' implementations, which is why they live
outside the checker: the libraries declare into the checker's environment.
"""

from __future__ import annotations

from drakit.selectors import types as T
from drakit.selectors.ast import Call, CreateList, CreateMap, Expr, Literal
from drakit.selectors.checker import CheckedExpr
from drakit.selectors.library.formatting import validate_format_calls
from drakit.selectors.library.standard import compile_re2
from drakit.selectors.types import CelType

# Functions whose list/map literal arguments may mix types: ext strings' format validator
# exempts ``format`` (its argument list is heterogeneous by design).
_HOMOGENEITY_EXEMPT = frozenset({"format"})


def _equivalent(a: CelType, b: CelType) -> bool:
    """cel-go Type.IsEquivalentType: same kind, name and parameters; type parameters match any name."""
    if a == b:
        return True
    if a.kind != b.kind or len(a.params) != len(b.params):
        return False
    if a.kind != T.PARAM_K and a.name != b.name:
        return False
    return all(_equivalent(x, y) for x, y in zip(a.params, b.params, strict=True))


def validate(checked: CheckedExpr) -> list[tuple[int, str]]:
    """Every validator's errors as ``(offset, message)``, in cel-go's order."""
    errors: list[tuple[int, str]] = []
    types = checked.types

    def mismatch(e: Expr, want: CelType, got: CelType) -> None:
        errors.append((e.offset, f"expected type '{T.format_type(want)}' but found '{T.format_type(got)}'"))

    def literal_ok(call: Call, arg: Expr) -> bool:
        """Evaluate a conversion of a literal the way the duration/timestamp validators do."""
        ids = checked.overloads.get(call.id, [])
        fn = checked.env.functions.get(checked.functions.get(call.id, call.function))
        for oid in ids:
            o = fn.by_id(oid) if fn is not None else None
            if o is None or o.impl is None:
                continue
            if o.params and not _equivalent(o.params[0], types.get(arg.id, T.DYN_T)):
                continue
            try:
                o.impl(arg.value if isinstance(arg, Literal) else None)
            except Exception:
                return False
            return True
        return True

    # Iterative walk carrying "inside a format() call" (deep trees must not recurse).
    stack: list[tuple[Expr, bool]] = [(checked.expr, False)]
    while stack:
        e, exempt = stack.pop()
        if isinstance(e, Call):
            name = checked.functions.get(e.id, e.function)
            if e.args and isinstance(e.args[0], Literal):
                lit = e.args[0]
                if name == "matches" and isinstance(lit.value, str):
                    try:
                        compile_re2(lit.value)
                    except Exception:
                        errors.append((lit.offset, "invalid matches argument"))
                elif name in ("duration", "timestamp") and not literal_ok(e, lit):
                    errors.append((lit.offset, f"invalid {name} argument"))
            exempt = exempt or name in _HOMOGENEITY_EXEMPT
        elif isinstance(e, CreateList) and not exempt:
            first: CelType | None = None
            for i, x in enumerate(e.elements):
                et = types.get(x.id, T.DYN_T)
                if i in e.optional_indices and et.kind == T.OPAQUE_K and et.name == "optional_type":
                    et = et.params[0]
                if first is None:
                    first = et
                elif not _equivalent(first, et):
                    mismatch(x, first, et)
                    break
        elif isinstance(e, CreateMap) and not exempt:
            kt: CelType | None = None
            vt: CelType | None = None
            for ent in e.entries:
                k, v = types.get(ent.key.id, T.DYN_T), types.get(ent.value.id, T.DYN_T)
                if ent.optional and v.kind == T.OPAQUE_K and v.name == "optional_type":
                    v = v.params[0]
                if kt is None or vt is None:
                    kt, vt = k, v
                    continue
                if not _equivalent(kt, k):
                    mismatch(ent.key, kt, k)
                if not _equivalent(vt, v):
                    mismatch(ent.value, vt, v)
        stack.extend((c, exempt) for c in reversed(e.children()))
    # ext.Strings' validator comes after the base environment's literal validators.
    errors.extend(validate_format_calls(checked.expr, types, checked.overloads))
    return errors
