"""The run: a scenario replayed over time with the control plane around the allocator.

Numbered phases of :func:`run_scenario`:

1. expand node groups through the node templates; collect classes, templates, claims;
2. probe, on one empty node per node template, how many devices each class can select
   (utilisation denominators) and where each claim template would fit (stranded capacity);
3. commit claims that arrive already allocated;
4. the event loop: at each instant, pods finish first (claims released: generated claims
   deleted with their pod, shared claims deallocated when their last consumer goes), then
   pods arrive (the claim controller creates their claims), then the scheduling queue runs
   until every active pod has had an attempt; pods that fail wait in the unschedulable pool
   until devices or node capacity are freed;
5. results: per-pod outcomes, folded events, samples, stranded capacity.

Modelling choices (also in docs/scenarios.md): scheduling, binding and claim creation take no
simulated time; there is no back-off (a failed pod is retried as soon as something is freed,
in creation order); a finished pod is deleted at once.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from drakit.clock import SYSTEM_CLOCK, Clock, SeededIds
from drakit.corev1 import CPU, MEMORY, memory_bytes, pod_requests
from drakit.drivers.identity import product_of
from drakit.features import Features
from drakit.gostr import quote
from drakit.inventory import templates
from drakit.inventory.snapshot import key_of, name_of, namespace_of
from drakit.sim.admission import Admitter
from drakit.sim.allocation import Allocator, DrakitAllocator
from drakit.sim.cluster import SimClaim, SimCluster, SimPod
from drakit.sim.controller import (
    claim_from_template,
    deterministic_uid,
    generate_name,
    name_from_generate_name,
)
from drakit.sim.lanes import Lane
from drakit.sim.result import PodResult, QuotaSample, Sample, SimEvent, SimulationResult, Stranded
from drakit.sim.scenario import PodClaim, Scenario, Workload
from drakit.sim.scheduler import Scheduler, spec_signature
from drakit.sim.versions import ControlPlane

AllocatorFactory = Callable[[Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]], Features], Allocator]
Progress = Callable[[int, int], None]

_FINISH, _ARRIVE = 0, 1  # at equal times, releases happen before arrivals
_DeviceKey = tuple[str, str, str]


@dataclass(frozen=True)
class SimOptions:
    """How a run computes its answer; never what the answer is.

    ``fast=False`` schedules with the literal node-by-node Filter and per-node Score loop
    (the reference the fast path is tested against); both give byte-identical results.
    """

    fast: bool = True


@dataclass
class _Usage:
    """Bookkeeping for one allocated claim (utilisation and stranded capacity)."""

    start: float
    workload: str
    devices: list[tuple[_DeviceKey, str, str, int]] = field(default_factory=list)  # key, class, product, excess bytes


def _device_memory(device: Mapping[str, Any]) -> int:
    cap = (device.get("capacity") or {}).get("memory")
    if not isinstance(cap, dict):
        return 0
    try:
        return memory_bytes(cap.get("value", 0))
    except (TypeError, ValueError):
        return 0


def _class_of(spec: Mapping[str, Any], request: str) -> str:
    req, _, sub = request.partition("/")
    for r in (spec.get("devices") or {}).get("requests") or []:
        if r.get("name") != req:
            continue
        if sub:
            for s in r.get("firstAvailable") or []:
                if s.get("name") == sub:
                    return str(s.get("deviceClassName", ""))
        return str((r.get("exactly") or {}).get("deviceClassName", ""))
    return ""


MAX_PROBED_CHOICES = 64
"""Combinations of firstAvailable alternatives probed per template for stranded capacity;
beyond that a template's allocations are not counted as stranded."""


def _choices(spec: Mapping[str, Any]) -> list[tuple[str, ...]]:
    """Every combination of one alternative per firstAvailable request, as ``request/sub`` names."""
    import itertools

    per_request = [
        [f"{r.get('name')}/{sub.get('name')}" for sub in r["firstAvailable"]]
        for r in (spec.get("devices") or {}).get("requests") or []
        if r.get("firstAvailable")
    ]
    count = 1
    for alternatives in per_request:
        count *= len(alternatives)
    return list(itertools.product(*per_request)) if count <= MAX_PROBED_CHOICES else []


def _restrict(spec: Mapping[str, Any], choice: tuple[str, ...]) -> dict[str, Any]:
    """``spec`` with each firstAvailable request cut down to its alternative in ``choice``."""
    chosen = set(choice)
    requests = []
    for r in (spec.get("devices") or {}).get("requests") or []:
        if r.get("firstAvailable"):
            r = {**r, "firstAvailable": [s for s in r["firstAvailable"] if f"{r.get('name')}/{s.get('name')}" in chosen]}
        requests.append(r)
    return {**spec, "devices": {**(spec.get("devices") or {}), "requests": requests}}


def _chosen(spec: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """The alternatives an allocation took, in the order :func:`_choices` lists them."""
    taken = {str(r.get("request", "")) for r in results}
    out = []
    for r in (spec.get("devices") or {}).get("requests") or []:
        for sub in r.get("firstAvailable") or []:
            name = f"{r.get('name')}/{sub.get('name')}"
            if name in taken:
                out.append(name)
                break
    return tuple(out)


def _probe_claim(spec: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "drakit-sim-probe", "namespace": "default", "uid": "drakit-sim-probe"},
        "spec": spec,
    }


class Run:
    """State of one simulation; :func:`run_scenario` is the way to use it."""

    def __init__(
        self,
        scenario: Scenario,
        seed: int,
        allocator: AllocatorFactory | None = None,
        options: SimOptions | None = None,
        clock: Clock = SYSTEM_CLOCK,
        admitter: Admitter | None = None,
    ) -> None:
        self.scenario = scenario
        self.admitter = admitter
        self.units: dict[str, tuple[Workload, int]] = {}  # queued unit -> (workload, pod index or -1 for a Job)
        self.unit_of: dict[str, str] = {}  # pod key -> its queued unit (kind: Pod)
        self.quota_samples: list[QuotaSample] = []
        self.options = options or SimOptions()
        self.seed = seed
        self.names = random.Random(f"drakit-sim/names/{seed}")
        # Phase 1: objects.
        nodes: list[dict[str, Any]] = []
        slices: list[dict[str, Any]] = []
        for group in scenario.nodes:
            for i in range(group.count):
                node, *node_slices = templates.expand(group.template, f"{group.name_prefix}{i}", dict(group.labels), group.topology)
                nodes.append(node)
                slices.extend(node_slices)
        classes: list[dict[str, Any]] = []
        for std in scenario.standard_classes:
            classes.append(templates.nvidia_device_class() if std == templates.NVIDIA_DRIVER else templates.example_device_class())
        self.templates: dict[tuple[str, str], dict[str, Any]] = {}
        self._template_sigs: dict[tuple[str, str], str] = {}
        initial_claims: list[dict[str, Any]] = []
        self.manifest_pods: list[dict[str, Any]] = []
        for obj in scenario.objects:
            kind = obj.get("kind")
            if kind == "Node":
                nodes.append(obj)
            elif kind == "ResourceSlice":
                slices.append(obj)
            elif kind == "DeviceClass":
                classes.append(obj)
            elif kind == "ResourceClaimTemplate":
                self.templates[(namespace_of(obj), name_of(obj))] = obj
            elif kind == "ResourceClaim":
                initial_claims.append(obj)
            elif kind == "Pod":
                self.manifest_pods.append(obj)
        self.classes = {name_of(c): c for c in classes}
        self.slices = slices
        if self.admitter is not None:
            self.admitter.observe_inventory(self.classes, slices)  # counter quotas are charged from the slices
        ids = SeededIds(f"share/{seed}")  # the run's share IDs follow from its seed, like its names
        factory = allocator or (lambda s, c, f: DrakitAllocator(s, c, f, clock=clock, ids=ids))
        self.allocator = factory(slices, classes, scenario.features)
        self.cluster = SimCluster(nodes, slices, self.allocator)
        self.device_info: dict[_DeviceKey, tuple[str, int]] = {}
        for s in slices:
            spec = s.get("spec") or {}
            driver, pool = spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")
            for d in spec.get("devices") or []:
                self.device_info[(driver, pool, d.get("name", ""))] = (product_of(driver, d), _device_memory(d))
        self.control = ControlPlane.for_version(scenario.kubernetes_version)
        self.scheduler = Scheduler(
            self.cluster,
            self.classes,
            seed,
            fast=self.options.fast,
            control=self.control,
            prioritized_list=scenario.features.prioritized_list,
        )

        # Phase 2: probes on one empty node per node template (before anything is in use).
        groups: dict[str, list[int]] = {}
        for n in self.cluster.nodes:
            groups.setdefault(n.template or f"node:{n.name}", []).append(n.index)
        self.class_capacity: dict[str, int | None] = {}
        for cls in sorted(self.classes):
            total: int | None = 0
            spec = {"devices": {"requests": [{"name": "all", "exactly": {"deviceClassName": cls, "allocationMode": "All"}}]}}
            for members in groups.values():
                answer = self.allocator.fit(self.cluster.nodes[members[0]].obj, [_probe_claim(spec)])
                if answer.status == "error":
                    total = None
                    break
                if answer.status == "allocated" and total is not None:
                    total += len((answer.results[0].get("devices") or {}).get("results") or []) * len(members)
            self.class_capacity[cls] = total
        product_capacity: dict[str, int] = {}
        for product, _ in self.device_info.values():
            product_capacity[product] = product_capacity.get(product, 0) + 1
        self.product_capacity = product_capacity
        # Smallest device memory on which each claim template's spec fits, per choice of
        # firstAvailable alternatives (for stranded capacity): an allocation is measured against
        # what the alternative it was given accepts, so a first choice is never "waste" for
        # fitting a smaller device that only a later alternative would take.
        self.min_fit_memory: dict[tuple[str, tuple[str, ...]], int] = {}
        for tmpl in self.templates.values():
            spec = (tmpl.get("spec") or {}).get("spec") or {}
            sig = spec_signature(spec)
            for choice in _choices(spec):
                if (sig, choice) in self.min_fit_memory:
                    continue
                probe = [_probe_claim(_restrict(spec, choice))]
                best = 0
                for members in groups.values():
                    answer = self.allocator.fit(self.cluster.nodes[members[0]].obj, probe)
                    if answer.status != "allocated":
                        continue
                    mem = max(
                        (self.device_info.get((r.get("driver", ""), r.get("pool", ""), r.get("device", "")), ("", 0))[1]
                         for r in (answer.results[0].get("devices") or {}).get("results") or []),
                        default=0,
                    )
                    if mem and (best == 0 or mem < best):
                        best = mem
                self.min_fit_memory[(sig, choice)] = best

        # Phase 3: claims that exist up front (shared claims, possibly already allocated).
        self.usage: dict[str, _Usage] = {}
        self.class_alloc: dict[str, int] = {}
        self.product_alloc: dict[str, int] = {}
        self.stranded: dict[str, Stranded] = {}
        self.now = 0.0
        for obj in initial_claims:
            claim = SimClaim(key_of(obj), _copy_claim(obj), generated=False, spec_sig=spec_signature(obj.get("spec") or {}))
            self.cluster.claims[claim.key] = claim
            if claim.allocation is not None:
                self.allocator.commit(claim.obj)
                self.cluster._touch(claim.allocation)
                self._on_allocated(claim, f"claim:{claim.key}")

        self.events: list[SimEvent] = []
        self.queue: list[tuple[float, int, int, str, Any]] = []
        self._seq = 0
        self.pods: list[SimPod] = []
        self.active: list[tuple[int, int, SimPod | Lane]] = []  # (seq, lane generation, pod or lane)
        self.unschedulable: dict[int, SimPod] = {}
        self.lanes: dict[Any, Lane] = {}  # signature -> waiting identical pods (fast path only)
        self.running = 0
        self.samples: list[Sample] = []
        self.jobs: dict[str, list[int]] = {}  # job -> [created, completions]
        self.workloads = {w.name: w for w in scenario.workloads}

    # -- event queue ----------------------------------------------------------------------------

    def _push(self, time: float, order: int, kind: str, payload: Any) -> None:
        self._seq += 1
        heapq.heappush(self.queue, (time, order, self._seq, kind, payload))

    def _event(self, type_: str, reason: str, pod: SimPod, message: str) -> None:
        self.events.append(SimEvent(self.now, type_, reason, f"pod/{pod.namespace}/{pod.name}", message))

    # -- claims: bookkeeping for utilisation and stranded capacity ------------------------------

    def _on_allocated(self, claim: SimClaim, workload: str) -> None:
        alloc = claim.allocation or {}
        spec = claim.obj.get("spec") or {}
        results = (alloc.get("devices") or {}).get("results") or []
        need = self.min_fit_memory.get((claim.spec_sig, _chosen(spec, results)), 0)
        usage = _Usage(self.now, workload)
        for r in results:
            key = (r.get("driver", ""), r.get("pool", ""), r.get("device", ""))
            product, mem = self.device_info.get(key, (key[0], 0))
            cls = _class_of(spec, str(r.get("request", "")))
            excess = mem - need if need and mem > need else 0
            usage.devices.append((key, cls, product, excess))
            self.class_alloc[cls] = self.class_alloc.get(cls, 0) + 1
            self.product_alloc[product] = self.product_alloc.get(product, 0) + 1
        self.usage[claim.key] = usage

    def _on_released(self, claim: SimClaim) -> None:
        usage = self.usage.pop(claim.key, None)
        if usage is None:
            return
        self._account(usage, self.now)
        for _, cls, product, _ in usage.devices:
            self.class_alloc[cls] -= 1
            self.product_alloc[product] -= 1

    def _account(self, usage: _Usage, until: float) -> None:
        held = max(0.0, until - usage.start)
        for _, _, _, excess in usage.devices:
            if excess:
                s = self.stranded.get(usage.workload, Stranded())
                self.stranded[usage.workload] = Stranded(
                    s.devices + 1, s.device_seconds + held, s.excess_gib_hours + excess / 1024**3 * held / 3600
                )

    def _deallocate(self, claim: SimClaim) -> None:
        self._on_released(claim)
        self.cluster.deallocate_claim(claim)

    # -- pods -------------------------------------------------------------------------------------

    def _create_pod(self, w: Workload | None, name: str, namespace: str, claims: tuple[PodClaim, ...], *,
                    cpu: int, mem: int, duration: float | None, recipe: str, profile: str, workload: str) -> SimPod:
        pod = SimPod(
            seq=len(self.pods),
            namespace=namespace,
            name=name,
            uid=deterministic_uid(self.seed, "Pod", namespace, name),
            workload=workload,
            recipe=recipe,
            profile=profile,
            arrival=self.now,
            duration=duration,
            cpu=cpu,
            mem=mem,
            claims=claims,
        )
        self.pods.append(pod)
        self.cluster.pods[pod.key] = pod
        # The claim controller (syncPod): one claim per template entry, in order, before the
        # scheduler sees the pod.  The first entry that fails ends the sync: later entries get
        # no claim, and the pod's status is not patched, so even the claims already created
        # are not recorded for it (the controller finds them again on its retries, which fail
        # the same way while the template is missing).
        created: dict[str, str] = {}
        for pc in claims:
            if pc.template is None:
                continue
            tmpl = self.templates.get((namespace, pc.template))
            if tmpl is None:
                self._event(
                    "Warning",
                    "FailedResourceClaimCreation",
                    pod,
                    f"PodResourceClaim {pc.name}: resource claim template {quote(pc.template)}: "
                    f"resourceclaimtemplate.resource.k8s.io {quote(pc.template)} not found",
                )
                created.clear()
                break
            generate = generate_name(name, pc.name)
            claim_name = name_from_generate_name(generate, self.names)
            while f"{namespace}/{claim_name}" in self.cluster.claims:
                claim_name = name_from_generate_name(generate, self.names)
            obj = claim_from_template(
                tmpl,
                name=claim_name,
                generate=generate,
                namespace=namespace,
                pod_name=name,
                pod_uid=pod.uid,
                pod_claim_name=pc.name,
                uid=deterministic_uid(self.seed, "ResourceClaim", namespace, claim_name),
                block_owner_deletion=self.control.owner_block_deletion,
            )
            sig = self._template_sigs.get((namespace, pc.template))
            if sig is None:
                # Every claim from a template shares the template's spec object: sign it once.
                sig = self._template_sigs[(namespace, pc.template)] = spec_signature(obj["spec"])
            claim = SimClaim(f"{namespace}/{claim_name}", obj, generated=True, owner_uid=pod.uid, spec_sig=sig)
            self.cluster.claims[claim.key] = claim
            created[pc.name] = claim_name
        pod.claim_names.update(created)
        heapq.heappush(self.active, (pod.seq, 0, pod))
        return pod

    def _workload_pod(self, w: Workload, index: int) -> None:
        if w.kind == "Job":
            name = w.name + "-" + "".join(self.names.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))
        else:
            name = w.name if w.count == 1 else f"{w.name}-{index}"
        self._create_pod(w, name, w.namespace, w.claims, cpu=w.cpu_milli, mem=w.memory_bytes, duration=w.duration,
                         recipe=w.recipe, profile=w.profile, workload=w.name)

    def _manifest_pod(self, obj: Mapping[str, Any]) -> None:
        spec = obj.get("spec") or {}
        meta = obj.get("metadata") or {}
        annotations = meta.get("annotations") or {}
        requests = pod_requests(obj)
        cpu, mem = requests.get(CPU, 0), requests.get(MEMORY, 0)
        claims = tuple(
            PodClaim(rc.get("name", ""), rc.get("resourceClaimTemplateName"), rc.get("resourceClaimName"))
            for rc in spec.get("resourceClaims") or []
        )
        duration = annotations.get("drakit.dev/duration")
        labels = meta.get("labels") or {}
        if spec.get("nodeName"):
            self._bound_pod(obj, claims, cpu=cpu, mem=mem, duration=float(duration) if duration is not None else None,
                            recipe=labels.get("drakit.dev/recipe", ""), profile=labels.get("drakit.dev/profile", ""),
                            workload=labels.get("drakit.dev/workload", "manifests"))
            return
        self._create_pod(None, name_of(obj), namespace_of(obj), claims, cpu=cpu, mem=mem,
                         duration=float(duration) if duration is not None else None,
                         recipe=labels.get("drakit.dev/recipe", ""), profile=labels.get("drakit.dev/profile", ""),
                         workload=labels.get("drakit.dev/workload", "manifests"))

    def _bound_pod(self, obj: Mapping[str, Any], claims: tuple[PodClaim, ...], *, cpu: int, mem: int,
                   duration: float | None, recipe: str, profile: str, workload: str) -> None:
        """A pod the input binds already (``spec.nodeName``): it runs there from its arrival.

        kube-scheduler never schedules a pod whose ``nodeName`` is set (the informer's
        ``assignedPod`` filter keeps it out of the queue; it only counts on its node), and the
        claim controller does not create claims again for entries its
        ``status.resourceClaimStatuses`` names.  So a snapshot read back keeps every bound pod
        where it is: its node's requests count, and its claims hold the devices their
        allocation names (committed with the claims, up front).
        """
        meta = obj.get("metadata") or {}
        namespace, name = namespace_of(obj), name_of(obj)
        node_name = str((obj.get("spec") or {}).get("nodeName"))
        pod = SimPod(
            seq=len(self.pods),
            namespace=namespace,
            name=name,
            uid=str(meta.get("uid") or deterministic_uid(self.seed, "Pod", namespace, name)),
            workload=workload,
            recipe=recipe,
            profile=profile,
            arrival=self.now,
            duration=duration,
            cpu=cpu,
            mem=mem,
            claims=claims,
        )
        statuses = {
            s.get("name"): s.get("resourceClaimName")
            for s in (obj.get("status") or {}).get("resourceClaimStatuses") or []
            if isinstance(s, Mapping)
        }
        for pc in claims:
            if pc.template is not None and statuses.get(pc.name):
                pod.claim_names[pc.name] = str(statuses[pc.name])
        self.pods.append(pod)
        self.cluster.pods[pod.key] = pod
        self._bound += 1
        pod.phase, pod.node, pod.bound_at = "Running", node_name, self.now
        self.running += 1
        node = self.cluster.node_by_name.get(node_name)
        if node is not None:
            node.pods += 1
            node.req_cpu += pod.cpu
            node.req_mem += pod.mem
            node.nz_cpu += pod.nz_cpu
            node.nz_mem += pod.nz_mem
            self.cluster.note_node_change(node)
        devices: list[str] = []
        for pc in claims:
            claim_name = pod.claim_names.get(pc.name) if pc.template is not None else pc.claim
            claim = self.cluster.claims.get(f"{namespace}/{claim_name}")
            if claim is None or claim.allocation is None:
                continue  # the kubelet waits for it; nothing is held
            if not any(r.get("uid") == pod.uid for r in claim.reserved_for):
                claim.reserved_for.append({"resource": "pods", "name": name, "uid": pod.uid})
            owners = (claim.obj.get("metadata") or {}).get("ownerReferences") or []
            if pc.template is not None and any(o.get("controller") and o.get("uid") == pod.uid for o in owners):
                claim.generated, claim.owner_uid = True, pod.uid  # deleted with its pod
                usage = self.usage.get(claim.key)
                if usage is not None:  # counted up front as a shared claim: it is the pod's workload's
                    usage.workload = workload
            for r in (claim.allocation.get("devices") or {}).get("results") or []:
                devices.append(f"{r.get('driver')}/{r.get('pool')}/{r.get('device')}")
        pod.devices = tuple(devices)
        if duration is not None:
            self._push(self.now + duration, _FINISH, "finish", pod)

    def _finish(self, pod: SimPod) -> None:
        pod.phase = "Succeeded"
        pod.finished_at = self.now
        self.running -= 1
        node = self.cluster.node_by_name.get(pod.node or "")
        if node is not None:  # a pod bound in the input may name a node the input lacks
            node.pods -= 1
            node.req_cpu -= pod.cpu
            node.req_mem -= pod.mem
            node.nz_cpu -= pod.nz_cpu
            node.nz_mem -= pod.nz_mem
            self.cluster.note_node_change(node)
        # The claim controller: drop the reservation; deallocate unused claims; delete the
        # pod's generated claims with it.
        for pc in pod.claims:
            claim_name = pod.claim_names.get(pc.name) if pc.template is not None else pc.claim
            claim = self.cluster.claims.get(f"{pod.namespace}/{claim_name}")
            if claim is None:
                continue
            reserved = [r for r in claim.reserved_for if r.get("uid") != pod.uid]
            claim.obj["status"]["reservedFor"] = reserved
            if not reserved:
                self._deallocate(claim)
            if claim.generated:
                del self.cluster.claims[claim.key]
        self._wake()
        job = self.jobs.get(pod.workload)
        w = self.workloads.get(pod.workload)
        if job is not None and w is not None and job[0] < job[1]:
            job[0] += 1
            self._workload_pod(w, job[0] - 1)
        if self.admitter is not None:
            self._unit_finished(pod, w)

    def _unit_finished(self, pod: SimPod, w: Workload | None) -> None:
        """Tell the admitter a unit ended: a queued pod, or a Job whose last pod finished."""
        assert self.admitter is not None
        unit = self.unit_of.pop(pod.key, None)
        if unit is not None:
            self.admitter.finish(unit, self.now)
            return
        job = self.jobs.get(pod.workload)
        if w is not None and job is not None and w.name in self.units and job[0] == job[1]:
            done = sum(1 for p in self.pods if p.workload == w.name and p.phase == "Succeeded")
            if done == w.count:
                self.admitter.finish(w.name, self.now)

    def _admit(self, unit: str) -> None:
        w, index = self.units[unit]
        if index < 0:  # a Job: its first pods, the rest as they finish
            first = min(w.parallelism, w.count)
            self.jobs[w.name] = [first, w.count]
            for i in range(first):
                self._workload_pod(w, i)
        else:
            self._workload_pod(w, index)
            self.unit_of[self.pods[-1].key] = unit

    def _wake(self) -> None:
        """Something was freed: every unschedulable pod gets another attempt."""
        for seq in sorted(self.unschedulable):
            heapq.heappush(self.active, (seq, 0, self.unschedulable[seq]))
        self.unschedulable.clear()
        for lane in self.lanes.values():
            heapq.heappush(self.active, (lane.rewind(), lane.gen, lane))

    def _schedule_all(self, progress: Progress | None, total: int) -> None:
        """Attempt every active pod in creation order (lanes stand for their members, see ``lanes``)."""
        while self.active:
            _, gen, item = heapq.heappop(self.active)
            if isinstance(item, Lane):
                if gen == item.gen:
                    self._visit_lane(item, progress, total)
            elif item.phase == "Pending":
                self._attempt(item, progress, total)

    def _visit_lane(self, lane: Lane, progress: Progress | None, total: int) -> None:
        """Members up to the next queue entry: all at once while they share a valid failure, else one."""
        i = lane.skip_dead()
        if i == len(lane.pods):
            return
        memo = self.scheduler.valid_failure(lane.signature)
        if memo is not None and lane.uniform() == (memo.message, memo.reason):
            i = lane.count_until(self.active[0][0] if self.active else lane.seqs[-1] + 1)
        else:
            gen = lane.gen
            lane.cursor = i + 1
            self._attempt(lane.pods[i], progress, total)
            if lane.gen != gen:
                return  # the attempt woke everyone: the lane was queued again from its start
            i = lane.skip_dead()
        if i < len(lane.pods):
            lane.gen += 1
            heapq.heappush(self.active, (lane.seqs[i], lane.gen, lane))

    def _attempt(self, pod: SimPod, progress: Progress | None, total: int) -> None:
        sched = self.scheduler
        attempt = sched.schedule(pod)
        lane = pod.lane
        if attempt.outcome == "bound":
            if lane is not None:
                lane.leave(pod)
                if not lane.alive:
                    del self.lanes[lane.signature]
            self._bind(pod, attempt.node or "")
            if progress is not None and self._bound % 256 == 0:
                progress(self._bound, total)
            return
        if attempt.outcome == "gated":
            pod.gated = True
            pod.message, pod.reason = attempt.message, "Gated"
            return  # PreEnqueue: no attempt, no event; nothing in a run can ungate it
        pod.attempts += 1
        if attempt.message != pod.message:
            self._event("Warning", "FailedScheduling", pod, attempt.message)
        old = (pod.message, pod.reason)
        pod.message, pod.reason = attempt.message, attempt.reason
        if lane is not None:
            lane.relabel(old, (pod.message, pod.reason))
        else:
            self._park(pod, None if attempt.deallocated else sched.last_signature)
        if attempt.deallocated:
            # PostFilter freed devices: the claim update re-queues everyone.
            self._on_released_key(attempt.deallocated)
            self._wake()

    def _park(self, pod: SimPod, signature: Any) -> None:
        """An unschedulable pod waits: in the lane of its signature where one may stand for it."""
        if self.options.fast and signature is not None and all(pc.template is not None for pc in pod.claims):
            # Only the pod's own scheduling changes claims made from templates (a pod with a
            # shared claim waits on its own).
            lane = self.lanes.get(signature)
            if lane is None:
                lane = self.lanes[signature] = Lane(signature)
            if lane.accepts(pod):
                lane.join(pod)
                return
        self.unschedulable[pod.seq] = pod

    def _on_released_key(self, key: str) -> None:
        usage = self.usage.pop(key, None)
        if usage is not None:
            self._account(usage, self.now)
            for _, cls, product, _ in usage.devices:
                self.class_alloc[cls] -= 1
                self.product_alloc[product] -= 1

    _bound = 0

    def _bind(self, pod: SimPod, node: str) -> None:
        self._bound += 1
        pod.attempts += 1
        pod.phase = "Running"
        pod.node = node
        pod.bound_at = self.now
        pod.message = pod.reason = ""
        self.running += 1
        devices: list[str] = []
        for pc in pod.claims:
            claim_name = pod.claim_names.get(pc.name) if pc.template is not None else pc.claim
            claim = self.cluster.claims[f"{pod.namespace}/{claim_name}"]
            if claim.key not in self.usage and claim.allocation is not None:
                self._on_allocated(claim, pod.workload if claim.generated else f"claim:{claim.key}")
            for r in ((claim.allocation or {}).get("devices") or {}).get("results") or []:
                devices.append(f"{r.get('driver')}/{r.get('pool')}/{r.get('device')}")
        pod.devices = tuple(devices)
        self._event("Normal", "Scheduled", pod, f"Successfully assigned {pod.namespace}/{pod.name} to {node}")
        if pod.duration is not None:
            self._push(self.now + pod.duration, _FINISH, "finish", pod)

    def _sample(self) -> None:
        self.samples.append(
            Sample(
                self.now,
                len(self.pods) - self._bound,
                self.running,
                tuple(sorted((k, v) for k, v in self.class_alloc.items() if k)),
                tuple(sorted((k, v) for k, v in self.product_alloc.items() if v)),
            )
        )

    # -- phase 4: the loop ---------------------------------------------------------------------

    def run(self, progress: Progress | None = None) -> SimulationResult:
        scenario = self.scenario
        total = scenario.pod_count()
        for w in scenario.workloads:
            if self.admitter is not None and self.admitter.accepts(w):
                if w.kind == "Job":
                    self.units[w.name] = (w, -1)
                    self._push(w.start, _ARRIVE, "queued", w.name)
                else:
                    for i in range(w.count):
                        unit = w.name if w.count == 1 else f"{w.name}-{i}"
                        self.units[unit] = (w, i)
                        self._push(w.start + i * w.interval, _ARRIVE, "queued", unit)
                continue
            if w.kind == "Job":
                first = min(w.parallelism, w.count)
                self.jobs[w.name] = [first, w.count]
                for i in range(first):
                    self._push(w.start, _ARRIVE, "workload", (w, i))
            else:
                for i in range(w.count):
                    self._push(w.start + i * w.interval, _ARRIVE, "workload", (w, i))
        for obj in self.manifest_pods:
            arrival = float(((obj.get("metadata") or {}).get("annotations") or {}).get("drakit.dev/arrival", 0))
            self._push(arrival, _ARRIVE, "manifest", obj)
        until = scenario.until
        while self.queue:
            t = self.queue[0][0]
            if until is not None and t > until:
                break
            self.now = t
            while self.queue and self.queue[0][0] == t:
                _, _, _, kind, payload = heapq.heappop(self.queue)
                if kind == "finish":
                    self._finish(payload)
                elif kind == "workload":
                    self._workload_pod(*payload)
                elif kind == "queued":
                    assert self.admitter is not None
                    self.admitter.arrive(payload, self.units[payload][0], t)
                else:
                    self._manifest_pod(payload)
            if self.admitter is not None:
                for unit in self.admitter.settle(t):
                    self._admit(unit)
                self.quota_samples.append(self.admitter.sample(t))
            self._schedule_all(progress, total)
            self._sample()
        end = until if until is not None else self.now
        self.now = end
        for usage in self.usage.values():
            self._account(usage, end)
        for lane in self.lanes.values():
            lane.settle_all()
        if progress is not None:
            progress(self._bound, total)
        return self._result(end)

    # -- phase 5: results -----------------------------------------------------------------------

    def _result(self, end: float) -> SimulationResult:
        pods = []
        for p in self.pods:
            pods.append(
                PodResult(
                    namespace=p.namespace,
                    name=p.name,
                    workload=p.workload,
                    recipe=p.recipe,
                    phase=p.phase,
                    node=p.node,
                    devices=p.devices,
                    products=tuple(self.device_info.get(tuple(d.split("/", 2)), (d.split("/", 1)[0], 0))[0] for d in p.devices),  # type: ignore[arg-type]
                    claims=tuple(p.claim_names.get(pc.name, "") if pc.template is not None else (pc.claim or "") for pc in p.claims),
                    arrival=p.arrival,
                    scheduled=p.bound_at,
                    finished=p.finished_at,
                    message=p.message,
                    reason=p.reason,
                    attempts=p.attempts,
                )
            )
        return SimulationResult(
            scenario=self.scenario.name,
            seed=self.seed,
            nodes=len(self.cluster.nodes),
            devices=len(self.device_info),
            end_time=end,
            pods=tuple(pods),
            events=tuple(self.events),
            samples=tuple(self.samples),
            class_capacity=tuple(sorted(self.class_capacity.items())),
            product_capacity=tuple(sorted(self.product_capacity.items())),
            stranded=tuple(sorted(self.stranded.items())),
            attempts=sum(p.attempts for p in self.pods),
            allocator_calls=self.scheduler.allocator_calls,
            cache_hits=self.scheduler.cache_hits,
            workload_recipes=tuple(sorted((w.name, w.recipe) for w in self.scenario.workloads)),
            kubernetes_version=self.control.version,
            queue_records=tuple(self.admitter.record(u) for u in self.units) if self.admitter is not None else (),
            quota_samples=tuple(self.quota_samples),
        )


def _copy_claim(obj: Mapping[str, Any]) -> dict[str, Any]:
    import copy

    return copy.deepcopy(dict(obj))


def run_scenario(
    scenario: Scenario,
    seed: int | None = None,
    *,
    allocator: AllocatorFactory | None = None,
    progress: Progress | None = None,
    options: SimOptions | None = None,
    clock: Clock = SYSTEM_CLOCK,
    admitter: Admitter | None = None,
) -> SimulationResult:
    """Replay ``scenario`` with ``seed`` (default: the scenario's own) and return every outcome.

    ``admitter``: a queue engine that holds workloads until it admits them (see ``sim.admission``).
    ``clock`` times the allocator's per-call deadline (simulated time is the scenario's own);
    every random choice and share ID follows from ``seed``.  Stops before building anything
    when the scenario's estimated memory exceeds its limit.
    """
    scenario.check_memory()
    return Run(scenario, scenario.seed if seed is None else seed, allocator, options, clock, admitter).run(progress)
