"""Probe a selector against one device: split it into conditions and quote the numbers.

A diagnosis needs more than "selector #1 is false": it needs *which part* is false and *by how
much* ("memory 81559Mi; the selector asks >= 80Gi = 81920Mi").  CEL has no such facility, so
this module walks the parsed expression itself:

* :func:`split_terms` cuts a selector at its top-level ``&&`` (by token, so string literals and
  parentheses are respected); each term becomes one funnel condition;
* :func:`projection` lists the device fields an expression reads, so the funnel can evaluate a
  selector once per distinct projection instead of once per device (40,000 GPUs on 5,000 nodes
  have a handful of distinct ``productName``/``memory`` pairs);
* :class:`Probe` evaluates the common selector shapes (attribute and capacity lookups,
  ``quantity``/``semver`` comparisons, string methods) directly on the device's wire dict and
  explains a false comparison.  Anything it does not understand yields "unknown", and the
  caller falls back to the real CEL evaluator for the truth value.

Hand-written because the CEL interpreter answers only true/false/error; the sub-expression
values a human needs are not part of its interface.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from drakit.explain import amounts
from drakit.selectors.library.standard import matches
from drakit.selectors.types import EvalError

# Comparison operators in the parser's function names, and how to print them.
_CMP = {"_<_": "<", "_<=_": "<=", "_>_": ">", "_>=_": ">=", "_==_": "==", "_!=_": "!="}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
_BINARY_SUFFIXES = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


class Unknown(Exception):
    """The probe cannot evaluate this shape; use the real CEL evaluator instead."""


class MissingKey(Exception):
    """``device.attributes[dom].id`` where the device has no such attribute (CEL: no such key)."""

    def __init__(self, kind: str, domain: str, ident: str) -> None:
        super().__init__(f"no such key: {ident}")
        self.kind = kind
        self.domain = domain
        self.ident = ident


# --- splitting ------------------------------------------------------------------------------


def split_terms(expression: str) -> list[str]:
    """The top-level ``&&`` conjuncts of ``expression`` as source text (``[expression]`` if none).

    A top-level ``||`` or ``?:`` binds looser than ``&&``, so then the expression is one term.
    """
    try:
        from drakit.selectors.parser import T_OP, tokenize

        tokens = tokenize(expression)
    except Exception:  # any lexer problem: the compile stage reports it
        return [expression]
    depth = 0
    cuts: list[tuple[int, int]] = []
    for t in tokens:
        if t.kind != T_OP:
            continue
        if t.text in ("(", "[", "{"):
            depth += 1
        elif t.text in (")", "]", "}"):
            depth -= 1
        elif depth == 0 and t.text in ("||", "?"):
            return [expression]
        elif depth == 0 and t.text == "&&":
            cuts.append((t.offset, t.offset + 2))
    if not cuts:
        return [expression]
    terms: list[str] = []
    start = 0
    for lo, hi in cuts:
        terms.append(expression[start:lo].strip())
        start = hi
    terms.append(expression[start:].strip())
    return [t for t in terms if t]


def _parse(expression: str) -> Any:
    from drakit.selectors.parser import parse

    return parse(expression).expr


# --- projection -----------------------------------------------------------------------------

Ref = tuple[str, str, str | None]  # (attributes|capacity|driver|multi, domain, id or None = whole domain)


def projection(expression: str) -> tuple[Ref, ...] | None:
    """The device fields ``expression`` reads, or ``None`` if it reads them dynamically."""
    try:
        root = _parse(expression)
    except Exception:
        return None
    from drakit.selectors.ast import Call, Ident, Literal, Select, walk

    refs: set[Ref] = set()
    consumed: set[int] = set()  # ids of `device` Ident nodes accounted for
    device_idents = 0
    for e in walk(root):
        if isinstance(e, Ident) and e.name == "device":
            device_idents += 1
        if isinstance(e, Select) and isinstance(e.operand, Ident) and e.operand.name == "device":
            if e.field == "driver":
                refs.add(("driver", "", None))
                consumed.add(e.operand.id)
            elif e.field == "allowMultipleAllocations":
                refs.add(("multi", "", None))
                consumed.add(e.operand.id)
        # device.<kind>[lit] followed by .id / [lit] / "id" in ...
        if isinstance(e, Call) and e.function == "_[_]" and len(e.args) == 2:
            inner, key = e.args
            dom = _domain_map(inner)
            if dom is not None and isinstance(key, Literal) and isinstance(key.value, str):
                refs.add((dom[0], dom[1], key.value))
                consumed.add(dom[2])
        if isinstance(e, Select):
            dom = _domain_map(e.operand)
            if dom is not None:
                refs.add((dom[0], dom[1], e.field))
                consumed.add(dom[2])
        if isinstance(e, Call) and e.function == "@in" and len(e.args) == 2:
            dom = _domain_map(e.args[1])
            if dom is not None:
                refs.add((dom[0], dom[1], None))
                consumed.add(dom[2])
            elif (
                isinstance(e.args[1], Select)
                and isinstance(e.args[1].operand, Ident)
                and e.args[1].operand.name == "device"
                and e.args[1].field in ("attributes", "capacity")
            ):
                refs.add((e.args[1].field, "*", None))
                consumed.add(e.args[1].operand.id)
    if len(consumed) != device_idents:
        return None
    return tuple(sorted(refs, key=lambda r: (r[0], r[1], r[2] or "")))


def _domain_map(e: Any) -> tuple[str, str, int] | None:
    """``device.attributes["dom"]`` -> (kind, dom, id of the ``device`` ident)."""
    from drakit.selectors.ast import Call, Ident, Literal, Select

    if (
        isinstance(e, Call)
        and e.function == "_[_]"
        and len(e.args) == 2
        and isinstance(e.args[0], Select)
        and isinstance(e.args[0].operand, Ident)
        and e.args[0].operand.name == "device"
        and e.args[0].field in ("attributes", "capacity")
        and isinstance(e.args[1], Literal)
        and isinstance(e.args[1].value, str)
    ):
        return e.args[0].field, e.args[1].value, e.args[0].operand.id
    return None


_ATOMIC = frozenset((str, int, float, bool, type(None)))


def _freeze(v: Any) -> Hashable:
    """A hashable copy of a wire value (exact types: ``isinstance`` on ABCs is slow at 40k devices)."""
    t = type(v)
    if t in _ATOMIC:
        return v
    if t is dict:
        items = tuple(v.items())
        for _, x in items:  # an attribute or capacity value: a dict of scalars, already hashable
            if type(x) not in _ATOMIC:
                return tuple((k, _freeze(x)) for k, x in items)
        return items
    if t is list or t is tuple:
        return tuple(_freeze(x) for x in v)
    if isinstance(v, Mapping):
        return tuple((k, _freeze(x)) for k, x in v.items())
    return v


def raw_lookup(device: Mapping[str, Any], driver: str, kind: str, domain: str, ident: str) -> Any:
    """The wire value of attribute/capacity ``domain/ident`` as the CEL view would see it."""
    table = device.get(kind) or {}
    qualified = f"{domain}/{ident}"
    if qualified in table:
        return table[qualified]
    if domain == driver and ident in table:
        return table[ident]
    return None


def project(refs: tuple[Ref, ...], driver: str, device: Mapping[str, Any]) -> Hashable:
    """A hashable key equal for any two devices ``refs`` cannot tell apart.

    Runs once per device of the inventory, hence the inlined :func:`raw_lookup`.
    """
    out: list[Hashable] = []
    for kind, domain, ident in refs:
        if ident is not None:
            table = device.get(kind) or {}
            qualified = f"{domain}/{ident}"
            if qualified in table:
                out.append(_freeze(table[qualified]))
            elif domain == driver and ident in table:
                out.append(_freeze(table[ident]))
            else:
                out.append(None)
        elif kind == "driver":
            out.append(driver)
        elif kind == "multi":
            out.append(bool(device.get("allowMultipleAllocations")))
        else:
            table = device.get(kind) or {}
            if domain == "*":
                out.append(tuple(sorted({k.split("/", 1)[0] if "/" in k else driver for k in table})))
            else:
                out.append(
                    tuple(
                        sorted(
                            k.split("/", 1)[1] if "/" in k else k
                            for k in table
                            if (k.split("/", 1)[0] if "/" in k else driver) == domain
                        )
                    )
                )
    return tuple(out)


def projector(refs: tuple[Ref, ...]) -> Callable[[str, Mapping[str, Any]], Hashable]:
    """:func:`project` for one ``refs``, planned once: the same keys, cheaper per device.

    Only named lookups and ``device.driver`` are planned; anything else falls back to
    :func:`project` itself.
    """
    if any(ident is None and kind != "driver" for kind, _, ident in refs):
        return lambda driver, device: project(refs, driver, device)
    plan = tuple((kind, f"{domain}/{ident}", domain, ident) for kind, domain, ident in refs)

    def key(driver: str, device: Mapping[str, Any]) -> Hashable:
        out: list[Hashable] = []
        for kind, qualified, domain, ident in plan:
            if kind == "driver":
                out.append(driver)
                continue
            table = device.get(kind) or {}
            if qualified in table:
                out.append(_freeze(table[qualified]))
            elif domain == driver and ident in table:
                out.append(_freeze(table[ident]))
            else:
                out.append(None)
        return tuple(out)

    return key


# --- evaluation -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Qty:
    value: Fraction
    text: str


@dataclass(frozen=True)
class Ver:
    text: str

    def compare(self, other: Ver) -> int:
        return _semver(self.text).compare(_semver(other.text))


@dataclass(frozen=True)
class _Dev:
    driver: str
    raw: Mapping[str, Any]


@dataclass(frozen=True)
class _KindMap:
    kind: str


@dataclass(frozen=True)
class _DomainMap:
    kind: str
    domain: str


@dataclass(frozen=True)
class Operand:
    """A device-side value with the name a human knows it by."""

    name: str  # "memory", "productName", "driver"
    value: Any


def _attr_value(raw: Any) -> Any:
    if not isinstance(raw, Mapping):
        raise Unknown("attribute value")
    for kind in ("int", "bool", "string"):
        if raw.get(kind) is not None:
            return raw[kind]
    if raw.get("version") is not None:
        return Ver(str(raw["version"]))
    raise Unknown("unsupported attribute value")


class Probe:
    """Evaluate and explain selector terms on wire devices (see the module docstring)."""

    def __init__(self) -> None:
        self._ast: dict[str, Any] = {}

    def ast(self, expression: str) -> Any:
        if expression not in self._ast:
            try:
                self._ast[expression] = _parse(expression)
            except Exception:
                self._ast[expression] = None
        return self._ast[expression]

    def evaluate(self, expression: str, driver: str, device: Mapping[str, Any]) -> bool:
        """True/False; raises :class:`Unknown` or :class:`MissingKey`."""
        root = self.ast(expression)
        if root is None:
            raise Unknown("parse")
        v = self._eval(root, _Dev(driver, device))
        if not isinstance(v, bool):
            raise Unknown("not bool")
        return v

    # The evaluator covers what DRA selectors are written with in practice.
    def _eval(self, e: Any, dev: _Dev) -> Any:
        from drakit.selectors.ast import Call, Ident, Literal, Select

        if isinstance(e, Literal):
            if isinstance(e.value, bool | str | int | float):
                return e.value
            raise Unknown("literal")
        if isinstance(e, Ident):
            if e.name == "device":
                return dev
            raise Unknown(e.name)
        if isinstance(e, Select):
            base = self._eval(e.operand, dev)
            if isinstance(base, _Dev):
                if e.field == "driver":
                    return dev.driver
                if e.field in ("attributes", "capacity"):
                    return _KindMap(e.field)
                if e.field == "allowMultipleAllocations":
                    return bool(dev.raw.get("allowMultipleAllocations"))
                raise Unknown(e.field)
            if isinstance(base, _DomainMap):
                return self._lookup(base, e.field, dev, test_only=e.test_only)
            raise Unknown("select")
        if not isinstance(e, Call):
            raise Unknown(type(e).__name__)
        fn = e.function
        if fn == "_&&_":
            return self._and(e.args, dev)
        if fn == "_||_":
            errors: list[Exception] = []
            for a in e.args:
                try:
                    if self._eval(a, dev) is True:
                        return True
                except (MissingKey, Unknown) as x:
                    errors.append(x)
            if errors:
                raise errors[0]
            return False
        if fn == "!_":
            v = self._eval(e.args[0], dev)
            if not isinstance(v, bool):
                raise Unknown("!")
            return not v
        if fn == "_[_]":
            base = self._eval(e.args[0], dev)
            key = self._eval(e.args[1], dev)
            if isinstance(base, _KindMap) and isinstance(key, str):
                return _DomainMap(base.kind, key)
            if isinstance(base, _DomainMap) and isinstance(key, str):
                return self._lookup(base, key, dev)
            raise Unknown("index")
        if fn == "@in":
            container = self._eval(e.args[1], dev)
            key = self._eval(e.args[0], dev)
            if isinstance(container, _DomainMap):
                return self._has(container, key, dev)
            if isinstance(container, _KindMap):
                table = dev.raw.get(container.kind) or {}
                return any((k.split("/", 1)[0] if "/" in k else dev.driver) == key for k in table)
            if isinstance(container, list):
                return key in container
            raise Unknown("in")
        if fn in _CMP:
            a = self._eval(e.args[0], dev)
            b = self._eval(e.args[1], dev)
            return _compare(_CMP[fn], a, b)
        if e.target is None:
            args = [self._eval(a, dev) for a in e.args]
            if fn == "quantity" and len(args) == 1 and isinstance(args[0], str):
                return Qty(amounts.value(args[0]), args[0])
            if fn == "semver" and len(args) == 1 and isinstance(args[0], str):
                return Ver(args[0])
            if fn == "size" and len(args) == 1 and isinstance(args[0], str):
                return len(args[0])
            raise Unknown(fn)
        target = self._eval(e.target, dev)
        args = [self._eval(a, dev) for a in e.args]
        return _method(fn, target, args)

    def _and(self, args: list[Any], dev: _Dev) -> bool:
        pending: Exception | None = None
        for a in args:
            try:
                if self._eval(a, dev) is False:
                    return False
            except (MissingKey, Unknown) as x:
                pending = pending or x
        if pending is not None:
            raise pending
        return True

    @staticmethod
    def _lookup(m: _DomainMap, ident: str, dev: _Dev, test_only: bool = False) -> Any:
        raw = raw_lookup(dev.raw, dev.driver, m.kind, m.domain, ident)
        if test_only:
            return raw is not None
        if raw is None:
            raise MissingKey(m.kind, m.domain, ident)
        if m.kind == "capacity":
            text = str((raw or {}).get("value", "0")) if isinstance(raw, Mapping) else str(raw)
            return Qty(amounts.value(text), text)
        return _attr_value(raw)

    @staticmethod
    def _has(m: _DomainMap, ident: Any, dev: _Dev) -> bool:
        if not isinstance(ident, str):
            raise Unknown("in key")
        return raw_lookup(dev.raw, dev.driver, m.kind, m.domain, ident) is not None

    # -- explaining ------------------------------------------------------------------------

    def explain(self, expression: str, driver: str, device: Mapping[str, Any]) -> tuple[str, str]:
        """``(what the device has vs what the term asks, suggestion)`` for a false term."""
        root = self.ast(expression)
        if root is None:
            return "", ""
        dev = _Dev(driver, device)
        try:
            self._eval(root, dev)
        except MissingKey as m:
            name = m.ident if m.domain == driver else f"{m.domain}/{m.ident}"
            what = "attribute" if m.kind == "attributes" else "capacity"
            return f"no {what} {name}", ""
        except Unknown:
            pass
        shape = self._comparison(root, dev)
        if shape is None:
            return "", ""
        operand, op, want = shape
        try:
            return _describe(operand, op, want)
        except Exception:  # a comparison we can print only partially
            return "", ""

    def bound(self, expression: str, driver: str, device: Mapping[str, Any]) -> tuple[str, str, Qty, Qty] | None:
        """``(name, op, have, want)`` when ``expression`` compares a device quantity with a literal."""
        root = self.ast(expression)
        if root is None:
            return None
        shape = self._comparison(root, _Dev(driver, device))
        if shape is None:
            return None
        operand, op, want = shape
        if isinstance(operand.value, Qty) and isinstance(want, Qty) and op in ("<", "<=", ">", ">="):
            return operand.name, op, operand.value, want
        return None

    def _comparison(self, e: Any, dev: _Dev) -> tuple[Operand, str, Any] | None:
        """Normalise ``x op lit``, ``lit op x``, ``x.compareTo(lit) op n``, ``x.isGreaterThan(lit)``."""
        from drakit.selectors.ast import Call

        if not isinstance(e, Call):
            return None
        negate = False
        while e.function == "!_" and isinstance(e.args[0], Call):
            negate = not negate
            e = e.args[0]
        op: str | None = None
        lhs: Any = None
        rhs: Any = None
        if e.function in _CMP:
            op = _CMP[e.function]
            lhs, rhs = e.args
            if isinstance(lhs, Call) and lhs.function == "compareTo" and lhs.target is not None:
                n = self._safe(rhs, dev)
                if isinstance(n, int) and not isinstance(n, bool) and n in (-1, 0, 1):
                    op = _cmp_from_compare_to(op, n)
                    lhs, rhs = lhs.target, lhs.args[0]
        elif e.function in ("isGreaterThan", "isLessThan") and e.target is not None and e.args:
            op = ">" if e.function == "isGreaterThan" else "<"
            lhs, rhs = e.target, e.args[0]
        elif e.function in ("startsWith", "endsWith", "contains", "matches") and e.target is not None:
            op = e.function
            lhs, rhs = e.target, e.args[0]
        if op is None:
            return None
        if negate:
            if op not in _NEGATE:
                return None
            op = _NEGATE[op]
        left_dev, right_dev = _mentions_device(lhs), _mentions_device(rhs)
        if left_dev == right_dev:
            return None
        if right_dev:
            if op not in _FLIP:
                return None
            lhs, rhs, op = rhs, lhs, _FLIP[op]
        value = self._safe(lhs, dev)
        want = self._safe(rhs, dev)
        if value is None or want is None:
            return None
        return Operand(_operand_name(lhs), value), op, want

    def _safe(self, e: Any, dev: _Dev) -> Any:
        try:
            return self._eval(e, dev)
        except (Unknown, MissingKey):
            return None


def _cmp_from_compare_to(op: str, n: int) -> str:
    """``a.compareTo(b) op n`` as a direct comparison of a and b."""
    table = {
        (">=", 0): ">=", (">", 0): ">", ("<=", 0): "<=", ("<", 0): "<", ("==", 0): "==",
        ("!=", 0): "!=", ("==", 1): ">", ("==", -1): "<", (">", -1): ">=", ("<", 1): "<=",
        (">=", 1): ">", ("<=", -1): "<", ("!=", -1): ">=", ("!=", 1): "<=",
    }
    return table.get((op, n), op)


def _mentions_device(e: Any) -> bool:
    from drakit.selectors.ast import Ident, walk

    return any(isinstance(x, Ident) and x.name == "device" for x in walk(e))


def _operand_name(e: Any) -> str:
    from drakit.selectors.ast import Call, Literal, Select

    if isinstance(e, Select):
        return e.field
    if isinstance(e, Call) and e.function == "_[_]" and isinstance(e.args[1], Literal):
        return str(e.args[1].value)
    if isinstance(e, Call) and e.target is not None:
        return _operand_name(e.target)
    return "value"


def _compare(op: str, a: Any, b: Any) -> bool:
    if isinstance(a, Qty) or isinstance(b, Qty):
        raise Unknown("quantities have no operators")  # CEL: no such overload
    if isinstance(a, Ver) and isinstance(b, Ver):
        c = a.compare(b)
        a, b = c, 0
    if op == "==":
        return bool(a == b and type(a) is type(b))
    if op == "!=":
        return not (a == b and type(a) is type(b))
    if type(a) is not type(b) and not (isinstance(a, int | float) and isinstance(b, int | float)):
        raise Unknown("mixed types")
    if isinstance(a, bool) or isinstance(b, bool):
        raise Unknown("bool ordering")
    return bool({"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op])


def _method(fn: str, target: Any, args: list[Any]) -> Any:
    if isinstance(target, Qty):
        other = args[0] if args else None
        if fn == "compareTo" and isinstance(other, Qty):
            return (target.value > other.value) - (target.value < other.value)
        if fn == "isGreaterThan" and isinstance(other, Qty):
            return target.value > other.value
        if fn == "isLessThan" and isinstance(other, Qty):
            return target.value < other.value
        if fn == "asInteger" and not args:
            if target.value.denominator != 1:
                raise Unknown("not an integer")
            return int(target.value)
        if fn == "asApproximateFloat" and not args:
            return float(target.value)
        raise Unknown(fn)
    if isinstance(target, Ver):
        other = args[0] if args else None
        if fn == "compareTo" and isinstance(other, Ver):
            return target.compare(other)
        if fn == "isGreaterThan" and isinstance(other, Ver):
            return target.compare(other) > 0
        if fn == "isLessThan" and isinstance(other, Ver):
            return target.compare(other) < 0
        if fn in ("major", "minor", "patch") and not args:
            return int(getattr(_semver(target.text), fn))
        raise Unknown(fn)
    if isinstance(target, str):
        arg = args[0] if args else None
        methods: dict[str, Callable[[], Any]] = {
            "startsWith": lambda: target.startswith(str(arg)),
            "endsWith": lambda: target.endswith(str(arg)),
            "contains": lambda: str(arg) in target,
            "matches": lambda: _matches(target, str(arg)),
            "lowerAscii": target.lower,
            "upperAscii": target.upper,
            "size": lambda: len(target),
        }
        if fn in methods and (fn in ("lowerAscii", "upperAscii", "size") or isinstance(arg, str)):
            return methods[fn]()
    raise Unknown(fn)


def _semver(text: str) -> Any:
    """A parsed version; one that does not parse is the real evaluator's to report."""
    from drakit.semver import Semver, SemverError

    try:
        return Semver.parse(text)
    except SemverError as e:
        raise Unknown("semver") from e


def _matches(target: str, pattern: str) -> bool:
    """``matches()`` with the evaluator's RE2 (linear time; Python's ``re`` backtracks for minutes)."""
    try:
        return matches(target, pattern)
    except EvalError as e:  # an invalid pattern: the real evaluator reports it
        raise Unknown("matches") from e


# --- describing -----------------------------------------------------------------------------

_OP_WORDS = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "==", "!=": "!="}


def _show(v: Any) -> str:
    if isinstance(v, Qty):
        return v.text
    if isinstance(v, Ver):
        return v.text
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _binary_text(q: Fraction) -> str:
    return amounts.mebi(q)


def _describe(operand: Operand, op: str, want: Any) -> tuple[str, str]:
    have = operand.value
    name = operand.name
    if op in ("startsWith", "endsWith", "contains", "matches"):
        words = {"startsWith": "to start with", "endsWith": "to end with", "contains": "to contain",
                 "matches": "to match"}[op]
        msg = f"{name} is {_show(have)}; the selector asks {words} {_show(want)}"
        hint = ""
        if isinstance(have, str) and isinstance(want, str) and op != "matches" and want.lower() in have.lower():
            hint = "the values differ only in upper/lower case"
        return msg, hint
    sym = _OP_WORDS.get(op, op)
    if isinstance(have, Qty) and isinstance(want, Qty):
        shown_want = want.text
        if want.text != _binary_text(want.value) and want.text.endswith(_BINARY_SUFFIXES):
            shown_want = f"{want.text} = {_binary_text(want.value)}"
        msg = f"{name} {have.text}; the selector asks {sym} {shown_want}"
        hint = ""
        gap = want.value - have.value
        if op in (">=", ">") and gap >= 0:
            msg += f" (short by {amounts.human(gap) if gap else '0'})"
            decimal = _decimal_twin(want.text)
            if decimal is not None and _holds(op, have.value, amounts.value(decimal)):
                hint = f"did you mean {decimal} (decimal)? {have.text} >= {decimal}"
        elif op in ("<=", "<") and gap <= 0:
            msg += f" (over by {amounts.human(-gap) if gap else '0'})"
        return msg, hint
    if isinstance(have, Ver) and isinstance(want, Ver):
        return f"{name} is {have.text}; the selector asks {sym} {want.text}", ""
    msg = f"{name} is {_show(have)}; the selector asks {sym} {_show(want)}"
    hint = ""
    if op == "==" and isinstance(have, str) and isinstance(want, str):
        if have.lower() == want.lower():
            hint = "the values differ only in upper/lower case"
        elif want.lower() in have.lower():
            hint = f'the device\'s value contains "{want}": use .contains("{want}")'
    elif op in ("==", "!=") and type(have) is not type(want):
        hint = f"{name} is a {type(have).__name__}, the selector compares it with a {type(want).__name__}"
    return msg, hint


def _decimal_twin(text: str) -> str | None:
    """``80Gi`` -> ``80G``: the marketing (decimal) size people usually mean."""
    for suffix in _BINARY_SUFFIXES:
        if text.endswith(suffix):
            return text[: -len(suffix)] + suffix[0].upper().replace("K", "k")
    return None


def _holds(op: str, a: Fraction, b: Fraction) -> bool:
    return bool({">=": a >= b, ">": a > b, "<=": a <= b, "<": a < b}.get(op, False))
