"""Memory sizes and versions as users write them, normalised to what CEL compares.

Memory: ``48Gi``/``48GiB`` are binary (2^30), ``80G``/``80GB`` decimal (10^9).  "GB" compiles
to the Kubernetes decimal suffix ``G`` on purpose: drivers publish the real framebuffer, which
sits below the marketed size, so an "80GB" card (H100: 81559Mi) fails ``80Gi`` but passes
``80G``.  A bare number is rejected: the unit is the whole point.

Versions: ``8.0``, ``570``, ``570.124.06`` are completed and stripped of leading zeros the way
the Kubernetes semver library's normalising parser does, so ``8.0`` compiles to ``semver('8.0.0')``.
"""

from __future__ import annotations

import re

from drakit.gostr import quote
from drakit.quantity import Quantity

_MEMORY_RE = re.compile(r"^(?P<num>[0-9]+(?:\.[0-9]+)?)\s*(?P<unit>[KMGTP]i?B?|[kK]B?)\Z")
_BINARY = {"Ki": "Ki", "Mi": "Mi", "Gi": "Gi", "Ti": "Ti", "Pi": "Pi"}
_DECIMAL = {"K": "k", "k": "k", "M": "M", "G": "G", "T": "T", "P": "P"}
_VERSION_RE = re.compile(r"^v?(?P<parts>[0-9]+(?:\.[0-9]+){0,2})\Z")


class UnitError(ValueError):
    """A size or version a profile cannot use; the message says how to write it."""


def memory_quantity(text: str) -> str:
    """``48Gi`` -> ``48Gi``; ``48GiB`` -> ``48Gi``; ``80GB``/``80G`` -> ``80G`` (decimal)."""
    m = _MEMORY_RE.match(text.strip())
    if not m:
        if re.fullmatch(r"[0-9.]+", text.strip()):
            raise UnitError(f"memory {quote(text)} needs an explicit unit: e.g. 48Gi (binary) or 80GB (decimal)")
        raise UnitError(f"memory {quote(text)}: want a number and a unit such as 48Gi, 48GiB, 80G or 80GB")
    unit = m.group("unit")
    base = unit[:-1] if unit.endswith("B") and len(unit) > 1 else unit
    if base in _BINARY:
        return m.group("num") + _BINARY[base]
    return m.group("num") + _DECIMAL[base]


def parse_memory(text: str) -> Quantity:
    return Quantity.parse(memory_quantity(text))


def normalize_version(text: str) -> str:
    """``8.0`` -> ``8.0.0``; ``570.124.06`` -> ``570.124.6``; ``v1`` -> ``1.0.0``."""
    m = _VERSION_RE.match(text.strip())
    if not m:
        raise UnitError(f"version {quote(text)}: want MAJOR[.MINOR[.PATCH]], e.g. 8.0 or 570.124.06")
    parts = [str(int(p)) for p in m.group("parts").split(".")]
    return ".".join(parts + ["0"] * (3 - len(parts)))


def human_bytes(q: Quantity) -> str:
    """``81559Mi`` -> ``79.65 GiB / 85.52 GB`` (what near-miss messages print)."""
    b = q.exact()
    return f"{float(b) / 2**30:.2f} GiB / {float(b) / 1e9:.2f} GB"
