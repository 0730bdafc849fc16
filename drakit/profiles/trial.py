"""The platform trial as a table: the training and evaluation profiles on an inventory.

The product brief's acceptance test: on the demo cluster (24 GB-class L4s and 80 GB H100s),
``training-48g`` (>= 48 GiB per device) must exclude every 24 GB device, and ``evaluation``
must keep both kinds while preferring the smaller.  :func:`trial_table` computes the table
and those three checks; ``drakit trial`` prints it.  Pure given the objects and profiles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from drakit.profiles.compile import compile_profile, drivers_for
from drakit.profiles.eligibility import Eligibility, Evaluator, eligibility, wire_objects
from drakit.profiles.loader import ProfileSet, ResolvedProfile, example_texts, parse_profiles
from drakit.quantity import Quantity

TRIAL_PROFILES = ("training-48g", "evaluation")
# Devices below this are "24 GB class" for the checks (the largest such part publishes 23034Mi).
SMALL_DEVICE_LIMIT = Quantity.parse("32G")


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


def _small(memory: str | None) -> bool:
    return memory is not None and Quantity.parse(memory) < SMALL_DEVICE_LIMIT


def _checks(by_name: dict[str, Eligibility]) -> list[TrialCheck]:
    checks = []
    train = by_name.get("training-48g")
    if train is not None:
        leaked = [f"{r.node}/{r.device}" for r in train.qualifying if _small(r.memory)]
        small_seen = sum(1 for r in train.excluded if _small(r.memory))
        checks.append(TrialCheck(
            "training excludes every 24 GB-class device",
            not leaked and small_seen > 0,
            f"{small_seen} excluded, {len(leaked)} admitted" + (f" ({', '.join(leaked)})" if leaked else ""),
        ))
    ev = by_name.get("evaluation")
    if ev is not None:
        small = [r for r in ev.qualifying if _small(r.memory)]
        large = [r for r in ev.qualifying if not _small(r.memory)]
        checks.append(TrialCheck("evaluation keeps both kinds", bool(small) and bool(large),
                                 f"{len(small)} small and {len(large)} large devices qualify"))
        first = ev.options[0] if ev.options else None
        firsts = [r for r in ev.qualifying if r.option == first]
        ok = bool(firsts) and all(_small(r.memory) for r in firsts) and all(r.option != first for r in large)
        checks.append(TrialCheck("evaluation prefers the smaller devices", ok,
                                 f"first choice {first!r} takes {len(firsts)} device(s), all 24 GB-class" if ok
                                 else f"first choice {first!r} does not take exactly the small devices"))
    return checks


def trial_table(bundle_or_objects: Any, profiles: Sequence[ResolvedProfile] | ProfileSet | None = None,
                *, evaluate: Evaluator | None = None) -> TrialTable:
    """The trial table for a drakit.model Bundle (or wire dicts / model objects) of the cluster."""
    objects = wire_objects(bundle_or_objects)
    if profiles is None:
        profiles = trial_profiles()
    selected = profiles.selected() if isinstance(profiles, ProfileSet) else list(profiles)
    results = []
    for rp in selected:
        for schema in drivers_for(rp):
            results.append(eligibility(compile_profile(rp, schema), objects, evaluate=evaluate))
    rows = [row for res in results for row in _rows(res)]
    return TrialTable(tuple(rows), tuple(_checks({r.profile: r for r in results})), tuple(results))
