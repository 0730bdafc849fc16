"""The unsatisfiable funnel: per request, how many devices survive each condition, and near misses.

The allocator answers per node and stops at the first rejection; a person asking "why does my
job wait" needs the cluster-wide picture instead: of the devices of the class, how many pass
each selector, how many of those sit on a node the pod may use, how many are untainted, free,
and not starved of shared counters or capacity.  Steps are cumulative; a device that fails
exactly one *static* condition (a selector term, capacity, node, taints) is a near miss and is
explained with the numbers (:mod:`drakit.explain.probe`).

Performance: a selector is evaluated once per distinct *projection* of the device (the fields
the expression reads), so 40,000 identical GPUs cost a handful of CEL evaluations; devices are
grouped by projection once per request and the funnel and the near-miss probe both read the
group's answer.  Devices are light records over the wire dicts (:class:`Device`), not the
allocator's parsed index, which is built only for the few nodes the allocator is run on: a
diagnosis of 5,000 nodes x 8 GPUs allocates about one object per device, and none in cycles.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from drakit.allocator import cel
from drakit.allocator.inventory import CapacityEntry, node_matches
from drakit.allocator.state import AllocatedState, DeviceKey, quantity_of
from drakit.corev1 import untolerated_device_taint
from drakit.drivers.identity import product_of
from drakit.explain import amounts
from drakit.explain.diagnosis import Funnel, FunnelStep, NearMiss
from drakit.explain.probe import MissingKey, Probe, Qty, Unknown, project, projection, projector, split_terms
from drakit.features import Features

Obj = Mapping[str, Any]
MAX_NEAR_MISS_GROUPS = 4  # beyond four different near-miss stories a reader stops reading
NEAR_MARGIN = Fraction(1, 10)
"""A device whose amount misses a quantity bound by more than a tenth of the bound is no near
miss: an L40S (45Gi) is not "almost" an 80Gi GPU, an H100 (81559Mi) is."""
LABEL_WIDTH = 44  # funnel labels are cut to fit an 80-column table row


# --- requests -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RequestSpec:
    """One request or firstAvailable alternative, in the shape the funnel needs."""

    claim: str  # "ns/name"
    name: str  # "req" or "req/sub"
    class_name: str
    selectors: tuple[str, ...]
    mode: str
    count: int
    admin: bool
    tolerations: tuple[Obj, ...]
    capacity: Mapping[str, str] | None
    index: int  # request index in the claim
    alternative: int = -1  # index within firstAvailable, -1 for a plain request

    @property
    def parent(self) -> str:
        return self.name.split("/", 1)[0]


def claim_requests(claim: Obj, label: str) -> list[list[RequestSpec]]:
    """Per request of the claim, its alternatives (one entry for a plain ``exactly`` request)."""
    out: list[list[RequestSpec]] = []
    for ri, request in enumerate(((claim.get("spec") or {}).get("devices") or {}).get("requests") or []):
        name = str(request.get("name") or "")
        subs = request.get("firstAvailable") or []
        if subs:
            out.append([_spec(label, f"{name}/{s.get('name', '')}", s, ri, si) for si, s in enumerate(subs)])
        else:
            out.append([_spec(label, name, request.get("exactly") or {}, ri, -1)])
    return out


def _spec(label: str, name: str, raw: Obj, index: int, alternative: int) -> RequestSpec:
    mode = str(raw.get("allocationMode") or "ExactCount")
    count = int(raw.get("count") or 0) if mode == "All" else int(raw.get("count") or 1)
    caps = (raw.get("capacity") or {}).get("requests") if raw.get("capacity") is not None else None
    return RequestSpec(
        claim=label,
        name=name,
        class_name=str(raw.get("deviceClassName") or ""),
        selectors=tuple(
            str(((s or {}).get("cel") or {}).get("expression", "")) for s in raw.get("selectors") or []
        ),
        mode=mode,
        count=count,
        admin=bool(raw.get("adminAccess")) and alternative < 0,
        tolerations=tuple(raw.get("tolerations") or ()),
        capacity={str(k): str(v) for k, v in caps.items()} if caps else None,
        index=index,
        alternative=alternative,
    )


# --- the cluster index ----------------------------------------------------------------------


@dataclass
class PoolHealth:
    incomplete: bool = False
    invalid: str = ""
    counter_sets: dict[str, dict[str, Fraction]] = field(default_factory=dict)


_HEALTHY = PoolHealth()  # shared by every complete, valid pool without counter sets; never modified


class Slice:
    """A ResourceSlice as the funnel reads it: where its devices are reachable from.

    Not the allocator's index (:class:`drakit.allocator.Inventory`): that one parses every
    device for the search (counters, capacity, binding conditions, selector caches), which a
    diagnosis of 40,000 devices does not need.  Here a device is its wire dict plus a name, and
    a slice does not list its devices (:attr:`ClusterIndex.devices` does), so nothing built
    here forms a reference cycle.
    """

    __slots__ = ("all_nodes", "count", "driver", "generation", "name", "node_name", "node_selector", "per_device",
                 "pool", "raw", "shared_counters")

    def __init__(self, raw: Obj) -> None:
        spec = raw.get("spec") or {}
        pool = spec.get("pool") or {}
        self.raw = raw
        self.name: str = (raw.get("metadata") or {}).get("name", "")
        self.driver: str = spec.get("driver", "")
        self.pool: str = pool.get("name", "")
        self.generation = int(pool.get("generation") or 0)
        self.count = int(pool.get("resourceSliceCount") or 0)
        self.node_name: str = spec.get("nodeName") or ""
        self.all_nodes = bool(spec.get("allNodes"))
        self.node_selector: Obj | None = spec.get("nodeSelector")
        self.per_device = bool(spec.get("perDeviceNodeSelection"))
        self.shared_counters: tuple[Obj, ...] = tuple(spec.get("sharedCounters") or ())

    @property
    def raw_devices(self) -> list[Obj]:
        return (self.raw.get("spec") or {}).get("devices") or []


class Device:
    """One published device: its wire dict and identity; everything else is read on demand."""

    __slots__ = ("_capacity", "_consumes", "driver", "key", "name", "pool", "raw", "slice")

    def __init__(self, raw: Obj, name: str, driver: str, pool: str, slice_: Slice) -> None:
        self.raw = raw
        self.name = name
        self.driver = driver
        self.pool = pool
        self.key: DeviceKey = (driver, pool, name)
        self.slice = slice_
        self._capacity: dict[str, CapacityEntry] | None = None
        self._consumes: tuple[tuple[str, tuple[tuple[str, Fraction], ...]], ...] | None = None

    @property
    def ident(self) -> str:
        return f"{self.driver}/{self.pool}/{self.name}"

    @property
    def node_name(self) -> str:
        return self.raw.get("nodeName") or ""

    @property
    def all_nodes(self) -> bool:
        return bool(self.raw.get("allNodes"))

    @property
    def node_selector(self) -> Obj | None:
        return self.raw.get("nodeSelector")

    @property
    def allow_multiple(self) -> bool:
        return bool(self.raw.get("allowMultipleAllocations"))

    @property
    def taints(self) -> tuple[Obj, ...]:
        return tuple(self.raw.get("taints") or ())

    @property
    def consumes(self) -> tuple[tuple[str, tuple[tuple[str, Fraction], ...]], ...]:
        """``consumesCounters`` with exact amounts (parsed as the allocator parses them)."""
        if self._consumes is None:
            self._consumes = tuple(
                (
                    c.get("counterSet", ""),
                    tuple((cn, quantity_of((cv or {}).get("value", "0")).exact()) for cn, cv in (c.get("counters") or {}).items()),
                )
                for c in self.raw.get("consumesCounters") or ()
            )
        return self._consumes

    @property
    def capacity(self) -> dict[str, CapacityEntry]:
        """Capacity keyed by the published name (the allocator's :class:`CapacityEntry`)."""
        if self._capacity is None:
            caps: dict[str, CapacityEntry] = {}
            for name, cap in (self.raw.get("capacity") or {}).items():
                text = str((cap or {}).get("value", "0"))
                caps[name] = CapacityEntry(
                    status_name=name, quantity=quantity_of(text), value_text=text, policy=(cap or {}).get("requestPolicy")
                )
            self._capacity = caps
        return self._capacity


class ClusterIndex:
    """Devices of the current pool generations, pool health, reach from nodes, use.

    Built once per diagnosis (or kept by a caller that explains many pods of one state) from
    the wire slices and claims, in one pass each: one light :class:`Device` per device of a
    current generation, nothing per node.  The allocator's :class:`~drakit.allocator.Inventory`
    and :class:`~drakit.allocator.AllocatedState` are built later, and only for the few nodes
    the allocator is run on (see :meth:`allocated_state`).
    """

    def __init__(
        self,
        slices: Iterable[Obj],
        features: Features,
        allocated_claims: Iterable[Obj],
        taint_rules: Sequence[Obj] = (),
    ) -> None:
        self.features = features
        self.pools: dict[tuple[str, str], PoolHealth] = {}
        self.devices: list[Device] = []
        # Whether any device could be tainted, consume counters or be shared: the funnel's
        # later steps are shown only then, and need not look at every device otherwise.
        self.any_taints = False
        self.any_consumes = False
        self.any_multiple = False
        self._pool_devices([Slice(s) for s in slices])
        self.unhealthy = frozenset(p for p, h in self.pools.items() if h.incomplete or h.invalid)
        self.extra_taints = self._rule_taints(taint_rules) if features.device_taints else {}
        self.any_taints = features.device_taints and (self.any_taints or bool(self.extra_taints))
        self.allocated_claims = list(allocated_claims)
        # Devices taken exclusively (what AllocatedState.devices holds: not admin access, not a
        # share of a consumable device), and per device the claims holding it (admin-access
        # results do not hold): one claim is the rule, a list only for a second holder.
        self.in_use: set[DeviceKey] = set()
        self._holders: dict[DeviceKey, Any] = {}
        consumable = features.consumable_capacity
        for c in self.allocated_claims:
            for r in ((((c.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results")) or []:
                if r.get("adminAccess"):
                    continue
                key = (r.get("driver", ""), r.get("pool", ""), r.get("device", ""))
                if not (consumable and r.get("shareID")):
                    self.in_use.add(key)
                first = self._holders.get(key)
                if first is None:
                    self._holders[key] = c
                elif type(first) is list:
                    first.append(c)
                else:
                    self._holders[key] = [first, c]
        self._state: AllocatedState | None = None
        # The funnel's walks over devices, by what they read (_funnel_tail, _near_misses).
        self.memo: dict[tuple[Any, ...], Any] = {}
        self._available: dict[tuple[str, str], dict[str, dict[str, Fraction]]] = {}

    def _pool_devices(self, slices: Sequence[Slice]) -> None:
        # Pools in (driver, pool) order, each pool's slices in input order (a stable sort of
        # positions: no per-pool lists for 5,000 one-slice pools).
        order = sorted(range(len(slices)), key=lambda i: (slices[i].driver, slices[i].pool))
        start = 0
        while start < len(order):
            first = slices[order[start]]
            end = start + 1
            while end < len(order) and slices[order[end]].driver == first.driver and slices[order[end]].pool == first.pool:
                end += 1
            group = [slices[i] for i in order[start:end]]
            start = end
            top = max(s.generation for s in group)
            current = [s for s in group if s.generation == top]
            incomplete = len(current) != (current[0].count or 1)
            invalid = ""
            names: set[str] = set()
            counter_sets: dict[str, dict[str, Fraction]] = {}
            for s in current:
                for d in s.raw_devices:
                    name = d.get("name", "")
                    if name in names and not invalid:
                        invalid = f"duplicate device name {name}"
                    names.add(name)
                for cs in s.shared_counters:
                    counter_sets[str(cs.get("name", ""))] = {
                        cn: amounts.value(str((cv or {}).get("value", "0")))
                        for cn, cv in (cs.get("counters") or {}).items()
                    }
            pid = (first.driver, first.pool)
            self.pools[pid] = (
                PoolHealth(incomplete, invalid, counter_sets) if incomplete or invalid or counter_sets else _HEALTHY
            )
            driver, pool = pid
            for s in sorted(current, key=lambda s: s.name) if len(current) > 1 else current:
                for d in s.raw_devices:
                    self.devices.append(Device(d, d.get("name", ""), driver, pool, s))
                    if d.get("taints"):
                        self.any_taints = True
                    if d.get("consumesCounters"):
                        self.any_consumes = True
                    if d.get("allowMultipleAllocations"):
                        self.any_multiple = True

    def holders(self, key: DeviceKey) -> Sequence[Obj]:
        """The allocated claims holding device ``key``."""
        found = self._holders.get(key)
        if found is None:
            return ()
        return found if type(found) is list else (found,)

    @property
    def state(self) -> AllocatedState:
        """The allocator's view of every allocated claim (counters and capacity need it)."""
        if self._state is None:
            self._state = self.allocated_state(None)
        return self._state

    def allocated_state(self, pools: set[tuple[str, str]] | None) -> AllocatedState:
        """The allocated claims that hold a device of ``pools`` (all when ``None``).

        The allocator looks its state up per device of the pools it searches, so claims that
        hold nothing there can be left out.
        """
        state = AllocatedState()
        consumable = self.features.consumable_capacity
        for c in self.allocated_claims:
            if pools is not None and not any(
                (r.get("driver", ""), r.get("pool", "")) in pools
                for r in ((((c.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results")) or []
            ):
                continue
            state.add_claim(c, consumable=consumable)
        return state

    @staticmethod
    def _rule_taints(rules: Sequence[Obj]) -> dict[DeviceKey | tuple[str, str, None] | tuple[str, None, None], list[Obj]]:
        out: dict[Any, list[Obj]] = {}
        for rule in rules:
            spec = rule.get("spec") or {}
            sel = spec.get("deviceSelector") or {}
            key = (sel.get("driver"), sel.get("pool"), sel.get("device"))
            out.setdefault(key, []).append(spec.get("taint") or {})
        return out

    def taints(self, d: Device) -> list[Obj]:
        """Device taints plus DeviceTaintRule taints (only with DRADeviceTaints)."""
        if not self.any_taints:
            return []
        found = list(d.taints)
        for (drv, pool, dev), taints in self.extra_taints.items():
            if (drv in (None, d.driver)) and (pool in (None, d.pool)) and (dev in (None, d.name)):
                found.extend(taints)
        return [t for t in found if t.get("effect") in ("NoSchedule", "NoExecute")]

    # -- counters ---------------------------------------------------------------------------

    def counters_left(self, d: Device) -> str:
        """Empty if the device's shared counters are still available, else which counter is short."""
        if not d.consumes:
            return ""
        pid = (d.driver, d.pool)
        avail = self._available.get(pid)
        if avail is None:
            health = self.pools.get(pid, _HEALTHY)
            avail = {n: dict(c) for n, c in health.counter_sets.items()}
            for other in self.devices:
                if (other.driver, other.pool) != pid or not other.consumes:
                    continue
                if not self.state.is_allocated(other.key):
                    continue
                for set_name, counters in other.consumes:
                    for cn, v in counters:
                        if set_name in avail and cn in avail[set_name]:
                            avail[set_name][cn] -= _exact(v)
            self._available[pid] = avail
        for set_name, counters in d.consumes:
            for cn, raw in counters:
                v = _exact(raw)
                left = avail.get(set_name, {}).get(cn, Fraction(0))
                if left < v:
                    return f"counter {cn} of {set_name}: needs {amounts.human(v)}, {amounts.human(max(left, Fraction(0)))} left"
        return ""

    def capacity_left(self, d: Device, req: RequestSpec) -> bool:
        """A shared (multi-allocatable) device still has the requested capacity."""
        agg = self.state.capacity.get(d.key)
        if not agg:
            return True
        for name, entry in d.capacity.items():
            short = name.rsplit("/", 1)[-1]
            asked = None
            for k, v in (req.capacity or {}).items():
                if k.rsplit("/", 1)[-1] == short:
                    asked = amounts.value(v)
            if asked is None:
                policy = entry.policy or {}
                asked = amounts.value(str(policy["default"])) if policy.get("default") is not None else _exact(entry.value)
            used = sum((_exact(v) for k, v in agg.items() if k.rsplit("/", 1)[-1] == short), Fraction(0))
            if used + asked > _exact(entry.value):
                return False
        return True


# --- selector evaluation ----------------------------------------------------------------------


class RuntimeFailure:
    """A CEL runtime error for one device (the whole pod is blocked by it)."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message


class Selectors:
    """Compiled selectors and their outcomes per device projection (see the module docstring)."""

    def __init__(self, features: Features) -> None:
        self.features = features
        self.probe = Probe()
        self._compiled: dict[str, Any] = {}
        self._refs: dict[str, tuple[Any, ...] | None] = {}
        self._projected: dict[tuple[Any, int], Hashable] = {}
        self._scope: tuple[Any, ...] | None = None
        self._groups: dict[tuple[Any, ...], tuple[Sequence[Device], list[int], list[Device]]] = {}
        self._results: dict[tuple[str, Hashable], bool | RuntimeFailure] = {}
        self._terms: dict[str, list[str]] = {}
        self._sizes: dict[int, tuple[Sequence[int], list[int]]] = {}
        self._members: dict[tuple[int, tuple[int, ...]], tuple[Sequence[int], list[int]]] = {}

    def compiled(self, expression: str) -> Any:
        c = self._compiled.get(expression)
        if c is None:
            c = self._compiled[expression] = cel.compile_stored(expression, self.features)
        return c

    def scope(self, expressions: Sequence[str]) -> None:
        """Key every device by the fields *all* of ``expressions`` read (one projection per device).

        A finer key than each expression's own is still correct, and one projection per device
        instead of one per expression is what keeps 40,000 devices cheap.
        """
        union: set[Any] = set()
        for e in expressions:
            if e not in self._refs:
                self._refs[e] = projection(e)
            refs = self._refs[e]
            if refs is None:
                self._scope = None
                return
            union.update(refs)
        self._scope = tuple(sorted(union, key=lambda r: (r[0], r[1], r[2] or "")))

    def groups(self, devices: Sequence[Device]) -> tuple[Sequence[int], Sequence[Device]]:
        """Per device of ``devices`` a group number, and each group's first device.

        Devices of one group have the same projection under the current scope, so every
        expression and term of the scope has one outcome per group: callers evaluate the first
        device of a group and reuse the answer.  Without a scope (an expression reads the device
        dynamically) every device is its own group.
        """
        refs = self._scope
        if refs is None:
            return range(len(devices)), devices
        hit = self._groups.get(refs)
        if hit is not None and hit[0] is devices:
            return hit[1], hit[2]
        number: dict[Hashable, int] = {}
        gids: list[int] = []
        reps: list[Device] = []
        key_of = projector(refs)
        for d in devices:
            key = key_of(d.driver, d.raw)
            g = number.get(key)
            if g is None:
                g = number[key] = len(reps)
                reps.append(d)
                self._projected[(refs, id(d))] = key
            gids.append(g)
        self._groups[refs] = (devices, gids, reps)
        return gids, reps

    def group_sizes(self, gids: Sequence[int], groups: int) -> list[int]:
        """How many devices each group of ``gids`` (a numbering from :meth:`groups`) has."""
        hit = self._sizes.get(id(gids))
        if hit is not None and hit[0] is gids:
            return hit[1]
        sizes = [0] * groups
        for g in gids:
            sizes[g] += 1
        if isinstance(gids, list):  # a numbering :meth:`groups` keeps (a range is made per call)
            self._sizes[id(gids)] = (gids, sizes)
        return sizes

    def members(self, gids: Sequence[int], groups: Sequence[int]) -> list[int]:
        """Positions of the devices in ``groups``: one list object per set of groups, so that
        equal candidate sets are one key (the funnel's later steps are memoised by it)."""
        key = (id(gids), tuple(groups))
        hit = self._members.get(key)
        if hit is not None and hit[0] is gids:
            return hit[1]
        chosen = set(groups)
        positions = [pos for pos, g in enumerate(gids) if g in chosen]
        if isinstance(gids, list):
            self._members[key] = (gids, positions)
        return positions

    def _key(self, expression: str, d: Device) -> Hashable:
        refs = self._scope
        if refs is None:
            if expression not in self._refs:
                self._refs[expression] = projection(expression)
            refs = self._refs[expression]
        if refs is None:
            return id(d)
        memo = (refs, id(d))  # selectors and their terms often read the same fields
        key = self._projected.get(memo)
        if key is None:
            key = self._projected[memo] = project(refs, d.driver, d.raw)
        return key

    def projection_key(self, expression: str, d: Device) -> Hashable:
        """Equal for devices that ``expression`` cannot tell apart."""
        return self._key(expression, d)

    def outcome(self, expression: str, d: Device) -> bool | RuntimeFailure:
        """The real CEL result (True/False) or the runtime error, cached by projection."""
        key = (expression, self._key(expression, d))
        hit = self._results.get(key)
        if hit is None:
            compiled = self.compiled(expression)
            if getattr(compiled, "error", None) is not None:
                hit = RuntimeFailure("selector does not compile")
            else:
                # A fresh view per evaluation: a shared one carried state from one expression
                # into the next in the selectors module (see the report); projections keep
                # the number of views small anyway.
                view = cel.device_view(d.driver, d.raw)
                try:
                    hit = bool(compiled.evaluate(view))
                except Exception as e:  # the CEL layer's runtime errors
                    hit = RuntimeFailure(cel.error_message(e))
            self._results[key] = hit
        return hit

    def terms(self, expression: str) -> list[str]:
        if expression not in self._terms:
            self._terms[expression] = split_terms(expression)
        return self._terms[expression]

    def term_true(self, term: str, d: Device) -> bool:
        """One conjunct: the probe first, the real evaluator when the probe cannot tell."""
        key = ("term:" + term, self._key(term, d))
        hit = self._results.get(key)
        if hit is None:
            try:
                hit = self.probe.evaluate(term, d.driver, d.raw)
            except MissingKey:
                hit = False
            except Unknown:
                out = self.outcome(term, d)
                hit = out if isinstance(out, bool) else False
            self._results[key] = hit
        return bool(hit)


# --- the funnel -------------------------------------------------------------------------------


@dataclass
class FunnelResult:
    """A funnel plus what later stages need: which devices pass, runtime errors, holders."""

    funnel: Funnel
    matching: list[Device]  # pass every static condition
    available: list[Device]  # ... and free, with counters and capacity left
    in_use: list[Device]  # matching but held by another claim
    counter_blocked: list[tuple[Device, str]]
    runtime_error: tuple[str, int, Device, str] | None = None  # (class|request, selector#, device, msg)
    incomplete_pools: tuple[str, ...] = ()
    invalid_pools: tuple[tuple[str, str], ...] = ()
    ceiling: str = ""  # "largest device ...: ask for at most ..." when no device meets a lower bound


def _short(text: str, width: int = LABEL_WIDTH) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def device_product(d: Device) -> str:
    """What a person calls the device (the one product label, :mod:`drakit.drivers.identity`)."""
    return product_of(d.driver, d.raw)


def build_funnel(
    req: RequestSpec,
    device_class: Obj,
    index: ClusterIndex,
    selectors: Selectors,
    reachable: Mapping[int, bool],
    *,
    own_devices: frozenset[DeviceKey] = frozenset(),
) -> FunnelResult:
    """Count devices step by step for one request (``reachable``: id(slice or device) -> bool)."""
    class_exprs = [
        str(((s or {}).get("cel") or {}).get("expression", ""))
        for s in (device_class.get("spec") or {}).get("selectors") or []
    ]
    # Static conditions, each a list of (step key, label, terms); a term is (expression, whole?)
    devices = index.devices
    steps: list[FunnelStep] = [FunnelStep("inventory", "devices in the inventory", len(devices), 0)]
    runtime_error: tuple[str, int, Device, str] | None = None
    allocated = index.in_use

    # 1. class and request selectors, evaluated in order with short-circuit (as the allocator does).
    # Outcomes are per group of devices with one projection (Selectors.groups), computed when the
    # first device of the group reaches the expression, exactly as a per-device walk would.
    selectors.scope([*class_exprs, *req.selectors])
    gids, reps = selectors.groups(devices)
    # Groups are numbered in the order their first device appears, so evaluating group by
    # group makes the same CEL calls in the same order as a walk over the devices would.
    failed_at: list[int] = []  # per group: the class selector that rejects it, -1 if none
    errors: dict[int, str] = {}  # per group: the runtime error of that selector
    for g, rep in enumerate(reps):
        at = -1
        for i, expr in enumerate(class_exprs):
            out = selectors.outcome(expr, rep)
            if out is not True:
                at = i
                if isinstance(out, RuntimeFailure):
                    errors[g] = out.message
                break
        failed_at.append(at)
    if errors:
        for pos, g in enumerate(gids):
            if g in errors:
                d = devices[pos]
                if _reachable(d, reachable) and d.key not in allocated:
                    runtime_error = ("class", failed_at[g], d, errors[g])
                    break
    # A group passes or fails a selector as a whole, so the selector steps count groups (by
    # their sizes) rather than walk every device: the per-request cost is per group.
    sizes = selectors.group_sizes(gids, len(reps))
    live = [g for g in range(len(reps)) if failed_at[g] < 0]
    passed = sum(sizes[g] for g in live)
    steps.append(FunnelStep("class", f"of class {req.class_name}", passed, len(devices) - passed))
    class_live = live
    for i, expr in enumerate(req.selectors):
        kept_groups: list[int] = []
        erred: set[int] = set()
        for g in live:
            hit = selectors.outcome(expr, reps[g])
            if hit is True:
                kept_groups.append(g)
            elif hit is not False:
                erred.add(g)
        if erred and runtime_error is None:
            for pos, g in enumerate(gids):  # the first such device in input order, as a walk finds it
                if g in erred:
                    d = devices[pos]
                    if _reachable(d, reachable) and d.key not in allocated:
                        failure = selectors.outcome(expr, reps[g])
                        assert isinstance(failure, RuntimeFailure)
                        runtime_error = ("request", i, d, failure.message)
                        break
        kept = sum(sizes[g] for g in kept_groups)
        steps.append(FunnelStep(f"selector-{i}", f"selector: {_short(expr)}", kept, passed - kept))
        live, passed = kept_groups, kept
    tail = _funnel_tail(req, index, selectors.members(gids, live), reachable, own_devices)
    steps += tail.steps
    matching, current = tail.matching, tail.available

    needed = req.count if req.mode != "All" else 0
    short = len(matching) < max(needed, 1)
    near: tuple[NearMiss, ...] = ()
    ceiling = ""
    if short:
        class_pass = selectors.members(gids, class_live)
        near = _near_misses(req, class_exprs, class_pass, class_live, gids, reps, index, selectors, reachable)
        ceiling = ceiling_hint(req, index, selectors, [reps[g] for g in class_live])
    funnel = Funnel(
        claim=req.claim,
        request=req.name,
        device_class=req.class_name,
        needed=needed,
        mode=req.mode,
        steps=tuple(steps),
        near_misses=near,
        admin_access=req.admin,
    )
    return FunnelResult(
        funnel=funnel,
        matching=matching,
        available=current,
        in_use=tail.in_use,
        counter_blocked=tail.counter_blocked,
        runtime_error=runtime_error,
        incomplete_pools=tail.incomplete_pools,
        invalid_pools=tail.invalid_pools,
        ceiling=ceiling,
    )


@dataclass(frozen=True)
class _Tail:
    """The funnel's steps after the selectors, and the device lists they leave."""

    steps: tuple[FunnelStep, ...]
    matching: list[Device]
    available: list[Device]
    in_use: list[Device]
    counter_blocked: list[tuple[Device, str]]
    incomplete_pools: tuple[str, ...]
    invalid_pools: tuple[tuple[str, str], ...]
    # The memo key's objects, held so that their ids stay theirs.
    positions: list[int]
    reachable: Mapping[int, bool]


def _funnel_tail(
    req: RequestSpec,
    index: ClusterIndex,
    positions: list[int],
    reachable: Mapping[int, bool],
    own_devices: frozenset[DeviceKey],
) -> _Tail:
    """Steps 2-8 over the devices at ``positions`` (a list :meth:`Selectors.members` keeps).

    They read the request only for its capacity, tolerations and admin access, so requests
    whose selectors leave the same devices (``explain pods --all-pending``: many claims, few
    distinct candidate sets) share one walk over them.
    """
    key = ("tail", id(positions), id(reachable), own_devices, req.admin,
           tuple((req.capacity or {}).items()), repr(req.tolerations))
    hit = index.memo.get(key)
    if hit is None or hit.positions is not positions or hit.reachable is not reachable:
        hit = index.memo[key] = _walk_tail(req, index, positions, reachable, own_devices)
    return hit


def _walk_tail(
    req: RequestSpec,
    index: ClusterIndex,
    positions: list[int],
    reachable: Mapping[int, bool],
    own_devices: frozenset[DeviceKey],
) -> _Tail:
    devices = index.devices
    allocated = index.in_use
    steps: list[FunnelStep] = []
    current = [devices[pos] for pos in positions]

    # 2. static capacity (the device has the capacity and enough of it in total).
    if req.capacity:
        kept = [d for d in current if _capacity_fits(d, req) == ""]
        asked = ", ".join(f"{k} {v}" for k, v in req.capacity.items())
        steps.append(FunnelStep("capacity", f"with capacity {asked}", len(kept), len(current) - len(kept)))
        current = kept

    # 3. reachable from a node the pod may use.
    kept = [d for d in current if reachable.get(id(d) if d.slice.per_device else id(d.slice), False)]  # _reachable
    steps.append(FunnelStep("node", "on a node the pod may use", len(kept), len(current) - len(kept)))
    current = kept

    # 4. pool health (only shown when some pool is unhealthy).
    incomplete: list[str] = []
    invalid: list[tuple[str, str]] = []
    if index.unhealthy:
        pools = index.pools
        incomplete = sorted({f"{d.driver}/{d.pool}" for d in current if pools[(d.driver, d.pool)].incomplete})
        invalid = sorted(
            {(f"{d.driver}/{d.pool}", pools[(d.driver, d.pool)].invalid) for d in current if pools[(d.driver, d.pool)].invalid}
        )
        if incomplete or invalid:
            kept = [d for d in current if (d.driver, d.pool) not in index.unhealthy]
            steps.append(FunnelStep("pool", "in a complete, valid pool", len(kept), len(current) - len(kept)))
            current = kept

    # 5. taints (only with DRADeviceTaints, and only shown when some candidate is tainted).
    if index.any_taints and any(index.taints(d) for d in current):
        kept = [d for d in current if not untolerated_device_taint(index.taints(d), req.tolerations)]
        steps.append(FunnelStep("taints", "not tainted, or tolerated", len(kept), len(current) - len(kept)))
        current = kept
    matching = current

    # 6. free: not held by another claim (admin access ignores use).
    in_use: list[Device] = []
    if req.admin:
        steps.append(FunnelStep("free", "free (admin access ignores use)", len(current), 0))
    else:
        kept = []
        for d in current:
            if d.key in allocated and d.key not in own_devices:
                in_use.append(d)
            else:
                kept.append(d)
        steps.append(FunnelStep("free", "free (not allocated to a claim)", len(kept), len(in_use)))
        current = kept

    # 7. shared counters (partitionable devices) still available.
    blocked: list[tuple[Device, str]] = []
    if index.features.partitionable_devices and index.any_consumes and any(d.consumes for d in current):
        kept = []
        for d in current:
            why = index.counters_left(d)
            if why:
                blocked.append((d, why))
            else:
                kept.append(d)
        steps.append(FunnelStep("counters", "with shared counters left", len(kept), len(blocked)))
        current = kept

    # 8. capacity left on shared devices.
    if index.features.consumable_capacity and index.any_multiple and any(d.allow_multiple for d in current):
        kept = [d for d in current if index.capacity_left(d, req)]
        steps.append(FunnelStep("capacity-left", "with capacity left", len(kept), len(current) - len(kept)))
        current = kept

    return _Tail(tuple(steps), matching, current, in_use, blocked, tuple(incomplete), tuple(invalid), positions, reachable)


def _within_margin(bound: tuple[str, str, Qty, Qty] | None) -> bool:
    if bound is None:
        return True  # not a quantity bound: the one failing condition is the story
    _, _, have, want = bound
    if want.value == 0:
        return True
    return abs(want.value - have.value) <= NEAR_MARGIN * abs(want.value)


def ceiling_hint(req: RequestSpec, index: ClusterIndex, selectors: Selectors, devices: Sequence[Device]) -> str:
    """For a lower bound no device meets: "largest device 81559Mi (H100): ask for at most 79Gi".

    ``devices`` are those of the request's class; the first request selector term that every
    one of them fails, and that bounds a quantity from below, is the one told.
    """
    for expr in req.selectors:
        for term in selectors.terms(expr):
            best: tuple[Qty, Device] | None = None
            name = ""
            for d in devices:
                bound = selectors.probe.bound(term, d.driver, d.raw)
                if bound is None or bound[1] not in (">", ">="):
                    best = None
                    break
                name, _, have, _ = bound
                if selectors.term_true(term, d):
                    best = None
                    break
                if best is None or have.value > best[0].value:
                    best = (have, d)
            if best is not None:
                have, d = best
                return f"largest device {name} {have.text} ({device_product(d)}): ask for at most {amounts.floor_unit(have.value)}"
    return ""


def _reachable(d: Device, reachable: Mapping[int, bool]) -> bool:
    if d.slice.per_device:
        return reachable.get(id(d), False)
    return reachable.get(id(d.slice), False)


def _exact(v: Any) -> Fraction:
    """A Fraction from whatever amount type the allocator's index hands out."""
    exact = getattr(v, "exact", None)
    return exact() if callable(exact) else Fraction(v)


def _capacity_entry(d: Device, name: str) -> Any:
    """The device capacity ``name`` (short or qualified with the driver's domain), or None."""
    caps = d.capacity
    short = name.split("/", 1)[1] if name.startswith(d.driver + "/") else name
    for key in (name, short, f"{d.driver}/{short}"):
        if key in caps:
            return caps[key]
    return None


def _capacity_fits(d: Device, req: RequestSpec) -> str:
    for name, asked in (req.capacity or {}).items():
        entry = _capacity_entry(d, name)
        if entry is None:
            return f"no capacity {name}"
        if amounts.value(asked) > _exact(entry.value):
            return f"{name} {entry.value_text}; the request asks {asked}"
    return ""


def reach_map(
    index: ClusterIndex, nodes: Sequence[Obj]
) -> dict[int, bool]:
    """id(slice) (or id(device) under per-device selection) -> reachable from one of ``nodes``."""
    names = {(n.get("metadata") or {}).get("name", "") for n in nodes}
    out: dict[int, bool] = {}
    seen: set[int] = set()
    for d in index.devices:
        s = d.slice
        if s.per_device:
            out[id(d)] = _any_node(nodes, names, d.node_name, d.all_nodes, d.node_selector)
        elif id(s) not in seen:
            seen.add(id(s))
            out[id(s)] = _any_node(nodes, names, s.node_name, s.all_nodes, s.node_selector)
    return out


def _any_node(
    nodes: Sequence[Obj], names: set[str], node_name: str, all_nodes: bool, selector: Obj | None
) -> bool:
    if node_name:
        return node_name in names
    if all_nodes:
        return bool(nodes)
    if selector is not None:
        return any(node_matches(n, "", False, selector) for n in nodes)
    return False


def device_nodes(d: Device, nodes: Sequence[Obj]) -> list[str]:
    """Names of the ``nodes`` a device can be used from."""
    s = d.slice
    node_name, all_nodes, selector = (
        (d.node_name, d.all_nodes, d.node_selector) if s.per_device else (s.node_name, s.all_nodes, s.node_selector)
    )
    if node_name:
        return [node_name]
    return [
        str((n.get("metadata") or {}).get("name", ""))
        for n in nodes
        if node_matches(n, node_name, all_nodes, selector)
    ]


# --- near misses ------------------------------------------------------------------------------


def _near_misses(
    req: RequestSpec,
    class_exprs: Sequence[str],
    class_pass: list[int],
    class_groups: Sequence[int],
    gids: Sequence[int],
    reps: Sequence[Device],
    index: ClusterIndex,
    selectors: Selectors,
    reachable: Mapping[int, bool],
) -> tuple[NearMiss, ...]:
    """Devices failing exactly one static condition, grouped by the story that explains them.

    Among the devices of the class when there are any (a NIC failing ``device.driver == ...``
    is no near miss of a GPU request); otherwise among all devices, against the class terms.
    ``class_pass`` are positions in ``index.devices`` (``class_groups`` their projection groups
    of :meth:`Selectors.groups`), so each term is evaluated and explained once per group.
    The walk over the devices reads the terms only through which of them each group fails:
    requests that fail alike (many claims of one cluster) share it.
    """
    devices = index.devices
    pool: Sequence[int] = class_pass if class_pass else range(len(devices))
    conditions: list[tuple[str, str]] = []  # (step key, term expression)
    if not class_pass:
        for expr in class_exprs:
            conditions.extend(("class", t) for t in selectors.terms(expr))
    for i, expr in enumerate(req.selectors):
        conditions.extend((f"selector-{i}", t) for t in selectors.terms(expr))
    failing_of: dict[int, tuple[tuple[str, str], ...]] = {}  # per projection group: up to two failing terms
    for g in class_groups if class_pass else range(len(reps)):
        failing: list[tuple[str, str]] = []
        for key, term in conditions:
            if not selectors.term_true(term, reps[g]):
                failing.append((key, term))
                if len(failing) > 1:
                    break
        failing_of[g] = tuple(failing)
    memo = ("near", id(class_pass), id(gids), id(reachable), tuple(failing_of.items()),
            tuple((req.capacity or {}).items()), repr(req.tolerations))
    hit = index.memo.get(memo)
    if hit is not None and hit[0] is class_pass and hit[1] is gids and hit[2] is reachable:
        return hit[3]
    near = _walk_near_misses(req, pool, failing_of, gids, reps, index, selectors, reachable)
    index.memo[memo] = (class_pass, gids, reachable, near)
    return near


def _walk_near_misses(
    req: RequestSpec,
    pool: Sequence[int],
    failing_of: Mapping[int, Sequence[tuple[str, str]]],
    gids: Sequence[int],
    reps: Sequence[Device],
    index: ClusterIndex,
    selectors: Selectors,
    reachable: Mapping[int, bool],
) -> tuple[NearMiss, ...]:
    devices = index.devices
    groups: dict[tuple[str, str, str, str], list[Device]] = {}
    explained: dict[tuple[str, Hashable], tuple[str, str]] = {}
    story_of: dict[int, tuple[str, str]] = {}  # per projection group: (message, hint) of its one failing term
    close_of: dict[int, bool] = {}  # per projection group: its amount is within NEAR_MARGIN of the bound
    for pos in pool:
        g = gids[pos]
        failing = failing_of[g]
        if len(failing) > 1:
            continue
        d = devices[pos]
        extra: list[tuple[str, str]] = []
        if req.capacity:
            why = _capacity_fits(d, req)
            if why:
                extra.append(("capacity", why))
        if not reachable.get(id(d) if d.slice.per_device else id(d.slice), False):  # _reachable
            extra.append(("node", "not on a node the pod may use"))
        if index.any_taints:
            bad = untolerated_device_taint(index.taints(d), req.tolerations)
            if bad is not None:
                extra.append(
                    ("taints", f"taint {bad.get('key', '')}={bad.get('value') or ''}:{bad.get('effect', '')} not tolerated")
                )
        if len(failing) + len(extra) != 1:
            continue
        if failing:
            key, term = failing[0]
            if g not in close_of:
                close_of[g] = _within_margin(selectors.probe.bound(term, d.driver, d.raw))
            if not close_of[g]:
                continue
            story = story_of.get(g)
            if story is None:  # told once per group, on its first device that gets here
                cache_key = (term, selectors.projection_key(term, d))
                if cache_key not in explained:
                    explained[cache_key] = selectors.probe.explain(term, d.driver, d.raw)
                message, hint = explained[cache_key]
                if not message:
                    message = f"fails {_short(term, 60)}"
                story = story_of[g] = (message, hint)
            message, hint = story
        else:
            key, message = extra[0]
            hint = {
                "node": "allow the pod on that node (nodeSelector, affinity, tolerations)",
                "taints": "add a matching toleration to the request",
                "capacity": "",
            }[key]
        groups.setdefault((key, device_product(d), message, hint), []).append(d)
    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return tuple(
        NearMiss(
            condition=key,
            count=len(devs),
            example=devs[0].ident,
            product=product,
            message=message,
            suggestion=hint,
        )
        for (key, product, message, hint), devs in ranked[:MAX_NEAR_MISS_GROUPS]
    )
