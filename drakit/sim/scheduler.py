"""One scheduling attempt for one pod, phase by phase as kube-scheduler runs it (1.34-1.37).

Phases (reference notes §5.2, ``pkg/scheduler/schedule_one.go``):

1. PreEnqueue (DynamicResources): every claim exists and belongs to the pod, else the pod is
   *gated* and never reaches a scheduling cycle (no FailedScheduling event).
2. PreFilter: allocated claims contribute their node selector; unallocated ones need their
   device classes to exist.
3. Filter, node by node from the round-robin start index, stopping after
   ``numFeasibleNodesToFind`` feasible nodes: NodeResourcesFit (pods, cpu, memory; a request
   above the node's allocatable makes the node unresolvable), then DynamicResources: one
   allocator call for all unallocated claims together *first* ("cannot allocate all claims"),
   and only when that succeeds the allocated claims' node selectors ("resourceclaim not
   available on the node", the claims remembered for PostFilter).
4. PostFilter when no node fits: DynamicResources (deallocate an unavailable unused claim)
   then DefaultPreemption (no priorities in a scenario, so it only explains itself: nodes
   rejected as unresolvable are "not helpful", the others have no victims).
5. Score: the plugins whose scores differ between nodes here -- NodeResourcesFit
   (LeastAllocated over cpu and memory with the scheduler's non-zero defaults),
   NodeResourcesBalancedAllocation and DynamicResources (8 - chosen subrequest index per
   firstAvailable request, normalised to 0..100, weight 2).  TaintToleration, NodeAffinity,
   ImageLocality, PodTopologySpread and InterPodAffinity give every node the same score in a
   scenario (no taints, affinities, images or spread constraints) and are left out.
6. Select: the highest total; ties broken uniformly at random with the run's seeded
   generator (upstream uses reservoir sampling over an unseeded global generator, which picks
   uniformly among ties too).
7. Reserve (claims become allocated, devices taken for everyone else), PreBind (finalizer,
   ``reservedFor``), Bind.

What changed between releases (PostFilter wording, DynamicResources scoring) comes in as a
:class:`~drakit.sim.versions.ControlPlane`; nothing here reads a version string.

Upstream checks nodes in parallel and keeps the first ``numFeasibleNodesToFind`` feasible
nodes that its workers report; here nodes are checked in order, which is what a single
worker would do.  The allocator's answer per node is cached until that node's devices (or
a shared pool) change, so filling a cluster asks the allocator about one node per pod
instead of hundreds.

Two implementations of phases 3, 5 and 6 give the same answer: :meth:`Scheduler._cycle`
is the literal loop over nodes (``SimOptions(fast=False)``, the reference), and
:meth:`Scheduler._fast_cycle` keeps per-shape node verdicts and Fenwick trees
(:mod:`drakit.sim.fastpath`) so that a pod costs O(log n) per changed node instead of a
Filter call per examined node.  Both examine the same nodes in the same order (so the
allocator sees the same calls), draw the same random numbers and report the same counts;
``tests/unit/sim/test_fast_equivalence.py`` holds them to byte-identical results.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drakit.corev1 import node_selector_matches
from drakit.gostr import quote
from drakit.sim.allocation import NodeFit
from drakit.sim.cluster import MAX_RESERVED_FOR, SimClaim, SimCluster, SimNode, SimPod
from drakit.sim.controller import DELETE_PROTECTION_FINALIZER
from drakit.sim.fastpath import (
    CANNOT_ALLOCATE_CODE,
    FEASIBLE,
    INSUFFICIENT_CPU,
    INSUFFICIENT_MEMORY,
    NOT_AVAILABLE_CODE,
    NUM_CODES,
    RESOURCE_BITS,
    TOO_MANY_PODS,
    UNRESOLVABLE,
    ShapeIndex,
    ShapeIndexes,
    union_kth,
    union_prefix,
)
from drakit.sim.versions import ControlPlane

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE = 5
MAX_NODE_SCORE = 100
MAX_SUBREQUESTS = 8  # DynamicResources score: 8 - index of the chosen subrequest

CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"
PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
STILL_NOT_SCHEDULABLE = "still not schedulable"
NO_NEW_CLAIMS = "no new claims to deallocate"
DEALLOCATED = "deallocation of ResourceClaim completed"


def num_feasible_nodes_to_find(num_all_nodes: int, percentage: int = 0) -> int:
    """How many feasible nodes the scheduler collects before it stops filtering.

    Adaptive by default: 50% minus one point per 125 nodes, at least 5%, and never fewer than
    100 nodes (so a 500-node cluster scores 230 nodes, a 5,000-node cluster 500).
    """
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE)
    found = num_all_nodes * percentage // 100
    return max(found, MIN_FEASIBLE_NODES_TO_FIND)


def fit_error(num_nodes: int, prefilter_msg: str, reasons: Mapping[str, int], postfilter_msg: str) -> str:
    """framework.FitError's text: ``0/N nodes are available: ...``."""
    text = f"0/{num_nodes} nodes are available:"
    if prefilter_msg:
        text += f" {prefilter_msg}."
    else:
        hist = sorted(f"{count} {reason}" for reason, count in reasons.items())
        if hist:
            text += " " + ", ".join(hist) + "."
    if postfilter_msg:
        # No period added here: the PostFilter messages carry their own punctuation.
        text += f" {postfilter_msg}"
    return text


def spec_signature(spec: Mapping[str, Any]) -> str:
    return json.dumps(spec, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class Attempt:
    """What one scheduling attempt decided."""

    outcome: str  # "bound" | "gated" | "unschedulable" | "error"
    node: str | None = None
    message: str = ""
    reason: str = ""  # PodScheduled condition reason: Unschedulable | SchedulerError
    deallocated: str = ""  # claim deallocated by PostFilter, if any
    allocator_calls: int = 0


def _least_requested(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


class Scheduler:
    """The scheduling cycle over a :class:`SimCluster` (see the module docstring)."""

    def __init__(
        self,
        cluster: SimCluster,
        classes: Mapping[str, Mapping[str, Any]],
        seed: int,
        *,
        fast: bool = True,
        control: ControlPlane | None = None,
        prioritized_list: bool = True,
    ) -> None:
        self.cluster = cluster
        self.fast = fast
        self.control = control or ControlPlane.for_version()
        self.prioritized_list = prioritized_list  # the DRAPrioritizedList gate (PreFilter checks it)
        self._shapes = ShapeIndexes(len(cluster.nodes))
        self._compact_at = 4 * len(cluster.nodes) + 4096
        self.classes = classes
        self.rng = random.Random(f"drakit-sim/select/{seed}")
        self.next_start = 0
        self.allocator_calls = 0
        self.cache_hits = 0
        self.node_checks = 0  # nodes run through Filter (work done, not part of any result)
        # pod signature -> (cluster version, attempt): identical pods fail identically until
        # something in the cluster changes.
        self._failed: dict[Any, tuple[int, Attempt]] = {}
        self.last_signature: Any = None  # of the pod :meth:`schedule` saw last (None: not reusable)

    # -- phase 1: PreEnqueue ------------------------------------------------------------------

    def pre_enqueue(self, pod: SimPod) -> str:
        for pc in pod.claims:
            if pc.claim is None and pc.template is None:
                return f"pod {quote(pod.key)}, spec.resourceClaim {quote(pc.name)}: none of the supported fields are set"
            if pc.template is not None:
                name = pod.claim_names.get(pc.name)
                if name is None:
                    return f"pod {quote(pod.key)}: ResourceClaim not created yet"
            else:
                name = pc.claim
            claim = self.cluster.claims.get(f"{pod.namespace}/{name}")
            if claim is None:
                return f'could not find ResourceClaim "{pod.namespace}/{name}"'
            if pc.template is not None:
                owners = claim.obj["metadata"].get("ownerReferences") or []
                if not any(o.get("controller") and o.get("uid") == pod.uid for o in owners):
                    return f"ResourceClaim {claim.key} was not created for pod {pod.key} (pod is not owner)"
        return ""

    def pod_claims(self, pod: SimPod) -> list[SimClaim]:
        out = []
        for pc in pod.claims:
            name = pod.claim_names.get(pc.name) if pc.template is not None else pc.claim
            out.append(self.cluster.claims[f"{pod.namespace}/{name}"])
        return out

    # -- phase 2: PreFilter -------------------------------------------------------------------

    def pre_filter(self, claims: Sequence[SimClaim]) -> str:
        for claim in claims:
            if claim.allocation is not None:
                continue
            for req in (claim.obj.get("spec") or {}).get("devices", {}).get("requests") or []:
                if req.get("exactly") is not None:
                    cls = req["exactly"].get("deviceClassName", "")
                    if cls not in self.classes:
                        return f"request {req.get('name')}: device class {cls} does not exist"
                elif req.get("firstAvailable"):
                    if not self.prioritized_list:
                        return (
                            f"resource claim {claim.key}, request {req.get('name')}: has subrequests, "
                            "but the DRAPrioritizedList feature is disabled"
                        )
                    for sub in req["firstAvailable"]:
                        cls = sub.get("deviceClassName", "")
                        if cls not in self.classes:
                            return f"request {req.get('name')}/{sub.get('name')}: device class {cls} does not exist"
                else:
                    return f"resource claim {claim.key}, request {req.get('name')}: unknown request type"
        return ""

    # -- the whole cycle ----------------------------------------------------------------------

    def schedule(self, pod: SimPod) -> Attempt:
        gate = self.pre_enqueue(pod)
        if gate:
            return Attempt("gated", message=gate)
        claims = self.pod_claims(pod)
        pending = [c for c in claims if c.allocation is None]
        allocated = [c for c in claims if c.allocation is not None]
        signature = None
        if not allocated:
            signature = (pod.cpu, pod.mem, tuple(c.spec_sig for c in pending))
            memo = self.valid_failure(signature)
            if memo is not None:
                self.last_signature = signature
                return memo
        self.last_signature = signature
        attempt = (self._fast_cycle if self.fast else self._cycle)(pod, claims, pending, allocated)
        if signature is not None and attempt.outcome in ("unschedulable", "error") and not attempt.deallocated:
            self._failed[signature] = (self.cluster.version, attempt)
        return attempt

    def valid_failure(self, signature: Any) -> Attempt | None:
        """The failed attempt of a pod with ``signature`` if the cluster has not changed since."""
        memo = self._failed.get(signature)
        return memo[1] if memo is not None and memo[0] == self.cluster.version else None

    def _cycle(self, pod: SimPod, claims: list[SimClaim], pending: list[SimClaim], allocated: list[SimClaim]) -> Attempt:
        nodes = self.cluster.nodes
        num_nodes = len(nodes)
        if num_nodes == 0:
            return Attempt("unschedulable", message="no nodes available to schedule pods", reason="Unschedulable")

        # Phase 2: PreFilter.
        pre = self.pre_filter(claims) if claims else ""
        if pre:
            # PreFilter stops before the plugin records the pod's claims: PostFilter sees none.
            noop = NO_NEW_CLAIMS if self.control.postfilter_noop_reasons else ""
            post = ", ".join(m for m in (noop, _preemption(num_nodes, 0, num_nodes)) if m)
            return Attempt("unschedulable", message=fit_error(num_nodes, pre, {}, post), reason="Unschedulable")

        # Phase 3: Filter from the round-robin start index.
        to_find = num_feasible_nodes_to_find(num_nodes)
        feasible: list[tuple[SimNode, NodeFit | None, int]] = []
        reasons: dict[str, int] = {}
        resolvable = 0  # nodes rejected with Unschedulable (preemption could help in principle)
        unavailable: list[SimClaim] = []
        selectors = [(c, (c.allocation or {}).get("nodeSelector")) for c in allocated]
        key = "\x1f".join(c.spec_sig for c in pending)
        pending_objs = [c.obj for c in pending]
        shared_version = self.cluster.shared_version
        cpu, mem = pod.cpu, pod.mem
        fit = self.cluster.allocator.fit
        calls = hits = 0
        start = self.next_start
        processed = 0
        ordered = itertools.chain(itertools.islice(nodes, start, None), itertools.islice(nodes, 0, start))
        for processed, node in enumerate(ordered, 1):
            # NodeResourcesFit (one combined test first: almost every node passes).
            if node.pods >= node.max_pods or (cpu and cpu > node.alloc_cpu - node.req_cpu) or (
                mem and mem > node.alloc_mem - node.req_mem
            ):
                if node.pods >= node.max_pods:
                    reasons["Too many pods"] = reasons.get("Too many pods", 0) + 1
                if cpu and cpu > node.alloc_cpu - node.req_cpu:
                    reasons["Insufficient cpu"] = reasons.get("Insufficient cpu", 0) + 1
                if mem and mem > node.alloc_mem - node.req_mem:
                    reasons["Insufficient memory"] = reasons.get("Insufficient memory", 0) + 1
                # Bigger than the whole node: UnschedulableAndUnresolvable, preemption can't help.
                if not ((cpu and cpu > node.alloc_cpu) or (mem and mem > node.alloc_mem)):
                    resolvable += 1
                continue
            # DynamicResources: the allocator first, then the allocated claims' node selectors.
            bad = [c for c, sel in selectors if sel is not None and not node_selector_matches(node.obj, sel)] if selectors else []
            entry: tuple[SimNode, NodeFit | None, int] = (node, None, 0)
            if pending:
                cached = node.cache.get(key)
                if cached is not None and cached[0] == shared_version:
                    answer = cached[1]
                    hits += 1
                else:
                    answer = fit(node.obj, pending_objs)
                    calls += 1
                    score = _dra_score(pending, answer) if answer.status == "allocated" else 0
                    cached = (shared_version, answer, score)
                    if answer.status != "error":
                        node.cache[key] = cached
                status = answer.status
                if status != "allocated":
                    if status == "error":
                        self.allocator_calls += calls
                        self.cache_hits += hits
                        self.node_checks += processed
                        self.next_start = (start + processed) % num_nodes
                        return Attempt(
                            "error",
                            message=f'running "DynamicResources" filter plugin: {answer.message}',
                            reason="SchedulerError",
                            allocator_calls=calls,
                        )
                    reasons[CANNOT_ALLOCATE] = reasons.get(CANNOT_ALLOCATE, 0) + 1
                    continue
                entry = (node, answer, cached[2])
            if bad:
                # Remembered for PostFilter only here, after a successful allocation.
                for c in bad:
                    if c not in unavailable:
                        unavailable.append(c)
                reasons[NOT_AVAILABLE] = reasons.get(NOT_AVAILABLE, 0) + 1
                continue
            feasible.append(entry)
            if len(feasible) >= to_find:
                break
        self.cache_hits += hits
        self.allocator_calls += calls
        self.node_checks += processed
        self.next_start = (start + processed) % num_nodes

        if not feasible:
            return self._post_filter(pod, claims, num_nodes, reasons, resolvable, unavailable, calls)
        # Phases 5 and 6: Score and select.
        if len(feasible) == 1:
            chosen = feasible[0]
        else:
            failed_score = self._score_error(pending, allocated, calls)
            if failed_score is not None:
                return failed_score
            chosen = self._select(pod, feasible, self._allocated_dra_score(pending, allocated))
        node, chosen_answer, _ = chosen
        return self._reserve(pod, claims, pending, allocated, node, chosen_answer, calls, copy=True)

    # -- phases 3, 5 and 6 without a node loop (see drakit.sim.fastpath) ---------------------

    def _fast_cycle(self, pod: SimPod, claims: list[SimClaim], pending: list[SimClaim], allocated: list[SimClaim]) -> Attempt:
        """:meth:`_cycle` with per-shape verdicts: same nodes examined, same draws, same answer."""
        cluster = self.cluster
        nodes = cluster.nodes
        num_nodes = len(nodes)
        if num_nodes == 0 or (claims and self.pre_filter(claims)):
            return self._cycle(pod, claims, pending, allocated)  # decided before any node is looked at
        key = "\x1f".join(c.spec_sig for c in pending)
        shape = (pod.cpu, pod.mem, key, tuple((c.key, c.version) for c in allocated))
        changes = cluster.changes
        if len(changes) > self._compact_at:
            cluster.changes_base = self._shapes.compact(changes, cluster.changes_base, cluster.shared_version)
            changes.clear()
        idx = self._shapes.get(shape, changes, cluster.changes_base, cluster.shared_version)
        if idx is None:
            return self._cycle(pod, claims, pending, allocated)

        # Phase 3: Filter.  Walk from the start index: count known-feasible nodes up to the next
        # stale one, compute that one's verdict exactly as the node loop would, repeat.
        selectors = [(c, (c.allocation or {}).get("nodeSelector")) for c in allocated]
        views = [c.allocator_view() for c in pending]
        shared_version = cluster.shared_version
        cpu, mem = pod.cpu, pod.mem
        fit = cluster.allocator.fit
        stale, feas = idx.stale, idx.feasible
        calls = 0
        remaining = num_feasible_nodes_to_find(num_nodes)
        start = self.next_start
        last = -1  # position of the last node examined, when the walk stopped early
        failed: NodeFit | None = None
        for lo, hi in ((start, num_nodes), (0, start)):
            p = lo
            while p < hi:
                q = stale.first_in(p, hi)
                stop = hi if q < 0 else q
                found = feas.count(p, stop)
                if found >= remaining:
                    last = feas.kth(feas.prefix(p) + remaining)
                    remaining = 0
                    break
                remaining -= found
                if q < 0:
                    break
                node = nodes[q]
                self.node_checks += 1
                bits = 0
                if node.pods >= node.max_pods:
                    bits = TOO_MANY_PODS
                if cpu and cpu > node.alloc_cpu - node.req_cpu:
                    bits |= INSUFFICIENT_CPU
                if mem and mem > node.alloc_mem - node.req_mem:
                    bits |= INSUFFICIENT_MEMORY
                if bits:
                    if (cpu and cpu > node.alloc_cpu) or (mem and mem > node.alloc_mem):
                        bits |= UNRESOLVABLE
                    idx.set(q, bits)
                elif pending:
                    cached = node.cache.get(key)
                    if cached is None or cached[0] != shared_version:
                        answer = fit(node.obj, views)
                        calls += 1
                        cached = (shared_version, answer, _dra_score(pending, answer) if answer.status == "allocated" else 0)
                        if answer.status != "error":
                            node.cache[key] = cached
                    status = cached[1].status
                    if status == "error":
                        failed, last = cached[1], q
                        break
                    if status != "allocated":
                        idx.set(q, CANNOT_ALLOCATE_CODE)
                    elif selectors and any(sel is not None and not node_selector_matches(node.obj, sel) for _, sel in selectors):
                        idx.set(q, NOT_AVAILABLE_CODE)
                    else:
                        idx.set(q, FEASIBLE, _score_class(idx, node, pod, cached[2]))
                elif selectors and any(sel is not None and not node_selector_matches(node.obj, sel) for _, sel in selectors):
                    idx.set(q, NOT_AVAILABLE_CODE)
                else:
                    idx.set(q, FEASIBLE, _score_class(idx, node, pod, 0))
                if idx.code[q] == FEASIBLE:
                    remaining -= 1
                    if remaining == 0:
                        last = q
                        break
                p = q + 1
            if remaining == 0 or failed is not None:
                break
        processed = (last - start) % num_nodes + 1 if last >= 0 else num_nodes
        self.next_start = (start + processed) % num_nodes
        # The examined window as at most two position ranges.
        end = start + processed
        window = ((start, min(end, num_nodes)), (0, end - num_nodes if end > num_nodes else 0))
        in_window = sum(feas.count(a, b) for a, b in window if b > a)
        if pending:
            # The node loop counts one cached answer for every examined node that reached the
            # allocator (feasible, rejected by the DRA filter, or an error) without calling it.
            reached = in_window + sum(idx.dra_rejected.count(a, b) for a, b in window if b > a) + (failed is not None)
            self.cache_hits += reached - calls
        self.allocator_calls += calls
        if failed is not None:
            return Attempt(
                "error",
                message=f'running "DynamicResources" filter plugin: {failed.message}',
                reason="SchedulerError",
                allocator_calls=calls,
            )

        if in_window == 0:
            # Phase 4: every node has a fresh verdict now; the histogram comes from the counts.
            reasons, resolvable = _histogram(idx)
            unavailable: list[SimClaim] = []
            if selectors and idx.reasons[NOT_AVAILABLE_CODE]:
                code = idx.code
                for i in itertools.chain(range(start, num_nodes), range(start)):
                    if code[i] == NOT_AVAILABLE_CODE:
                        for c, sel in selectors:
                            if sel is not None and not node_selector_matches(nodes[i].obj, sel) and c not in unavailable:
                                unavailable.append(c)
            return self._post_filter(pod, claims, num_nodes, reasons, resolvable, unavailable, calls)

        # Phases 5 and 6: Score by class and select.
        if in_window == 1:
            pos = next(p for a, b in window if (p := feas.first_in(a, b)) >= 0)
        elif (failed_score := self._score_error(pending, allocated, calls)) is not None:
            return failed_score
        elif idx.classes_on:
            pos = self._select_by_class(pod, idx, window, self._allocated_dra_score(pending, allocated))
        else:
            code = idx.code
            feasible = []
            for a, b in window:
                for i in range(a, b):
                    if code[i] == FEASIBLE:
                        n = nodes[i]
                        entry = n.cache[key] if pending else None
                        feasible.append((n, entry[1] if entry else None, entry[2] if entry else 0))
            pos = self._select(pod, feasible, self._allocated_dra_score(pending, allocated))[0].index
        node = nodes[pos]
        return self._reserve(pod, claims, pending, allocated, node, node.cache[key][1] if pending else None, calls, copy=False)

    def _select_by_class(self, pod: SimPod, idx: ShapeIndex, window: tuple[tuple[int, int], ...], extra_dra: int) -> int:
        """:meth:`_select` over score classes: same best score, same ties in the same order, same draw."""
        spans = [(a, b) for a, b in window if b > a]
        present: list[tuple[int, int]] = []
        for cid, tree in idx.class_trees.items():
            prefix = tree.prefix
            count = 0
            for a, b in spans:
                count += prefix(b) - prefix(a)
            if count:
                present.append((cid, count))
        keys = idx.class_key
        top = max(keys[cid][1] for cid, _ in present) + extra_dra
        weight = self.control.dra_score_weight
        best = -1
        tie_ids: list[int] = []
        ties = 0
        for cid, count in present:
            base, dra = keys[cid]
            total = base + weight * ((dra + extra_dra) * MAX_NODE_SCORE // top) if top and weight else base
            if total > best:
                best, tie_ids, ties = total, [cid], count
            elif total == best:
                tie_ids.append(cid)
                ties += count
        r = self.rng.randrange(ties) if ties > 1 else 0
        trees = [idx.class_trees[cid] for cid in tie_ids]
        # The r-th tie in scan order: in the first span, or else in the wrapped second one.
        a1, b1 = spans[0]
        first = union_prefix(trees, b1) - union_prefix(trees, a1)
        if r < first:
            return union_kth(trees, union_prefix(trees, a1) + r + 1)
        return union_kth(trees, r - first + 1)

    # -- phase 4: PostFilter ------------------------------------------------------------------

    def _post_filter(
        self,
        pod: SimPod,
        claims: Sequence[SimClaim],
        num_nodes: int,
        reasons: Mapping[str, int],
        resolvable: int,
        unavailable: Sequence[SimClaim],
        calls: int,
    ) -> Attempt:
        deallocated = ""
        dra_msg = ""
        for c in unavailable:
            reserved = c.reserved_for
            if not reserved or (len(reserved) == 1 and reserved[0].get("uid") == pod.uid):
                self.cluster.deallocate_claim(c)
                dra_msg = DEALLOCATED
                deallocated = c.key
                break
        if not dra_msg and self.control.postfilter_noop_reasons:
            # 1.34-1.36 said so when PostFilter did nothing; 1.37 adds no text.
            dra_msg = STILL_NOT_SCHEDULABLE if claims else NO_NEW_CLAIMS
        unresolvable = num_nodes - resolvable
        post = ", ".join(m for m in (dra_msg, _preemption(num_nodes, resolvable, unresolvable)) if m)
        return Attempt(
            "unschedulable",
            message=fit_error(num_nodes, "", reasons, post),
            reason="Unschedulable",
            deallocated=deallocated,
            allocator_calls=calls,
        )

    # -- phase 7: Reserve, PreBind, Bind ------------------------------------------------------

    def _reserve(
        self,
        pod: SimPod,
        claims: Sequence[SimClaim],
        pending: Sequence[SimClaim],
        allocated: Sequence[SimClaim],
        node: SimNode,
        chosen_answer: NodeFit | None,
        calls: int,
        *,
        copy: bool,
    ) -> Attempt:
        for c in allocated:
            if not any(r.get("uid") == pod.uid for r in c.reserved_for) and len(c.reserved_for) >= MAX_RESERVED_FOR:
                return Attempt(
                    "error",
                    message=(
                        f'running PreBind plugin "DynamicResources": add reservation to claim {c.key}: '
                        f"ResourceClaim.resource.k8s.io {quote(c.name)} is invalid: status.reservedFor: "
                        f"Too many: {len(c.reserved_for) + 1}: must have at most {MAX_RESERVED_FOR} items"
                    ),
                    reason="SchedulerError",
                    allocator_calls=calls,
                )
        if chosen_answer is not None:
            for c, result in zip(pending, chosen_answer.results, strict=True):
                self.cluster.allocate_claim(c, result, copy=copy)
        for c in claims:
            finalizers = c.obj["metadata"].setdefault("finalizers", [])
            if DELETE_PROTECTION_FINALIZER not in finalizers:
                finalizers.append(DELETE_PROTECTION_FINALIZER)
            if not any(r.get("uid") == pod.uid for r in c.reserved_for):
                c.reserved_for.append({"resource": "pods", "name": pod.name, "uid": pod.uid})
        node.pods += 1
        node.req_cpu += pod.cpu
        node.req_mem += pod.mem
        node.nz_cpu += pod.nz_cpu
        node.nz_mem += pod.nz_mem
        self.cluster.note_node_change(node)
        return Attempt("bound", node=node.name, allocator_calls=calls)

    def _score_error(self, pending: Sequence[SimClaim], allocated: Sequence[SimClaim], calls: int) -> Attempt | None:
        """1.35's DynamicResources Score fails for a pod with allocated claims *and* claims to
        allocate once two or more nodes are feasible (see ``ControlPlane.dra_score_allocated_claims``)."""
        control = self.control
        if not (pending and allocated and control.dra_score_weight and not control.dra_score_allocated_claims):
            return None
        return Attempt(
            "error",
            message=(
                'running Score plugins: plugin "DynamicResources" failed with: '
                f"number of allocations {len(pending)} is smaller than number of claims"
            ),
            reason="SchedulerError",
            allocator_calls=calls,
        )

    def _allocated_dra_score(self, pending: Sequence[SimClaim], allocated: Sequence[SimClaim]) -> int:
        """The DynamicResources score that the pod's already allocated claims add on every node.

        Only counted where the plugin scores at all, i.e. when some claim is being allocated
        (without one there is no per-node allocation and every node scores 0).
        """
        if not (pending and allocated and self.control.dra_score_allocated_claims):
            return 0
        return sum(_claim_dra_score(c.obj.get("spec") or {}, c.allocation or {}) for c in allocated)

    def _select(
        self, pod: SimPod, feasible: list[tuple[SimNode, NodeFit | None, int]], extra_dra: int = 0
    ) -> tuple[SimNode, NodeFit | None, int]:
        top = max(f[2] for f in feasible) + extra_dra
        weight = self.control.dra_score_weight if top else 0
        # Nodes of one template in the same state score the same: compute each state once.
        memo: dict[tuple[int, int, int, int, int, int], int] = {}
        best = -1
        ties: list[tuple[SimNode, NodeFit | None, int]] = []
        for entry in feasible:
            node, _, dra = entry
            state = (node.nz_cpu, node.nz_mem, node.alloc_cpu, node.alloc_mem, node.req_cpu, node.req_mem)
            total = memo.get(state)
            if total is None:
                total = base_score(state, pod)
                memo[state] = total
            if weight:
                # DefaultNormalizeScore (score * 100 / highest), then the plugin's weight.
                total += weight * ((dra + extra_dra) * MAX_NODE_SCORE // top)
            if total > best:
                best = total
                ties = [entry]
            elif total == best:
                ties.append(entry)
        return ties[0] if len(ties) == 1 else ties[self.rng.randrange(len(ties))]


def _score_class(idx: ShapeIndex, node: SimNode, pod: SimPod, dra: int) -> tuple[int, int]:
    """(resource score, raw DRA score): equal for nodes that :meth:`Scheduler._select` scores equally."""
    state = (node.nz_cpu, node.nz_mem, node.alloc_cpu, node.alloc_mem, node.req_cpu, node.req_mem)
    base = idx.base_memo.get(state)
    if base is None:
        base = base_score(state, pod)
        idx.base_memo[state] = base
    return base, dra


def _histogram(idx: ShapeIndex) -> tuple[dict[str, int], int]:
    """FitError's reasons and the Unschedulable (preemption-resolvable) node count from verdict counts."""
    reasons: dict[str, int] = {}
    resolvable = 0
    for code in range(1, NUM_CODES):
        count = idx.reasons[code]
        if not count or not code & RESOURCE_BITS or code & (NOT_AVAILABLE_CODE | CANNOT_ALLOCATE_CODE):
            continue
        if not code & UNRESOLVABLE:
            resolvable += count
        for bit, reason in ((TOO_MANY_PODS, "Too many pods"), (INSUFFICIENT_CPU, "Insufficient cpu"), (INSUFFICIENT_MEMORY, "Insufficient memory")):
            if code & bit:
                reasons[reason] = reasons.get(reason, 0) + count
    for code, reason in ((NOT_AVAILABLE_CODE, NOT_AVAILABLE), (CANNOT_ALLOCATE_CODE, CANNOT_ALLOCATE)):
        if idx.reasons[code]:
            reasons[reason] = idx.reasons[code]
    return reasons, resolvable


def base_score(state: Sequence[int], pod: SimPod) -> int:
    """NodeResourcesFit (LeastAllocated) plus NodeResourcesBalancedAllocation for a node state.

    ``state`` starts with (nz_cpu, nz_mem, alloc_cpu, alloc_mem, req_cpu, req_mem); nodes
    with equal states score equally, which both scheduler paths rely on.
    """
    nz_cpu, nz_mem, alloc_cpu, alloc_mem, req_cpu, req_mem = state[:6]
    # NodeResourcesFit, LeastAllocated: mean of cpu and memory (weights 1 and 1).
    total = (_least_requested(nz_cpu + pod.nz_cpu, alloc_cpu) + _least_requested(nz_mem + pod.nz_mem, alloc_mem)) // 2
    if pod.cpu or pod.mem:
        # NodeResourcesBalancedAllocation for cpu and memory (skipped for best-effort pods).
        fractions = []
        for req, cap in ((req_cpu + pod.cpu, alloc_cpu), (req_mem + pod.mem, alloc_mem)):
            fractions.append(min(req / cap, 1.0) if cap else 1.0)
        std = abs(fractions[0] - fractions[1]) / 2
        total += int((1 - std) * MAX_NODE_SCORE)
    return total


def _dra_score(pending: Sequence[SimClaim], answer: NodeFit) -> int:
    """DynamicResources Score of a node from its new allocations (see :func:`_claim_dra_score`)."""
    return sum(_claim_dra_score(claim.obj.get("spec") or {}, result) for claim, result in zip(pending, answer.results, strict=False))


def _claim_dra_score(spec: Mapping[str, Any], allocation: Mapping[str, Any]) -> int:
    """For each firstAvailable request of a claim, 8 - index of the subrequest its allocation chose."""
    score = 0
    chosen = set()
    for r in (allocation.get("devices") or {}).get("results") or []:
        request = str(r.get("request", ""))
        if "/" in request:
            chosen.add(request)
    if not chosen:
        return score
    for req in (spec.get("devices") or {}).get("requests") or []:
        for i, sub in enumerate(req.get("firstAvailable") or []):
            if f"{req.get('name')}/{sub.get('name')}" in chosen:
                score += MAX_SUBREQUESTS - i
    return score


def _preemption(num_nodes: int, resolvable: int, unresolvable: int) -> str:
    """DefaultPreemption's PostFilter message when every pod has the same priority."""
    parts = []
    if resolvable:
        parts.append(f"{resolvable} {NO_VICTIMS}")
    if unresolvable:
        parts.append(f"{unresolvable} {PREEMPTION_NOT_HELPFUL}")
    return f"preemption: 0/{num_nodes} nodes are available: " + ", ".join(sorted(parts)) + "."
