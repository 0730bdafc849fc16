"""What each compiled clause *means*, in Python, and why a device fails it (in words).

This is the profile's intended meaning written independently of CEL.  Eligibility uses it to
word reasons ("memory 23034Mi < 48Gi"), and the tests compare it with the CEL evaluation of
the emitted selectors on realistic inventories: agreement on every device is the check that
the compiled selectors match exactly the intended devices.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from drakit.drivers import split_key
from drakit.profiles.compile import Clause
from drakit.profiles.units import human_bytes
from drakit.quantity import Quantity, QuantityError
from drakit.semver import Semver, SemverError


@dataclass(frozen=True)
class Verdict:
    ok: bool
    reason: str = ""  # why not (empty when ok)
    near_miss: str = ""  # a hint when the device misses a memory bound by a unit mix-up


def _lookup(table: Mapping[str, Any] | None, driver: str, key: str) -> tuple[bool, Any]:
    """A device's attribute/capacity entry by qualified key; the driver's own keys may be bare."""
    table = table or {}
    domain, name = split_key(key, driver)
    for candidate in ((name, f"{domain}/{name}") if domain == driver else (f"{domain}/{name}",)):
        if candidate in table:
            return True, table[candidate]
    return False, None


def attribute_value(driver: str, device: Mapping[str, Any], key: str) -> tuple[bool, Any, str]:
    """(present, python value, value type) of an attribute."""
    present, raw = _lookup(device.get("attributes"), driver, key)
    if not present or not isinstance(raw, Mapping):
        return False, None, ""
    for t in ("string", "int", "bool", "version"):
        if t in raw:
            return True, raw[t], t
    return True, None, ""


def capacity_value(driver: str, device: Mapping[str, Any], key: str) -> Quantity | None:
    present, raw = _lookup(device.get("capacity"), driver, key)
    if not present or not isinstance(raw, Mapping) or "value" not in raw:
        return None
    try:
        return Quantity.parse(str(raw["value"]))
    except QuantityError:
        return None


def _bare(key: str, driver: str) -> str:
    domain, name = split_key(key, driver)
    return name if domain == driver else key


def check(clause: Clause, driver: str, device: Mapping[str, Any]) -> Verdict:
    """Does a device of ``driver`` satisfy ``clause``?  Missing keys fail, never raise."""
    kind = clause.kind
    name = _bare(clause.key, driver) if clause.key else ""
    if kind == "driver":
        want = clause.operand[0]
        return Verdict(driver == want, f"driver {driver}, not {want}")
    if kind == "colocate":
        present, _, _ = attribute_value(driver, device, clause.key)
        return Verdict(present, f"no {clause.key} attribute, so it can never join a {clause.operand[0]} constraint")
    if kind.startswith("memory"):
        q = capacity_value(driver, device, clause.key)
        bound = Quantity.parse(clause.operand[0])
        if q is None:
            return Verdict(False, f"no {name} capacity published")
        if kind == "memory-min":
            if q >= bound:
                return Verdict(True)
            hint = ""
            if clause.operand[0].endswith("i"):
                decimal = Quantity.parse(clause.operand[0][:-1])
                if q >= decimal and not q.is_zero():
                    written = clause.written or clause.operand[0]
                    hint = (f"{human_bytes(q)}: the binary threshold {written} excludes it; "
                            f"{clause.operand[0][:-2]}GB (decimal) would include it") if written.endswith(("Gi", "GiB")) else ""
            zero = " (0: the driver could not measure it)" if q.is_zero() else ""
            return Verdict(False, f"{name} {q}{zero} < {clause.operand[0]}", hint)
        if q.is_zero():
            return Verdict(False, f"{name} 0 (the driver could not measure it)")
        return Verdict(q <= bound, f"{name} {q} > {clause.operand[0]}")
    present, value, vtype = attribute_value(driver, device, clause.key)
    if not present:
        return Verdict(False, f"no {name} attribute published")
    if kind == "type":
        return Verdict(value == clause.operand[0], f"{name} {value!r} is not {clause.operand[0]!r}")
    if kind.endswith("-allow"):
        return Verdict(value in clause.operand, f"{name} {value!r} not in [{', '.join(clause.operand)}]")
    if kind.endswith("-exclude"):
        return Verdict(value not in clause.operand, f"{name} {value!r} is excluded")
    if kind in ("compute-capability-min", "driver-version-min"):
        try:
            v = Semver.parse(value) if vtype == "version" else Semver.parse_normalized(str(value))
        except SemverError:
            return Verdict(False, f"{name} {value!r} is not a semantic version")
        return Verdict(v >= Semver.parse(clause.operand[0]), f"{name} {value} < {clause.operand[0]}")
    raise AssertionError(f"unknown clause kind {kind}")
