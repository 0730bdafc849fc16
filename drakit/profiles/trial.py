"""The platform trial as a table: capability profiles on an inventory, with checks derived from them.

For each profile, every device of its driver is either eligible (and, with ``alternatives``,
taken by the first alternative it satisfies) or excluded with a reason.  The checks hold the
compiled selectors to what the profile itself says, on the devices this inventory publishes:

* a memory bound excludes every device beyond it (``training-48g``: nothing under 48Gi), and
  a product list admits only the products it names;
* each alternative keeps devices of its own (none is shadowed by an earlier one or matches
  nothing here), and ``smallest-first`` alternatives take smaller devices before larger;
* a claim of the profile fits on some node (count, colocation);
* the CEL the compiler emitted agrees with the profile's meaning on every device.

:func:`trial_table` computes the table and the checks; ``drakit trial`` prints it.  Pure
given the objects and profiles.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from drakit.profiles.compile import CompiledProfile, compile_profile, drivers_for, effective
from drakit.profiles.eligibility import DeviceRow, Eligibility, Evaluator, eligibility, wire_objects
from drakit.profiles.loader import ProfileSet, ResolvedProfile, example_texts, parse_profiles
from drakit.profiles.model import MemoryBounds, NameSet
from drakit.profiles.units import parse_memory
from drakit.quantity import Quantity

TRIAL_PROFILES = ("training-48g", "evaluation")


@dataclass(frozen=True)
class TrialRow:
    profile: str
    product: str
    memory: str
    nodes: tuple[str, ...]
    devices: int
    eligible: bool
    option: str | None = None  # the alternative the devices are taken by
    preference: int | None = None  # 1 = first choice of firstAvailable
    reason: str = ""


@dataclass(frozen=True)
class TrialCheck:
    name: str
    passed: bool
    detail: str


@dataclass(frozen=True)
class TrialTable:
    rows: tuple[TrialRow, ...]
    checks: tuple[TrialCheck, ...]
    results: tuple[Eligibility, ...]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def render_text(self) -> str:
        head = ("PROFILE", "PRODUCT", "MEMORY", "DEVICES", "NODES", "VERDICT")
        table = [head]
        for r in self.rows:
            verdict = (f"eligible (choice {r.preference}: {r.option})" if r.preference else "eligible") if r.eligible \
                else f"excluded: {r.reason}"
            table.append((r.profile, r.product, r.memory, str(r.devices), ",".join(r.nodes), verdict))
        widths = [max(len(row[i]) for row in table) for i in range(len(head) - 1)]
        lines = ["  ".join(c.ljust(w) for c, w in zip(row[:-1], widths, strict=True)) + "  " + row[-1] for row in table]
        lines.append("")
        lines += [f"[{'ok' if c.passed else 'FAIL'}] {c.name}: {c.detail}" for c in self.checks]
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "rows": [
                {"profile": r.profile, "product": r.product, "memory": r.memory, "nodes": list(r.nodes),
                 "devices": r.devices, "eligible": r.eligible, "option": r.option, "preference": r.preference,
                 "reason": r.reason}
                for r in self.rows
            ],
            "checks": [{"name": c.name, "passed": c.passed, "detail": c.detail} for c in self.checks],
            "passed": self.passed,
        }


def trial_profiles() -> ProfileSet:
    """The bundled trial profiles (reads package data)."""
    return parse_profiles([], example_texts(), select=TRIAL_PROFILES)


def _rows(result: Eligibility) -> list[TrialRow]:
    rows: dict[tuple[str, str, bool, str | None, str], dict[str, Any]] = {}
    for r in result.qualifying:
        key = (r.product, r.memory or "-", True, r.option, "")
        rows.setdefault(key, {"nodes": [], "n": 0})
        rows[key]["n"] += 1
        if r.node not in rows[key]["nodes"]:
            rows[key]["nodes"].append(r.node)
    for r in result.excluded:
        key = (r.product, r.memory or "-", False, None, r.reason)
        rows.setdefault(key, {"nodes": [], "n": 0})
        rows[key]["n"] += 1
        if r.node not in rows[key]["nodes"]:
            rows[key]["nodes"].append(r.node)
    out = []
    for (product, memory, ok, option, reason), v in rows.items():
        pref = result.options.index(option) + 1 if option and option in result.options else None
        out.append(TrialRow(result.profile, product, memory, tuple(v["nodes"]), v["n"], ok, option, pref, reason))
    return sorted(out, key=lambda r: (not r.eligible, r.preference or 0, Quantity.parse(r.memory) if r.memory != "-" else Quantity.parse("0")))


def _quantity(memory: str | None) -> Quantity | None:
    return Quantity.parse(memory) if memory is not None else None


def _bounds_check(subject: str, verbs: tuple[str, str, str], bounds: MemoryBounds, rows: Sequence[DeviceRow],
                  taken: Sequence[DeviceRow]) -> TrialCheck:
    """No device beyond ``bounds`` is among ``taken`` (the devices the bounds apply to)."""
    low = parse_memory(bounds.min) if bounds.min else None
    high = parse_memory(bounds.max) if bounds.max else None
    words = " or ".join(w for w in (f"below {bounds.min}" if low else "", f"above {bounds.max}" if high else "") if w)

    def outside(r: DeviceRow) -> bool:
        mem = _quantity(r.memory)
        # A device that publishes no memory cannot be shown to meet a bound.
        return mem is None or (low is not None and mem < low) or (high is not None and mem > high)

    beyond = sum(1 for r in rows if outside(r))
    leaked = [f"{r.node}/{r.device}" for r in taken if outside(r)]
    claim, out, admitted = verbs
    name = f"{subject} {claim} {words}"
    if not beyond:
        return TrialCheck(name, True, f"no device {words} in this inventory")
    detail = f"{beyond - len(leaked)} {out}, {len(leaked)} {admitted}" + (f" ({', '.join(leaked)})" if leaked else "")
    return TrialCheck(name, not leaked, detail)


def _products_check(subject: str, names: NameSet, taken: Sequence[DeviceRow]) -> TrialCheck:
    """Every device in ``taken`` is a product ``names`` allows (and none it excludes)."""
    allow, exclude = set(names.allow or ()), set(names.exclude or ())
    words = " and ".join(w for w in (f"only {', '.join(sorted(allow))}" if allow else "",
                                     f"no {', '.join(sorted(exclude))}" if exclude else "") if w)
    wrong = sorted({r.product for r in taken if (allow and r.product not in allow) or r.product in exclude})
    return TrialCheck(f"{subject} takes {words}", not wrong,
                      f"{len(taken)} device(s) taken, all allowed" if not wrong else f"also takes {', '.join(wrong)}")


def _span(rows: Sequence[DeviceRow]) -> tuple[Quantity, Quantity] | None:
    sizes = [q for r in rows if (q := _quantity(r.memory)) is not None]
    return (min(sizes), max(sizes)) if sizes else None


def _alternatives_checks(rp: ResolvedProfile, cp: CompiledProfile, result: Eligibility) -> list[TrialCheck]:
    names = [o.name for o in cp.options if o.name]
    by_option = {n: [r for r in result.qualifying if r.option == n] for n in names}
    empty = [n for n in names if not by_option[n]]
    detail = ", ".join(f"{n}: {len(by_option[n])} device(s)" + (f" ({', '.join(sorted({r.product for r in by_option[n]}))})" if by_option[n] else "")
                       for n in names)
    checks = [TrialCheck(f"{rp.name} keeps each of its alternatives", not empty,
                         detail if not empty else f"{detail}; {', '.join(repr(n) for n in empty)} takes no device here")]
    alts = rp.profile.spec.alternatives
    if alts is not None and alts.order == "smallest-first" and len(names) > 1:
        spans = [(n, span) for n in names if (span := _span(by_option[n])) is not None]
        inverted = [(a, b) for (a, sa), (b, sb) in itertools.pairwise(spans) if sa[1] > sb[0]]
        order = " before ".join(f"{n} ({lo}..{hi})" if lo != hi else f"{n} ({lo})" for n, (lo, hi) in spans)
        checks.append(TrialCheck(
            f"{rp.name} prefers the smaller devices", not inverted,
            order if not inverted else "; ".join(f"{a!r} takes a device larger than one {b!r} takes" for a, b in inverted),
        ))
    return checks


def _checks(rp: ResolvedProfile, cp: CompiledProfile, result: Eligibility) -> list[TrialCheck]:
    """The checks the profile's own words imply, on this inventory (see the module docstring)."""
    spec = rp.profile.spec
    rows = [*result.qualifying, *result.excluded]
    checks = []
    if spec.memory is not None and (spec.memory.min or spec.memory.max):
        checks.append(_bounds_check(rp.name, ("excludes every device", "excluded", "admitted"), spec.memory, rows, result.qualifying))
    if spec.products is not None and (spec.products.allow or spec.products.exclude):
        checks.append(_products_check(rp.name, spec.products, result.qualifying))
    if spec.alternatives is not None:
        for alt in spec.alternatives.options:
            req = effective(spec, alt)
            taken = [r for r in result.qualifying if r.option == alt.name]
            subject = f"{rp.name} alternative {alt.name!r}"
            if alt.memory is not None and req.memory is not None:
                checks.append(_bounds_check(subject, ("takes no device", "kept out", "taken"), req.memory, rows, taken))
            if alt.products is not None and req.products is not None and (req.products.allow or req.products.exclude):
                checks.append(_products_check(subject, req.products, taken))
        checks += _alternatives_checks(rp, cp, result)
    fits = [n.node for n in result.nodes if n.fits]
    reasons = sorted({n.reason for n in result.nodes if not n.fits and n.reason})
    checks.append(TrialCheck(
        f"{rp.name} fits on a node", bool(fits),
        f"{len(fits)} of {len(result.nodes)} node(s): {', '.join(fits)}" if fits
        else f"no node of {len(result.nodes)} with {cp.schema.driver} devices: " + ("; ".join(reasons) or "no qualifying device"),
    ))
    if result.disagreements:
        checks.append(TrialCheck(f"{rp.name}: compiled CEL says what the profile means", False,
                                 f"{len(result.disagreements)} disagreement(s), e.g. {result.disagreements[0]}"))
    return checks


def trial_table(bundle_or_objects: Any, profiles: Sequence[ResolvedProfile] | ProfileSet | None = None,
                *, evaluate: Evaluator | None = None) -> TrialTable:
    """The trial table for a drakit.model Bundle (or wire dicts / model objects) of the cluster."""
    objects = wire_objects(bundle_or_objects)
    if profiles is None:
        profiles = trial_profiles()
    selected = profiles.selected() if isinstance(profiles, ProfileSet) else list(profiles)
    results = []
    checks = []
    for rp in selected:
        for schema in drivers_for(rp):
            cp = compile_profile(rp, schema)
            result = eligibility(cp, objects, evaluate=evaluate)
            results.append(result)
            checks += _checks(rp, cp, result)
    rows = [row for res in results for row in _rows(res)]
    return TrialTable(tuple(rows), tuple(checks), tuple(results))
