"""SimCluster: the in-memory API objects a run changes (nodes, pods, claims) and their versions.

The cluster is the simulator's stand-in for the API server plus the scheduler's caches.
Every change that can alter a Filter answer bumps a version, so the scheduler can keep the
allocator's per-node answers until they may have changed instead of asking again per pod:

* a node's own devices changed (a claim on one of its node-local pools was allocated or
  released) -> that node's answer cache is dropped;
* a device of a pool that is not node-local changed -> ``shared_version`` moves and every
  cached answer is stale;
* anything at all changed -> ``version`` moves (used to reuse a whole failed attempt for
  identical pods, see ``scheduler``);
* a node's pods or devices changed -> its position is appended to ``changes`` (the fast
  scheduler path re-examines exactly those nodes, see ``fastpath``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from drakit.corev1 import CPU, MEMORY, PODS, node_allocatable
from drakit.sim.allocation import Allocator, NodeFit
from drakit.sim.scenario import PodClaim

# Scheduler defaults for pods that request nothing (pkg/scheduler/util: DefaultMilliCPURequest,
# DefaultMemoryRequest): scoring counts every pod as at least this much, so empty nodes win.
DEFAULT_MILLI_CPU = 100
DEFAULT_MEMORY = 200 * 1024 * 1024

MAX_RESERVED_FOR = 256
"""API validation limit of ``status.reservedFor`` (ResourceClaimReservedForMaxSize)."""


@dataclass(slots=True)
class SimNode:
    index: int
    name: str
    obj: dict[str, Any]
    template: str
    alloc_cpu: int
    alloc_mem: int
    max_pods: int
    pods: int = 0
    req_cpu: int = 0
    req_mem: int = 0
    nz_cpu: int = 0
    nz_mem: int = 0
    # claims signature -> (shared_version, answer, raw DRA score)
    cache: dict[str, tuple[int, NodeFit, int]] = field(default_factory=dict)


@dataclass
class SimClaim:
    key: str  # "<namespace>/<name>"
    obj: dict[str, Any]
    generated: bool
    owner_uid: str = ""
    spec_sig: str = ""
    version: int = 0
    _view: dict[str, Any] | None = None

    def allocator_view(self) -> dict[str, Any]:
        """The claim as the allocator needs it: name, namespace and spec, without status.

        The allocator deep-copies every claim it is given; this keeps that copy small.  The
        view shares ``spec`` with the claim (nothing modifies a claim's spec).
        """
        view = self._view
        if view is None:
            meta = self.obj.get("metadata") or {}
            view = {"metadata": {k: meta[k] for k in ("name", "namespace") if k in meta}, "spec": self.obj.get("spec") or {}}
            self._view = view
        return view

    @property
    def name(self) -> str:
        return str(self.obj["metadata"]["name"])

    @property
    def namespace(self) -> str:
        return str(self.obj["metadata"].get("namespace") or "default")

    @property
    def allocation(self) -> dict[str, Any] | None:
        alloc: dict[str, Any] | None = (self.obj.get("status") or {}).get("allocation")
        return alloc

    @property
    def reserved_for(self) -> list[dict[str, Any]]:
        status = self.obj.setdefault("status", {})
        reserved: list[dict[str, Any]] = status.setdefault("reservedFor", [])
        return reserved


@dataclass
class SimPod:
    seq: int
    namespace: str
    name: str
    uid: str
    workload: str
    recipe: str
    profile: str
    arrival: float
    duration: float | None
    cpu: int
    mem: int
    claims: tuple[PodClaim, ...]
    claim_names: dict[str, str] = field(default_factory=dict)  # status.resourceClaimStatuses
    phase: str = "Pending"
    node: str | None = None
    bound_at: float | None = None
    finished_at: float | None = None
    message: str = ""
    reason: str = ""
    gated: bool = False
    attempts: int = 0
    devices: tuple[str, ...] = ()
    lane: Any = None  # the drakit.sim.lanes.Lane that holds this pod while it waits, if any
    lane_pos: int = 0

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def nz_cpu(self) -> int:
        return self.cpu or DEFAULT_MILLI_CPU

    @property
    def nz_mem(self) -> int:
        return self.mem or DEFAULT_MEMORY


def node_capacity(obj: Mapping[str, Any]) -> tuple[int, int, int]:
    """(cpu millicores, memory bytes, pods) from a Node's ``status.allocatable``."""
    alloc = node_allocatable(obj)
    return alloc.get(CPU, 0), alloc.get(MEMORY, 0), alloc[PODS]


class SimCluster:
    """Nodes, pods and claims of one run, plus the allocator that holds the in-use devices."""

    def __init__(self, nodes: list[dict[str, Any]], slices: list[dict[str, Any]], allocator: Allocator) -> None:
        self.allocator = allocator
        self.nodes: list[SimNode] = []
        self.node_by_name: dict[str, SimNode] = {}
        for i, obj in enumerate(nodes):
            meta = obj.get("metadata") or {}
            cpu, mem, pods = node_capacity(obj)
            labels = meta.get("labels") or {}
            # Nodes of one template and topology are alike (the run probes one of each).
            template = "/".join(v for k in ("drakit.dev/node-template", "drakit.dev/node-topology") if (v := labels.get(k, "")))
            n = SimNode(i, meta["name"], obj, template, cpu, mem, pods)
            self.nodes.append(n)
            self.node_by_name[n.name] = n
        # (driver, pool) -> owning node index, or -1 for pools that are not node-local.
        self.pool_owner: dict[tuple[str, str], int] = {}
        for s in slices:
            spec = s.get("spec") or {}
            pid = (spec.get("driver", ""), (spec.get("pool") or {}).get("name", ""))
            owner = self.node_by_name.get(spec.get("nodeName") or "")
            idx = owner.index if owner is not None else -1
            if self.pool_owner.get(pid, idx) != idx:
                idx = -1
            self.pool_owner[pid] = idx
        self.claims: dict[str, SimClaim] = {}
        self.pods: dict[str, SimPod] = {}
        self.version = 0
        self.shared_version = 0
        # Positions of nodes whose state changed, in order; entry i is change number
        # changes_base + i (the log is emptied from time to time, see Scheduler).
        self.changes: list[int] = []
        self.changes_base = 0

    # -- device state -------------------------------------------------------------------------

    def _touch(self, allocation: Mapping[str, Any]) -> None:
        self.version += 1
        for r in (allocation.get("devices") or {}).get("results") or []:
            owner = self.pool_owner.get((r.get("driver", ""), r.get("pool", "")), -1)
            if owner < 0:
                self.shared_version += 1
            else:
                self.nodes[owner].cache = {}
                self.changes.append(owner)

    def allocate_claim(self, claim: SimClaim, allocation: Mapping[str, Any], *, copy: bool = True) -> None:
        """Reserve: record the allocation and tell the allocator the devices are taken.

        ``copy=False`` stores the allocator's result itself: nothing changes an allocation
        once stored, and the node's cached answer that held it is dropped by this very call.
        """
        claim.obj.setdefault("status", {})["allocation"] = _copy(allocation) if copy else allocation
        claim.version += 1
        self.allocator.commit(claim.obj)
        self._touch(allocation)

    def deallocate_claim(self, claim: SimClaim) -> None:
        """Clear ``status.allocation`` (claim controller, PostFilter) and free the devices."""
        allocation = claim.allocation
        if allocation is None:
            return
        self.allocator.release(claim.obj)
        status = claim.obj["status"]
        del status["allocation"]
        status.pop("reservedFor", None)
        claim.version += 1
        self._touch(allocation)

    def note_node_change(self, node: SimNode) -> None:
        """A pod was bound to ``node`` or left it."""
        self.version += 1
        self.changes.append(node.index)


def _copy(value: Any) -> Any:
    # Results are small JSON trees; a hand-rolled copy is several times faster than deepcopy.
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
