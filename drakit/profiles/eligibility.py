"""Which devices of an inventory a compiled profile can get, and why the others cannot.

The emitted selectors are evaluated with drakit's CEL engine (the same one the allocator
uses), one selector at a time, so a rejection names the requirement; the words come from
:mod:`drakit.profiles.semantics`.  The two are compared on every device: a disagreement means
the compiler emitted CEL that does not say what the profile means, and is reported, never hidden.
A CEL runtime error is reported as "blocked": on a real cluster it would stop the pod.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from drakit.drivers.identity import product_of
from drakit.errors import DrakitError
from drakit.inventory.devices import InventoryDevice, inventory_devices
from drakit.inventory.snapshot import ClusterSnapshot
from drakit.profiles.compile import Clause, CompiledProfile
from drakit.profiles.semantics import attribute_value, capacity_value, check
from drakit.selectors import CompiledSelector, compile_selector, device_view

# (expression, driver, wire device) -> bool; raises on CEL runtime errors.
Evaluator = Callable[[str, str, Mapping[str, Any]], bool]


def cel_evaluator() -> Evaluator:
    """drakit's CEL engine as an :data:`Evaluator` (selectors compiled once per expression)."""
    cache: dict[str, CompiledSelector] = {}

    def evaluate(expression: str, driver: str, device: Mapping[str, Any]) -> bool:
        sel = cache.get(expression)
        if sel is None:
            sel = cache[expression] = compile_selector(expression, environment="stored")
        if sel.error is not None:
            raise DrakitError(f"CEL compile error: {sel.error}")
        return bool(sel.evaluate(device_view(driver, dict(device))))

    return evaluate


@dataclass(frozen=True)
class DeviceRow:
    node: str
    pool: str
    device: str
    product: str
    memory: str | None
    option: str | None = None  # the first alternative the device qualifies for
    reason: str = ""
    near_miss: str = ""
    blocked: bool = False  # a CEL runtime error: would stop scheduling on a real cluster


@dataclass(frozen=True)
class NodeFit:
    node: str
    fits: bool
    option: str | None
    devices: tuple[str, ...]
    reason: str = ""


@dataclass(frozen=True)
class Eligibility:
    profile: str
    driver: str  # schema ref, e.g. gpu.nvidia.com@main
    engine: str  # "cel" or "python"
    qualifying: tuple[DeviceRow, ...]
    excluded: tuple[DeviceRow, ...]
    nodes: tuple[NodeFit, ...]
    other_drivers: tuple[tuple[str, int], ...] = ()
    options: tuple[str, ...] = ()
    disagreements: tuple[str, ...] = field(default_factory=tuple)

    def qualifying_groups(self) -> list[tuple[str, str, str | None, list[str]]]:
        """(product, node, option, devices) in inventory order."""
        groups: dict[tuple[str, str, str | None], list[str]] = {}
        for r in self.qualifying:
            groups.setdefault((r.product, r.node, r.option), []).append(r.device)
        return [(p, n, o, d) for (p, n, o), d in groups.items()]

    def excluded_groups(self) -> list[tuple[str, str, str, list[str]]]:
        """(product, node, reason, devices) in inventory order."""
        groups: dict[tuple[str, str, str], list[str]] = {}
        for r in self.excluded:
            groups.setdefault((r.product, r.node, r.reason), []).append(r.device)
        return [(p, n, why, d) for (p, n, why), d in groups.items()]

    def to_json(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "driver": self.driver,
            "engine": self.engine,
            "options": list(self.options),
            "qualifying": [{"product": p, "node": n, "option": o, "devices": d} for p, n, o, d in self.qualifying_groups()],
            "excluded": [{"product": p, "node": n, "reason": why, "devices": d} for p, n, why, d in self.excluded_groups()],
            "nearMisses": sorted({f"{r.product}: {r.near_miss}" for r in self.excluded if r.near_miss}),
            "nodes": [{"node": f.node, "fits": f.fits, "option": f.option, "devices": list(f.devices), "reason": f.reason}
                      for f in self.nodes],
            "otherDrivers": dict(self.other_drivers),
            "disagreements": list(self.disagreements),
        }

    def render_text(self) -> str:
        lines = [f"profile {self.profile} ({self.driver})"]
        if self.options:
            lines.append(f"  preference: {' > '.join(self.options)}")
        lines.append("  qualifying:" if self.qualifying else "  qualifying: none")
        for product, node, option, devs in self.qualifying_groups():
            via = f" [{option}]" if option else ""
            lines.append(f"    {product} on {node}: {len(devs)} ({', '.join(devs)}){via}")
        if self.excluded:
            lines.append("  excluded:")
        for product, node, why, devs in self.excluded_groups():
            lines.append(f"    {product} on {node}: {len(devs)} - {why}")
        for hint in sorted({f"{r.product}: {r.near_miss}" for r in self.excluded if r.near_miss}):
            lines.append(f"  near miss: {hint}")
        for fit in self.nodes:
            if fit.fits:
                via = f" via {fit.option}" if fit.option else ""
                lines.append(f"  node {fit.node}: fits{via} ({', '.join(fit.devices)})")
            else:
                lines.append(f"  node {fit.node}: does not fit - {fit.reason}")
        for driver, n in self.other_drivers:
            lines.append(f"  not considered: {n} device(s) of {driver}")
        for d in self.disagreements:
            lines.append(f"  INTERNAL: CEL and profile semantics disagree: {d}")
        return "\n".join(lines)


# --- inventory -------------------------------------------------------------------------------


def wire_objects(source: Any) -> list[dict[str, Any]]:
    """Wire dicts from a ClusterSnapshot, a drakit.model Bundle, a sequence of model objects, or dicts."""
    from drakit.model import to_wire

    items = source.objects() if isinstance(source, ClusterSnapshot) else getattr(source, "objects", source)
    return [dict(o) if isinstance(o, Mapping) else to_wire(o) for o in items]


# --- evaluation ------------------------------------------------------------------------------


def _run(clauses: Sequence[Clause], cp: CompiledProfile, inv: InventoryDevice, evaluate: Evaluator | None,
         disagreements: list[str]) -> tuple[bool, str, str, bool]:
    """(ok, reason, near-miss hint, blocked) for clauses in order; stops at the first failure."""
    for c in clauses:
        verdict = check(c, inv.driver, inv.device)
        ok = verdict.ok
        if evaluate is not None and c.emitted:
            try:
                cel_ok = evaluate(c.expression, inv.driver, inv.device)
            except DrakitError as e:
                return False, f"CEL runtime error in {c.label()}: {e}", "", True
            if cel_ok != ok:
                disagreements.append(f"{inv.node}/{inv.device.get('name')}: {c.label()}: CEL says {cel_ok}")
            ok = cel_ok
        if not ok:
            return False, verdict.reason or f"fails {c.label()}", verdict.near_miss, False
    return True, "", "", False


def eligibility(cp: CompiledProfile, objects: Iterable[Mapping[str, Any]], *, evaluate: Evaluator | None = None,
                use_cel: bool = True) -> Eligibility:
    """Qualifying and excluded devices of ``cp.schema.driver`` in the inventory, and per-node fit."""
    if evaluate is None and use_cel:
        evaluate = cel_evaluator()
    devices = inventory_devices(objects)
    disagreements: list[str] = []
    qualifying: list[DeviceRow] = []
    excluded: list[DeviceRow] = []
    others: dict[str, int] = {}
    for inv in devices:
        if inv.driver != cp.schema.driver:
            others[inv.driver] = others.get(inv.driver, 0) + 1
            continue
        name = str(inv.device.get("name", ""))
        mem = capacity_value(inv.driver, inv.device, cp.schema.memory_capacity or "memory")
        row = DeviceRow(inv.node, inv.pool, name, product_of(cp.schema.driver, inv.device, cp.schema), str(mem) if mem is not None else None)
        ok, why, hint, blocked = _run(cp.class_clauses, cp, inv, evaluate, disagreements)
        if not ok:
            excluded.append(replace(row, reason=why, near_miss=hint, blocked=blocked))
            continue
        reasons = []
        chosen = None
        for opt in cp.options:
            ok, why, hint, blocked = _run(opt.clauses, cp, inv, evaluate, disagreements)
            if ok:
                chosen = opt
                break
            if blocked:
                break
            reasons.append((f"{opt.name}: {why}" if opt.name else why, hint))
        if chosen is None:
            if blocked:
                excluded.append(replace(row, reason=why, blocked=True))
            else:
                excluded.append(replace(row, reason="; ".join(r for r, _ in reasons),
                                        near_miss=next((h for _, h in reasons if h), "")))
        else:
            qualifying.append(replace(row, option=chosen.name))
    nodes = _node_fits(cp, devices, qualifying)
    return Eligibility(
        profile=cp.profile,
        driver=cp.schema.ref,
        engine="cel" if evaluate is not None else "python",
        qualifying=tuple(qualifying),
        excluded=tuple(excluded),
        nodes=tuple(nodes),
        other_drivers=tuple(sorted(others.items())),
        options=tuple(o.name for o in cp.options if o.name),
        disagreements=tuple(disagreements),
    )


def _node_fits(cp: CompiledProfile, devices: list[InventoryDevice], qualifying: list[DeviceRow]) -> list[NodeFit]:
    """Whether one claim of the profile fits on each node with the driver, first option first.

    A device qualifying for an earlier option also satisfies the later ones only if it passes
    their clauses too; we recheck per option, in inventory order (the allocator's first fit).
    """
    by_key = {(d.node, str(d.device.get("name", ""))): d for d in devices if d.driver == cp.schema.driver}
    nodes = list(dict.fromkeys(d.node for d in devices if d.driver == cp.schema.driver))
    qualified = {(r.node, r.device) for r in qualifying}
    fits = []
    for node in nodes:
        result = None
        last_reason = "no qualifying device"
        for opt in cp.options:
            cands = [
                by_key[k] for k in by_key
                if k[0] == node and k in qualified and _run(opt.clauses, cp, by_key[k], None, [])[0]
            ]
            if cp.colocate:
                groups: dict[Any, list[InventoryDevice]] = {}
                for d in cands:
                    _, value, _ = attribute_value(d.driver, d.device, cp.colocate)
                    groups.setdefault(value, []).append(d)
                best = max(groups.values(), key=len, default=[])
                if len(best) >= opt.count:
                    result = NodeFit(node, True, opt.name, tuple(str(d.device.get("name")) for d in best[: opt.count]))
                    break
                last_reason = (f"needs {opt.count} on one {cp.colocate.rpartition('/')[2]}, at most {len(best)} qualify"
                               if cands else "no qualifying device")
            else:
                if len(cands) >= opt.count:
                    result = NodeFit(node, True, opt.name, tuple(str(d.device.get("name")) for d in cands[: opt.count]))
                    break
                last_reason = f"needs {opt.count}, {len(cands)} qualify" if cands else "no qualifying device"
        fits.append(result or NodeFit(node, False, None, (), last_reason))
    return fits
