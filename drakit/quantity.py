"""Kubernetes ``resource.Quantity``, ported from apimachinery's algorithm.

Why hand-written: selectors compare capacities (``80Gi``, ``81559Mi``) and the allocator sums them,
so drakit must agree with the API server on every accept/reject decision and every comparison.
The quantity parsers on PyPI disagree with Go on about a quarter of edge cases (``200K``,
``1.5n``, ``8Ei``, 37-digit values rounded to 28 digits), and Python's ``decimal`` at its
default precision is not exact.  This module therefore follows apimachinery step by step:

* the same hand-written scanner (so ``"."``, ``"-"`` and ``"Mi"`` parse as 0, ``"1.G"`` is valid);
* the same two internal representations, because they are observable through CEL's
  ``isInteger()``/``asInteger()`` and through ``String()``: an int64 ``value × 10^scale`` fast
  path, and an ``inf.Dec``-style big decimal (``unscaled × 10^-scale``) rounded away from zero
  to nine fractional digits;
* Go's fixed-width integer behaviour (int32 scales and exponents, int64 values) where it
  changes a result, e.g. ``1e2147483648`` wraps its exponent like Go does;
* the newest upstream fixes where they change no answer the pinned release (v0.37.2) gives
  (``1000E`` prints as ``1e21``); arithmetic is the pinned release's, wrap included
  (subtracting or negating the most negative int64 wraps, as the API server and CEL do).

Exact integers only; no floats except in :meth:`Quantity.as_approximate_float`, which
reproduces Go's ``math.Pow10`` table product bit for bit.  Where Go would materialise a
power of ten with more than :data:`MAX_POW10_DIGITS` digits (it would spend gigabytes and
minutes, e.g. ``quantity("1e2147483647").add(1)``), we raise :class:`QuantityError` instead.
"""

from __future__ import annotations

import enum
import functools
import math
from dataclasses import dataclass
from fractions import Fraction

from drakit.gostr import parse_int64

__all__ = [
    "MAX_POW10_DIGITS",
    "Format",
    "Quantity",
    "QuantityError",
]

# --------------------------------------------------------------------------------------------
# Errors (texts are upstream's)

SPLIT_RE_STRING = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = "quantities must match the regular expression '" + SPLIT_RE_STRING + "'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"
ERR_NOT_INTEGER = "cannot convert value to integer"  # the CEL library's asInteger() text
ERR_TOO_LARGE = "quantity too large to compute exactly"  # ours: Go would allocate gigabytes

#: Largest power of ten this module will materialise (digits).  Realistic quantities need < 40.
MAX_POW10_DIGITS = 100_000


class QuantityError(ValueError):
    """A string is not a quantity, or a conversion is impossible (upstream's error texts)."""


class Format(enum.StrEnum):
    """How a quantity prints; remembered from the suffix it was parsed with."""

    DecimalExponent = "DecimalExponent"  # 12e6
    BinarySI = "BinarySI"  # 12Mi
    DecimalSI = "DecimalSI"  # 12M


# --------------------------------------------------------------------------------------------
# Fixed-width integer helpers (Go semantics)

_I32_MIN = -(1 << 31)
_I32_MAX = (1 << 31) - 1
_I64_MIN = -(1 << 63)
_I64_MAX = (1 << 63) - 1
_NANO = -9
# apimachinery math.go: decimal digits the int64 fast path accepts (18, so 19-digit values take
# the big-decimal path and report isInteger() == false).
_MAX_INT64_FACTORS = 18


def _i32(x: int) -> int:
    """Wrap to int32 like Go's two's-complement arithmetic."""
    return ((x - _I32_MIN) & 0xFFFFFFFF) + _I32_MIN


def _i64(x: int) -> int:
    return ((x - _I64_MIN) & 0xFFFFFFFFFFFFFFFF) + _I64_MIN


def _tdiv(a: int, b: int) -> int:
    """Go's truncated integer division."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _tmod(a: int, b: int) -> int:
    """Go's remainder (sign of the dividend)."""
    return a - _tdiv(a, b) * b


@functools.lru_cache(maxsize=256)
def _pow10(n: int) -> int:
    if n > MAX_POW10_DIGITS:
        raise QuantityError(ERR_TOO_LARGE)
    return 10**n


def _ndigits(n: int) -> int:
    """Number of decimal digits of |n| (1 for 0), without converting to a string."""
    n = abs(n)
    if n < 10:
        return 1
    d = int(n.bit_length() * 0.30102999566398119521) + 1
    # The estimate is exact or off by one; settle it with exact comparisons.
    if n < _pow10_unchecked(d - 1):
        d -= 1
    elif n >= _pow10_unchecked(d):
        d += 1
    return d


def _pow10_unchecked(n: int) -> int:
    # For comparisons against a number that already has about n digits (no blow-up possible).
    return _pow10(n) if n <= MAX_POW10_DIGITS else 10**n


_CHUNK = 4000  # below CPython's int/str conversion limit


def _int_from_digits(s: str) -> int:
    """int(s) for an ASCII digit string of any length (CPython limits int() to 4300 digits)."""
    if len(s) <= _CHUNK:
        return int(s)
    half = len(s) // 2
    low = s[half:]
    return _int_from_digits(s[:half]) * 10 ** len(low) + _int_from_digits(low)


def _digits_of(n: int) -> str:
    """str(n) for any size (CPython limits str() to 4300 digits)."""
    if n < 0:
        return "-" + _digits_of(-n)
    if n < 10**_CHUNK:
        return str(n)
    k = _ndigits(n) // 2
    hi, lo = divmod(n, 10**k)
    return _digits_of(hi) + _digits_of(lo).rjust(k, "0")


def _strip_factor(n: int, factor: int) -> tuple[int, int]:
    """Remove every factor ``factor`` from non-zero n; returns (rest, times)."""
    times = 0
    if factor == 10:
        big = 10**16
        while n % big == 0:
            n //= big
            times += 16
    while n % factor == 0:
        n //= factor
        times += 1
    return n, times


# Go math (k8s.io/apimachinery/pkg/api/resource/math.go) -------------------------------------


def _int64_add(a: int, b: int) -> tuple[int, bool]:
    c = _i64(a + b)
    if a > 0 and b > 0:
        if c < 0:
            return 0, False
    elif a < 0 and b < 0:
        if c > 0:
            return 0, False
        if a == _I64_MIN and b == _I64_MIN:
            return 0, False
    return c, True


def _int64_multiply(a: int, b: int) -> tuple[int, bool]:
    if a in (0, 1) or b in (0, 1):
        return _i64(a * b), True
    if a == _I64_MIN or b == _I64_MIN:
        return 0, False
    c = _i64(a * b)
    return c, _tdiv(c, b) == a


def _int64_multiply_scale(a: int, b: int) -> tuple[int, bool]:
    # Shared by Go's int64MultiplyScale, ...Scale10, ...Scale100 and ...Scale1000 (b > 1).
    if a in (0, 1):
        return a * b, True
    if a == _I64_MIN:
        return 0, False
    c = _i64(a * b)
    return c, _tdiv(c, b) == a


def _positive_scale_int64(base: int, scale: int) -> tuple[int, bool]:
    """base × 10^scale, saturating on overflow.  A negative scale returns base (Go's loop)."""
    if base == 0:
        return 0, True
    if scale == 0:
        return base, True
    if scale in (1, 2, 3, 6, 9):
        result, ok = _int64_multiply_scale(base, 10**scale)
    else:
        result, ok = base, True
        i = 0
        while i < scale:  # a negative scale (wrapped int32) runs no iterations, as in Go
            result, ok = _int64_multiply_scale(result, 10)
            if not ok:
                break
            i += 1
    if not ok:
        return (_I64_MIN if base < 0 else _I64_MAX), False
    return result, True


def _negative_scale_int64(base: int, scale: int) -> tuple[int, bool]:
    """base / 10^scale rounded away from zero; exact flag."""
    if scale == 0:
        return base, True
    value = base
    fraction = False
    for _ in range(scale):
        if not fraction and _tmod(value, 10) != 0:
            fraction = True
        value = _tdiv(value, 10)
        if value == 0:
            if fraction:
                return (1 if base > 0 else -1), False
            return 0, True
    if fraction:
        value = value + 1 if base > 0 else value - 1
    return value, not fraction


def _remove_int64_factors(value: int, base: int) -> tuple[int, int]:
    times = 0
    negative = value < 0
    result = _i64(-value) if negative else value
    while result >= base and result % base == 0:
        times += 1
        result //= base
    if negative:
        result = _i64(-result)
    return result, times


# inf.Dec emulation (gopkg.in/inf.v0): value = unscaled × 10^-scale, scale is int32 ------------


def _dec_rescale(unscaled: int, scale: int, new_scale: int) -> int:
    """Unscaled value of (unscaled, scale) re-expressed at new_scale (truncating, like inf)."""
    shift = _i32(new_scale - scale)
    if shift < 0:
        return _quo_pow10(unscaled, -shift)[0]
    if shift > 0:
        return unscaled * _pow10(shift)
    return unscaled


def _quo_pow10(n: int, k: int) -> tuple[int, int]:
    """Truncated quotient and remainder of n / 10^k, cheap when 10^k exceeds |n|."""
    if k < 0:
        # -MinInt32 wrapped: Go indexes its power cache with a negative index and panics.
        raise QuantityError(ERR_TOO_LARGE)
    if k > _ndigits(n):
        return 0, n
    d = _pow10(k)
    q = abs(n) // d
    if n < 0:
        q = -q
    return q, n - q * d


def _dec_round_up(unscaled: int, scale: int, new_scale: int) -> int:
    """inf ``Round(x, new_scale, RoundUp)``: away from zero; returns the unscaled value."""
    shift = _i32(new_scale - scale)
    if shift >= 0:
        return unscaled * _pow10(shift) if shift else unscaled
    q, r = _quo_pow10(unscaled, _i32(-shift) if shift != _I32_MIN else -1)
    if r != 0:
        q += 1 if unscaled > 0 else -1
    return q


def _dec_add(xu: int, xs: int, yu: int, ys: int) -> tuple[int, int]:
    """inf ``Add``: the operand with the smaller scale is rescaled to the larger one."""
    if xs > ys:
        return xu + _dec_rescale(yu, ys, xs), xs
    if ys > xs:
        return _dec_rescale(xu, xs, ys) + yu, ys
    return xu + yu, xs


# --------------------------------------------------------------------------------------------
# Suffixes (suffix.go)

_DEC_SUFFIX_EXP: dict[str, int] = {
    "n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18,
}  # fmt: skip
_BIN_SUFFIX_EXP: dict[str, int] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DEC_EXP_SUFFIX: dict[int, str] = {v: k for k, v in _DEC_SUFFIX_EXP.items()}
_BIN_EXP_SUFFIX: dict[int, str] = {v: k for k, v in _BIN_SUFFIX_EXP.items()}
# Go computes int32(float32(exponent)*3/10); exact for these exponents.
_BIN_PRECISION_LOSS: dict[int, int] = {10: 3, 20: 6, 30: 9, 40: 12, 50: 15, 60: 18}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")


def _interpret_suffix(suffix: str) -> tuple[int, int, Format] | None:
    """(base, exponent, format) or None; upstream's ``interpret``."""
    exp = _DEC_SUFFIX_EXP.get(suffix)
    if exp is not None:
        return 10, exp, Format.DecimalSI
    exp = _BIN_SUFFIX_EXP.get(suffix)
    if exp is not None:
        return 2, exp, Format.BinarySI
    if len(suffix) > 1 and suffix[0] in "eE":
        parsed = parse_int64(suffix[1:])
        if parsed is None:
            return None
        return 10, _i32(parsed), Format.DecimalExponent
    return None


# --------------------------------------------------------------------------------------------
# Scanner (parseQuantityString)


def _scan(s: str) -> tuple[bool, str, str, str, str]:
    """(positive, value, num, denom, suffix), or raise the format error."""
    positive = True
    pos = 0
    end = len(s)
    if end and s[0] in "+-":
        positive = s[0] == "+"
        pos = 1
    # leading zeros
    while True:
        if pos >= end:
            return positive, "0", "0", "", ""
        if s[pos] != "0":
            break
        pos += 1
    # numerator
    i = pos
    while i < end and s[i] in _DIGITS:
        i += 1
    if i >= end:
        return positive, s, s[pos:] or "0", "", ""
    num = s[pos:i] or "0"
    pos = i
    denom = ""
    if s[pos] == ".":
        pos += 1
        i = pos
        while i < end and s[i] in _DIGITS:
            i += 1
        denom = s[pos:i]
        if i >= end:
            return positive, s, num, denom, ""
        pos = i
    value = s[:pos]
    suffix_start = pos
    i = pos
    while i < end and s[i] in _SUFFIX_CHARS:
        i += 1
    if i >= end:
        return positive, value, num, denom, s[suffix_start:]
    pos = i
    if s[pos] in "+-":
        pos += 1
    i = pos
    while i < end and s[i] in _DIGITS:
        i += 1
    if i >= end:
        return positive, value, num, denom, s[suffix_start:]
    raise QuantityError(ERR_FORMAT_WRONG)


def _inf_set_string(value: str) -> tuple[int, int] | None:
    """inf.Dec SetString: optional leading sign, digits with at most one '.', one digit needed."""
    body = value
    negative = False
    if body[:1] in ("+", "-"):
        negative = body[0] == "-"
        body = body[1:]
    int_part, dot, frac = body.partition(".")
    digits = int_part + frac
    if not digits or not all(c in _DIGITS for c in digits):
        return None
    unscaled = _int_from_digits(digits)
    return (-unscaled if negative else unscaled), (len(frac) if dot else 0)


# --------------------------------------------------------------------------------------------
# Quantity

_INT = 0
_DEC = 1


@dataclass(frozen=True, eq=False)
class Quantity:
    """An immutable Kubernetes quantity with Go's semantics; ``==`` and ``hash`` are by value.

    Internally either the int64 form (``_kind == 0``: value ``_u × 10^_s``, ``_u`` an int64 and
    ``_s`` an int32 exponent) or the big-decimal form (``_kind == 1``: value ``_u × 10^-_s``).
    ``_cached`` is the input string when Go would reuse it as ``String()``.
    """

    _kind: int
    _u: int
    _s: int
    format: Format = Format.DecimalSI
    _cached: str = ""

    # -- construction -----------------------------------------------------------------------

    @staticmethod
    def parse(s: str) -> Quantity:
        """Go's ``ParseQuantity``; raises :class:`QuantityError` with upstream's message."""
        return _parse(s)

    @classmethod
    def from_int(cls, n: int, fmt: Format = Format.DecimalSI) -> Quantity:
        """Go's ``NewQuantity(n, fmt)``; n must fit in an int64."""
        if not _I64_MIN <= n <= _I64_MAX:
            raise QuantityError(f"{n} does not fit in an int64")
        return cls(_INT, n, 0, fmt)

    # -- predicates and accessors -------------------------------------------------------------

    def sign(self) -> int:
        return (self._u > 0) - (self._u < 0)

    def is_zero(self) -> bool:
        return self._u == 0

    def _as_int64(self) -> tuple[int, bool]:
        """Go's ``AsInt64``: only the int64 form with a non-negative scale that fits."""
        if self._kind == _DEC:
            return 0, False
        if self._s == 0:
            return self._u, True
        if self._s < 0:
            return 0, False
        return _positive_scale_int64(self._u, self._s)

    def is_integer(self) -> bool:
        """CEL ``isInteger()``: false for the big-decimal form and for negative scales (``1000m``)."""
        return self._as_int64()[1]

    def as_integer(self) -> int:
        """CEL ``asInteger()``; raises ``cannot convert value to integer`` where Go's AsInt64 fails."""
        v, ok = self._as_int64()
        if not ok:
            raise QuantityError(ERR_NOT_INTEGER)
        return v

    def _scaled_value(self, scale: int) -> int:
        """Go's ``ScaledValue``: ceil-ish int64 at 10^scale, with Go's overflow behaviour."""
        if self._kind == _INT:
            return _as_scaled_int64(self._u, self._s, scale)[0]
        return _dec_scaled_value(self._u, self._s, -scale)

    def value(self) -> int:
        """Go's ``Value()``: rounded up (away from zero for the int64 form); may wrap like Go."""
        return self._scaled_value(0)

    def milli_value(self) -> int:
        """Go's ``MilliValue()``."""
        return self._scaled_value(-3)

    def as_approximate_float(self) -> float:
        """Go's ``AsApproximateFloat64``: float(mantissa) × math.Pow10(exponent), bit for bit."""
        if self._kind == _DEC:
            try:
                base = float(self._u)
            except OverflowError:
                base = math.inf if self._u > 0 else -math.inf
            exponent = _i32(-self._s)
        else:
            base = float(self._u)
            exponent = self._s
        if exponent == 0:
            return base
        return base * _go_pow10(exponent)

    def _coef_exp(self) -> tuple[int, int]:
        """(coefficient, base-10 exponent) with value = coefficient × 10^exponent, unnormalised."""
        if self._kind == _INT:
            return self._u, self._s
        return self._u, -self._s

    @functools.cached_property
    def _normal(self) -> tuple[int, int]:
        """(coefficient without trailing zeros, exponent); (0, 0) for zero.  Key for hash/eq."""
        c, e = self._coef_exp()
        if c == 0:
            return 0, 0
        c, t = _strip_factor(c, 10)
        return c, e + t

    def exact(self) -> Fraction:
        """The exact rational value (raises QuantityError if it would need a giant power of 10)."""
        c, e = self._normal
        if e >= 0:
            return Fraction(c * _pow10(e))
        return Fraction(c, _pow10(-e))

    # -- comparison ---------------------------------------------------------------------------

    def cmp(self, other: Quantity) -> int:
        """Go's ``Cmp``: exact comparison, never materialising huge powers of ten."""
        if self._s == other._s and self._kind == other._kind:
            return (self._u > other._u) - (self._u < other._u)
        return _cmp_exact(self._coef_exp(), other._coef_exp())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._normal == other._normal

    def __hash__(self) -> int:
        return hash(self._normal)

    def __lt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.cmp(other) < 0

    def __le__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.cmp(other) <= 0

    def __gt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.cmp(other) > 0

    def __ge__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.cmp(other) >= 0

    # -- arithmetic ---------------------------------------------------------------------------

    def _as_dec(self) -> tuple[int, int]:
        """Go's ``AsDec``: (unscaled, inf scale)."""
        if self._kind == _DEC:
            return self._u, self._s
        return self._u, _i32(-self._s)

    def add(self, other: Quantity | int) -> Quantity:
        """Go's ``Add`` on a copy; an int means CEL's ``add(int)`` (NewQuantity(n, DecimalExponent))."""
        y = Quantity.from_int(other, Format.DecimalExponent) if isinstance(other, int) else other
        fmt = self.format
        if self._kind == _INT and y._kind == _INT:
            if self._u == 0:
                fmt = y.format
            r = _int_amount_add(self._u, self._s, y._u, y._s)
            if r is not None:
                return Quantity(_INT, r[0], r[1], fmt)
        elif self._u == 0:
            fmt = y.format
        xu, xs = self._as_dec()
        yu, ys = y._as_dec()
        u, s = _dec_add(xu, xs, yu, ys)
        return Quantity(_DEC, u, s, fmt)

    def sub(self, other: Quantity | int) -> Quantity:
        """Go's ``Sub`` on a copy; an int means CEL's ``sub(int)``."""
        y = Quantity.from_int(other, Format.DecimalExponent) if isinstance(other, int) else other
        fmt = y.format if self._u == 0 else self.format
        if self._kind == _INT and y._kind == _INT:
            # int64Amount.Sub adds -b.value, which wraps for the most negative int64
            r = _int_amount_add(self._u, self._s, _i64(-y._u), y._s)
            if r is not None:
                return Quantity(_INT, r[0], r[1], fmt)
        xu, xs = self._as_dec()
        yu, ys = y._as_dec()
        u, s = _dec_add(xu, xs, -yu, ys)
        return Quantity(_DEC, u, s, fmt)

    def neg(self) -> Quantity:
        """Go's ``Neg`` on a copy (the most negative int64 wraps to itself)."""
        if self._kind == _INT:
            return Quantity(_INT, _i64(-self._u), self._s, self.format)
        return Quantity(_DEC, -self._u, self._s, self.format)

    # -- printing -----------------------------------------------------------------------------

    @functools.cached_property
    def _canonical(self) -> str:
        if self._cached:
            return self._cached
        number, suffix = self._canonicalize()
        return number + suffix

    def __str__(self) -> str:
        return self._canonical

    def __repr__(self) -> str:
        return f"Quantity({self._canonical!r})"

    def _canonicalize(self) -> tuple[str, str]:
        """Go's ``CanonicalizeBytes``: (number, suffix)."""
        if self._u == 0:
            return "0", ""
        fmt = self.format
        rounded: tuple[int, int, int] = (self._kind, self._u, self._s)
        if fmt is Format.BinarySI:
            if _cmp_exact(self._coef_exp(), (-1024, 0)) > 0 and _cmp_exact(self._coef_exp(), (1024, 0)) < 0:
                fmt = Format.DecimalSI
            else:
                rounded, exact = self._as_scale0()
                if not exact:
                    fmt = Format.DecimalSI
        if fmt is not Format.BinarySI:
            number, exponent = self._canonical_bytes()
            suffix = _DEC_EXP_SUFFIX.get(exponent) if fmt is Format.DecimalSI else None
            if suffix is None:
                suffix = "" if exponent == 0 else f"e{exponent}"
            return number, suffix
        number, exponent = _canonical_base1024(*rounded)
        return number, _BIN_EXP_SUFFIX.get(_i32(exponent * 10), "")

    def _as_scale0(self) -> tuple[tuple[int, int, int], bool]:
        """Go's ``AsScale(0)``: rounded away from zero to an integer, with exact flag."""
        if self._kind == _INT:
            if self._s >= 0:
                return (_INT, self._u, self._s), True
            v, exact = _negative_scale_int64(self._u, -self._s)
            return (_INT, v, 0), exact
        u = _dec_round_up(self._u, self._s, 0)
        exact = _cmp_exact((u, 0), (self._u, -self._s)) == 0
        return (_DEC, u, 0), exact

    def _canonical_bytes(self) -> tuple[str, int]:
        """Go's ``AsCanonicalBytes``: mantissa digits and an exponent that is a multiple of 3."""
        if self._kind == _INT:
            amount, times = _remove_int64_factors(self._u, 10)
            exponent = _i32(self._s + times)
            m = _tmod(exponent, 3)
            if m in (1, -2):
                amount, ok = _int64_multiply_scale(amount, 10)
                if not ok:
                    return _dec_canonical_bytes(self._u, _i32(-self._s))
                exponent = _i32(exponent - 1)
            elif m in (2, -1):
                amount, ok = _int64_multiply_scale(amount, 100)
                if not ok:
                    return _dec_canonical_bytes(self._u, _i32(-self._s))
                exponent = _i32(exponent - 2)
            return str(amount), exponent
        return _dec_canonical_bytes(self._u, self._s)


# --------------------------------------------------------------------------------------------
# Module-level helpers used by Quantity


def _cmp_exact(a: tuple[int, int], b: tuple[int, int]) -> int:
    """Compare c1×10^e1 with c2×10^e2 exactly: sign, then magnitude, then aligned coefficients."""
    c1, e1 = a
    c2, e2 = b
    s1 = (c1 > 0) - (c1 < 0)
    s2 = (c2 > 0) - (c2 < 0)
    if s1 != s2:
        return 1 if s1 > s2 else -1
    if s1 == 0:
        return 0
    # adjusted exponents: |c| × 10^e lies in [10^(adj-1), 10^adj)
    adj1 = _ndigits(c1) + e1
    adj2 = _ndigits(c2) + e2
    if adj1 != adj2:
        return s1 if adj1 > adj2 else -s1
    if e1 > e2:
        c1 = c1 * _pow10(e1 - e2)
    elif e2 > e1:
        c2 = c2 * _pow10(e2 - e1)
    return (c1 > c2) - (c1 < c2)


def _int_amount_add(av: int, as_: int, bv: int, bs: int) -> tuple[int, int] | None:
    """Go's ``int64Amount.Add`` (None when it reports overflow), int32 scale wrap included."""
    if bv == 0:
        return av, as_
    if av == 0:
        return bv, bs
    if as_ == bs:
        c, ok = _int64_add(av, bv)
        return (c, as_) if ok else None
    if as_ > bs:
        c, ok = _positive_scale_int64(av, _i32(as_ - bs))
        if not ok:
            return None
        c, ok = _int64_add(c, bv)
        return (c, bs) if ok else None
    c, ok = _positive_scale_int64(bv, _i32(bs - as_))
    if not ok:
        return None
    c, ok = _int64_add(av, c)
    return (c, as_) if ok else None


def _as_scaled_int64(value: int, scale: int, to: int) -> tuple[int, bool]:
    """Go's ``int64Amount.AsScaledInt64`` (newest: widened deltas, saturating)."""
    if value == 0:
        return 0, True
    delta = scale - to
    if delta < 0:
        down = -delta
        if down > _I32_MAX or down >= 19:
            return (-1 if value < 0 else 1), True
        return _negative_scale_int64(value, down)[0], True
    if delta > _I32_MAX or delta >= 19:
        return (_I64_MIN if value < 0 else _I64_MAX), False
    return _positive_scale_int64(value, delta)


def _big_int64(n: int) -> int:
    """big.Int.Int64(): the low 64 bits of |n| with n's sign applied (wrapping)."""
    v = _i64(abs(n) & 0xFFFFFFFFFFFFFFFF)
    return _i64(-v) if n < 0 else v


def _go_float_to_int64(f: float) -> int:
    """int64(f) on amd64: out-of-range and NaN give the most negative int64."""
    if math.isnan(f) or math.isinf(f) or not (-(2.0**63) <= f < 2.0**63):
        return _I64_MIN
    return int(f)


def _dec_scaled_value(unscaled: int, scale: int, new_scale: int) -> int:
    """Go's ``scaledValue`` (scale_int.go), including its fast-path rounding of negatives."""
    dif = scale - new_scale
    if dif == 0:
        return _big_int64(unscaled)
    if dif < 0:
        return _i64(_big_int64(unscaled) * _go_float_to_int64(_go_pow10(-dif)))
    if abs(unscaled) < _I64_MAX and dif < 19:
        divide = 10**dif
        result = _tdiv(unscaled, divide)
        if _tmod(unscaled, divide) != 0:
            return result + 1
        return result
    # big.Int DivMod is Euclidean (floor for a positive divisor)
    q, r = _quo_pow10(unscaled, dif)
    if r < 0:
        q, r = q - 1, r + _pow10(dif)
    if r != 0:
        return _big_int64(q + 1)
    return _big_int64(q)


def _dec_canonical_bytes(unscaled: int, scale: int) -> tuple[str, int]:
    exponent = _i32(-scale)
    amount = unscaled
    if amount != 0:
        amount, times = _strip_factor(amount, 10)
        exponent = _i32(exponent + times)
    while _tmod(exponent, 3) != 0:
        amount *= 10
        exponent = _i32(exponent - 1)
    return _digits_of(amount), exponent


def _canonical_base1024(kind: int, u: int, s: int) -> tuple[str, int]:
    """Go's ``AsCanonicalBase1024Bytes`` for a value already rounded to scale >= 0."""
    if kind == _INT:
        value, ok = _as_scaled_int64(u, s, 0)
        if ok:
            amount, exponent = _remove_int64_factors(value, 1024)
            return str(amount), exponent
        u, s = u, _i32(-s)  # fall back to the decimal form
    rounded = _dec_round_up(u, s, 0)
    if rounded == 0:
        return "0", 0
    amount, times = _strip_factor(rounded, 1024)
    return _digits_of(amount), times


# Go's math.Pow10 tables: the products below equal Go's bit for bit because the literals
# round to the same doubles as Go's constants.
_POW10_TAB = [float(f"1e{i}") for i in range(32)]
_POW10_POS_TAB32 = [float(f"1e{i}") for i in range(0, 320, 32)]
_POW10_NEG_TAB32 = [float(f"1e-{i}") for i in range(0, 352, 32)]


def _go_pow10(n: int) -> float:
    if 0 <= n <= 308:
        return _POW10_POS_TAB32[n // 32] * _POW10_TAB[n % 32]
    if -323 <= n <= 0:
        return _POW10_NEG_TAB32[(-n) // 32] / _POW10_TAB[(-n) % 32]
    if n > 0:
        return math.inf
    return 0.0


# --------------------------------------------------------------------------------------------
# ParseQuantity


@functools.lru_cache(maxsize=65536)
def _parse(s: str) -> Quantity:
    if not isinstance(s, str):
        raise TypeError(f"quantity must be a string, not {type(s).__name__}")
    if not s:
        raise QuantityError(ERR_FORMAT_WRONG)
    if s == "0":
        return Quantity(_INT, 0, 0, Format.DecimalSI, "0")

    positive, value, num, denom, suf = _scan(s)
    interpreted = _interpret_suffix(suf)
    if interpreted is None:
        raise QuantityError(ERR_SUFFIX)
    base, exponent, fmt = interpreted

    precision = 0
    scale = 0
    mantissa = 1
    if fmt is Format.BinarySI:
        if exponent >= 0 and not denom:
            mantissa = 1 << exponent
            precision = 15 - len(num) - _BIN_PRECISION_LOSS[exponent] - 1
        else:
            precision = -1
    else:
        scale = exponent
        precision = _MAX_INT64_FACTORS - (len(num) + len(denom))

    if precision >= 0:
        scale = _i32(scale - len(denom))
        if scale >= _NANO:
            shifted = num + denom
            parsed = parse_int64(shifted)
            if parsed is None:
                raise QuantityError(ERR_NUMERIC)
            result, ok = _int64_multiply(parsed, mantissa)
            if ok:
                if not positive:
                    result = -result
                cached = ""
                if fmt is Format.BinarySI:
                    if exponent % 10 == 0 and parsed & 0x07 != 0:
                        cached = s
                elif scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0":
                    cached = s
                return Quantity(_INT, result, scale, fmt, cached)

    dec = _inf_set_string(value)
    if dec is None:
        raise QuantityError(ERR_NUMERIC)
    unscaled, dscale = dec
    if base == 10:
        dscale = _i32(dscale + _i32(-exponent))
    else:
        unscaled <<= exponent

    negative = unscaled < 0
    if negative:
        unscaled = -unscaled
    if unscaled != 0:
        # Round away from zero to nano: "if you want some resources, you get some".
        unscaled = _dec_round_up(unscaled, dscale, 9)
        dscale = 9
    if fmt is Format.BinarySI:
        # Binary quantities are capped at 2^63-1.
        if _cmp_exact((unscaled, -dscale), (_I64_MAX, 0)) > 0:
            unscaled, dscale = _I64_MAX, 0
        if unscaled != 0 and _cmp_exact((unscaled, -dscale), (1, 0)) < 0:
            fmt = Format.DecimalSI
    if negative:
        unscaled = -unscaled
    return Quantity(_DEC, unscaled, dscale, fmt)
