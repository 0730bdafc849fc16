"""CEL's static types and the few runtime value classes Python lacks.

Static types follow cel-go's ``common/types`` model (kind + name + parameters) because the
checker's error texts (``found no matching overload for '_<_' applied to '(int, string)'``) and
the cost estimator both depend on that exact model.

Runtime values are plain Python objects wherever the mapping is exact, which keeps evaluation
fast: ``int`` (int64), ``bool``, ``float`` (double), ``str``, ``bytes``, ``None`` (null),
``list``, ``dict``.  The gaps get small classes here: :class:`Uint` (uint64), :class:`Optional`,
:class:`TypeValue` (values of type ``type``), :class:`BoolKey` (so ``true`` and ``1`` stay
distinct map keys, which Python would merge), :class:`Timestamp` and :class:`Duration`.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any

from drakit.errors import SelectorError

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
UINT64_MAX = (1 << 64) - 1


# ---------------------------------------------------------------------------------------------
# Errors


class CelError(SelectorError):
    """A compile-time problem (syntax, type check, host checks); ``phase`` is "compile"."""

    def __init__(self, message: str, *, expression: str = "", path: str = "") -> None:
        super().__init__(message, expression=expression, phase="compile", path=path)
        self.message = message


class CelRuntimeError(SelectorError):
    """Evaluation failed (``no such key: x``, overflow, cost limit); ``phase`` is "runtime"."""

    def __init__(self, message: str, *, expression: str = "", path: str = "") -> None:
        super().__init__(message, expression=expression, phase="runtime", path=path)
        self.message = message


class EvalError(Exception):
    """Internal: a CEL error value travelling through evaluation.

    cel-go represents errors as values so that ``&&``/``||`` can absorb them; we use an
    exception (free when not raised) and catch it at exactly those operators.
    """

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class CostLimitExceeded(Exception):
    """Internal: the runtime cost limit was crossed.  Never absorbed by ``&&``/``||``."""


# ---------------------------------------------------------------------------------------------
# Static types

DYN = "dyn"


@dataclass(frozen=True)
class CelType:
    """A CEL type: ``kind`` is one of the *_K constants, ``name`` the runtime type name."""

    kind: str
    name: str
    params: tuple[CelType, ...] = ()

    def __str__(self) -> str:
        return format_type(self)


# kinds
BOOL_K = "bool"
INT_K = "int"
UINT_K = "uint"
DOUBLE_K = "double"
STRING_K = "string"
BYTES_K = "bytes"
NULL_K = "null_type"
DYN_K = "dyn"
ANY_K = "any"
LIST_K = "list"
MAP_K = "map"
TYPE_K = "type"
OPAQUE_K = "opaque"
STRUCT_K = "struct"
PARAM_K = "type_param"
ERROR_K = "error"
DURATION_K = "duration"
TIMESTAMP_K = "timestamp"

BOOL = CelType(BOOL_K, "bool")
INT = CelType(INT_K, "int")
UINT = CelType(UINT_K, "uint")
DOUBLE = CelType(DOUBLE_K, "double")
STRING = CelType(STRING_K, "string")
BYTES = CelType(BYTES_K, "bytes")
NULL = CelType(NULL_K, "null_type")
DYN_T = CelType(DYN_K, "dyn")
ANY = CelType(ANY_K, "google.protobuf.Any")
ERROR = CelType(ERROR_K, "*error*")
DURATION = CelType(DURATION_K, "google.protobuf.Duration")
TIMESTAMP = CelType(TIMESTAMP_K, "google.protobuf.Timestamp")
# cel.ObjectType upstream (no field schema: selecting a field is "unexpected failed resolution").
QUANTITY = CelType(STRUCT_K, "kubernetes.Quantity")
SEMVER = CelType(STRUCT_K, "kubernetes.Semver")
URL = CelType(STRUCT_K, "kubernetes.URL")
NAMED_FORMAT = CelType(STRUCT_K, "kubernetes.NamedFormat")
IP = CelType(OPAQUE_K, "net.IP")
CIDR = CelType(OPAQUE_K, "net.CIDR")


def list_of(elem: CelType) -> CelType:
    return CelType(LIST_K, "list", (elem,))


def map_of(key: CelType, value: CelType) -> CelType:
    return CelType(MAP_K, "map", (key, value))


def type_of(t: CelType) -> CelType:
    return CelType(TYPE_K, "type", (t,))


def optional_of(t: CelType) -> CelType:
    return CelType(OPAQUE_K, "optional_type", (t,))


def param(name: str) -> CelType:
    return CelType(PARAM_K, name)


def struct(name: str) -> CelType:
    return CelType(STRUCT_K, name)


TYPE = CelType(TYPE_K, "type")


def format_type(t: CelType) -> str:
    """cel-go's FormatCELType: ``list(int)``, ``map(string, dyn)``, ``optional_type(int)``."""
    k = t.kind
    if k in (LIST_K, MAP_K) or (k == OPAQUE_K and t.params):
        return f"{t.name}({', '.join(format_type(p) for p in t.params)})"
    if k == TYPE_K:
        return f"type({format_type(t.params[0])})" if t.params else "type"
    if k == NULL_K:
        return "null"
    if k == ANY_K:
        return "any"
    if k == DURATION_K:  # the runtime names stay google.protobuf.*; the checker says these
        return "duration"
    if k == TIMESTAMP_K:
        return "timestamp"
    if k == ERROR_K:
        return "!error!"
    return t.name


# ---------------------------------------------------------------------------------------------
# Runtime values


class Uint(int):
    """CEL uint64; an ``int`` subclass so dict lookups and numeric comparisons just work."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{int(self)}u"


class BoolKey:
    """A map key standing for ``true``/``false`` (Python's ``True == 1`` would merge them)."""

    __slots__ = ("value",)

    def __init__(self, value: bool) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "true" if self.value else "false"


BOOL_KEYS = {True: BoolKey(True), False: BoolKey(False)}


class IdentityKey:
    """A map key that cel-go holds by pointer (a list, map or optional): equal only to itself.

    A map literal may use any value as a key; Go keys such values by their pointer, so no
    other value ever finds them.
    """

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return repr(self.value)


def map_key(k: Any) -> Any:
    t = type(k)
    if t is bool:
        return BOOL_KEYS[k]
    if t is Optional:  # cel-go's optional.none() is one shared value; each of() is new
        return IdentityKey(k) if k.present else _NONE_KEY
    if t is list or t is dict or isinstance(k, list | tuple | dict):
        return IdentityKey(k)
    return k


def unmap_key(k: Any) -> Any:
    t = type(k)
    return k.value if t is BoolKey or t is IdentityKey else k


class LibValue:
    """Base of the Kubernetes library values (``net.IP``, ``net.CIDR``, ``kubernetes.URL``,
    ``kubernetes.NamedFormat``).

    Subclasses name their CEL type, their size for the runtime cost (cel-go's Sizer; 1 when
    upstream's type has none) and their ``Equal``, which in upstream is a "no such overload"
    error against any other type.  Registered by type name for overload dispatch.
    """

    __slots__ = ()
    cel_type_name = ""

    @property
    def cel_size(self) -> int:
        return 1

    def __init_subclass__(cls) -> None:
        LIB_TYPES[cls.cel_type_name] = cls

    def cel_equal(self, other: object) -> bool:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.cel_equal(other)

    def __hash__(self) -> int:
        return hash(str(self))


LIB_TYPES: dict[str, type[LibValue]] = {}


class Optional:
    """``optional_type(T)``: a value or none."""

    __slots__ = ("value",)

    def __init__(self, value: Any = None, *, present: bool = True) -> None:
        self.value = value if present else _ABSENT

    @property
    def present(self) -> bool:
        return self.value is not _ABSENT

    def __repr__(self) -> str:
        return f"optional.of({self.value!r})" if self.present else "optional.none()"


_ABSENT = object()
OPTIONAL_NONE = Optional(present=False)
_NONE_KEY = IdentityKey(OPTIONAL_NONE)


@dataclass(frozen=True)
class TypeValue:
    """A value of type ``type``, e.g. the result of ``type(1)`` (prints as ``int``)."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, order=True)
class Duration:
    """google.protobuf.Duration in nanoseconds."""

    nanos: int

    def __str__(self) -> str:
        return go_duration(self.nanos)


@dataclass(frozen=True, order=True)
class Timestamp:
    """google.protobuf.Timestamp: nanoseconds since the epoch, plus the UTC offset (seconds)
    it was written with, which Go's time.Time keeps for printing and arithmetic but which
    never takes part in comparisons or the date accessors (UTC in Kubernetes)."""

    nanos: int
    offset: int = field(default=0, compare=False)

    def to_datetime(self, tz: _dt.tzinfo = _dt.UTC) -> _dt.datetime:
        return _dt.datetime.fromtimestamp(self.nanos // 1_000_000_000, tz).replace(
            microsecond=(self.nanos % 1_000_000_000) // 1000
        )

    def wall(self) -> tuple[_dt.datetime, int]:
        """(naive wall-clock time in the timestamp's own offset, nanoseconds of the second)."""
        secs, nanos = divmod(self.nanos + self.offset * 1_000_000_000, 1_000_000_000)
        return _dt.datetime(1970, 1, 1) + _dt.timedelta(seconds=secs), nanos

    def __str__(self) -> str:
        """Go's time.Time.String(): ``2020-01-01 00:00:00.5 +0100 +0100`` (``+0000 UTC``)."""
        wall, nanos = self.wall()
        frac = "." + f"{nanos:09d}".rstrip("0") if nanos else ""
        sign = "-" if self.offset < 0 else "+"
        hours, minutes = divmod(abs(self.offset) // 60, 60)
        zone = f"{sign}{hours:02d}{minutes:02d}"
        return f"{wall.year:04d}-{wall:%m-%d %H:%M:%S}{frac} {zone} {'UTC' if self.offset == 0 else zone}"


def go_duration(nanos: int) -> str:
    """Go's time.Duration.String(): ``1h30m0s``, ``1.5s``, ``1ms``, ``0s``."""
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    u = abs(nanos)
    if u < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if u >= size:
                whole, frac = divmod(u, size)
                digits = len(str(size)) - 1
                tail = f"{frac:0{digits}d}".rstrip("0") if digits else ""
                return f"{sign}{whole}{'.' + tail if tail else ''}{unit}"
    secs, frac = divmod(u, 1_000_000_000)
    tail = f"{frac:09d}".rstrip("0")
    text = f"{secs % 60}{'.' + tail if tail else ''}s"
    minutes = secs // 60
    if minutes:
        text = f"{minutes % 60}m{text}"
        if minutes >= 60:
            text = f"{minutes // 60}h{text}"
    return sign + text
