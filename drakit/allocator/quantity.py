"""Kubernetes ``resource.Quantity`` just far enough for the allocator: exact parsing and printing.

Hand-written because no maintained Python package parses Kubernetes quantities exactly (the
``kubernetes`` client's ``parse_quantity`` returns floats/Decimals and cannot print the canonical
form).  Values are kept as :class:`fractions.Fraction`, so comparisons and sums are exact, which is
what upstream's ``inf.Dec``-backed arithmetic gives.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_NUMBER = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(.*)$")
_EXPONENT = re.compile(r"^[eE]([+-]?[0-9]+)$")

BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"
DECIMAL_EXPONENT = "DecimalExponent"


class QuantityError(ValueError):
    """The text is not a Kubernetes quantity."""


@lru_cache(maxsize=4096)
def parse(text: str) -> tuple[Fraction, str]:
    """Parse ``"4Gi"``, ``"1.5"``, ``"100m"``, ``"1e3"`` into (exact value, format)."""
    if not isinstance(text, str):
        text = str(text)
    m = _NUMBER.match(text.strip())
    if not m:
        raise QuantityError(
            f"quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {text!r}"
        )
    number, suffix = m.group(1), m.group(2)
    value = Fraction(number)
    if suffix in _BINARY:
        return value * (1024 ** _BINARY[suffix]), BINARY_SI
    if suffix in _DECIMAL:
        return value * Fraction(10) ** _DECIMAL[suffix], DECIMAL_SI
    e = _EXPONENT.match(suffix)
    if e:
        return value * Fraction(10) ** int(e.group(1)), DECIMAL_EXPONENT
    raise QuantityError(f"unable to parse quantity's suffix: {text!r}")


def value(text: str) -> Fraction:
    return parse(text)[0]


def int_value(q: Fraction) -> int:
    """``Quantity.Value()``: rounded up (away from zero) to an integer."""
    return math.ceil(q) if q >= 0 else -math.ceil(-q)


def format_quantity(q: Fraction, fmt: str = DECIMAL_SI) -> str:
    """The canonical string ``Quantity.String()`` prints for ``q`` in format ``fmt``.

    Upstream rounds to nano precision; so do we.  Binary format falls back to decimal for
    values below 1024 or with a fraction, as upstream does.
    """
    if q.denominator != 1 and (q * 10**9).denominator != 1:
        q = Fraction(math.ceil(q * 10**9), 10**9)
    if fmt == BINARY_SI and q.denominator == 1 and abs(q) >= 1024:
        n = int(q)
        exp = 0
        while exp < 6 and n % 1024 == 0:
            n //= 1024
            exp += 1
        suffix = {v: k for k, v in _BINARY.items()}.get(exp, "")
        return f"{n}{suffix}"
    # Decimal SI: find the largest exponent (multiple of 3) with an integer mantissa.
    for exp in (18, 15, 12, 9, 6, 3, 0, -3, -6, -9):
        mantissa = q / Fraction(10) ** exp
        if mantissa.denominator == 1:
            n = int(mantissa)
            if n == 0:
                return "0"
            if exp > 0 and n % 1000 == 0 and exp < 18:
                continue
            suffix = {v: k for k, v in _DECIMAL.items()}[exp]
            return f"{n}{suffix}"
    return str(float(q))  # pragma: no cover - unreachable after nano rounding


def canonical(text: str) -> str:
    """Re-print a quantity string the way the API server would serialise it."""
    q, fmt = parse(text)
    return format_quantity(q, BINARY_SI if fmt == BINARY_SI else DECIMAL_SI)


def human(q: Fraction) -> str:
    """Short display form for messages: binary suffixes where they read naturally."""
    decimal = format_quantity(q, DECIMAL_SI)
    binary = format_quantity(q, BINARY_SI)
    return binary if len(binary) < len(decimal) else decimal
