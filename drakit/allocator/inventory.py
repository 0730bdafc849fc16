"""The reusable index over ResourceSlices and DeviceClasses that every ``allocate`` call reads.

Built once from wire dicts, never modified afterwards except for its caches:

* slices split into "on node <name>" and "shared" (no ``nodeName``) lists, so that gathering the
  pools for one node never scans every slice (upstream does the same split since 1.36);
* all slices of a pool, for the "is this pool complete/obsolete?" check;
* the gathered pools per node (they depend only on slices, the node and two feature flags);
* compiled CEL selectors keyed by expression text, and per device the outcome of each selector,
  so a selector is evaluated at most once per device for the lifetime of the inventory (the
  device's CEL view is built for that and then dropped: see the package README);
* per device, the typed attributes that constraints read and the consumption of a request that
  asks for no capacity (memoised on first use; published devices never change);
* the committed allocated state (:meth:`Inventory.commit`), so callers that allocate thousands of
  claims one at a time need not hand every in-use claim back in on each call.

The input dicts are referenced, never copied or modified.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from drakit.allocator import nodeselector
from drakit.allocator.constraints import AttrValue, UnsupportedAttribute, lookup_attribute
from drakit.allocator.state import AllocatedState, DeviceKey, quantity_of
from drakit.corev1 import node_selector_matches
from drakit.features import Features
from drakit.quantity import Quantity

# --- node matching ----------------------------------------------------------------------------


def node_matches(
    node: Mapping[str, Any], node_name: str, all_nodes: bool, selector: Mapping[str, Any] | None
) -> bool:
    if node_name:
        return (node.get("metadata") or {}).get("name") == node_name
    if all_nodes:
        return True
    if selector is not None:
        return node_selector_matches(node, selector)  # one that does not parse matches nothing
    return False


# --- devices and slices -----------------------------------------------------------------------


@dataclass(eq=False)
class CapacityEntry:
    """One device capacity, keyed by its name exactly as the device publishes it."""

    status_name: str  # the name as the device publishes it (used in consumedCapacity)
    quantity: Quantity
    value_text: str
    policy: Mapping[str, Any] | None

    @property
    def value(self) -> Fraction:
        """The exact amount (for readers that only compare numbers)."""
        return self.quantity.exact()


@dataclass(eq=False)
class Device:
    """A device of a slice with everything the search needs pre-parsed (plus its selector cache)."""

    name: str
    driver: str
    pool: str
    key: DeviceKey
    ident: str  # "driver/pool/device"
    raw: Mapping[str, Any]
    slice: Slice
    counter_use: tuple[tuple[str, tuple[tuple[str, Quantity], ...]], ...]  # consumesCounters, parsed
    taints: tuple[Mapping[str, Any], ...]
    has_binding_conditions: bool  # len(bindingConditions) > 0
    binding_conditions_set: bool  # field present (Go: non-nil), used for pool ordering
    allow_multiple: bool
    binds_to_node: bool
    node_name: str
    all_nodes: bool
    node_selector: Mapping[str, Any] | None
    _capacity: dict[str, CapacityEntry] | None = None
    matches: dict[str, Any] = field(default_factory=dict)  # expression -> True/False/Exception
    _attrs: dict[str, Any] | None = None  # constraint attribute name -> typed value (memo)
    _bare: dict[str, Quantity] | None = None  # consumption of a request asking for nothing
    _has_policy: bool | None = None

    @property
    def consumes(self) -> tuple[tuple[str, tuple[tuple[str, Fraction], ...]], ...]:
        """``counter_use`` with exact numbers, for readers that only compare amounts."""
        return tuple(
            (name, tuple((cn, q.exact()) for cn, q in counters)) for name, counters in self.counter_use
        )

    @property
    def capacity(self) -> dict[str, CapacityEntry]:
        """Capacity keyed by the published name.

        Upstream (v0.37.2) looks request and consumed-capacity names up in the device's
        ``capacity`` map as they are written: ``memory`` and ``<driver>/memory`` are different
        keys there, unlike attribute lookups in constraints.
        """
        if self._capacity is None:
            raw = self.raw.get("capacity") or {}
            self._capacity = {name: _capacity_entry(name, cap) for name, cap in raw.items()}
        return self._capacity

    def attribute(self, name: str) -> AttrValue | None:
        """``lookup_attribute`` memoised per device (attributes never change once published).

        A value-less attribute raises :class:`UnsupportedAttribute` every time, as the
        unmemoised lookup does.
        """
        cache = self._attrs
        if cache is None:
            cache = self._attrs = {}
        try:
            v = cache[name]
        except KeyError:
            try:
                v = lookup_attribute(self.raw.get("attributes") or {}, self.driver, name)
            except UnsupportedAttribute as e:
                v = _Unsupported(str(e))
            cache[name] = v
        if type(v) is _Unsupported:
            raise UnsupportedAttribute(v.message)
        return v

    def bare_consumption(self) -> dict[str, Quantity] | None:
        """What a request without capacity requests consumes when no capacity has a request
        policy: every capacity in full.  ``None`` when a policy exists (the general path).
        Shared between calls: read it, never modify it."""
        if self._has_policy is None:
            caps = self.capacity
            self._has_policy = any(bool(e.policy) for e in caps.values())
            if not self._has_policy:
                self._bare = {name: e.quantity for name, e in caps.items()}
        return self._bare


class _Unsupported:
    """A memoised "attribute without a value" outcome."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message


def _capacity_entry(name: str, cap: Mapping[str, Any]) -> CapacityEntry:
    text = str((cap or {}).get("value", "0"))
    return CapacityEntry(
        status_name=name, quantity=quantity_of(text), value_text=text, policy=(cap or {}).get("requestPolicy")
    )


@dataclass(eq=False)
class Slice:
    name: str
    driver: str
    pool: str
    generation: int
    count: int
    node_name: str
    all_nodes: bool
    node_selector: Mapping[str, Any] | None
    per_device: bool
    per_device_set: bool  # perDeviceNodeSelection present (Go: non-nil)
    shared_counters: tuple[Mapping[str, Any], ...]
    devices: tuple[Device, ...]
    raw: Mapping[str, Any]


def _build_slice(raw: Mapping[str, Any]) -> Slice:
    spec = raw.get("spec") or {}
    pool = spec.get("pool") or {}
    s = Slice(
        name=(raw.get("metadata") or {}).get("name", ""),
        driver=spec.get("driver", ""),
        pool=pool.get("name", ""),
        generation=int(pool.get("generation") or 0),
        count=int(pool.get("resourceSliceCount") or 0),
        node_name=spec.get("nodeName") or "",
        all_nodes=bool(spec.get("allNodes")),
        node_selector=spec.get("nodeSelector"),
        per_device=bool(spec.get("perDeviceNodeSelection")),
        per_device_set=spec.get("perDeviceNodeSelection") is not None,
        shared_counters=tuple(spec.get("sharedCounters") or ()),
        devices=(),
        raw=raw,
    )
    devices = []
    for d in spec.get("devices") or ():
        name = d.get("name", "")
        counter_use = tuple(
            (
                c.get("counterSet", ""),
                tuple(
                    (cn, quantity_of((cv or {}).get("value", "0")))
                    for cn, cv in (c.get("counters") or {}).items()
                ),
            )
            for c in d.get("consumesCounters") or ()
        )
        devices.append(
            Device(
                name=name,
                driver=s.driver,
                pool=s.pool,
                key=(s.driver, s.pool, name),
                ident=f"{s.driver}/{s.pool}/{name}",
                raw=d,
                slice=s,
                counter_use=counter_use,
                taints=tuple(d.get("taints") or ()),
                has_binding_conditions=bool(d.get("bindingConditions")),
                binding_conditions_set=d.get("bindingConditions") is not None,
                allow_multiple=bool(d.get("allowMultipleAllocations")),
                binds_to_node=bool(d.get("bindsToNode")),
                node_name=d.get("nodeName") or "",
                all_nodes=bool(d.get("allNodes")),
                node_selector=d.get("nodeSelector"),
            )
        )
    s.devices = tuple(devices)
    return s


# --- pools ------------------------------------------------------------------------------------


@dataclass(eq=False)
class Pool:
    driver: str
    name: str
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    device_slices: tuple[Slice, ...] = ()
    other_slices: tuple[Slice, ...] = ()  # same generation, not targeting the node (counters)
    counter_sets: dict[str, dict[str, Quantity]] = field(default_factory=dict)
    counter_text: dict[tuple[str, str], str] = field(default_factory=dict)

    @property
    def ident(self) -> str:
        return f"{self.driver}/{self.name}"

    @property
    def usable(self) -> bool:
        return not (self.incomplete or self.invalid)


@dataclass(frozen=True)
class PoolNote:
    """Why a pool or slice was left out while gathering (fed to traces)."""

    kind: str  # "node-mismatch" | "feature-disabled" | "obsolete"
    slice: Slice


@dataclass(eq=False)
class NodePools:
    """The gathered pools for one node, plus the flattened search order over usable devices."""

    pools: tuple[Pool, ...]
    devices: tuple[Device, ...]  # usable pools' devices in pool -> slice -> device order
    notes: tuple[PoolNote, ...]
    error: str = ""  # pool gathering failed (a node selector that does not parse): no pools


def _gather_failed(reason: str) -> NodePools:
    return NodePools(pools=(), devices=(), notes=(), error=f"gather pool information: {reason}")


def _validate_counter_refs(
    counter_sets: Mapping[str, Mapping[str, Quantity]], slices: Iterable[Slice]
) -> str:
    for s in slices:
        for d in s.devices:
            for set_name, counters in d.counter_use:
                cs = counter_sets.get(set_name)
                if cs is None:
                    return f"counter set {set_name} not found"
                for cn, _ in counters:
                    if cn not in cs:
                        return f"counter {cn} not found in counter set {set_name}"
    return ""


def _build_pool(
    driver: str, pool_name: str, slices: list[Slice], features: Features, all_slices: list[Slice] | None
) -> Pool:
    slices = sorted(slices, key=lambda s: s.name)
    # Slices of the pool's generation that do not target the node, when we had to look at all
    # of them: upstream skips any whose *name* is that of a node-relevant slice (so a second
    # slice with the same name, counter set or not, is never seen).
    names = {s.name for s in slices}
    rest = [s for s in all_slices if s.name not in names] if all_slices is not None else []
    if features.partitionable_devices:
        # Counter sets may be published in a slice that targets another node (or none).
        counter_slices = [s for s in slices if s.shared_counters] + [s for s in rest if s.shared_counters]
        device_slices = [s for s in slices if not s.shared_counters]
    else:
        counter_slices, device_slices = [], slices
    seen: set[str] = set()
    for s in device_slices:
        for d in s.devices:
            if d.name in seen:
                return Pool(driver, pool_name, invalid=True, invalid_reason=f"duplicate device name {d.name}")
            seen.add(d.name)
    if not features.partitionable_devices:
        return Pool(driver, pool_name, device_slices=tuple(device_slices))
    counter_sets: dict[str, dict[str, Quantity]] = {}
    counter_text: dict[tuple[str, str], str] = {}
    for s in counter_slices:
        for cs in s.shared_counters:
            name = cs.get("name", "")
            if name in counter_sets:
                return Pool(
                    driver, pool_name, invalid=True, invalid_reason=f"duplicate counter set name {name}"
                )
            counters: dict[str, Quantity] = {}
            for cn, cv in (cs.get("counters") or {}).items():
                text = str((cv or {}).get("value", "0"))
                counters[cn] = quantity_of(text)
                counter_text[(name, cn)] = text
            counter_sets[name] = counters
    reason = _validate_counter_refs(counter_sets, slices)
    if reason:
        return Pool(driver, pool_name, invalid=True, invalid_reason=reason)
    other = [s for s in rest if not s.shared_counters]
    reason = _validate_counter_refs(counter_sets, other)
    if reason:
        return Pool(driver, pool_name, invalid=True, invalid_reason=reason)
    return Pool(
        driver,
        pool_name,
        device_slices=tuple(device_slices),
        other_slices=tuple(other),
        counter_sets=counter_sets,
        counter_text=counter_text,
    )


# --- the inventory ----------------------------------------------------------------------------


class Inventory:
    """Precomputed, reusable index over slices and classes (see the module docstring)."""

    def __init__(self, slices: Sequence[Mapping[str, Any]], classes: Sequence[Mapping[str, Any]]) -> None:
        self.slices: tuple[Slice, ...] = tuple(_build_slice(s) for s in slices)
        self._on_node: dict[str, list[Slice]] = {}
        self._shared: list[Slice] = []
        self._by_pool: dict[tuple[str, str], list[Slice]] = {}
        for s in self.slices:
            if s.node_name:
                self._on_node.setdefault(s.node_name, []).append(s)
            else:
                self._shared.append(s)
            self._by_pool.setdefault((s.driver, s.pool), []).append(s)
        self.classes: dict[str, Mapping[str, Any]] = {}
        for c in classes:
            self.classes.setdefault((c.get("metadata") or {}).get("name", ""), c)
        self._pools_cache: dict[tuple[Any, ...], NodePools] = {}
        self._compiled: dict[tuple[str, Features], Any] = {}
        self.state = AllocatedState()

    # -- allocated state -----------------------------------------------------------------------

    def commit(self, claim: Mapping[str, Any], features: Features | None = None) -> None:
        """Record an allocated claim (its ``status.allocation``) as in use for later calls."""
        self.state.add_claim(claim, consumable=(features or Features.all_on()).consumable_capacity)

    def release(self, claim: Mapping[str, Any], features: Features | None = None) -> None:
        """Undo :meth:`commit` (a deleted or deallocated claim)."""
        self.state.remove_claim(claim, consumable=(features or Features.all_on()).consumable_capacity)

    # -- pools ---------------------------------------------------------------------------------

    def pools_for(self, node: Mapping[str, Any], features: Features) -> NodePools:
        meta = node.get("metadata") or {}
        name = meta.get("name", "")
        labels = meta.get("labels") or {}
        key = (name, tuple(sorted(labels.items())), features.partitionable_devices)
        cached = self._pools_cache.get(key)
        if cached is None:
            cached = self._gather(node, name, features)
            self._pools_cache[key] = cached
        return cached

    def _gather(self, node: Mapping[str, Any], node_name: str, features: Features) -> NodePools:
        notes: list[PoolNote] = []
        pools: dict[tuple[str, str], list[Slice]] = {}
        error = ""
        candidates = self._on_node.get(node_name, []) + self._shared
        for s in candidates:
            if not features.partitionable_devices and (s.per_device_set or s.shared_counters):
                notes.append(PoolNote("feature-disabled", s))
                continue
            if s.node_name or s.all_nodes or s.node_selector is not None:
                if not s.node_name and not s.all_nodes and s.node_selector is not None:
                    error = nodeselector.parse_error(s.node_selector)
                    if error:
                        return _gather_failed(f"failed to perform node selection for slice {s.name}: {error}")
                relevant = node_matches(node, s.node_name, s.all_nodes, s.node_selector)
            elif s.per_device:
                relevant = False
                for d in s.devices:
                    if not d.node_name and not d.all_nodes and d.node_selector is not None:
                        error = nodeselector.parse_error(d.node_selector)
                        if error:
                            # Upstream prints the whole Device struct (with pointer addresses).
                            return _gather_failed(
                                f"failed to perform node selection for device {d.name} in slice {s.name}: {error}"
                            )
                    if node_matches(node, d.node_name, d.all_nodes, d.node_selector):
                        relevant = True
                        break
            else:
                continue  # some future node-selection field: ignore the slice
            if not relevant:
                notes.append(PoolNote("node-mismatch", s))
                continue
            pid = (s.driver, s.pool)
            current = pools.get(pid)
            if current is None or s.generation > current[0].generation:
                if current is not None:
                    notes.extend(PoolNote("obsolete", old) for old in current)
                pools[pid] = [s]
            elif s.generation == current[0].generation:
                current.append(s)
            else:
                notes.append(PoolNote("obsolete", s))
        plain: list[Pool] = []
        with_binding: list[Pool] = []
        for (driver, pool_name), found in pools.items():
            want = found[0].count
            if len(found) == want:
                pool = _build_pool(driver, pool_name, found, features, None)
            else:
                generation = found[0].generation
                obsolete = False
                same_gen: list[Slice] = []
                for s in self._by_pool.get((driver, pool_name), []):
                    if s.generation > generation:
                        obsolete = True
                        break
                    if s.generation == generation:
                        same_gen.append(s)
                if obsolete:
                    notes.extend(PoolNote("obsolete", s) for s in found)
                    continue
                if len(same_gen) != want:
                    plain.append(
                        Pool(
                            driver,
                            pool_name,
                            incomplete=True,
                            device_slices=tuple(sorted(found, key=lambda s: s.name)),
                        )
                    )
                    continue
                pool = _build_pool(driver, pool_name, found, features, same_gen)
            if pool.invalid:
                pool.device_slices = tuple(sorted(found, key=lambda s: s.name))
                plain.append(pool)
            elif any(d.binding_conditions_set for s in pool.device_slices for d in s.devices):
                with_binding.append(pool)
            else:
                plain.append(pool)
        plain.sort(key=lambda p: (p.driver, p.name))
        with_binding.sort(key=lambda p: (p.driver, p.name))
        ordered = tuple(plain + with_binding)
        devices = tuple(d for p in ordered if p.usable for s in p.device_slices for d in s.devices)
        return NodePools(pools=ordered, devices=devices, notes=tuple(notes), error=error)

    # -- selectors -----------------------------------------------------------------------------

    def compiled(self, expression: str, features: Features) -> Any:
        key = (expression, features)
        c = self._compiled.get(key)
        if c is None:
            from drakit.allocator import cel

            c = cel.compile_stored(expression, features)
            self._compiled[key] = c
        return c

    def device_class(self, name: str) -> Mapping[str, Any] | None:
        return self.classes.get(name)
