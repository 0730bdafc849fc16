"""Exact amounts from quantity strings, and how a diagnosis prints them.

Parsing is :class:`drakit.quantity.Quantity` (the faithful port); printing is ours: a person
comparing GPU memory reads ``361Mi`` more easily than ``378535936``, so amounts are shown in
the largest binary unit that keeps them whole, falling back to a plain number.
"""

from __future__ import annotations

from fractions import Fraction

from drakit.quantity import Quantity

_BINARY = (("Ei", 1024**6), ("Pi", 1024**5), ("Ti", 1024**4), ("Gi", 1024**3), ("Mi", 1024**2), ("Ki", 1024))


def value(text: str | int | float) -> Fraction:
    """The exact amount of a quantity string (``80Gi`` -> 85899345920)."""
    return Quantity.parse(str(text)).exact()


def human(q: Fraction) -> str:
    """``81920Mi`` style: the largest binary unit that divides the amount, else the number."""
    if q.denominator != 1:
        return str(float(q))
    n = int(q)
    if n == 0:
        return "0"
    for suffix, unit in _BINARY:
        if n % unit == 0:
            return f"{n // unit}{suffix}"
    return str(n)


def mebi(q: Fraction) -> str:
    """For contrast with a ``Gi`` literal: the amount in ``Mi`` when whole (80Gi -> 81920Mi)."""
    if q.denominator == 1 and int(q) % (1024**2) == 0:
        return f"{int(q) // 1024**2}Mi"
    return human(q)


def floor_unit(q: Fraction) -> str:
    """The amount rounded down to a whole number of its largest binary unit (81559Mi -> 79Gi)."""
    n = int(q)
    for suffix, unit in _BINARY:
        if n >= unit:
            return f"{n // unit}{suffix}"
    return str(n)
