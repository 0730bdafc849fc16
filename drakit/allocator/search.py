"""``allocate``: the structured allocator's decisions for one node, with every rejection traced.

Phases of :func:`allocate`:

1. split the input claims into in-use (carry ``status.allocation``) and to-allocate;
2. gather the node's pools (cached in the :class:`Inventory`);
3. pre-check every claim and request in order (upstream's exact error texts), computing the
   device list of ``All`` requests and building the constraint objects;
4. depth-first search with backtracking (:meth:`_Run.allocate_one`), first solution wins;
5. build one v1 AllocationResult per claim (results, config, node selector).

Hand-written because nothing outside kube-scheduler implements these semantics; see the package
README for every place where we follow (or deliberately differ from) a specific upstream version.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from drakit.allocator import cel, nodeselector
from drakit.allocator.constraints import Constraint, DistinctAttribute, MatchAttribute
from drakit.allocator.inventory import CapacityEntry, Device, Inventory, NodePools, Pool, node_matches
from drakit.allocator.state import AllocatedState, DeviceKey, has_allocation, quantity_of, quantity_sum
from drakit.allocator.trace import Trace
from drakit.clock import SYSTEM_CLOCK, Clock, IdSource, RandomIds
from drakit.corev1 import DEVICE_TAINT_EFFECTS, tolerates_device_taint
from drakit.errors import AllocationError
from drakit.features import Features
from drakit.gostr import quote
from drakit.inventory.snapshot import ClusterSnapshot, ObjectKey
from drakit.outcomes import ReasonCode
from drakit.quantity import Format, Quantity

MAX_RESULTS = 32  # resourceapi.AllocationResultsMaxSize
DEADLINE_EVERY = 64  # steps between deadline checks: reading the clock is cheap but not free
UNSATISFIABLE_MESSAGE = "cannot allocate all claims"
TIMEOUT_MESSAGE = "timed out trying to allocate devices"


@dataclass(frozen=True)
class SearchStats:
    """How much work the search did (``steps`` = upstream's allocateOne invocations)."""

    steps: int = 0
    devices_considered: int = 0
    elapsed_s: float = 0.0


@dataclass(frozen=True)
class AllocationOutcome:
    status: Literal["allocated", "unsatisfiable", "error"]
    claims: tuple[dict[str, Any], ...]
    message: str
    results: tuple[dict[str, Any], ...] = ()
    stats: SearchStats = field(default_factory=SearchStats)

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "claims": [copy.deepcopy(c) for c in self.claims],
            "message": self.message,
        }


class _MaxSizeExceeded(Exception):
    """Upstream's errAllocationResultMaxSizeExceeded: prune, try the next subrequest."""


class _Pos(NamedTuple):
    """Where the search stands: upstream's deviceIndices plus what it passes alongside."""

    claim: int  # index into the claims to allocate
    request: int  # index into that claim's requests
    sub: int  # the firstAvailable subrequest being tried (0 otherwise)
    device: int  # how many devices of the (sub)request are placed already
    in_sub: bool  # upstream's allocateSubRequest: the subrequest loop is in the call chain
    start: int  # first device index to try for ``device`` (after the one chosen before it)


# ``_Pos(...)`` runs a Python-level ``__new__``; the search builds one per step, so it builds
# them through ``tuple.__new__`` directly (a C call), which keeps the named tuple free.
_pos: Callable[[tuple[int, int, int, int, bool, int]], _Pos] = functools.partial(tuple.__new__, _Pos)


class _Timeout(Exception):
    pass


class _RuntimeFailure:
    """A cached CEL runtime error for one (expression, device)."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message


@dataclass(eq=False)
class _Req:
    """One request or subrequest, pre-checked."""

    claim_index: int
    request_index: int
    sub_index: int
    name: str
    parent: str
    class_name: str
    device_class: Mapping[str, Any]
    class_selectors: tuple[str, ...]
    selectors: tuple[str, ...]
    mode: str
    num_devices: int
    admin: bool
    tolerations: Sequence[Mapping[str, Any]]
    capacity_requests: Mapping[str, Any] | None
    all_devices: list[Device] | None = None
    # selectable() per device for this run (untraced runs only): it depends only on the
    # request, the device and the node, but the search asks again for every candidate visit.
    selectable_memo: dict[Device, bool] = field(default_factory=dict)
    constraints: list[Constraint] | None = None  # the claim's constraints that apply (lazily)

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name


@dataclass(eq=False)
class _Result:
    req: _Req
    device: Device
    admin: bool
    share_id: str | None
    consumed: dict[str, Quantity] | None


_ZERO = quantity_of("0")


def _human(q: Quantity) -> str:
    """Short display form for trace messages: binary suffixes where they read naturally."""
    q = max(q, _ZERO)
    decimal = str(dataclasses.replace(q, format=Format.DecimalSI, _cached=""))
    binary = str(dataclasses.replace(q, format=Format.BinarySI, _cached=""))
    return binary if len(binary) < len(decimal) else decimal


def _go_equal(a: Quantity, b: Quantity) -> bool:
    """Go's ``==`` on two ``resource.Quantity`` structs: same representation, not just same value.

    Upstream's request-policy check compares the consumed amount with the policy default this
    way, so ``1Gi`` and ``1024Mi`` are not "the default" for each other.
    """
    return (a._kind, a._u, a._s, a.format, a._cached) == (b._kind, b._u, b._s, b.format, b._cached)


class _Run:
    """State of one ``allocate`` call (upstream's unexported ``allocator``)."""

    def __init__(
        self,
        inv: Inventory,
        features: Features,
        node: Mapping[str, Any],
        pools: NodePools,
        claims: list[Mapping[str, Any]],
        state: AllocatedState,
        deadline: float | None,
        trace: Trace | None,
        clock: Clock,
        ids: IdSource,
    ) -> None:
        self.inv = inv
        self.f = features
        self.node = node
        self.node_name = (node.get("metadata") or {}).get("name", "")
        self.pools = pools
        self.pool_by_id: dict[tuple[str, str], Pool] = {(p.driver, p.name): p for p in pools.pools}
        self.claims = claims
        self.labels = [str(ObjectKey.of(c, "ResourceClaim")) for c in claims]
        self.state = state
        self.deadline = deadline
        self.trace = trace
        self.clock = clock
        self.ids = ids
        self.reqs: list[list[_Req | list[_Req]]] = []
        self.constraints: list[list[Constraint]] = []
        self.selected: list[dict[int, int]] = [{} for _ in claims]
        self.results: list[list[_Result]] = [[] for _ in claims]
        self.allocating: dict[DeviceKey, set[int]] = {}
        self.allocating_cap: dict[DeviceKey, dict[str, Quantity]] = {}
        self.consumed_counters: dict[tuple[str, str], dict[str, dict[str, Quantity]]] = {}
        self.available_counters: dict[tuple[str, str], dict[str, dict[str, Quantity]]] = {}
        self.per_device_node: dict[int, bool] = {}
        # The CEL view of the device last evaluated: selectors of one request are evaluated
        # back to back on the same device, and outcomes are memoised per device, so one view
        # at a time suffices.  Views are not kept on devices: thousands of retained views made
        # Python's cyclic GC the largest cost of a large inventory's first allocation.
        self._view_dev: Device | None = None
        self._view: Any = None
        self.steps = 0
        self.considered = 0

    # -- tracing helper --------------------------------------------------------------------

    def _reject(self, code: ReasonCode, req: _Req, dev: Device | None, message: str, **detail: Any) -> None:
        assert self.trace is not None
        self.trace.reject(
            code,
            message,
            claim=self.labels[req.claim_index],
            request=req.full_name,
            device=dev.ident if dev is not None else "",
            detail=detail,
        )

    # -- phase 3: pre-checks ---------------------------------------------------------------

    def precheck(self) -> None:
        f = self.f
        for ci, claim in enumerate(self.claims):
            label = self.labels[ci]
            devices = (claim.get("spec") or {}).get("devices") or {}
            entries: list[_Req | list[_Req]] = []
            min_devices = 0
            for ri, request in enumerate(devices.get("requests") or []):
                rname = request.get("name", "")
                subs = request.get("firstAvailable") or []
                if subs and not f.prioritized_list:
                    raise AllocationError(
                        f"claim {label}, request {rname}: has subrequests, but the DRAPrioritizedList feature is disabled"
                    )
                if not f.consumable_capacity:
                    exactly = request.get("exactly")
                    if exactly is not None and exactly.get("capacity") is not None:
                        raise AllocationError(
                            f"claim {label}, request {rname}: has capacity requests, but the DRAConsumableCapacity feature is disabled"
                        )
                    for sub in subs:
                        if sub.get("capacity") is not None:
                            raise AllocationError(
                                f"claim {label}, subrequest {sub.get('name', '')}: has capacity requests, but the DRAConsumableCapacity feature is disabled"
                            )
                if subs:
                    group = [self._validate(ci, ri, si, sub, rname, label) for si, sub in enumerate(subs)]
                    entries.append(group)
                    request_min = min(r.num_devices for r in group)
                else:
                    r = self._validate(ci, ri, 0, request.get("exactly") or {}, "", label, name=rname)
                    entries.append(r)
                    request_min = r.num_devices
                # Checked request by request (v0.37.2), so a later request's own error never
                # surfaces once the limit is already exceeded.
                if request_min > MAX_RESULTS - min_devices:
                    raise AllocationError(
                        f"claim {label}, request {rname}: adding {request_min} devices exceeds the claim limit"
                        f" of {MAX_RESULTS}, with {min_devices} already accounted for"
                    )
                min_devices += request_min
            constraints: list[Constraint] = []
            for i, c in enumerate(devices.get("constraints") or []):
                names = c.get("requests") or []
                if c.get("matchAttribute") is not None:
                    constraints.append(MatchAttribute(c["matchAttribute"], names, f.list_type_attributes))
                elif c.get("distinctAttribute") is not None:
                    constraints.append(
                        DistinctAttribute(c["distinctAttribute"], names, f.list_type_attributes)
                    )
                else:
                    raise AllocationError(
                        f"claim {label}, constraint #{i}: empty constraint (unsupported constraint type?)"
                    )
            self.reqs.append(entries)
            self.constraints.append(constraints)

    def _validate(
        self,
        ci: int,
        ri: int,
        si: int,
        spec: Mapping[str, Any],
        parent: str,
        label: str,
        name: str | None = None,
    ) -> _Req:
        rname = name if name is not None else spec.get("name", "")
        selectors = spec.get("selectors") or []
        exprs: list[str] = []
        for i, sel in enumerate(selectors):
            celsel = (sel or {}).get("cel") if isinstance(sel, Mapping) else None
            if celsel is None:
                raise AllocationError(
                    f"claim {label}, request {rname}, selector #{i}: CEL expression empty (unsupported selector type?)"
                )
            exprs.append(str(celsel.get("expression", "")))
        has_admin = not parent and spec.get("adminAccess") is not None
        if not self.f.admin_access and has_admin:
            raise AllocationError(
                f"claim {label}, request {rname}: admin access is requested, but the feature is disabled"
            )
        class_name = spec.get("deviceClassName") or ""
        if not class_name:
            raise AllocationError(
                f"claim {label}, request {rname}: missing device class name (unsupported request type?)"
            )
        cls = self.inv.device_class(class_name)
        if cls is None:
            raise AllocationError(
                f'claim {label}, request {rname}: could not retrieve device class {class_name}: deviceclass.resource.k8s.io {quote(class_name)} not found'
            )
        class_exprs = []
        for sel in (cls.get("spec") or {}).get("selectors") or []:
            celsel = (sel or {}).get("cel") or {}
            class_exprs.append(str(celsel.get("expression", "")))
        capacity = spec.get("capacity")
        req = _Req(
            claim_index=ci,
            request_index=ri,
            sub_index=si,
            name=rname,
            parent=parent,
            class_name=class_name,
            device_class=cls,
            class_selectors=tuple(class_exprs),
            selectors=tuple(exprs),
            mode=spec.get("allocationMode") or "ExactCount",
            num_devices=0,
            admin=not parent and bool(spec.get("adminAccess")),
            tolerations=tuple(spec.get("tolerations") or ()),
            capacity_requests=(capacity or {}).get("requests") if capacity is not None else None,
        )
        if req.mode == "ExactCount":
            count = spec.get("count")
            req.num_devices = int(count) if count else 1
        elif req.mode == "All":
            devices: list[Device] = []
            for pool in self.pools.pools:
                if pool.incomplete:
                    raise AllocationError(
                        f"claim {label}, request {rname}: asks for all devices, but resource pool {pool.ident} is currently being updated"
                    )
                if pool.invalid:
                    raise AllocationError(
                        f"claim {label}, request {rname}: asks for all devices, but resource pool {pool.ident} is currently invalid"
                    )
                for s in pool.device_slices:
                    for dev in s.devices:
                        if not self.selectable(req, dev):
                            continue
                        if self.f.consumable_capacity and self.capacity(req, dev, static=True) is None:
                            continue
                        devices.append(dev)
            req.all_devices = devices
            req.num_devices = len(devices)
        else:
            raise AllocationError(f"claim {label}, request {rname}: unsupported count mode {req.mode}")
        return req

    # -- selectors -------------------------------------------------------------------------

    def _matches(self, expr: str, dev: Device, req: _Req, index: int, in_class: bool) -> bool:
        m = dev.matches.get(expr)
        if m is None:
            compiled = self.inv.compiled(expr, self.f)
            err = getattr(compiled, "error", None)
            if err is not None:
                where = f"class {req.class_name}" if in_class else f"claim {self.labels[req.claim_index]}"
                raise AllocationError(
                    f"{where}: selector #{index}: CEL compile error: {cel.error_message(err)}"
                )
            if self._view_dev is not dev:
                self._view = cel.device_view(dev.driver, dev.raw)
                self._view_dev = dev
            try:
                m = bool(compiled.evaluate(self._view))
            except Exception as e:  # the CEL layer's runtime errors (and its bugs) abort allocation
                m = _RuntimeFailure(cel.runtime_error_message(e))
            dev.matches[expr] = m
        if isinstance(m, _RuntimeFailure):
            where = f"class {req.class_name}" if in_class else f"claim {self.labels[req.claim_index]}"
            raise AllocationError(
                f"{where}: selector #{index} on device {dev.ident}: CEL runtime error: {m.message}"
            )
        return bool(m)

    def selectable(self, req: _Req, dev: Device) -> bool:
        if not self.f.binding_and_status and dev.has_binding_conditions:
            if self.trace is not None:
                self._reject(
                    ReasonCode.BINDING_CONDITIONS_DISABLED,
                    req,
                    dev,
                    f"device {dev.ident} has binding conditions, but DRADeviceBindingConditions/DRAResourceClaimDeviceStatus are disabled",
                )
            return False
        for i, expr in enumerate(req.class_selectors):
            if not self._matches(expr, dev, req, i, True):
                if self.trace is not None:
                    self._reject(
                        ReasonCode.CLASS_SELECTOR_FALSE,
                        req,
                        dev,
                        f"class {req.class_name}: selector #{i} is false for device {dev.ident}: {expr}",
                        selector=i,
                        expression=expr,
                    )
                return False
        for i, expr in enumerate(req.selectors):
            if not self._matches(expr, dev, req, i, False):
                if self.trace is not None:
                    self._reject(
                        ReasonCode.REQUEST_SELECTOR_FALSE,
                        req,
                        dev,
                        f"request {req.full_name}: selector #{i} is false for device {dev.ident}: {expr}",
                        selector=i,
                        expression=expr,
                    )
                return False
        if dev.slice.per_device:
            ok = self.per_device_node.get(id(dev))
            if ok is None:
                if not dev.node_name and not dev.all_nodes and dev.node_selector is not None:
                    error = nodeselector.parse_error(dev.node_selector)
                    if error:
                        raise AllocationError(error)
                ok = node_matches(self.node, dev.node_name, dev.all_nodes, dev.node_selector)
                self.per_device_node[id(dev)] = ok
            if not ok:
                if self.trace is not None:
                    self._reject(
                        ReasonCode.NODE_MISMATCH,
                        req,
                        dev,
                        f"device {dev.ident} is not available on node {self.node_name}",
                    )
                return False
        return True

    # -- consumable capacity ---------------------------------------------------------------

    def capacity(self, req: _Req, dev: Device, static: bool = False) -> dict[str, Quantity] | None:
        """What the device would consume for the request, or ``None`` if it cannot serve it now.

        Upstream's ``CmpRequestOverCapacity``: every requested name must be a capacity of the
        device (exact name); each capacity's amount is the request rounded by the policy, or the
        policy default, or the whole capacity; it must satisfy the policy and fit next to what
        earlier claims (``state``) and this run (``allocating_cap``) consume.  ``static`` leaves
        both out, as upstream's precheck of ``All`` requests does.
        """
        requests = req.capacity_requests or {}
        if not requests:
            bare = dev.bare_consumption()
            if bare is not None and (
                static or (dev.key not in self.state.aggregated and dev.key not in self.allocating_cap)
            ):
                # Nothing asked, no policy, nothing consumed yet: every capacity in full fits.
                return bare
        caps = dev.capacity
        for name in requests:
            if name not in caps:
                if self.trace is not None:
                    self._reject(
                        ReasonCode.CAPACITY_MISSING,
                        req,
                        dev,
                        f"device {dev.ident} has no capacity {name}",
                        capacity=name,
                    )
                return None
        consumed: dict[str, Quantity] = {}
        for name, entry in caps.items():
            asked = requests.get(name)
            consumed[name] = _consumed_amount(None if asked is None else quantity_of(asked), entry)
        agg = {} if static else self.state.aggregated.get(dev.key) or {}
        pending = {} if static else self.allocating_cap.get(dev.key) or {}
        for name, entry in caps.items():
            amount = consumed[name]
            if _violates_policy(amount, entry.policy):
                if self.trace is not None:
                    self._reject(
                        ReasonCode.CAPACITY_POLICY,
                        req,
                        dev,
                        f"capacity {name} of device {dev.ident}: {_human(amount)} is not allowed by the device's request policy",
                        capacity=name,
                        amount=str(amount),
                    )
                return None
            total = amount if name not in agg else agg[name].add(amount)
            if name in pending:
                total = total.add(pending[name])
            if total > entry.quantity:
                if self.trace is not None:
                    left = entry.quantity.sub(total.sub(amount))
                    self._reject(
                        ReasonCode.CAPACITY_EXCEEDED,
                        req,
                        dev,
                        f"capacity {name} of device {dev.ident}: needs {_human(amount)}, {_human(left)} left",
                        capacity=name,
                        needs=_human(amount),
                        left=_human(left),
                        total=entry.value_text,
                    )
                return None
        return consumed

    # -- counters --------------------------------------------------------------------------

    def _available(self, pool: Pool) -> dict[str, dict[str, Quantity]]:
        pid = (pool.driver, pool.name)
        avail = self.available_counters.get(pid)
        if avail is None:
            avail = {name: dict(counters) for name, counters in pool.counter_sets.items()}
            for s in pool.device_slices + pool.other_slices:
                for d in s.devices:
                    if not d.counter_use or not self.state.is_allocated(d.key):
                        continue
                    for set_name, counters in d.counter_use:
                        cs = avail.get(set_name)
                        if cs is None:
                            continue
                        for cn, v in counters:
                            if cn in cs:
                                cs[cn] = cs[cn].sub(v)  # may go negative: "nothing left"
            self.available_counters[pid] = avail
        return avail

    def _reserve_counters(self, req: _Req, dev: Device) -> bool:
        pid = (dev.driver, dev.pool)
        pool = self.pool_by_id[pid]
        avail = self._available(pool)
        used = self.consumed_counters.setdefault(pid, {})
        for set_name, counters in dev.counter_use:
            u = used.setdefault(set_name, {})
            for cn, v in counters:
                u[cn] = quantity_sum(u.get(cn), v)
        for set_name, available in avail.items():
            u = used.get(set_name, {})
            for cn, have in available.items():
                if have < u.get(cn, _ZERO):
                    if self.trace is not None:
                        mine = dict(dict(dev.counter_use).get(set_name, ()))
                        need = mine.get(cn, _ZERO)
                        left = have.sub(u.get(cn, _ZERO).sub(need))
                        self._reject(
                            ReasonCode.COUNTERS_EXHAUSTED,
                            req,
                            dev,
                            f"counter {cn} of set {set_name}: needs {_human(need)}, {_human(left)} left",
                            counter_set=set_name,
                            counter=cn,
                            needs=_human(need),
                            left=_human(left),
                        )
                    self._release_counters(dev)
                    return False
        return True

    def _release_counters(self, dev: Device) -> None:
        used = self.consumed_counters[(dev.driver, dev.pool)]
        for set_name, counters in dev.counter_use:
            u = used[set_name]
            for cn, v in counters:
                u[cn] = u[cn].sub(v)

    # -- allocateDevice --------------------------------------------------------------------

    def allocate_device(
        self, req: _Req, dev: Device, must: bool, amounts: dict[str, Quantity] | None = None
    ) -> Callable[[], None] | None:
        """Check availability and constraints; on success record the device and return its undo.

        ``amounts``: :meth:`capacity` for (req, dev) when the caller has just computed it (it
        depends on nothing this method changes before using it), else ``None``.
        """
        # Upstream's allocateDevice checks in this order, cheapest first, and reports the
        # first failure: in use, counters, taints, constraints, then marks the device.  A
        # device that allows multiple allocations (DRAConsumableCapacity) is never "in use";
        # its capacity is what runs out instead.
        ci = req.claim_index
        key = dev.key
        multi = self.f.consumable_capacity and dev.allow_multiple
        taking = self.allocating.get(key)
        # An admin-access request may use a device others hold, but one claim must not get the
        # same device twice; every other request needs a device nobody holds or is taking.
        if not multi and req.admin and taking and ci in taking:
            if self.trace is not None:
                self._reject(
                    ReasonCode.ADMIN_SAME_CLAIM,
                    req,
                    dev,
                    f"device {dev.ident} is already allocated to this claim",
                )
            return None
        if not req.admin and (key in self.state.devices or taking):
            if self.trace is not None:
                self._reject(ReasonCode.DEVICE_IN_USE, req, dev, f"device {dev.ident} is in use")
            return None
        # A device that consumes shared counters cannot be allocated while
        # DRAPartitionableDevices is off: nothing would account for the counters.
        if not self.f.partitionable_devices and dev.counter_use:
            if self.trace is not None:
                self._reject(
                    ReasonCode.PARTITIONABLE_DISABLED,
                    req,
                    dev,
                    f"device {dev.ident} consumes shared counters, but DRAPartitionableDevices is disabled",
                )
            return None
        # Shared counters: a multi-allocatable device pays its counters once, on its first
        # share, so they are skipped when upstream's deviceCapacityInUse holds: aggregated
        # capacity, any persisted share, or a share taken earlier in this run.
        skip_counters = multi and (
            key in self.state.aggregated or key in self.state.shared_devices or key in self.allocating_cap
        )
        counters_reserved = False
        if not skip_counters and dev.counter_use:
            if not self._reserve_counters(req, dev):
                return None
            counters_reserved = True
        # DRADeviceTaints: a NoSchedule or NoExecute taint must be tolerated by the request;
        # a failure here releases the counters just reserved.
        if self.f.device_taints:
            for taint in dev.taints:
                if taint.get("effect") in DEVICE_TAINT_EFFECTS and not any(
                    tolerates_device_taint(t, taint) for t in req.tolerations
                ):
                    if self.trace is not None:
                        self._reject(
                            ReasonCode.TAINT_NOT_TOLERATED,
                            req,
                            dev,
                            f"device {dev.ident} has taint {taint.get('key', '')}={taint.get('value', '')}:{taint.get('effect')} that the request does not tolerate",
                            key=taint.get("key", ""),
                            value=taint.get("value", ""),
                            effect=taint.get("effect"),
                        )
                    if counters_reserved:
                        self._release_counters(dev)
                    return None
        # The claim's constraints that apply to this request (computed once per request): each
        # is offered the device's attribute and may refuse it; on refusal the constraints
        # already told are rolled back.  For allocationMode All (``must``) a refusal is
        # upstream's hard error, since no other device could take this one's place.
        applicable = req.constraints
        if applicable is None:
            applicable = req.constraints = [
                c for c in self.constraints[ci] if c.applies(req.name, req.parent)
            ]
        added: list[Constraint] = []
        for constraint in applicable:
            try:
                attr = dev.attribute(constraint.attribute)
            except AllocationError as e:
                raise AllocationError(
                    f"claim {self.labels[ci]}, request {req.name}: device {dev.ident}: {e}"
                ) from None
            if not constraint.add(attr):
                for c in reversed(added):
                    c.remove()
                if counters_reserved:
                    self._release_counters(dev)
                if self.trace is not None:
                    if attr is None:
                        self._reject(
                            ReasonCode.MISSING_ATTRIBUTE,
                            req,
                            dev,
                            f"device {dev.ident} has no attribute {constraint.attribute} required by {constraint.describe()}",
                            constraint=constraint.describe(),
                        )
                    else:
                        pinned = constraint.current() if isinstance(constraint, MatchAttribute) else ""
                        self._reject(
                            ReasonCode.CONSTRAINT_MISMATCH,
                            req,
                            dev,
                            f"device {dev.ident}: {constraint.attribute}={attr[1]} violates {constraint.describe()}"
                            + (f" (devices so far have {pinned})" if pinned else ""),
                            constraint=constraint.describe(),
                            value=str(attr[1]),
                        )
                if must:
                    raise AllocationError(
                        f"claim {self.labels[ci]}, request {req.name}: cannot add device {dev.ident} because a claim constraint would not be satisfied"
                    )
                return None
            added.append(constraint)
        # From here the device counts as taken: exclusive devices are marked as allocating for
        # this claim; multi-allocatable ones get a share ID and add the consumed capacity to
        # this run's pending total, which later capacity checks see.
        marked = False
        if not multi:
            self.allocating.setdefault(key, set()).add(ci)
            marked = True
        consumed: dict[str, Quantity] | None = None
        share_id: str | None = None
        cap_inserted = False
        cap_existed = False
        if self.f.consumable_capacity:
            if amounts is None:
                amounts = self.capacity(req, dev)
            if amounts is None:
                if marked:
                    self.allocating[key].discard(ci)
                for c in reversed(added):
                    c.remove()
                if counters_reserved:
                    self._release_counters(dev)
                return None
            if multi:
                consumed = dict(amounts)
                share_id = self.ids.new_id()
                cap_existed = key in self.allocating_cap
                pending = self.allocating_cap.setdefault(key, {})
                for name, v in amounts.items():
                    pending[name] = quantity_sum(pending.get(name), v)
                cap_inserted = True
        # Record the result; ``undo`` reverses every step above in the opposite order, so a
        # backtracking caller leaves the run exactly as it found it.
        results = self.results[ci]
        results.append(_Result(req, dev, req.admin, share_id, consumed if consumed else None))
        n_before = len(results) - 1

        def undo() -> None:
            del results[n_before:]
            if cap_inserted and consumed is not None:
                pending = self.allocating_cap[key]
                for name, v in consumed.items():
                    if name in pending:
                        pending[name] = pending[name].sub(v)
                if all(v.is_zero() for v in pending.values()):
                    if cap_existed:
                        pending.clear()
                    else:
                        del self.allocating_cap[key]
            elif cap_inserted and not cap_existed:
                self.allocating_cap.pop(key, None)
            if marked:
                self.allocating[key].discard(ci)
            for c in reversed(added):
                c.remove()
            if counters_reserved:
                self._release_counters(dev)

        return undo

    # -- phase 4: the search ---------------------------------------------------------------

    def allocate_one(self, pos: _Pos) -> bool:
        """Upstream's allocateOne: place the device at ``pos``, then recurse for the next one.

        Returns whether every claim from ``pos`` on is complete (first solution wins, as
        upstream without scoring); a ``False`` return has undone everything it placed.
        Raises :class:`_MaxSizeExceeded` to its firstAvailable caller and :class:`_Timeout`.
        """
        ci, ri, si, di, in_sub, start = pos
        # Every call is one upstream step (Stats.NumAllocateOneInvocations); the deadline plays
        # the part of upstream's context cancellation, checked every DEADLINE_EVERY steps.
        self.steps += 1
        if (
            self.deadline is not None
            and self.steps % DEADLINE_EVERY == 0
            and self.clock.monotonic() > self.deadline
        ):
            raise _Timeout
        # Past the last claim: a complete solution.  Upstream would compare it with the best so
        # far if it scored; it does not, so the first one found is the answer.
        if ci >= len(self.claims):
            return True
        # Past this claim's last request: continue with the next claim.  A result limit hit in
        # a later claim means no alternative here can help, so it is just a failure now.
        entries = self.reqs[ci]
        if ri >= len(entries):
            try:
                return self.allocate_one(_pos((ci + 1, 0, 0, 0, False, 0)))
            except _MaxSizeExceeded:
                return False
        # A firstAvailable request (a list of subrequests): try each subrequest in order, the
        # first one that leads to a complete solution wins and is remembered for the results.
        # A subrequest that would exceed the 32-result limit is skipped, not fatal; only when
        # every subrequest does is the limit passed up, as upstream's allocationLimitExceeded.
        entry = entries[ri]
        if isinstance(entry, list):
            if not in_sub:
                all_exceeded = True
                for k in range(len(entry)):
                    try:
                        ok = self.allocate_one(_pos((ci, ri, k, di, True, 0)))
                    except _MaxSizeExceeded:
                        if self.trace is not None:
                            self._reject(
                                ReasonCode.RESULT_LIMIT,
                                entry[k],
                                None,
                                f"request {entry[k].full_name}: would exceed {MAX_RESULTS} devices per claim",
                            )
                        continue
                    all_exceeded = False
                    if ok:
                        self.selected[ci][ri] = k
                        return True
                if all_exceeded:
                    raise _MaxSizeExceeded
                return False
            req = entry[si]
        else:
            req = entry
        # An All request whose device list came out empty in the pre-check cannot be met.
        if req.all_devices is not None and not req.all_devices:
            return False
        # The request (or subrequest) has its devices: continue with the next request, no
        # longer inside a subrequest.
        if di >= req.num_devices:
            return self.allocate_one(_pos((ci, ri + 1, 0, 0, False, 0)))
        # Results so far, plus what this request still needs (its devices already placed are
        # counted once), must stay within AllocationResultsMaxSize.  Upstream returns an error
        # rather than false so that a firstAvailable caller can try a smaller subrequest.
        if len(self.results[ci]) + req.num_devices - di > MAX_RESULTS:
            raise _MaxSizeExceeded
        # allocationMode All: the devices are known from the pre-check; each must be usable
        # (must=True turns a violated constraint into upstream's error), no alternative exists.
        if req.all_devices is not None:
            dev = req.all_devices[di]
            self.considered += 1
            undo = self.allocate_device(req, dev, True)
            if undo is None:
                if self.trace is not None:
                    self._reject(
                        ReasonCode.ALL_MODE_BLOCKED,
                        req,
                        dev,
                        f"request {req.full_name} asks for all devices, but device {dev.ident} cannot be allocated",
                    )
                return False
            try:
                done = self.allocate_one(_pos((ci, ri, si, di + 1, in_sub, 0)))
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        # ExactCount: walk the node's devices in upstream's pool and slice order, trying each
        # candidate as this request's device ``di`` and recursing; on failure roll back and try
        # the next.  ``start`` resumes after the device chosen for ``di - 1`` (upstream's
        # deviceLocation start index), so one request's devices are tried as combinations,
        # never as permutations of a set already tried.
        # The locals below hoist attribute lookups out of this hot loop.
        devices = self.pools.devices
        state_devices = self.state.devices
        allocating = self.allocating
        consumable = self.f.consumable_capacity
        admin = req.admin
        memo = req.selectable_memo if self.trace is None else None
        bare_ok = not req.capacity_requests  # capacity(): the no-request, no-policy fast path
        aggregated = self.state.aggregated
        pending_caps = self.allocating_cap
        for idx in range(start, len(devices)):
            dev = devices[idx]
            key = dev.key
            self.considered += 1
            # The in-use check is cheap, so it comes first (as upstream): an admin request may
            # share an allocated device but not take one twice for the same claim.
            if admin:
                taking = allocating.get(key)
                if taking and ci in taking:
                    if self.trace is not None:
                        self._reject(
                            ReasonCode.ADMIN_SAME_CLAIM,
                            req,
                            dev,
                            f"device {dev.ident} is already allocated to this claim",
                        )
                    continue
            elif key in state_devices or allocating.get(key):
                if self.trace is not None:
                    self._reject(ReasonCode.DEVICE_IN_USE, req, dev, f"device {dev.ident} is in use")
                continue
            # Next the class and request selectors (CEL), memoised per request and device when
            # no trace wants each rejection reported again.
            if memo is None:
                if not self.selectable(req, dev):
                    continue
            else:
                known = memo.get(dev)
                if known is None:
                    known = memo[dev] = self.selectable(req, dev)
                if not known:
                    continue
            # Then consumable capacity (upstream's capacity check before allocateDevice).
            amounts = None
            if consumable:
                if bare_ok and dev._has_policy is False and key not in aggregated and key not in pending_caps:
                    amounts = dev._bare  # what capacity() returns here, without the call
                else:
                    amounts = self.capacity(req, dev)
                    if amounts is None:
                        continue
            # Finally treat the device as allocated (counters, taints, constraints) and move on
            # to the next device; a complete solution below ends the search, otherwise roll
            # back and try the next candidate.
            undo = self.allocate_device(req, dev, False, amounts)
            if undo is None:
                continue
            try:
                done = self.allocate_one(_pos((ci, ri, si, di + 1, in_sub, idx + 1)))
            except BaseException:
                undo()
                raise
            if done:
                return True
            undo()
            if self.trace is not None:
                self._reject(
                    ReasonCode.BACKTRACKED,
                    req,
                    dev,
                    f"device {dev.ident} fits request {req.full_name}, but no complete solution includes it",
                )
        # No candidate led to a solution: there is none from here.
        return False

    # -- phase 5: results ------------------------------------------------------------------

    def build_results(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for ci, claim in enumerate(self.claims):
            devices = (claim.get("spec") or {}).get("devices") or {}
            requests = devices.get("requests") or []
            results = []
            for r in self.results[ci]:
                d: dict[str, Any] = {
                    "request": r.req.full_name,
                    "driver": r.device.driver,
                    "pool": r.device.pool,
                    "device": r.device.name,
                }
                if r.admin:
                    d["adminAccess"] = True
                if r.req.tolerations:
                    d["tolerations"] = [copy.deepcopy(dict(t)) for t in r.req.tolerations]
                if self.f.binding_and_status:
                    if r.device.raw.get("bindingConditions"):
                        d["bindingConditions"] = list(r.device.raw["bindingConditions"])
                    if r.device.raw.get("bindingFailureConditions"):
                        d["bindingFailureConditions"] = list(r.device.raw["bindingFailureConditions"])
                if r.share_id:
                    d["shareID"] = r.share_id
                if r.consumed:
                    d["consumedCapacity"] = {name: str(q) for name, q in r.consumed.items()}
                results.append(d)
            chosen: list[_Req] = []
            for ri, entry in enumerate(self.reqs[ci]):
                chosen.append(entry[self.selected[ci].get(ri, 0)] if isinstance(entry, list) else entry)
            configs: list[dict[str, Any]] = []
            class_ranges: dict[str, tuple[int, int]] = {}
            for req in chosen:
                rng = class_ranges.get(req.class_name)
                if rng is not None:
                    for i in range(*rng):
                        configs[i]["requests"].append(req.full_name)
                    continue
                begin = len(configs)
                for cfg in (req.device_class.get("spec") or {}).get("config") or []:
                    entry_cfg = {"source": "FromClass", "requests": [req.full_name]}
                    entry_cfg.update(
                        {k: copy.deepcopy(v) for k, v in cfg.items() if k not in ("source", "requests")}
                    )
                    configs.append(entry_cfg)
                class_ranges[req.class_name] = (begin, len(configs))
            for cfg in devices.get("config") or []:
                names = cfg.get("requests") or []
                body = {k: copy.deepcopy(v) for k, v in cfg.items() if k != "requests"}
                if not names:
                    configs.append({"source": "FromClaim", **body})
                    continue
                for ri, request in enumerate(requests):
                    if request.get("name") in names:
                        configs.append({"source": "FromClaim", "requests": list(names), **body})
                        break
                    entry = self.reqs[ci][ri]
                    if isinstance(entry, list) and entry[self.selected[ci].get(ri, 0)].full_name in names:
                        configs.append({"source": "FromClaim", "requests": list(names), **body})
                        break
            for c in configs:
                names = c.get("requests")
                if not names:
                    continue
                applies_to_all = all(
                    request.get("name") in names
                    or (isinstance(self.reqs[ci][ri], list) and chosen[ri].full_name in names)
                    for ri, request in enumerate(requests)
                )
                if applies_to_all:
                    del c["requests"]
            allocation: dict[str, Any] = {"devices": {"results": results}}
            if configs:
                allocation["devices"]["config"] = configs
            selector = self._node_selector(self.results[ci], (claim.get("metadata") or {}).get("name", ""))
            if selector is not None:
                allocation["nodeSelector"] = selector
            out.append(allocation)
        return out

    def _node_selector(self, results: list[_Result], claim_name: str) -> dict[str, Any] | None:
        fields_: list[dict[str, Any]] = []
        exprs: list[dict[str, Any]] = []
        for r in results:
            dev = r.device
            if dev.slice.per_device:
                node_name, selector = dev.node_name, dev.node_selector
            else:
                node_name, selector = dev.slice.node_name, dev.slice.node_selector
            if node_name or dev.binds_to_node:
                return {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": [self.node_name]}
                            ]
                        }
                    ]
                }
            if selector is not None:
                terms = selector.get("nodeSelectorTerms") or []
                if len(terms) > 1:
                    raise AllocationError(
                        f"create NodeSelector for claim {claim_name}: unsupported ResourceSlice.NodeSelector with {len(terms)} terms"
                    )
                if terms:
                    _merge_requirements(terms[0].get("matchFields") or [], fields_)
                    _merge_requirements(terms[0].get("matchExpressions") or [], exprs)
        if not fields_ and not exprs:
            return None
        term: dict[str, Any] = {}
        if exprs:
            term["matchExpressions"] = exprs
        if fields_:
            term["matchFields"] = fields_
        return {"nodeSelectorTerms": [term]}


def _merge_requirements(source: Sequence[Mapping[str, Any]], into: list[dict[str, Any]]) -> None:
    for req in source:
        values = set(req.get("values") or [])
        if any(
            r.get("key") == req.get("key")
            and r.get("operator") == req.get("operator")
            and set(r.get("values") or []) == values
            for r in into
        ):
            continue
        into.append(copy.deepcopy(dict(req)))


def _consumed_amount(requested: Quantity | None, entry: CapacityEntry) -> Quantity:
    """Upstream's ``calculateConsumedCapacity`` (integer ``Value()`` arithmetic for steps)."""
    policy = entry.policy
    if requested is None:
        if policy and policy.get("default") is not None:
            return quantity_of(policy["default"])
        return entry.quantity
    if not policy:
        return requested
    rng = policy.get("validRange")
    if rng is not None and rng.get("min") is not None:
        lo = quantity_of(rng["min"])
        if requested < lo:
            return lo
        if rng.get("step") is None:
            return requested
        step = quantity_of(rng["step"])
        req_i, step_i, min_i = requested.value(), step.value(), lo.value()
        added = req_i - min_i
        n = _go_div(added, step_i)
        if _go_mod(added, step_i) != 0:
            n += 1
        return Quantity.from_int(min_i + step_i * n, step.format)
    values = policy.get("validValues")
    if values is not None:
        for v in values:
            vq = quantity_of(v)
            if requested <= vq:
                return vq
        return requested
    return requested


def _go_div(a: int, b: int) -> int:
    """Go's truncating integer division."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _go_mod(a: int, b: int) -> int:
    """Go's ``%`` (sign of the dividend)."""
    return a - b * _go_div(a, b)


def _violates_policy(amount: Quantity, policy: Mapping[str, Any] | None) -> bool:
    """Upstream's ``violatesPolicy``."""
    if not policy:
        return False
    if policy.get("default") is not None and _go_equal(amount, quantity_of(policy["default"])):
        return False
    rng = policy.get("validRange")
    if rng is not None:
        if rng.get("max") is not None and amount > quantity_of(rng["max"]):
            return True
        if rng.get("step") is not None:
            step = quantity_of(rng["step"]).value()
            lo = quantity_of(rng.get("min") or "0").value()
            if step and _go_mod(amount.value() - lo, step) != 0:
                return True
        return False
    values = policy.get("validValues") or []
    if values:
        return all(amount.cmp(quantity_of(v)) != 0 for v in values)
    return False


# --- public entry point -----------------------------------------------------------------------


_ATOMS = (str, int, float, bool, type(None))


def _copy_tree(value: Any) -> Any:
    """A deep copy of a JSON-shaped tree (plain dicts, lists and scalars).

    Claims come from JSON/YAML, and ``copy.deepcopy`` (a memo dict and a dispatch per object)
    was a quarter of a one-device allocation.  Anything that is not a plain JSON value still
    goes through ``deepcopy``.  Unlike ``deepcopy``, a sub-tree that occurs twice is copied
    twice (equal values, no shared identity), which no reader of a claim can observe.
    """
    t = type(value)
    if t is dict:
        return {k: v if type(v) in _ATOMS else _copy_tree(v) for k, v in value.items()}
    if t is list:
        return [v if type(v) in _ATOMS else _copy_tree(v) for v in value]
    if t in _ATOMS:
        return value
    return copy.deepcopy(value)


def _copy_claim(claim: Mapping[str, Any]) -> dict[str, Any]:
    """``copy.deepcopy(dict(claim))`` for JSON-shaped claims (see :func:`_copy_tree`)."""
    return {k: v if type(v) in _ATOMS else _copy_tree(v) for k, v in claim.items()}


def allocate(
    *,
    node: Mapping[str, Any],
    slices: Sequence[Mapping[str, Any]],
    classes: Sequence[Mapping[str, Any]],
    claims: Sequence[Mapping[str, Any]],
    features: Features,
    timeout: float | None = 10.0,
    trace: Trace | None = None,
    inventory: Inventory | None = None,
    clock: Clock = SYSTEM_CLOCK,
    ids: IdSource | None = None,
) -> AllocationOutcome:
    """Allocate every claim without ``status.allocation`` together, in input order, on ``node``.

    ``slices``/``classes`` are ignored when an ``inventory`` is given (it already indexes them).
    Claims with ``status.allocation`` only mark their devices as in use.  Inputs are never
    modified; the returned claims are deep copies.  ``clock`` times the deadline and the stats;
    ``ids`` mints the share IDs of consumable-capacity shares (default: random UUIDs, as
    upstream's allocator does).
    """
    started = clock.monotonic()
    inv = inventory if inventory is not None else Inventory(slices, classes)
    to_allocate = [c for c in claims if not has_allocation(c)]
    in_use = [c for c in claims if has_allocation(c)]
    if in_use:
        state = inv.state.copy()
        for c in in_use:
            state.add_claim(c, consumable=features.consumable_capacity)
    else:
        state = inv.state
    pools = inv.pools_for(node, features)
    deadline = started + timeout if timeout else None
    run = _Run(inv, features, node, pools, to_allocate, state, deadline, trace, clock, ids or RandomIds())
    copies = tuple(_copy_claim(c) for c in to_allocate)

    def finish(
        status: Literal["allocated", "unsatisfiable", "error"],
        message: str,
        results: Sequence[dict[str, Any]] = (),
    ) -> AllocationOutcome:
        stats = SearchStats(
            steps=run.steps, devices_considered=run.considered, elapsed_s=clock.monotonic() - started
        )
        return AllocationOutcome(
            status=status, claims=copies, message=message, results=tuple(results), stats=stats
        )

    if pools.error:
        return finish("error", pools.error)
    try:
        run.precheck()
        done = run.allocate_one(_pos((0, 0, 0, 0, False, 0)))
        if not done:
            if trace is not None:
                _explain_leftovers(run, trace)
            if any(p.invalid for p in pools.pools):
                return finish("error", "invalid resource pools were encountered")
            return finish("unsatisfiable", UNSATISFIABLE_MESSAGE)
        results = run.build_results()
    except _Timeout:
        return finish("error", TIMEOUT_MESSAGE)
    except AllocationError as e:
        return finish("error", str(e))
    except RecursionError:  # pragma: no cover - needs > ~900 devices in one pod
        return finish("error", "allocation search too deep")
    for c, result in zip(copies, results, strict=True):
        c.setdefault("status", {})["allocation"] = result
    if trace is not None:
        _explain_leftovers(run, trace)
    return finish("allocated", "", results)


def allocate_snapshot(
    snapshot: ClusterSnapshot,
    node: Mapping[str, Any] | str,
    *,
    features: Features,
    timeout: float | None = 10.0,
    trace: Trace | None = None,
) -> AllocationOutcome:
    """:func:`allocate` on a snapshot: its unallocated claims, in snapshot order, on ``node``.

    ``node`` is a Node object or a name; a name the snapshot does not hold stands for a Node
    with that name and no labels (its node-local slices may still name it).
    """
    if isinstance(node, str):
        node = snapshot.find("Node", node) or {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}}
    return allocate(
        node=node,
        slices=snapshot.slices,
        classes=snapshot.classes,
        claims=snapshot.claims,
        features=features,
        timeout=timeout,
        trace=trace,
    )


def _explain_leftovers(run: _Run, trace: Trace) -> None:
    """Give every device that was not chosen at least one reason."""
    chosen = {r.device.ident for results in run.results for r in results}
    for note in run.pools.notes:
        for dev in note.slice.devices:
            if dev.ident in chosen or trace.has_reason(dev.ident):
                continue
            if note.kind == "node-mismatch":
                trace.reject(
                    ReasonCode.NODE_MISMATCH,
                    f"slice {note.slice.name} does not serve node {run.node_name}",
                    device=dev.ident,
                    detail={"slice": note.slice.name},
                )
            elif note.kind == "feature-disabled":
                trace.reject(
                    ReasonCode.SLICE_FEATURE_DISABLED,
                    f"slice {note.slice.name} uses shared counters or per-device node selection, but DRAPartitionableDevices is disabled",
                    device=dev.ident,
                    detail={"slice": note.slice.name},
                )
            else:
                trace.reject(
                    ReasonCode.POOL_OBSOLETE,
                    f"pool {dev.driver}/{dev.pool} is being replaced by a newer generation",
                    device=dev.ident,
                    detail={"slice": note.slice.name},
                )
    for other in run.inv.slices:
        if other.node_name and other.node_name != run.node_name:
            for dev in other.devices:
                if dev.ident not in chosen and not trace.has_reason(dev.ident):
                    trace.reject(
                        ReasonCode.NODE_MISMATCH,
                        f"slice {other.name} serves node {other.node_name}, not {run.node_name}",
                        device=dev.ident,
                        detail={"slice": other.name},
                    )
    for pool in run.pools.pools:
        for s in pool.device_slices:
            for dev in s.devices:
                if dev.ident in chosen or trace.has_reason(dev.ident):
                    continue
                if pool.incomplete:
                    trace.reject(
                        ReasonCode.POOL_INCOMPLETE,
                        f"pool {pool.ident} is incomplete (not all {s.count} slices of generation {s.generation} are published)",
                        device=dev.ident,
                    )
                elif pool.invalid:
                    trace.reject(
                        ReasonCode.POOL_INVALID,
                        f"pool {pool.ident} is invalid: {pool.invalid_reason}",
                        device=dev.ident,
                        detail={"reason": pool.invalid_reason},
                    )
                else:
                    trace.reject(
                        ReasonCode.NOT_NEEDED,
                        f"device {dev.ident} was not needed: the search ended before reaching it",
                        device=dev.ident,
                    )
