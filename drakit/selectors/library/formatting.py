"""``string.format`` as the Kubernetes environment has it: ext.Strings version 2.

Both halves of cel-go's ``ext/formatting.go`` share one clause parser here: the runtime
formatter, and the static validator that checks a literal format string against a list
literal of arguments when the expression is compiled (the argument's *checked type* stands
in for its value).  Hand-written because the output is Go's, not Python's: ``%f``/``%e`` go
through golang.org/x/text's en-US number printer (digit grouping, ``NaN``/``∞``, a
superscript exponent, the precision of ``%e`` used as a field *width*), list and map elements
are quoted with Go's ``%q``, and error texts are cel-go's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from drakit.gostr import quote
from drakit.selectors import types as T
from drakit.selectors.ast import Call, CreateList, CreateMap, Expr, Literal
from drakit.selectors.types import Duration, EvalError, Timestamp, TypeValue, Uint, unmap_key
from drakit.selectors.values import type_name

_DEFAULT_PRECISION = 6
_VERBS = frozenset("sdfebxXo")
_INT64_MAX = 2**63 - 1


class FormatFailure(Exception):
    """A formatting error; ``node`` is the argument expression it is about (validator only)."""

    def __init__(self, message: str, node: Expr | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.node = node


# Clause implementations receive (verb, precision, value, argument index).
Clause = Callable[[str, "int | None", Any, int], str]


def run_format(fmt: str, size: int, arg: Callable[[int], Any], clause: Clause) -> str:
    """cel-go's ``parseFormatString``: walk the format, one clause per argument."""
    out: list[str] = []
    i, n, index = 0, len(fmt), 0
    while i < n:
        c = fmt[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        if i + 1 < n and fmt[i + 1] == "%":
            out.append("%")
            i += 2
            continue
        value = arg(index)
        if i + 1 >= n:
            raise FormatFailure("unexpected end of string")
        if index >= size:
            raise FormatFailure(f"index {index} out of range")
        j = i + 1
        precision: int | None = None
        if fmt[j] == ".":
            k = j + 1
            while True:
                if k >= n:
                    raise FormatFailure(
                        "could not parse formatting clause: error while parsing precision: "
                        "could not find end of precision specifier"
                    )
                if not "0" <= fmt[k] <= "9":
                    break
                k += 1
            precision = _atoi(fmt[j + 1 : k])
            j = k
        verb = fmt[j]
        if verb not in _VERBS:
            raise FormatFailure(
                f'could not parse formatting clause: unrecognized formatting clause "{_go_byte(verb)}"'
            )
        try:
            out.append(clause(verb, precision, value, index))
        except FormatFailure as f:
            raise FormatFailure(f"error during formatting: {f.message}", f.node) from None
        i = j + 1
        index += 1
    return "".join(out)


def _atoi(digits: str) -> int:
    problem = "invalid syntax" if not digits else "value out of range" if int(digits) > _INT64_MAX else ""
    if problem:
        raise FormatFailure(
            "could not parse formatting clause: error while parsing precision: error while converting "
            f'precision to integer: strconv.Atoi: parsing "{digits}": {problem}'
        )
    return int(digits)


def _go_byte(c: str) -> str:
    """Go reads the clause letter as one byte of UTF-8 and prints that byte as a rune."""
    return c if ord(c) < 0x80 else chr(c.encode("utf-8")[0])


# ---------------------------------------------------------------------------------------------
# runtime


def format_string(fmt: str, args: list[Any]) -> str:
    """``<string>.format(<list>)``."""

    def arg(i: int) -> Any:
        if i >= len(args):
            raise FormatFailure(f"index {i} out of range")
        return args[i]

    try:
        return run_format(fmt, len(args), arg, _format_clause)
    except FormatFailure as f:
        raise EvalError(f.message) from None


def _format_clause(verb: str, precision: int | None, v: Any, _index: int) -> str:
    t = type(v)
    if verb == "s":
        return _string(v)
    if verb == "d":
        if t is int or t is Uint:
            return str(int(v))
        raise FormatFailure(f"decimal clause can only be used on integers, was given {type_name(v)}")
    if verb in "fe":
        if t is str and v in ("NaN", "Infinity", "-Infinity"):
            v = float(v.replace("Infinity", "inf"))
        elif t is not float:
            what = "fixed-point" if verb == "f" else "scientific"
            raise FormatFailure(f"{what} clause can only be used on doubles, was given {type_name(v)}")
        p = _DEFAULT_PRECISION if precision is None else precision
        return _localized_fixed(v, p) if verb == "f" else _localized_scientific(v, p)
    if verb == "b":
        if t is int or t is Uint:
            return format(int(v), "b")
        if t is bool:
            return "1" if v else "0"
        raise FormatFailure(f"only integers and bools can be formatted as binary, was given {type_name(v)}")
    if verb in "xX":
        if t is int or t is Uint:
            s = format(int(v), "x")
        elif t is str:
            s = v.encode("utf-8", "surrogatepass").hex()
        elif t is bytes:
            s = v.hex()
        else:
            raise FormatFailure(
                f"only integers, byte buffers, and strings can be formatted as hex, was given {type_name(v)}"
            )
        return s.upper() if verb == "X" else s
    if t is int or t is Uint:  # "o"
        return format(int(v), "o")
    raise FormatFailure(f"octal clause can only be used on integers, was given {type_name(v)}")


def _string(v: Any) -> str:
    """``%s``: cel-go's ``FormatString``."""
    from drakit.selectors.library.standard import format_double, format_duration, format_timestamp

    t = type(v)
    if t is str:
        return v
    if t is bool:
        return "true" if v else "false"
    if t is int or t is Uint:
        return str(int(v))
    if t is float:
        return format_double(v)
    if t is bytes:
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            raise FormatFailure(
                'could not convert argument "invalid UTF-8 in bytes, cannot convert to string" to string'
            ) from None
    if v is None:
        return "null"
    if t is TypeValue:
        return str(v)
    if t is Timestamp:
        return format_timestamp(v)
    if t is Duration:
        return format_duration(v)
    if isinstance(v, list | tuple):
        return _list(v)
    if isinstance(v, dict) and not hasattr(v, "type_name"):
        return _map(v)
    raise FormatFailure(_string_clause_error(type_name(v)))


def _string_clause_error(type_name_: str) -> str:
    return (
        "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, "
        f"durations, and timestamps, was given {type_name_}"
    )


def _element(v: Any) -> str:
    """An element of a list or map value: cel-go's ``clauseForType`` + ``quoteForCEL``."""
    from drakit.selectors.library.standard import format_duration, format_timestamp

    t = type(v)
    if t is int or t is Uint:
        return str(int(v))
    if t is str:
        return quote(v)
    if t is bytes:
        return "b" + quote(_string(v))
    if t is bool or v is None or t is TypeValue:
        return _string(v)
    if t is Timestamp:
        return f"timestamp({quote(format_timestamp(v))})"
    if t is Duration:
        return f"duration({quote(format_duration(v))})"
    if isinstance(v, list | tuple):
        return _list(v)
    if isinstance(v, dict) and not hasattr(v, "type_name"):
        return _map(v)
    if t is float:
        if math.isnan(v) or math.isinf(v):
            return quote("NaN" if math.isnan(v) else "+Inf" if v > 0 else "-Inf")
        return format(v, ".6f")
    raise FormatFailure(f"no formatting function for {type_name(v)}")


def _list(v: list[Any] | tuple[Any, ...]) -> str:
    return "[" + ", ".join(_element(x) for x in v) + "]"


def _map(m: dict[Any, Any]) -> str:
    pairs = []
    for raw, value in m.items():
        k = unmap_key(raw)
        tk = type(k)
        if tk is str:
            key = quote(k)
        elif tk is bool:
            key = "true" if k else "false"
        elif tk is int or tk is Uint:
            key = str(int(k))
        else:
            raise FormatFailure(f"no formatting function for map key of type {type_name(k)}")
        pairs.append((key, _element(value)))
    pairs.sort(key=lambda p: p[0].encode("utf-8", "surrogatepass"))
    return "{" + ", ".join(f"{k}:{v}" for k, v in pairs) + "}"


# golang.org/x/text/message with the en-US locale: what cel-go's %f and %e print.

_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_FMT_NUMBER_LIMIT = 1_000_000  # fmt's parsenum gives up on numbers past this (tooLarge)


def _verb_overflows(n: int) -> bool:
    """Go's printf-style parser drops a width/precision whose digits run past 1e6 before the
    last one, and then finds no verb."""
    return n // 10 > _FMT_NUMBER_LIMIT


def _localized_fixed(x: float, precision: int) -> str:
    if _verb_overflows(precision):
        return "%!(NOVERB)"
    if math.isnan(x):
        return "NaN"
    sign = "-" if x < 0 else ""  # negative zero prints without a sign
    if math.isinf(x):
        return sign + "∞"
    whole, _, frac = format(abs(x), f".{precision}f").partition(".")
    groups = []
    while len(whole) > 3:
        groups.append(whole[-3:])
        whole = whole[:-3]
    grouped = ",".join([whole, *reversed(groups)])
    return sign + grouped + ("." + frac if frac else "")


def _localized_scientific(x: float, width: int) -> str:
    # cel-go builds "%<precision>e", so the precision is a width; the digits stay at 6.
    if _verb_overflows(width):
        return "%!(NOVERB)"
    if math.isnan(x):
        text = "NaN"
    elif math.isinf(x):
        text = ("-" if x < 0 else "") + "∞"
    else:
        mantissa, _, exponent = format(abs(x), f".{_DEFAULT_PRECISION}e").partition("e")
        e = int(exponent)
        digits = f"{'-' if e < 0 else ''}{abs(e):02d}".translate(_SUPERSCRIPT)
        text = ("-" if x < 0 else "") + mantissa + "×10" + digits
    return text.rjust(width)


# ---------------------------------------------------------------------------------------------
# static validation (cel-go ``stringFormatValidator``)


def validate_format_calls(
    root: Expr,
    types: dict[int, T.CelType],
    overloads: dict[int, list[str]],
) -> list[tuple[int, str]]:
    """Errors for ``'<literal>'.format([<list literal>])`` calls, at cel-go's positions."""
    errors: list[tuple[int, str]] = []
    stack = [root]
    while stack:
        e = stack.pop()
        stack.extend(reversed(e.children()))
        if not (
            isinstance(e, Call)
            and e.function == "format"
            and e.target is not None
            and isinstance(e.target, Literal)
            and type(e.target.value) is str
            and len(e.args) == 1
            and isinstance(e.args[0], CreateList)
        ):
            continue
        ids = overloads.get(e.id, [])
        if ids and "string_format" not in ids:
            continue
        problem = _validate_call(e, e.target.value, e.args[0].elements, types)
        if problem is not None:
            errors.append(problem)
    return errors


def _validate_call(
    call: Call, fmt: str, elements: list[Expr], types: dict[int, T.CelType]
) -> tuple[int, str] | None:
    requested = 0

    def arg(i: int) -> Any:
        nonlocal requested
        requested += 1
        return i

    def clause(verb: str, _precision: int | None, index: Any, _i: int) -> str:
        bad = _static_clause_problem(verb, elements[index], types)
        if bad is not None:
            raise FormatFailure(bad[1], bad[0])
        return ""

    try:
        run_format(fmt, len(elements), arg, clause)
    except FormatFailure as f:
        return (f.node or call).offset, f.message
    if len(elements) > requested:
        return call.offset, (
            f"too many arguments supplied to string.format (expected {requested}, got {len(elements)})"
        )
    return None


_STRING_KINDS = frozenset(
    {
        T.LIST_K,
        T.MAP_K,
        T.INT_K,
        T.UINT_K,
        T.DOUBLE_K,
        T.BOOL_K,
        T.STRING_K,
        T.TIMESTAMP_K,
        T.BYTES_K,
        T.DURATION_K,
        T.TYPE_K,
        T.NULL_K,
    }
)
_CLAUSE_KINDS = {
    "d": (frozenset({T.INT_K, T.UINT_K}), "decimal clause can only be used on integers"),
    "f": (frozenset({T.DOUBLE_K, T.STRING_K}), "fixed-point clause can only be used on doubles"),
    "e": (frozenset({T.DOUBLE_K, T.STRING_K}), "scientific clause can only be used on doubles"),
    "b": (frozenset({T.INT_K, T.UINT_K, T.BOOL_K}), "only integers and bools can be formatted as binary"),
    "x": (
        frozenset({T.INT_K, T.UINT_K, T.STRING_K, T.BYTES_K}),
        "only integers, byte buffers, and strings can be formatted as hex",
    ),
    "o": (frozenset({T.INT_K, T.UINT_K}), "octal clause can only be used on integers"),
}


def _static_clause_problem(verb: str, node: Expr, types: dict[int, T.CelType]) -> tuple[Expr, str] | None:
    if verb == "s":
        bad = _unformattable(node, types)
        if bad is None:
            return None
        return bad, _string_clause_error(_type_name(types.get(bad.id, T.DYN_T)))
    kinds, message = _CLAUSE_KINDS["x" if verb == "X" else verb]
    t = types.get(node.id, T.DYN_T)
    if t.kind == T.DYN_K or t.kind in kinds:
        return None
    return node, f"{message}, was given {_type_name(t)}"


def _unformattable(node: Expr, types: dict[int, T.CelType]) -> Expr | None:
    """The first sub-expression ``%s`` cannot format, looking into list and map literals."""
    t = types.get(node.id, T.DYN_T)
    if t.kind != T.DYN_K and t.kind not in _STRING_KINDS:
        return node
    if isinstance(node, CreateList):
        for x in node.elements:
            bad = _unformattable(x, types)
            if bad is not None:
                return bad
    elif isinstance(node, CreateMap):
        for ent in node.entries:
            for part in (ent.key, ent.value):
                bad = _unformattable(part, types)
                if bad is not None:
                    return bad
    return None


def _type_name(t: T.CelType) -> str:
    """cel-go ``Type.TypeName()``: the name without parameters."""
    if t.kind == T.LIST_K:
        return "list"
    if t.kind == T.MAP_K:
        return "map"
    if t.kind == T.TYPE_K:
        return "type"
    if t.kind == T.ANY_K:
        return "google.protobuf.Any"
    if t.kind in (T.OPAQUE_K, T.STRUCT_K) and t.name:
        return t.name
    return T.format_type(t)
