"""Runtime value semantics: equality, ordering, type names, sizes (cel-go ``common/types``).

Kept separate from the interpreter because the libraries need the same rules: ``includes``
and ``in`` use CEL equality (``1 == 1.0`` is true, ``1 == true`` is false, a Quantity
compared with a non-Quantity is a "no such overload" error), and error texts name Go's
runtime types (``got 'types.Int', expected iterable type``).
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from drakit.quantity import Quantity
from drakit.selectors.types import (
    INT64_MAX,
    INT64_MIN,
    UINT64_MAX,
    BoolKey,
    Duration,
    EvalError,
    LibValue,
    Optional,
    Timestamp,
    TypeValue,
    Uint,
    map_key,
    unmap_key,
)
from drakit.semver import Semver

NO_SUCH_OVERLOAD = "no such overload"
NAN_UNORDERED = "NaN values cannot be ordered"  # cel-go's Double.Compare

_NUMERIC = (int, Uint, float)


def no_such_overload() -> EvalError:
    return EvalError(NO_SUCH_OVERLOAD)


def go_type_name(v: Any) -> str:
    """The Go type cel-go would print with %T for this value."""
    t = type(v)
    if t is bool:
        return "types.Bool"
    if t is int:
        return "types.Int"
    if t is Uint:
        return "types.Uint"
    if t is float:
        return "types.Double"
    if t is str:
        return "types.String"
    if t is bytes:
        return "types.Bytes"
    if v is None:
        return "types.Null"
    if isinstance(v, Quantity):
        return "cel.Quantity"
    if isinstance(v, Semver):
        return "cel.Semver"
    if t is Optional:
        return "*types.Optional"
    if t is TypeValue:
        return "*types.Type"
    if t is Duration:
        return "types.Duration"
    if t is Timestamp:
        return "types.Timestamp"
    if isinstance(v, list | tuple):
        return "*types.baseList"
    if isinstance(v, dict):
        return "*types.baseMap"
    return t.__name__


def type_name(v: Any) -> str:
    """CEL's runtime type name, as ``type(v)`` reports it."""
    t = type(v)
    if t is bool:
        return "bool"
    if t is int:
        return "int"
    if t is Uint:
        return "uint"
    if t is float:
        return "double"
    if t is str:
        return "string"
    if t is bytes:
        return "bytes"
    if v is None:
        return "null_type"
    if isinstance(v, list | tuple):
        return "list"
    if isinstance(v, dict):
        return "map"
    if isinstance(v, Quantity):
        return "kubernetes.Quantity"
    if isinstance(v, Semver):
        return "kubernetes.Semver"
    if t is Optional:
        return "optional_type"
    if t is TypeValue:
        return "type"
    if t is Duration:
        return "google.protobuf.Duration"
    if t is Timestamp:
        return "google.protobuf.Timestamp"
    if hasattr(v, "cel_type_name"):
        return str(v.cel_type_name)
    return t.__name__


def _cmp_int_double(i: int, d: float) -> int:
    if d < -9.223372036854776e18:
        return 1
    if d >= 9.223372036854776e18:
        return -1
    f = float(i)
    return (f > d) - (f < d)


def _cmp_uint_double(u: int, d: float) -> int:
    if d < 0:
        return 1
    if d >= 1.8446744073709552e19:
        return -1
    f = float(u)
    return (f > d) - (f < d)


class QuantityResult(Quantity):
    """A Quantity produced by ``add``/``sub``.

    Upstream's library returns these as a pointer-wrapped CEL value, while the Quantity type's
    ``Equal`` only accepts the plain value: ``x == y.add(z)`` (the result on the right) is a
    "no such overload" error in Kubernetes, and ``y.add(z) == x`` works.  The oracle confirms
    this, so the engine keeps the distinction; everything else treats both alike.
    """

    @classmethod
    def of(cls, q: Quantity) -> QuantityResult:
        out = object.__new__(cls)
        for f in ("_kind", "_u", "_s", "format", "_cached"):
            object.__setattr__(out, f, getattr(q, f))
        return out


def equal(a: Any, b: Any) -> bool:
    """CEL heterogeneous equality (raises EvalError for Quantity/Semver against other types)."""
    ta = type(a)
    tb = type(b)
    if ta is tb and (ta is str or ta is int or ta is bool or ta is bytes or ta is Uint):
        return bool(a == b)
    if a is None or b is None:
        return a is None and b is None
    if (ta is bool or tb is bool) and not isinstance(a, Quantity | Semver):
        return False
    if ta in _NUMERIC and tb in _NUMERIC:
        if ta is float or tb is float:
            if ta is float and tb is float:
                return bool(a == b)
            if ta is float:
                a, b, ta, tb = b, a, tb, ta
            if math.isnan(b):
                return False
            return (_cmp_uint_double(a, b) if ta is Uint else _cmp_int_double(a, b)) == 0
        return int(a) == int(b)
    if isinstance(a, Quantity):
        if isinstance(b, Quantity) and type(b) is not QuantityResult:
            return a.cmp(b) == 0
        raise no_such_overload()
    if isinstance(a, Semver):
        if isinstance(b, Semver):
            return bool(a == b)
        raise no_such_overload()
    if isinstance(a, LibValue):
        return a.cel_equal(b)
    # cel-go dispatches on the left operand: a string, list, map... compared with a
    # Quantity/Semver is simply not equal; only the library types' own Equal raises.
    if isinstance(b, Quantity | Semver | LibValue):
        return False
    if isinstance(a, list | tuple):
        if not isinstance(b, list | tuple) or len(a) != len(b):
            return False
        return all(equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        if not isinstance(b, dict) or len(a) != len(b):
            return False
        for k, v in a.items():
            if k not in b:
                # cross-type numeric keys: 1 and 1u are the same key (Python hashing agrees)
                return False
            if not equal(v, b[k]):
                return False
        return True
    if ta is Optional:
        if tb is not Optional:
            return False
        if a.present != b.present:
            return False
        return not a.present or equal(a.value, b.value)
    if ta is tb:
        return bool(a == b)
    return False


def compare(a: Any, b: Any) -> int:
    """CEL ordering incl. cross-type numeric comparison; EvalError when not comparable."""
    ta = type(a)
    tb = type(b)
    if ta is tb:
        if (
            ta is str
            or ta is int
            or ta is Uint
            or ta is bytes
            or ta is bool
            or ta is Timestamp
            or ta is Duration
        ):
            return (a > b) - (a < b)
        if ta is float:
            if math.isnan(a) or math.isnan(b):
                raise EvalError(NAN_UNORDERED)
            return (a > b) - (a < b)
        raise no_such_overload()
    if ta in _NUMERIC and tb in _NUMERIC and ta is not bool and tb is not bool:
        if ta is float:
            if math.isnan(a):
                raise EvalError(NAN_UNORDERED)
            return -(_cmp_uint_double(b, a) if tb is Uint else _cmp_int_double(b, a))
        if tb is float:
            if math.isnan(b):
                raise EvalError(NAN_UNORDERED)
            return _cmp_uint_double(a, b) if ta is Uint else _cmp_int_double(a, b)
        ia, ib = int(a), int(b)
        return (ia > ib) - (ia < ib)
    raise no_such_overload()


def size(v: Any) -> int:
    """cel-go's actualSize: length for strings/bytes/lists/maps, 1 otherwise."""
    t = type(v)
    if t is str or t is bytes or t is list or t is tuple or isinstance(v, dict | list | tuple | str | bytes):
        return len(v)
    if isinstance(v, LibValue):
        return v.cel_size
    return 1


def check_int(v: int) -> int:
    if v < INT64_MIN or v > INT64_MAX:
        raise EvalError("integer overflow")
    return v


def check_uint(v: int) -> Uint:
    if v < 0 or v > UINT64_MAX:
        raise EvalError("unsigned integer overflow")
    return Uint(v)


def in_list(x: Any, lst: Any) -> bool:
    tx = type(x)
    if tx is str:
        return x in lst  # only strings equal strings
    # cel-go's list Contains treats an error from Equal as "not this element".
    for e in lst:
        try:
            if equal(x, e):
                return True
        except EvalError:
            continue
    return False


def map_lookup(m: dict[Any, Any], k: Any) -> Any:
    try:
        return m[map_key(k)]
    except KeyError:
        raise EvalError(f"no such key: {format_key(k)}") from None
    except TypeError:
        raise EvalError(f"unsupported key type: {go_type_name(k)}") from None


def format_double(d: float) -> str:
    """Go's strconv.FormatFloat(d, 'g', -1, 64), which cel-go's string(double) uses."""
    if math.isnan(d):
        return "NaN"
    if math.isinf(d):
        return "+Inf" if d > 0 else "-Inf"
    if d == 0:
        return "-0" if math.copysign(1.0, d) < 0 else "0"
    sign, digits, exp = Decimal(repr(d)).as_tuple()
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    assert isinstance(exp, int)
    dp = len(digits) + exp  # position of the decimal point
    x = dp - 1
    neg = "-" if sign else ""
    if x < -4 or x >= 6:
        mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
        return f"{neg}{mant}e{'-' if x < 0 else '+'}{abs(x):02d}"
    if dp <= 0:
        return f"{neg}0.{'0' * -dp}{ds}"
    if dp >= len(ds):
        return f"{neg}{ds}{'0' * (dp - len(ds))}"
    return f"{neg}{ds[:dp]}.{ds[dp:]}"


def format_key(k: Any) -> str:
    """A key as Go's ``%v`` prints the CEL value (``2`` for 2.0, ``5`` for 5u)."""
    k = unmap_key(k)
    if type(k) is bool:
        return "true" if k else "false"
    if type(k) is float:
        return format_double(k)
    if type(k) is Uint:
        return str(int(k))
    return str(k)


__all__ = [
    "NO_SUCH_OVERLOAD",
    "BoolKey",
    "Semver",
    "check_int",
    "check_uint",
    "compare",
    "equal",
    "go_type_name",
    "in_list",
    "map_lookup",
    "no_such_overload",
    "size",
    "type_name",
]


# The Go type names cel-go's ConvertToNative errors print for the Kubernetes library values.
_LIB_CONVERSION_NAMES = {"net.IP": "IP", "net.CIDR": "CIDR", "kubernetes.URL": "URL", "kubernetes.NamedFormat": "Format"}


def as_selector_result(v: Any) -> bool:
    """A selector's value as upstream's DeviceMatches takes it (``ConvertToNative(bool)``):
    a bool, or an optional holding one (an optional converts as its value); else an
    EvalError with the message upstream reports."""
    inner = v
    while type(inner) is Optional and inner.present:
        inner = inner.value
    if type(inner) is bool:
        return inner
    raise EvalError(bool_conversion_message(v))


def bool_conversion_message(v: Any) -> str:
    """What upstream's DeviceMatches reports for a selector result that is not a bool.

    It wraps the Go ``ConvertToNative(bool)`` error of the value's type, so the text names
    the type twice, in cel-go's per-type wording (``common/types/*.go``); an optional
    reports its value's error, or its own dereference error when empty.
    """
    return f"CEL result of type {type_name(v)} could not be converted to bool: {_conversion_detail(v)}"


def _conversion_detail(v: Any) -> str:
    t = type(v)
    while t is Optional and v.present:
        v = v.value
        t = type(v)
    if t is Optional:
        return "optional.none() dereference"
    if t is int:
        return "unsupported type conversion from 'int' to bool"
    if t is Uint:
        return "unsupported type conversion from 'uint' to bool"
    if t is float:
        return "type conversion error from Double to 'bool'"
    if t is str:
        return "unsupported native conversion from string to 'bool'"
    if t is bytes:
        return "type conversion error from Bytes to 'bool'"
    if v is None:
        return "type conversion error from 'null_type' to 'bool'"
    if isinstance(v, list | tuple):
        return "type conversion error from list to 'bool'"
    if isinstance(v, dict):
        return "type conversion error from map to 'bool'"
    if t is TypeValue:
        return "type conversion not supported for 'type'"
    if isinstance(v, Semver):
        name = "Semver"
    elif isinstance(v, Quantity):
        name = "Quantity"
    elif t is Duration:
        name = "Duration"
    elif t is Timestamp:
        name = "Timestamp"
    else:
        name = _LIB_CONVERSION_NAMES.get(getattr(v, "cel_type_name", ""), t.__name__)
    return f"type conversion error from '{name}' to 'bool'"
