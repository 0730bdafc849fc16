"""CEL's standard definitions (cel-go ``checker/stdlib`` + ``interpreter/functions``).

Operators with cross-type numeric comparison (enabled by the Kubernetes base environment
since 1.28), conversions, ``size``/``contains``/``startsWith``/``endsWith``/``matches`` and
basic timestamp/duration support.  ``matches`` uses RE2 through ``google-re2`` so that regex
syntax and semantics are Go's, not Python's ``re``.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
import zoneinfo
from decimal import Decimal
from functools import lru_cache
from typing import Any

import re2  # type: ignore[import-not-found,import-untyped,unused-ignore]

from drakit.selectors import types as T
from drakit.selectors.decls import Env
from drakit.selectors.library import fn
from drakit.selectors.types import (
    INT64_MAX,
    INT64_MIN,
    UINT64_MAX,
    Duration,
    EvalError,
    Timestamp,
    TypeValue,
    Uint,
)
from drakit.selectors.values import (
    check_int,
    check_uint,
    compare,
    equal,
    format_double,
    in_list,
    map_lookup,
    type_name,
)

A = T.param("A")
B = T.param("B")
LA = T.list_of(A)
MAB = T.map_of(A, B)


# ---------------------------------------------------------------------------------------------
# regex


_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False


# RE2 (C++) names its parse errors differently from Go's regexp/syntax, which it was ported
# from; the offending text they quote is the same.  C++ wording -> Go's ``ErrorCode`` text.
_GO_REGEX_CODES = {
    "missing )": "missing closing )",
    "missing ]": "missing closing ]",
    "unexpected )": "unexpected )",
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid named capture group": "invalid named capture",
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class": "invalid character class",
    "invalid character class range": "invalid character class range",
    "invalid UTF-8": "invalid UTF-8",
}


def _go_regex_error(detail: str) -> str:
    code, _, arg = detail.partition(": ")
    go = _GO_REGEX_CODES.get(code)
    if go is None:
        return detail
    return f"{go}: `{arg}`"


def _go_rejects(pattern: str) -> str | None:
    """Escapes RE2 accepts but Go's parser does not: ``\\C`` (any byte)."""
    i = 0
    while i < len(pattern) - 1:
        if pattern[i] == "\\":
            if pattern[i + 1] == "C":
                return "invalid escape sequence: `\\C`"
            i += 2
            continue
        i += 1
    return None


@lru_cache(maxsize=256)
def compile_re2(pattern: str) -> Any:
    """Compile with RE2 (Go's regexp dialect); errors become CEL runtime errors in Go's words."""
    try:
        compiled = re2.compile(pattern, _RE2_OPTIONS)
    except Exception as e:  # re2.error
        detail = e.args[0] if e.args else e
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise EvalError(f"error parsing regexp: {_go_regex_error(str(detail))}") from None
    rejected = _go_rejects(pattern)
    if rejected is not None:
        raise EvalError(f"error parsing regexp: {rejected}")
    return compiled


def matches(s: str, pattern: str) -> bool:
    return compile_re2(pattern).search(s) is not None


# ---------------------------------------------------------------------------------------------
# arithmetic


def _add_int(a: int, b: int) -> int:
    return check_int(a + b)


def _sub_int(a: int, b: int) -> int:
    return check_int(a - b)


def _mul_int(a: int, b: int) -> int:
    return check_int(a * b)


def _div_int(a: int, b: int) -> int:
    if b == 0:
        raise EvalError("division by zero")
    q = abs(a) // abs(b)
    return check_int(q if (a < 0) == (b < 0) else -q)


def _mod_int(a: int, b: int) -> int:
    if b == 0:
        raise EvalError("modulus by zero")
    if b == -1 and a == INT64_MIN:  # Go's MinInt64 % -1 overflows; cel-go checks it
        raise EvalError("integer overflow")
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


def _div_uint(a: int, b: int) -> Uint:
    if b == 0:
        raise EvalError("division by zero")
    return Uint(a // b)


def _mod_uint(a: int, b: int) -> Uint:
    if b == 0:
        raise EvalError("modulus by zero")
    return Uint(a % b)


def _div_double(a: float, b: float) -> float:
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _neg_int(a: int) -> int:
    return check_int(-a)


# ---------------------------------------------------------------------------------------------
# conversions


def _double_to_int(d: float) -> int:
    if math.isnan(d) or d <= -9.223372036854777e18 or d >= 9.223372036854776e18:
        raise EvalError("integer overflow")
    return int(d)


def _double_to_uint(d: float) -> Uint:
    if math.isnan(d) or d < 0 or d >= 1.8446744073709552e19:
        raise EvalError("unsigned integer overflow")
    return Uint(int(d))


# cel-go's string conversions drop strconv's error and report a plain type conversion
# error (common/types/string.go ConvertToType), whatever went wrong: syntax or range.
def _conversion_error(target: str) -> EvalError:
    return EvalError(f"type conversion error from 'string' to '{target}'")


def _string_to_int(s: str) -> int:
    if re.fullmatch(r"[+-]?[0-9]+", s, re.ASCII) is None or len(s.lstrip("+-").lstrip("0")) > 19:
        raise _conversion_error("int")  # longer than any int64 (and past Python's int() digit limit)
    v = int(s)
    if not INT64_MIN <= v <= INT64_MAX:
        raise _conversion_error("int")
    return v


def _string_to_uint(s: str) -> Uint:
    if re.fullmatch(r"[0-9]+", s, re.ASCII) is None or len(s.lstrip("0")) > 20:  # ParseUint takes no sign
        raise _conversion_error("uint")
    v = int(s)
    if v > UINT64_MAX:
        raise _conversion_error("uint")
    return Uint(v)


# Go's strconv.ParseFloat: decimal with optional exponent, hex mantissa with a mandatory
# binary exponent, "inf"/"infinity" (signed, any case) and "nan" (unsigned, any case).
_FLOAT_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
_HEX_FLOAT_RE = re.compile(
    r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+", re.ASCII
)
_SPECIAL_FLOAT_RE = re.compile(r"[+-]?(?:inf|infinity)|nan", re.ASCII | re.IGNORECASE)


def _string_to_double(s: str) -> float:
    if _SPECIAL_FLOAT_RE.fullmatch(s):
        return float(s)
    if _FLOAT_RE.fullmatch(s):
        v = float(s)
    elif _HEX_FLOAT_RE.fullmatch(s):
        try:
            v = float.fromhex(s)
        except OverflowError:
            raise _conversion_error("double") from None
    else:
        raise _conversion_error("double")
    if math.isinf(v):  # out of range: ParseFloat reports ErrRange, cel-go an error
        raise _conversion_error("double")
    return v


def _string_to_bool(s: str) -> bool:
    if s in ("1", "t", "T", "true", "TRUE", "True"):
        return True
    if s in ("0", "f", "F", "false", "FALSE", "False"):
        return False
    raise EvalError("type conversion error from 'string' to 'bool'")


def _bytes_to_string(b: bytes) -> str:
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        raise EvalError("invalid UTF-8 in bytes, cannot convert to string") from None


# ---------------------------------------------------------------------------------------------
# timestamps and durations (parsing, comparison, arithmetic)

_DUR_UNITS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 10**9,
    "m": 60 * 10**9,
    "h": 3600 * 10**9,
}
_DUR_RE = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")


# cel-go's string conversions report any parse failure as a failed conversion.
_NOT_A_DURATION = "type conversion error from 'string' to 'google.protobuf.Duration'"
_NOT_A_TIMESTAMP = "type conversion error from 'string' to 'google.protobuf.Timestamp'"


def parse_duration(s: str) -> Duration:
    text = s
    neg = False
    if text[:1] in "+-":
        neg = text[0] == "-"
        text = text[1:]
    if text == "0":
        return Duration(0)
    if not text:
        raise EvalError(_NOT_A_DURATION)
    total = Decimal(0)
    pos = 0
    while pos < len(text):
        m = _DUR_RE.match(text, pos)
        if m is None or m.group(1) in ("", "."):
            raise EvalError(_NOT_A_DURATION)
        total += Decimal(m.group(1)) * _DUR_UNITS[m.group(2)]
        pos = m.end()
    nanos = int(total)
    if neg:
        nanos = -nanos
    if not INT64_MIN <= nanos <= INT64_MAX:  # Go's time.Duration range
        raise EvalError(_NOT_A_DURATION)
    return Duration(nanos)


def format_duration(d: Duration) -> str:
    secs, nanos = divmod(abs(d.nanos), 10**9)
    sign = "-" if d.nanos < 0 else ""
    if nanos:
        frac = f"{nanos:09d}".rstrip("0")
        return f"{sign}{secs}.{frac}s"
    return f"{sign}{secs}s"


_MIN_TS = -62135596800 * 10**9  # 0001-01-01T00:00:00Z
_MAX_TS = 253402300799 * 10**9 + 999_999_999  # 9999-12-31T23:59:59.999999999Z
_TS_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})")


def parse_timestamp(s: str) -> Timestamp:
    m = _TS_RE.fullmatch(s)
    if m is None:
        raise EvalError(_NOT_A_TIMESTAMP)
    y, mo, d, h, mi, se = (int(m.group(i)) for i in range(1, 7))
    try:
        dt = _dt.datetime(y, mo, d, h, mi, se, tzinfo=_dt.UTC)
    except ValueError:
        raise EvalError(_NOT_A_TIMESTAMP) from None
    frac = m.group(7)
    nanos = int((frac[1:] + "000000000")[:9]) if frac else 0
    tz = m.group(8)
    offset = 0
    if tz != "Z":
        # Go's time.Parse range test is > rather than >= ("some people do write offsets
        # of 24 hours or 60 minutes")
        if int(tz[1:3]) > 24 or int(tz[4:6]) > 60:
            raise EvalError(_NOT_A_TIMESTAMP)
        sign = 1 if tz[0] == "+" else -1
        offset = sign * (int(tz[1:3]) * 3600 + int(tz[4:6]) * 60)
    epoch = int((dt - _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)).total_seconds()) - offset
    return _ts(epoch * 10**9 + nanos, offset)


def _ts(nanos: int, offset: int = 0) -> Timestamp:
    if nanos < _MIN_TS or nanos > _MAX_TS:
        raise EvalError("timestamp overflow")
    return Timestamp(nanos, offset)


def _dur(nanos: int) -> Duration:
    if not INT64_MIN <= nanos <= INT64_MAX:  # Go's time.Duration is int64 nanoseconds
        raise EvalError("integer overflow")
    return Duration(nanos)


def format_timestamp(t: Timestamp) -> str:
    """Go's RFC3339Nano in the timestamp's own offset (``Z`` for UTC)."""
    wall, nanos = t.wall()
    base = f"{wall.year:04d}-{wall:%m-%dT%H:%M:%S}"
    if nanos:
        base += "." + f"{nanos:09d}".rstrip("0")
    if t.offset == 0:
        return base + "Z"
    hours, minutes = divmod(abs(t.offset) // 60, 60)
    return f"{base}{'-' if t.offset < 0 else '+'}{hours:02d}:{minutes:02d}"


def _time_zone(tz: str) -> _dt.tzinfo:
    """cel-go's timeZone(): an IANA name, or ``[+-]HH:MM`` read with strconv.Atoi."""
    if ":" not in tz:
        if tz in ("", "UTC"):
            return _dt.UTC
        try:
            return zoneinfo.ZoneInfo(tz)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise EvalError(f"unknown time zone {tz}") from None
    hours_text, _, minutes_text = tz.partition(":")
    hours, minutes = _atoi(hours_text), _atoi(minutes_text)
    offset = hours * 60 - minutes if tz.startswith("-") else hours * 60 + minutes
    if abs(offset) >= 24 * 60:
        raise EvalError(f"unsupported time zone offset: {tz}")  # Python's tzinfo limit
    return _dt.timezone(_dt.timedelta(minutes=offset))


def _atoi(s: str) -> int:
    if re.fullmatch(r"[+-]?[0-9]+", s) is None:
        raise EvalError(f'strconv.Atoi: parsing "{s}": invalid syntax')
    return int(s)


# ---------------------------------------------------------------------------------------------


def _not_equal(a: Any, b: Any) -> bool:
    """cel-go's ``!=`` is "not (a == b) == true": an equality error (a Quantity or Semver
    against another type) makes it true, where ``==`` reports the error."""
    try:
        return not equal(a, b)
    except EvalError:
        return True


def _not_strictly_false(v: Any) -> bool:
    return v if type(v) is bool else True


def _index_list(lst: Any, i: Any) -> Any:
    ti = type(i)
    if ti is float:
        if i != int(i) if math.isfinite(i) else True:
            raise EvalError(f"unsupported index value {i} in list")
        i = int(i)
    elif ti is not int and ti is not Uint:
        raise EvalError("no such overload")
    n = len(lst)
    if i < 0 or i >= n:
        raise EvalError(f"index out of bounds: {i}")
    return lst[i]


def _type_of(v: Any) -> TypeValue:
    return TypeValue(type_name(v))


def declare(env: Env) -> None:
    BOOL, INT, UINT, DOUBLE, STRING, BYTES, NULL = T.BOOL, T.INT, T.UINT, T.DOUBLE, T.STRING, T.BYTES, T.NULL
    DYN, TS, DUR = T.DYN_T, T.TIMESTAMP, T.DURATION

    fn(env, "_?_:_", "conditional", [BOOL, A, A], A)
    fn(env, "_&&_", "logical_and", [BOOL, BOOL], BOOL)
    fn(env, "_||_", "logical_or", [BOOL, BOOL], BOOL)
    fn(env, "!_", "logical_not", [BOOL], BOOL, lambda a: not a)
    fn(env, "@not_strictly_false", "not_strictly_false", [BOOL], BOOL, _not_strictly_false)
    fn(env, "_==_", "equals", [A, A], BOOL, equal)
    fn(env, "_!=_", "not_equals", [A, A], BOOL, _not_equal)

    fn(env, "-_", "negate_int64", [INT], INT, _neg_int)
    fn(env, "-_", "negate_double", [DOUBLE], DOUBLE, lambda a: -a)

    # Declaration order is cel-go's (common/stdlib): with a free type variable, e.g.
    # [].map(m, m + m), the first matching overload decides what the variable binds to.
    fn(env, "_+_", "add_bytes", [BYTES, BYTES], BYTES, lambda a, b: a + b)
    fn(env, "_+_", "add_double", [DOUBLE, DOUBLE], DOUBLE, lambda a, b: a + b)
    fn(env, "_+_", "add_duration_duration", [DUR, DUR], DUR, lambda a, b: _dur(a.nanos + b.nanos))
    fn(env, "_+_", "add_duration_timestamp", [DUR, TS], TS, lambda a, b: _ts(a.nanos + b.nanos, b.offset))
    fn(env, "_+_", "add_timestamp_duration", [TS, DUR], TS, lambda a, b: _ts(a.nanos + b.nanos, a.offset))
    fn(env, "_+_", "add_int64", [INT, INT], INT, _add_int)
    fn(env, "_+_", "add_list", [LA, LA], LA, lambda a, b: [*a, *b])
    fn(env, "_+_", "add_string", [STRING, STRING], STRING, lambda a, b: a + b)
    fn(env, "_+_", "add_uint64", [UINT, UINT], UINT, lambda a, b: check_uint(a + b))
    fn(env, "_-_", "subtract_double", [DOUBLE, DOUBLE], DOUBLE, lambda a, b: a - b)
    fn(env, "_-_", "subtract_duration_duration", [DUR, DUR], DUR, lambda a, b: _dur(a.nanos - b.nanos))
    fn(env, "_-_", "subtract_int64", [INT, INT], INT, _sub_int)
    fn(
        env,
        "_-_",
        "subtract_timestamp_duration",
        [TS, DUR],
        TS,
        lambda a, b: _ts(a.nanos - b.nanos, a.offset),
    )
    fn(env, "_-_", "subtract_timestamp_timestamp", [TS, TS], DUR, lambda a, b: _dur(a.nanos - b.nanos))
    fn(env, "_-_", "subtract_uint64", [UINT, UINT], UINT, lambda a, b: check_uint(a - b))
    fn(env, "_*_", "multiply_double", [DOUBLE, DOUBLE], DOUBLE, lambda a, b: a * b)
    fn(env, "_*_", "multiply_int64", [INT, INT], INT, _mul_int)
    fn(env, "_*_", "multiply_uint64", [UINT, UINT], UINT, lambda a, b: check_uint(a * b))
    fn(env, "_/_", "divide_double", [DOUBLE, DOUBLE], DOUBLE, _div_double)
    fn(env, "_/_", "divide_int64", [INT, INT], INT, _div_int)
    fn(env, "_/_", "divide_uint64", [UINT, UINT], UINT, _div_uint)
    fn(env, "_%_", "modulo_int64", [INT, INT], INT, _mod_int)
    fn(env, "_%_", "modulo_uint64", [UINT, UINT], UINT, _mod_uint)

    ordered = [
        ("bool", BOOL),
        ("int64", INT),
        ("uint64", UINT),
        ("double", DOUBLE),
        ("string", STRING),
        ("bytes", BYTES),
        ("timestamp", TS),
        ("duration", DUR),
    ]
    cross = [
        ("int64_uint64", INT, UINT),
        ("int64_double", INT, DOUBLE),
        ("uint64_int64", UINT, INT),
        ("uint64_double", UINT, DOUBLE),
        ("double_int64", DOUBLE, INT),
        ("double_uint64", DOUBLE, UINT),
    ]
    ops = [
        ("_<_", "less", lambda c: c < 0),
        ("_<=_", "less_equals", lambda c: c <= 0),
        ("_>_", "greater", lambda c: c > 0),
        ("_>=_", "greater_equals", lambda c: c >= 0),
    ]
    for op, prefix, test in ops:
        for suffix, t in ordered:
            fn(
                env,
                op,
                f"{prefix}_{suffix}",
                [t, t],
                BOOL,
                (lambda tst: lambda a, b: tst(compare(a, b)))(test),
            )
        for suffix, t1, t2 in cross:
            fn(
                env,
                op,
                f"{prefix}_{suffix}",
                [t1, t2],
                BOOL,
                (lambda tst: lambda a, b: tst(compare(a, b)))(test),
            )

    fn(env, "_[_]", "index_list", [LA, INT], A, _index_list)
    fn(env, "_[_]", "index_map", [MAB, A], B, map_lookup)
    fn(env, "@in", "in_list", [A, LA], BOOL, in_list)
    fn(env, "@in", "in_map", [A, MAB], BOOL, lambda k, m: T.map_key(k) in m)

    for oid, t in (("string", STRING), ("bytes", BYTES), ("list", LA), ("map", MAB)):
        fn(env, "size", f"size_{oid}", [t], INT, len)
        fn(env, "size", f"{oid}_size", [t], INT, len, member=True)

    fn(env, "contains", "contains_string", [STRING, STRING], BOOL, lambda s, x: x in s, member=True)
    fn(
        env,
        "startsWith",
        "starts_with_string",
        [STRING, STRING],
        BOOL,
        lambda s, x: s.startswith(x),
        member=True,
    )
    fn(env, "endsWith", "ends_with_string", [STRING, STRING], BOOL, lambda s, x: s.endswith(x), member=True)
    fn(env, "matches", "matches", [STRING, STRING], BOOL, matches)
    fn(env, "matches", "matches_string", [STRING, STRING], BOOL, matches, member=True)

    fn(env, "int", "int64_to_int64", [INT], INT, lambda v: v)
    fn(env, "int", "uint64_to_int64", [UINT], INT, lambda v: check_int(int(v)))
    fn(env, "int", "double_to_int64", [DOUBLE], INT, _double_to_int)
    fn(env, "int", "string_to_int64", [STRING], INT, _string_to_int)
    fn(env, "int", "timestamp_to_int64", [TS], INT, lambda t: t.nanos // 10**9)
    fn(env, "uint", "uint64_to_uint64", [UINT], UINT, lambda v: v)
    fn(env, "uint", "int64_to_uint64", [INT], UINT, check_uint)
    fn(env, "uint", "double_to_uint64", [DOUBLE], UINT, _double_to_uint)
    fn(env, "uint", "string_to_uint64", [STRING], UINT, _string_to_uint)
    fn(env, "double", "double_to_double", [DOUBLE], DOUBLE, lambda v: v)
    fn(env, "double", "int64_to_double", [INT], DOUBLE, float)
    fn(env, "double", "uint64_to_double", [UINT], DOUBLE, float)
    fn(env, "double", "string_to_double", [STRING], DOUBLE, _string_to_double)
    fn(env, "string", "string_to_string", [STRING], STRING, lambda v: v)
    fn(env, "string", "int64_to_string", [INT], STRING, str)
    fn(env, "string", "uint64_to_string", [UINT], STRING, lambda v: str(int(v)))
    fn(env, "string", "double_to_string", [DOUBLE], STRING, format_double)
    fn(env, "string", "bytes_to_string", [BYTES], STRING, _bytes_to_string)
    fn(env, "string", "bool_to_string", [BOOL], STRING, lambda v: "true" if v else "false")
    fn(env, "string", "timestamp_to_string", [TS], STRING, format_timestamp)
    fn(env, "string", "duration_to_string", [DUR], STRING, format_duration)
    fn(env, "bytes", "bytes_to_bytes", [BYTES], BYTES, lambda v: v)
    fn(env, "bytes", "string_to_bytes", [STRING], BYTES, lambda v: v.encode("utf-8"))
    fn(env, "bool", "bool_to_bool", [BOOL], BOOL, lambda v: v)
    fn(env, "bool", "string_to_bool", [STRING], BOOL, _string_to_bool)
    fn(env, "dyn", "to_dyn", [A], DYN, lambda v: v)
    fn(env, "type", "type", [A], T.type_of(A), _type_of)
    fn(env, "duration", "string_to_duration", [STRING], DUR, parse_duration)
    fn(env, "duration", "duration_to_duration", [DUR], DUR, lambda v: v)
    fn(env, "timestamp", "string_to_timestamp", [STRING], TS, parse_timestamp)
    fn(env, "timestamp", "timestamp_to_timestamp", [TS], TS, lambda v: v)
    fn(env, "timestamp", "int64_to_timestamp", [INT], TS, lambda v: _ts(v * 10**9))
    # Accessors: UTC (Kubernetes sets DefaultUTCTimeZone), or in the zone given.
    accessors: tuple[tuple[str, str, Any], ...] = (
        ("getFullYear", "year", lambda d: d.year),
        ("getMonth", "month", lambda d: d.month - 1),
        ("getDayOfMonth", "day_of_month", lambda d: d.day - 1),
        ("getDate", "day_of_month_1_based", lambda d: d.day),
        ("getDayOfWeek", "day_of_week", lambda d: (d.weekday() + 1) % 7),
        ("getDayOfYear", "day_of_year", lambda d: d.timetuple().tm_yday - 1),
        ("getHours", "hours", lambda d: d.hour),
        ("getMinutes", "minutes", lambda d: d.minute),
        ("getSeconds", "seconds", lambda d: d.second),
        ("getMilliseconds", "milliseconds", lambda d: d.microsecond // 1000),
    )
    for name, unit, get in accessors:
        fn(
            env,
            name,
            f"timestamp_to_{name}",
            [TS],
            INT,
            (lambda g: lambda t: g(t.to_datetime()))(get),
            member=True,
        )
        with_tz = f"timestamp_to_{unit}_tz" if unit == "seconds" else f"timestamp_to_{unit}_with_tz"
        fn(
            env,
            name,
            with_tz,
            [TS, STRING],
            INT,
            (lambda g: lambda t, tz: g(t.to_datetime(_time_zone(tz))))(get),
            member=True,
        )
    for name, div in (
        ("getHours", 3600 * 10**9),
        ("getMinutes", 60 * 10**9),
        ("getSeconds", 10**9),
        ("getMilliseconds", 10**6),
    ):
        fn(
            env,
            name,
            f"duration_to_{name}",
            [DUR],
            INT,
            (lambda d: lambda v: int(v.nanos / d))(div),
            member=True,
        )
    _ = NULL
