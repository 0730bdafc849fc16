"""``diagnose``: why a pod (or claim) waits, walking the control plane's stages in order.

Stages (reference notes §5.4), numbered as in the code below:

1. claims — the claim controller and PreEnqueue: template missing, creation failed, claim
   missing, being deleted, not owned;
2. classes — PreFilter: a request names a class that does not exist, or uses a feature that is off;
3. selectors — compile errors and the cost limit (runtime errors surface in stage 6);
4. nodes — node-level reasons outside DRA (nodeSelector, affinity, taints, NodeResourcesFit);
5. allocated claims — allocated on nodes the pod cannot use;
6. devices — per request a funnel (:mod:`drakit.explain.funnel`) with near misses; then devices
   in use (holders, expected release), counters and capacity; then the allocator itself on the
   most promising nodes for constraints that fail together, with the best partial assignment;
7. node preparation — kubelet ``FailedPrepareDynamicResources`` and binding conditions.

Every situation becomes a :class:`Reason`; the headline is the first blocking finding in stage
order (a claim that merely is not created yet yields to a later "never" or "broken" finding, since
creating it would not help).  Pure: no I/O, inputs are never modified.
"""

from __future__ import annotations

import copy
import difflib
import functools
import re
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, TypeVar

from drakit.allocator import allocate, has_allocation
from drakit.allocator.inventory import Inventory
from drakit.allocator.trace import Trace
from drakit.corev1 import (
    PODS,
    Amounts,
    Insufficient,
    find_untolerated_taint,
    node_allocatable,
    node_resource_fit,
    node_selector_matches,
    pod_matches_node_affinity,
    pod_requests,
    requested_by_node,
    show_amount,
    tolerates,
)
from drakit.errors import InvalidArgument, NotFound
from drakit.explain.diagnosis import Diagnosis, Funnel, Holder, NodeSummary, Partial
from drakit.explain.events import (
    CLAIM_CREATION_REASON,
    PREPARE_REASON,
    UNPREPARE_REASON,
    classify_claim_creation,
    classify_prepare,
    classify_unprepare,
    in_time_order,
    is_unprepare,
    scheduler_message,
)
from drakit.explain.funnel import (
    ClusterIndex,
    Device,
    FunnelResult,
    RequestSpec,
    Selectors,
    build_funnel,
    claim_requests,
    device_nodes,
    device_product,
    reach_map,
)
from drakit.features import Features
from drakit.gostr import quote
from drakit.inventory.snapshot import ClusterSnapshot, Obj, key_of, name_of, namespace_of
from drakit.model.workloads import WORKLOAD_KINDS
from drakit.outcomes import Code, ExplainCode, Owner, Reason, ReasonCode, Stage, Verdict, verdict_of

_T = TypeVar("_T")

MAX_COST = 1_000_000  # CELSelectorExpressionMaxCost
MAX_ALLOCATOR_NODES = 16
"""Nodes the allocator is run on when counting says a pod could fit: the most promising first.
Each run costs a Filter call; sixteen keeps a diagnosis well under a second on 5,000 nodes."""

_STAGE_ORDER = list(Stage)


@dataclass
class _Claim:
    """A claim of the pod as the diagnosis sees it."""

    pod_claim: str
    key: str  # ns/name (or ns/<pod>-<podclaim> for one not created yet)
    obj: Obj | None
    generated: bool = False
    synthesized: bool = False  # built from the template because the controller has not yet

    @property
    def allocated(self) -> bool:
        return self.obj is not None and has_allocation(self.obj)


class Shared:
    """What every diagnosis of one input and feature set can share: index, selectors, reach.

    ``explain pods --all-pending`` diagnoses many pods of one cluster state; the cluster index
    (one pass over every device), the compiled selectors and their per-projection outcomes,
    and the devices reachable from a set of usable nodes are the same for all of them.
    """

    def __init__(self, inp: ClusterSnapshot, features: Features) -> None:
        self.inp = inp
        self.features = features
        self.selectors = Selectors(features)
        self._index: ClusterIndex | None = None
        self._reach: dict[tuple[str, ...], dict[int, bool]] = {}
        self._positions: dict[int, int] | None = None
        self._facts: dict[tuple[str, ...], list[tuple[Any, ...]]] = {}
        self._usable: dict[str, tuple[list[Obj], Any]] = {}
        self._requested: dict[str, Amounts] | None = None
        self._once: dict[Hashable, tuple[tuple[object, ...], Any]] = {}

    def once(self, key: Hashable, held: tuple[object, ...], compute: Callable[[], _T]) -> _T:
        """``compute()`` once per ``key`` and identity of the objects ``held``.

        Walks over many devices or nodes depend on lists that the funnel and the node
        partition hand out once per candidate set; shapes that share those lists share the walk.
        The objects are held so that their ids stay theirs.
        """
        full = (key, *map(id, held))
        hit = self._once.get(full)
        if hit is None or any(a is not b for a, b in zip(hit[0], held, strict=True)):
            hit = self._once[full] = (held, compute())
        return hit[1]

    @property
    def index(self) -> ClusterIndex:
        if self._index is None:
            allocated = [cl for cl in self.inp.claims if has_allocation(cl)]
            self._index = ClusterIndex(self.inp.slices, self.features, allocated, self.inp.taint_rules)
        return self._index

    @property
    def positions(self) -> dict[int, int]:
        """id(device) -> its position in ``index.devices``."""
        if self._positions is None:
            self._positions = {id(d): i for i, d in enumerate(self.index.devices)}
        return self._positions

    def device_facts(self, attrs: tuple[str, ...]) -> list[tuple[Any, ...]]:
        """Per device of ``index.devices``: the values of ``attrs`` and whether it is tainted,
        consumes counters or is shared (what a node shape needs besides the selector groups)."""
        hit = self._facts.get(attrs)
        if hit is None:
            hit = self._facts[attrs] = [_device_facts(d, attrs) for d in self.index.devices]
        return hit

    def usable(self, pod: Obj | None, compute: Callable[[], tuple[list[Obj], Any]]) -> tuple[list[Obj], Any]:
        """``compute()`` once per node-relevant pod spec (nodeName, selector, affinity, tolerations)."""
        spec = (pod or {}).get("spec") or {}
        key = repr([spec.get(k) for k in ("nodeName", "nodeSelector", "affinity", "tolerations")])
        hit = self._usable.get(key)
        if hit is None:
            hit = self._usable[key] = compute()
        return hit

    @property
    def requested(self) -> dict[str, Amounts]:
        """Per node: what its bound, non-terminal pods request (the scheduler's NodeInfo)."""
        if self._requested is None:
            self._requested = requested_by_node(self.inp.pods)
        return self._requested

    def reach(self, usable: Sequence[Obj]) -> dict[int, bool]:
        return self.once("reach", (usable,), lambda: self._reach_of(usable))

    def _reach_of(self, usable: Sequence[Obj]) -> dict[int, bool]:
        key = tuple(name_of(n) for n in usable)
        hit = self._reach.get(key)
        if hit is None:
            hit = self._reach[key] = reach_map(self.index, usable)
        return hit


@dataclass
class _Ctx:
    inp: ClusterSnapshot
    features: Features
    timeout: float | None
    shared: Shared
    findings: list[Reason] = field(default_factory=list)
    blockers: list[Reason] = field(default_factory=list)
    funnels: list[Funnel] = field(default_factory=list)
    holders: list[Holder] = field(default_factory=list)
    partial: Partial | None = None
    nodes: NodeSummary | None = None
    placement: str = ""
    from_template: bool = False  # a claim is analysed as the claim controller would create it
    scheduler: str = ""

    def add(
        self,
        code: Code,
        message: str,
        stage: Stage,
        verdict: Verdict,
        owner: Owner,
        *,
        blocking: bool = True,
        hint: str = "",
        claim: str = "",
        request: str = "",
        device: str = "",
        **detail: Any,
    ) -> Reason:
        f = Reason(
            code=code,
            message=message,
            stage=stage,
            verdict=verdict,
            owner=owner,
            blocking=blocking,
            claim=claim,
            request=request,
            device=device,
            detail=MappingProxyType(detail),
            hint=hint,
        )
        self.findings.append(f)
        if blocking:
            self.blockers.append(f)
        return f


# --- entry points -----------------------------------------------------------------------------


def diagnose(
    inp: ClusterSnapshot,
    kind: str,
    name: str,
    namespace: str = "default",
    *,
    features: Features | None = None,
    timeout: float | None = 10.0,
    shared: Shared | None = None,
) -> Diagnosis:
    """Explain ``pod``/``claim`` ``namespace/name``; raises :class:`NotFound` if it is not there.

    ``shared`` (for the same ``inp`` and ``features``) carries work over from earlier diagnoses.
    """
    features = features or Features.for_version()
    if shared is None or shared.inp is not inp or shared.features != features:
        shared = Shared(inp, features)
    ctx = _Ctx(inp, features, timeout, shared)
    return _diagnose(ctx, kind, name, namespace)


WORKLOAD_KINDS_LOWER = {k.lower(): k for k in WORKLOAD_KINDS}
"""``job`` -> ``Job``: the workload kinds explain resolves to their template's pod."""


def _diagnose(ctx: _Ctx, kind: str, name: str, namespace: str) -> Diagnosis:
    inp = ctx.inp
    workload = WORKLOAD_KINDS_LOWER.get(kind.lower())
    if workload is not None:  # a workload answers for the pod its template makes
        pod = inp.workload_pod(workload, name, namespace)
        if pod is None:
            raise NotFound(f"{kind.lower()} {quote(namespace + '/' + name)} not found in the input")
        kind, name = "pod", name_of(pod)
    if kind == "pod":
        pod = inp.find_pod(name, namespace)
        if pod is None:
            raise NotFound(f"pod {quote(namespace + '/' + name)} not found in the input")
        ctx.scheduler = scheduler_message(pod, inp.events_for("Pod", name, namespace))
        _diagnose_pod(ctx, pod)
        target = f"pod/{namespace}/{name}"
        origin = inp.origins.get(f"{namespace}/{name}")
        if origin:  # only a StatefulSet's pod names are known before its controller makes them
            generated = "" if origin.startswith("StatefulSet ") else "; the controller generates the pod's name"
            return replace(_conclude(ctx, target), origin=f"pod template of {origin}{generated}")
    elif kind in ("claim", "resourceclaim"):
        claim = inp.find_claim(name, namespace)
        if claim is None:
            raise NotFound(f"resourceclaim {quote(namespace + '/' + name)} not found in the input")
        _diagnose_claim(ctx, claim)
        target = f"claim/{namespace}/{name}"
    else:
        raise InvalidArgument(f"cannot explain a {quote(kind)}: only pods, resource claims and workloads (job/NAME, deployment/NAME...) are explained")
    return _conclude(ctx, target)


def _conclude(ctx: _Ctx, target: str) -> Diagnosis:
    head = _headline(ctx.blockers)
    if head is None:
        head = next((f for f in ctx.findings if f.verdict == Verdict.OK), None)
    if head is None:
        head = ctx.add(
            ExplainCode.FITS,
            "nothing blocks: the pod can be placed now" + (f" on node {ctx.placement}" if ctx.placement else ""),
            Stage.DONE,
            Verdict.OK,
            Owner.PLATFORM,
            blocking=False,
        )
    return Diagnosis(
        target=target,
        verdict=head.verdict,
        code=head.code,
        headline=head.message,
        owner=head.owner,
        fix=head.hint,
        stage=head.stage,
        findings=tuple(ctx.findings),
        funnels=tuple(ctx.funnels),
        holders=tuple(ctx.holders),
        partial=ctx.partial,
        nodes=ctx.nodes,
        placement=ctx.placement,
        scheduler=ctx.scheduler,
    )


def _headline(blockers: Sequence[Reason]) -> Reason | None:
    if not blockers:
        return None
    ordered = sorted(blockers, key=lambda f: _STAGE_ORDER.index(f.stage))
    first = ordered[0]
    if first.code == ExplainCode.CLAIM_NOT_CREATED:
        worse = [f for f in ordered if f.verdict in (Verdict.NEVER, Verdict.BROKEN)]
        if worse:
            return worse[0]
        later = [f for f in ordered if f.code not in (ExplainCode.CLAIM_NOT_CREATED, ExplainCode.FITS)]
        if later:
            return later[0]
    return first


# --- 1. claims --------------------------------------------------------------------------------


def _pod_claims(ctx: _Ctx, pod: Obj) -> list[_Claim] | None:
    """The pod's claims in spec order; ``None`` when a claim-stage problem blocks everything."""
    ns = namespace_of(pod)
    pod_name = name_of(pod)
    statuses = {
        s.get("name"): s for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []
    }
    pod_uid = (pod.get("metadata") or {}).get("uid")
    out: list[_Claim] = []
    hard = False
    failures = [
        e for e in ctx.inp.events_for("Pod", pod_name, ns) if e.get("reason") == CLAIM_CREATION_REASON
    ]
    for pc in (pod.get("spec") or {}).get("resourceClaims") or []:
        pc_name = str(pc.get("name") or "")
        if pc.get("resourceClaimName"):
            cname = str(pc["resourceClaimName"])
            claim = ctx.inp.find_claim(cname, ns)
            if claim is None:
                ctx.add(
                    ExplainCode.CLAIM_MISSING,
                    f"pod claim {pc_name}: ResourceClaim {quote(ns + '/' + cname)} does not exist",
                    Stage.CLAIMS, Verdict.WAITING, Owner.APPLICATION,
                    hint=f"create ResourceClaim {cname} in namespace {ns}, or fix resourceClaimName",
                    claim=f"{ns}/{cname}",
                )
                hard = True
                continue
            out.append(_Claim(pc_name, key_of(claim), claim))
        elif pc.get("resourceClaimTemplateName"):
            tname = str(pc["resourceClaimTemplateName"])
            status = statuses.get(pc_name)
            if status is not None:
                generated = status.get("resourceClaimName")
                if not generated:
                    continue  # "no claim was needed"
                claim = ctx.inp.find_claim(str(generated), ns)
                if claim is None:
                    ctx.add(
                        ExplainCode.CLAIM_MISSING,
                        f"pod claim {pc_name}: generated ResourceClaim {quote(f'{ns}/{generated}')} does not exist",
                        Stage.CLAIMS, Verdict.WAITING, Owner.PLATFORM,
                        hint="the claim controller recreates it; check kube-controller-manager logs",
                        claim=f"{ns}/{generated}",
                    )
                    hard = True
                    continue
                owners = (claim.get("metadata") or {}).get("ownerReferences") or []
                if pod_uid and not any(o.get("controller") and o.get("uid") == pod_uid for o in owners):
                    ctx.add(
                        ExplainCode.CLAIM_NOT_OWNED,
                        f"ResourceClaim {ns}/{generated} was not created for pod {ns}/{pod_name} (pod is not owner)",
                        Stage.CLAIMS, Verdict.BROKEN, Owner.PLATFORM,
                        hint="delete the stale claim so that the controller creates a new one",
                        claim=f"{ns}/{generated}",
                    )
                    hard = True
                    continue
                out.append(_Claim(pc_name, key_of(claim), claim, generated=True))
                continue
            template = ctx.inp.find_template(tname, ns)
            mine = [e for e in failures if f"PodResourceClaim {pc_name}:" in str(e.get("message") or "")] or failures
            if mine:
                msg = str(mine[-1].get("message") or "")
                failure = classify_claim_creation(msg, template=tname, namespace=ns)
                owner, hint = failure.owner, failure.next_step
                ctx.add(
                    ExplainCode.CLAIM_CREATION_FAILED,
                    f"pod claim {pc_name}: the claim controller failed: {msg}",
                    Stage.CLAIMS, Verdict.BROKEN, owner, hint=hint, event=msg,
                )
                hard = True
                continue
            if template is None:
                known = [name_of(t) for t in ctx.inp.templates if namespace_of(t) == ns]
                close = difflib.get_close_matches(tname, known, n=1)
                ctx.add(
                    ExplainCode.TEMPLATE_MISSING,
                    f"pod claim {pc_name}: ResourceClaimTemplate {quote(ns + '/' + tname)} does not exist",
                    Stage.CLAIMS, Verdict.BROKEN, Owner.APPLICATION,
                    hint=(f"did you mean {close[0]}? " if close else "")
                    + f"create ResourceClaimTemplate {tname} in namespace {ns}",
                )
                hard = True
                continue
            synthesized = claim_from_template(pod, pc_name, template)
            # A pod read from a cluster (it has a creationTimestamp) whose claim is still
            # missing waits for the controller; manifests never contain generated claims, so
            # there the claim is simply analysed as the controller would create it.
            observed = bool((pod.get("metadata") or {}).get("creationTimestamp"))
            ctx.add(
                ExplainCode.CLAIM_NOT_CREATED,
                f"pod claim {pc_name}: ResourceClaim not created yet (from template {tname}); analysed as if created",
                Stage.CLAIMS, Verdict.WAITING, Owner.PLATFORM, blocking=observed,
                hint="the claim controller creates it; if it never appears, check kube-controller-manager",
                claim=key_of(synthesized),
            )
            ctx.from_template = True
            out.append(_Claim(pc_name, key_of(synthesized), synthesized, generated=True, synthesized=True))
        else:
            ctx.add(
                ExplainCode.POD_CLAIM_EMPTY,
                f'pod claim {pc_name}: none of resourceClaimName, resourceClaimTemplateName is set',
                Stage.CLAIMS, Verdict.BROKEN, Owner.APPLICATION,
                hint="set exactly one of resourceClaimName or resourceClaimTemplateName",
            )
            hard = True
    for c in out:
        if c.obj is not None and (c.obj.get("metadata") or {}).get("deletionTimestamp"):
            ctx.add(
                ExplainCode.CLAIM_BEING_DELETED,
                f"resourceclaim {quote(c.key)} is being deleted",
                Stage.CLAIMS, Verdict.WAITING, Owner.PLATFORM,
                hint="wait for the deletion to finish; a generated claim is then recreated",
                claim=c.key,
            )
            hard = True
    return None if hard else out


def claim_from_template(pod: Obj, pod_claim: str, template: Obj) -> dict[str, Any]:
    """The claim the claim controller would create for ``pod_claim`` from ``template``.

    Upstream generates the name ``<pod>-<pod claim>-<5 random characters>``; the suffix is
    left off here so that answers are reproducible.  Owner, labels and annotations are as upstream's
    controller sets them (the template's, plus the pod-claim-name annotation).
    """
    spec = (template.get("spec") or {}).get("spec") or {}
    template_meta = (template.get("spec") or {}).get("metadata") or {}
    meta: dict[str, Any] = {
        "name": f"{name_of(pod)}-{pod_claim}",
        "namespace": namespace_of(pod),
        "annotations": {**(template_meta.get("annotations") or {}), "resource.kubernetes.io/pod-claim-name": pod_claim},
    }
    uid = (pod.get("metadata") or {}).get("uid")
    if uid:
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": name_of(pod), "uid": uid, "controller": True,
             "blockOwnerDeletion": True}
        ]
    labels = template_meta.get("labels")
    if labels:
        meta["labels"] = dict(labels)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
            "spec": copy.deepcopy(dict(spec))}


# --- 2./3. classes and selectors --------------------------------------------------------------


def _check_requests(ctx: _Ctx, claims: Sequence[_Claim], sel: Selectors) -> bool:
    """Stages 2 and 3 for the unallocated claims; False when something blocks."""
    ok = True
    known = sorted(name_of(c) for c in ctx.inp.classes)
    f = ctx.features
    for c in claims:
        if c.allocated or c.obj is None:
            continue
        for ri, alts in enumerate(claim_requests(c.obj, c.key)):
            raw = (((c.obj.get("spec") or {}).get("devices") or {}).get("requests") or [])[ri]
            rname = str(raw.get("name") or "")
            if raw.get("firstAvailable") and not f.prioritized_list:
                ctx.add(
                    ExplainCode.FEATURE_DISABLED,
                    f"claim {c.key}, request {rname}: has subrequests, but the DRAPrioritizedList feature is disabled",
                    Stage.CLASSES, Verdict.BROKEN, Owner.PLATFORM,
                    hint="enable DRAPrioritizedList, or use a plain 'exactly' request",
                    claim=c.key, request=rname, gate="DRAPrioritizedList",
                )
                ok = False
                continue
            for req in alts:
                if req.admin and not f.admin_access:
                    ctx.add(
                        ExplainCode.FEATURE_DISABLED,
                        f"claim {c.key}, request {req.name}: admin access is requested, but the feature is disabled",
                        Stage.CLASSES, Verdict.BROKEN, Owner.PLATFORM,
                        hint="enable DRAAdminAccess (and label the namespace resource.kubernetes.io/admin-access=true)",
                        claim=c.key, request=req.name, gate="DRAAdminAccess",
                    )
                    ok = False
                if req.capacity and not f.consumable_capacity:
                    ctx.add(
                        ExplainCode.FEATURE_DISABLED,
                        f"claim {c.key}, request {req.name}: has capacity requests, but the DRAConsumableCapacity feature is disabled",
                        Stage.CLASSES, Verdict.BROKEN, Owner.PLATFORM,
                        hint="enable DRAConsumableCapacity, or drop the capacity requests",
                        claim=c.key, request=req.name, gate="DRAConsumableCapacity",
                    )
                    ok = False
                cls = ctx.inp.find_class(req.class_name)
                if cls is None:
                    close = difflib.get_close_matches(req.class_name, known, n=1, cutoff=0.7)
                    ctx.add(
                        ExplainCode.CLASS_MISSING,
                        f"claim {c.key}, request {req.name}: device class {req.class_name or '(empty)'} does not exist",
                        Stage.CLASSES, Verdict.BROKEN,
                        Owner.APPLICATION if close or not known else Owner.PLATFORM,
                        hint=(
                            f"did you mean {close[0]}?"
                            if close
                            else "install the driver's DeviceClass"
                            + (f" (classes present: {', '.join(known[:4])})" if known else "")
                        ),
                        claim=c.key, request=req.name, deviceClass=req.class_name,
                    )
                    ok = False
                    continue
                class_exprs = [
                    str(((s or {}).get("cel") or {}).get("expression", ""))
                    for s in (cls.get("spec") or {}).get("selectors") or []
                ]
                for where, exprs in (("class", class_exprs), ("request", list(req.selectors))):
                    for i, expr in enumerate(exprs):
                        ok = _check_selector(ctx, sel, c.key, req, where, i, expr) and ok
    return ok


def _check_selector(ctx: _Ctx, sel: Selectors, claim: str, req: RequestSpec, where: str, i: int, expr: str) -> bool:
    owner = Owner.PLATFORM if where == "class" else Owner.APPLICATION
    chain = f"class {req.class_name}" if where == "class" else f"claim {claim}, request {req.name}"
    compiled = sel.compiled(expr)
    err = getattr(compiled, "error", None)
    if err is not None:
        msg = str(getattr(err, "message", None) or err)
        ctx.add(
            ExplainCode.SELECTOR_COMPILE_ERROR,
            f"{chain}: selector #{i}: CEL compile error: {msg.splitlines()[0] if msg else ''}",
            Stage.SELECTORS, Verdict.BROKEN, owner,
            hint="check the expression with `drakit lint`; it is rejected before any device is looked at",
            claim=claim, request=req.name, selector=i, expression=expr, error=msg,
        )
        return False
    cost = getattr(compiled, "cost_estimate", None)
    if isinstance(cost, int | float) and cost > MAX_COST:
        ctx.add(
            ExplainCode.SELECTOR_COST_LIMIT,
            f"{chain}: selector #{i}: estimated cost {int(cost)} exceeds the limit {MAX_COST}",
            Stage.SELECTORS, Verdict.BROKEN, owner,
            hint="simplify the expression (avoid nested comprehensions over attributes)",
            claim=claim, request=req.name, selector=i, expression=expr, cost=int(cost),
        )
        return False
    return True


# --- 4. nodes ---------------------------------------------------------------------------------


def _nodes(inp: ClusterSnapshot) -> tuple[list[Obj], bool]:
    if inp.nodes:
        return list(inp.nodes), False
    names = sorted({str((s.get("spec") or {}).get("nodeName")) for s in inp.slices if (s.get("spec") or {}).get("nodeName")})
    return [{"metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}}} for n in names], True


def node_exclusion(pod: Obj, node: Obj, *, comparison_operators: bool = False) -> str:
    """Why the scheduler's other plugins rule the node out for the pod (scheduler wording), or ''.

    ``comparison_operators``: the TaintTolerationComparisonOperators gate (``Lt``/``Gt``
    tolerations), which kube-scheduler hands its TaintToleration plugin."""
    spec = pod.get("spec") or {}
    meta = node.get("metadata") or {}
    tolerations = spec.get("tolerations") or []
    if spec.get("nodeName") and spec["nodeName"] != meta.get("name"):
        return "node(s) didn't match the requested node name"
    if (node.get("spec") or {}).get("unschedulable") and not any(
        tolerates(t, {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}) for t in tolerations
    ):
        return "node(s) were unschedulable"
    if not pod_matches_node_affinity(spec, node):
        return "node(s) didn't match Pod's node affinity/selector"
    if find_untolerated_taint((node.get("spec") or {}).get("taints") or [], tolerations, ("NoSchedule", "NoExecute"),
                              comparison_operators=comparison_operators):
        # kube-scheduler 1.37's TaintToleration wording (older releases named the taint).
        return "node(s) had untolerated taint(s)"
    return ""


def _usable_nodes(ctx: _Ctx, pod: Obj | None) -> list[Obj]:
    nodes, inferred = _nodes(ctx.inp)

    def partition() -> tuple[list[Obj], Any]:
        usable: list[Obj] = []
        excluded: dict[str, int] = {}
        taints: dict[str, int] = {}  # "key=value:effect" -> nodes it keeps the pod off
        gate = ctx.features.taint_comparison_operators
        for n in nodes:
            why = node_exclusion(pod, n, comparison_operators=gate) if pod is not None else ""
            if why:
                excluded[why] = excluded.get(why, 0) + 1
                if pod is not None and "taint" in why:
                    t = untolerated_node_taint(pod, n, comparison_operators=gate)
                    if t:
                        taints[t] = taints.get(t, 0) + 1
            else:
                usable.append(n)
        return usable, (excluded, taints)

    # The shared list itself (never modified): walks over usable nodes are memoised by it.
    usable, (excluded, taints) = ctx.shared.usable(pod, partition)
    excluded = dict(excluded)
    if pod is not None and not inferred and usable:
        usable = _resource_fit(ctx, pod, usable, excluded)
        if not usable:
            return usable
    ctx.nodes = NodeSummary(len(nodes), len(usable), MappingProxyType(dict(sorted(excluded.items()))), inferred)
    if excluded:
        parts = ", ".join(f"{n} {why}" for why, n in sorted(excluded.items()))
        named = ", ".join(f"{t} on {n} node(s)" for t, n in sorted(taints.items(), key=lambda kv: (-kv[1], kv[0])))
        if named:
            parts += f" (not tolerated: {named})"
        msg = f"{len(usable)}/{len(nodes)} nodes are usable by the pod: {parts}"
        toleration = (
            "add a toleration for " + ", ".join(sorted(taints)) + " to the pod" if taints else "add a toleration for the node taint"
        )
        if not usable:
            taint_only = all("taint" in w or "unschedulable" in w for w in excluded)
            ctx.add(
                ExplainCode.NODE_TAINTED if taint_only else ExplainCode.NODE_SELECTOR_MISMATCH,
                f"no node is usable by the pod: {parts}",
                Stage.NODES,
                Verdict.WAITING if taint_only else Verdict.NEVER,
                Owner.PLATFORM if taint_only else Owner.APPLICATION,
                hint=toleration if taint_only else "relax the pod's nodeSelector/affinity",
                taints=sorted(taints),
            )
        else:
            code = (
                ExplainCode.NODE_SELECTOR_MISMATCH
                if any("affinity" in w for w in excluded)
                else ExplainCode.NODE_INSUFFICIENT_RESOURCES
                if all(w.startswith(("Insufficient ", "Too many pods")) for w in excluded)
                else ExplainCode.NODE_TAINTED
            )
            ctx.add(code, msg, Stage.NODES, Verdict.WAITING, Owner.APPLICATION, blocking=False, excluded=dict(excluded),
                    taints=sorted(taints))
    return usable


def _resource_fit(ctx: _Ctx, pod: Obj, nodes: list[Obj], excluded: dict[str, int]) -> list[Obj]:
    """NodeResourcesFit over the nodes the other plugins leave; the rest are counted in ``excluded``.

    When none fits the finding is the node stage's blocker: WAITING when some node could hold
    the pod once its bound pods finish, NEVER when the request exceeds every node's allocatable.
    """
    want = pod_requests(pod)
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    fitting: list[Obj] = []
    short: list[tuple[Obj, list[Insufficient]]] = []
    for n in nodes:
        if not (n.get("status") or {}).get("allocatable"):
            fitting.append(n)  # a hand-written Node without a status: its capacity is unknown, not zero
            continue
        used = dict(ctx.shared.requested.get(name_of(n), {}))
        if spec.get("nodeName") == name_of(n) and status.get("phase") not in ("Succeeded", "Failed"):
            # A bound pod is already part of its node's total: take it out again.
            used = {k: v - want.get(k, 0) for k, v in used.items()}
            used[PODS] = used.get(PODS, 1) - 1
        lacks = node_resource_fit(want, node_allocatable(n), used)
        if lacks:
            short.append((n, lacks))
            for x in lacks:
                excluded[x.reason] = excluded.get(x.reason, 0) + 1
        else:
            fitting.append(n)
    if fitting:
        return fitting if short else nodes  # the shared list itself when nothing is out (memoised walks)
    total, _ = _nodes(ctx.inp)
    ctx.nodes = NodeSummary(len(total), 0, MappingProxyType(dict(sorted(excluded.items()))), False)
    parts = ", ".join(f"{n} {why}" for why, n in sorted(excluded.items()))
    hopeful = [lacks for _, lacks in short if not any(x.unresolvable for x in lacks)]
    if not hopeful:
        res = next(x for x in short[0][1] if x.unresolvable).resource
        biggest = max(node_allocatable(n).get(res, 0) for n, _ in short)
        hint = (f"requests {show_amount(res, want.get(res, 1))} {res}; largest node allocatable "
                f"{show_amount(res, biggest)}: lower the pod's requests or add larger nodes")
        verdict, owner = Verdict.NEVER, Owner.APPLICATION
    else:
        res = hopeful[0][0].resource
        best = max((x for lacks in hopeful for x in lacks if x.resource == res), key=lambda x: x.capacity - x.used)
        if res == PODS:
            hint = f"every usable node is at its pod limit ({best.capacity}); wait for bound pods to finish"
        else:
            hint = (f"requests {show_amount(res, best.requested)} {res}; most free on a usable node "
                    f"{show_amount(res, best.capacity - best.used)} of {show_amount(res, best.capacity)} allocatable: "
                    "wait for bound pods to finish or lower the pod's requests")
        verdict, owner = Verdict.WAITING, Owner.PLATFORM
    ctx.add(
        ExplainCode.NODE_INSUFFICIENT_RESOURCES,
        f"no node has room for the pod: {parts}",
        Stage.NODES, verdict, owner, hint=hint,
        resource=res, requested=show_amount(res, want.get(res, 0)) if res != PODS else "1",
        excluded=dict(excluded),
    )
    return []


def untolerated_node_taint(pod: Obj, node: Obj, *, comparison_operators: bool = False) -> str:
    """The first NoSchedule/NoExecute taint of ``node`` the pod does not tolerate, as ``key=value:effect``."""
    tolerations = (pod.get("spec") or {}).get("tolerations") or []
    taints = (node.get("spec") or {}).get("taints") or []
    taint = find_untolerated_taint(taints, tolerations, ("NoSchedule", "NoExecute"),
                                   comparison_operators=comparison_operators)
    if taint is None:
        return ""
    value = taint.get("value") or ""
    return f"{taint.get('key', '')}{'=' + value if value else ''}:{taint.get('effect')}"


# --- entry per target -------------------------------------------------------------------------


def _diagnose_pod(ctx: _Ctx, pod: Obj) -> None:
    phase = (pod.get("status") or {}).get("phase")
    bound = (pod.get("spec") or {}).get("nodeName")
    # On a bound pod the kubelet's newest word comes first: it also explains a claim deleted
    # after scheduling ("fetch ResourceClaim ... not found"), which the claim checks would only
    # call missing.
    if bound and phase in (None, "Pending") and _kubelet_failure(ctx, pod, str(bound)):
        return
    claims = _pod_claims(ctx, pod)  # 1.
    if claims is None:
        return
    if bound and _not_released(ctx, pod, claims, str(bound)):
        return
    if phase == "Running":
        ctx.add(ExplainCode.RUNNING, f"pod {key_of(pod)} is running on node {bound or '?'}",
                Stage.DONE, Verdict.OK, Owner.PLATFORM, blocking=False)
        return
    if bound and claims and all(c.allocated for c in claims):
        _node_prepare(ctx, pod, claims, str(bound))  # 7.
        return
    if claims and all(c.allocated and _reserved_for(c.obj, pod) for c in claims):
        # Held in PreBind: the scheduler allocated and reserved every claim for this pod (it is
        # only nominated to a node) and waits for the devices' binding conditions.
        for c in claims:
            if c.obj is not None and _binding(ctx, c.obj, c.key):
                return
    _analyse(ctx, pod, claims)


def _reserved_for(claim: Obj | None, pod: Obj) -> bool:
    uid = (pod.get("metadata") or {}).get("uid")
    name = name_of(pod)
    return claim is not None and any(
        r.get("resource") == "pods" and (r.get("uid") == uid if uid else r.get("name") == name)
        for r in (claim.get("status") or {}).get("reservedFor") or []
    )


def _diagnose_claim(ctx: _Ctx, claim: Obj) -> None:
    c = _Claim("", key_of(claim), claim)
    if (claim.get("metadata") or {}).get("deletionTimestamp"):
        ctx.add(ExplainCode.CLAIM_BEING_DELETED, f"resourceclaim {quote(c.key)} is being deleted",
                Stage.CLAIMS, Verdict.WAITING, Owner.PLATFORM, claim=c.key,
                hint="wait for the deletion to finish")
        return
    if c.allocated:
        results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
        users = [r.get("name", "") for r in (claim.get("status") or {}).get("reservedFor") or []]
        devices = ", ".join(f"{r.get('driver')}/{r.get('pool')}/{r.get('device')}" for r in results[:4])
        ctx.add(
            ExplainCode.ALLOCATED,
            f"claim {c.key} is allocated ({devices or 'no devices'})"
            + (f", reserved for {', '.join(users)}" if users else ", not reserved for any pod"),
            Stage.DONE, Verdict.OK, Owner.PLATFORM, blocking=False, claim=c.key,
        )
        if not _binding(ctx, claim, c.key):
            _users_prepare(ctx, claim, c)
        return
    _analyse(ctx, None, [c])


def _users_prepare(ctx: _Ctx, claim: Obj, c: _Claim) -> None:
    """A pod the claim is reserved for, bound but not started: the kubelet's preparation failure."""
    ns = namespace_of(claim)
    for r in (claim.get("status") or {}).get("reservedFor") or []:
        if r.get("resource", "pods") != "pods":
            continue
        pod = ctx.inp.find_pod(str(r.get("name") or ""), ns)
        node = (pod.get("spec") or {}).get("nodeName") if pod is not None else None
        if pod is None or not node:
            continue
        if _not_released(ctx, pod, [c], str(node), via=f"pod {key_of(pod)}: "):
            return
        if (pod.get("status") or {}).get("phase") != "Running" and _node_prepare(
            ctx, pod, [c], str(node), via=f"pod {key_of(pod)}: "
        ):
            return


# --- 5./6. allocated claims and devices -------------------------------------------------------


def _analyse(ctx: _Ctx, pod: Obj | None, claims: list[_Claim]) -> None:
    inp = ctx.inp
    sel = ctx.shared.selectors
    if not _check_requests(ctx, claims, sel):  # 2./3.
        _usable_nodes(ctx, pod)  # an independent blocker, told beside the broken request
        return
    usable = _usable_nodes(ctx, pod)  # 4. (funnels below still show where devices are)
    # 5. allocated claims must be reachable from a usable node.
    for c in claims:
        if not c.allocated or c.obj is None:
            continue
        selector = (c.obj.get("status") or {}).get("allocation", {}).get("nodeSelector")
        if selector is not None:
            usable = [n for n in usable if node_selector_matches(n, selector)]
            if not usable and ctx.nodes is not None and ctx.nodes.usable:
                ctx.add(
                    ExplainCode.CLAIM_NOT_AVAILABLE_ON_NODE,
                    f"claim {c.key} is allocated on nodes the pod cannot use (resourceclaim not available on the node)",
                    Stage.ALLOCATED, Verdict.WAITING, Owner.PLATFORM, claim=c.key,
                    hint="the scheduler deallocates it if no other pod uses it; otherwise wait for its users to finish",
                )
                return
    # 6. devices.
    own = frozenset(
        (r.get("driver", ""), r.get("pool", ""), r.get("device", ""))
        for c in claims
        if c.allocated and c.obj is not None
        for r in (((c.obj.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
    )
    index = ctx.shared.index
    reach = ctx.shared.reach(usable)
    pending = [c for c in claims if not c.allocated and c.obj is not None]
    if not pending:
        if usable:
            ctx.placement = name_of(usable[0])
        return
    per_request: list[tuple[_Claim, list[FunnelResult]]] = []
    for c in pending:
        assert c.obj is not None
        for alts in claim_requests(c.obj, c.key):
            results = []
            for req in alts:
                cls = inp.find_class(req.class_name) or {}
                fr = build_funnel(req, cls, index, sel, reach, own_devices=own)
                ctx.funnels.append(fr.funnel)
                results.append(fr)
                if fr.runtime_error is not None:
                    _runtime_error(ctx, c.key, req, fr)
                    return
            per_request.append((c, results))
    # Every request is told: one that can never match does not hide another that waits.
    static = _static_shortfalls(ctx, per_request, usable)
    marker = len(ctx.blockers)
    if _dynamic_shortfalls(ctx, per_request, usable, index, static):
        _never_after_release(ctx, pending, per_request, usable, marker)
        return
    if static:
        return
    if not usable:
        return
    _run_allocator(ctx, pending, per_request, usable, index)


def _runtime_error(ctx: _Ctx, claim: str, req: RequestSpec, fr: FunnelResult) -> None:
    assert fr.runtime_error is not None
    where, i, dev, msg = fr.runtime_error
    m = re.search(r"no such key: (\S+)", msg)
    attr = m.group(1) if m else ""
    chain = f"class {req.class_name}" if where == "class" else f"claim {claim}, request {req.name}"
    guard = ""
    if attr:
        expr = (req.selectors[i] if where == "request" else "") or ""
        dm = re.search(r"attributes\[['\"]([^'\"]+)['\"]\]\s*(?:\.|\[['\"])" + re.escape(attr), expr)
        domain = dm.group(1) if dm else "<domain>"
        guard = f'guard the lookup: `"{attr}" in device.attributes["{domain}"] && ...`'
    others = sum(1 for d in fr.matching if d.driver == dev.driver)
    ctx.add(
        ExplainCode.SELECTOR_RUNTIME_ERROR,
        f"{chain}: selector #{i} on device {dev.ident}: CEL runtime error: {msg}"
        + (f" (the device has no attribute {attr})" if attr else ""),
        Stage.SELECTORS, Verdict.BROKEN, Owner.PLATFORM if where == "class" else Owner.APPLICATION,
        hint=guard or "make the selector handle every device of the class",
        claim=claim, request=req.name, device=dev.ident, selector=i, attribute=attr, error=msg,
        product=device_product(dev), otherMatching=others,
    )


def _per_node_max(ctx: _Ctx, devs: list[Device]) -> tuple[int, str]:
    """The most of ``devs`` on one node, and that node (devices of every node count for each)."""
    return ctx.shared.once("per-node-max", (devs,), lambda: _count_per_node(devs))


def _count_per_node(devs: Sequence[Device]) -> tuple[int, str]:
    counts: dict[str, int] = {}
    shared = 0
    for d in devs:
        s = d.slice
        if (d.node_name if s.per_device else s.node_name):
            n = d.node_name if s.per_device else s.node_name
            counts[n] = counts.get(n, 0) + 1
        else:
            shared += 1
    if not counts:
        return shared, ""
    best = max(counts.items(), key=lambda kv: (kv[1], kv[0]))
    return best[1] + shared, best[0]


def _blocking_step(f: Funnel, needed: int) -> str:
    for s in f.steps:
        if s.count < needed:
            return s.key
    return ""


_STEP_VERDICT: Mapping[str, tuple[Verdict, Owner]] = {
    "inventory": (Verdict.NEVER, Owner.PLATFORM),
    "class": (Verdict.NEVER, Owner.PLATFORM),
    "capacity": (Verdict.NEVER, Owner.APPLICATION),
    "node": (Verdict.NEVER, Owner.APPLICATION),
    "pool": (Verdict.WAITING, Owner.DRIVER),
    "taints": (Verdict.WAITING, Owner.PLATFORM),
}


def _static_shortfalls(
    ctx: _Ctx, per_request: list[tuple[_Claim, list[FunnelResult]]], usable: list[Obj]
) -> set[int]:
    """Requests no device could ever serve as written (never), or only after a pool/taint change.

    Returns the positions in ``per_request`` that are blocked so.
    """
    blocked: set[int] = set()
    for pos, (c, results) in enumerate(per_request):
        short: list[tuple[FunnelResult, str]] = []
        for fr in results:
            needed = max(fr.funnel.needed, 1)
            node_max, _ = _per_node_max(ctx, fr.matching)
            if len(fr.matching) < needed:
                short.append((fr, _blocking_step(fr.funnel, needed)))
            elif node_max < needed and fr.funnel.mode != "All":
                short.append((fr, "per-node"))
            else:
                break  # this alternative can match: the request is fine statically
        if len(short) < len(results):
            continue
        blocked.add(pos)
        alternatives = len(results) > 1
        if alternatives:
            names = ", ".join(fr.funnel.request.split("/", 1)[1] for fr, _ in short)
            ctx.add(
                ExplainCode.ALTERNATIVES_EXHAUSTED,
                f"claim {c.key}, request {results[0].funnel.request.split('/', 1)[0]}: "
                f"none of the {len(results)} alternatives ({names}) can be satisfied",
                Stage.DEVICES, Verdict.NEVER, Owner.APPLICATION, claim=c.key,
                hint="add an alternative that the inventory has, or relax the near misses below",
            )
        for fr, step in short:
            _report_static(ctx, c, fr, step, usable, blocking=not alternatives)
    return blocked


def _report_static(ctx: _Ctx, c: _Claim, fr: FunnelResult, step: str, usable: list[Obj], *, blocking: bool) -> None:
    f = fr.funnel
    needed = max(f.needed, 1)
    want = "all matching devices" if f.mode == "All" else f"{needed} device{'s' if needed != 1 else ''}"
    chain = f"claim {c.key}, request {f.request}"
    if step == "per-node":
        node_max, node = _per_node_max(ctx, fr.matching)
        ctx.add(
            ExplainCode.NOT_ENOUGH_DEVICES,
            f"{chain}: {len(fr.matching)} devices match, but no node has {needed}"
            + (f" (most on one node: {node_max}, {node})" if node else ""),
            Stage.DEVICES, Verdict.NEVER, Owner.APPLICATION, blocking=blocking,
            hint=f"request at most {node_max} devices per pod, or split the job across pods",
            claim=c.key, request=f.request, matching=len(fr.matching), needed=needed, perNodeMax=node_max,
        )
        return
    if step == "pool":
        ident = (fr.incomplete_pools or [p for p, _ in fr.invalid_pools])[0]
        if fr.incomplete_pools:
            ctx.add(
                ReasonCode.POOL_INCOMPLETE,
                f"{chain}: matching devices are in pool {ident}, which is being updated (not all slices published)",
                Stage.DEVICES, Verdict.WAITING, Owner.DRIVER, blocking=blocking,
                hint="wait for the driver to publish every slice; if it persists, check the driver",
                claim=c.key, request=f.request, pools=list(fr.incomplete_pools),
            )
        else:
            reason = fr.invalid_pools[0][1]
            ctx.add(
                ReasonCode.POOL_INVALID,
                f"{chain}: matching devices are in pool {ident}, which is invalid: {reason}",
                Stage.DEVICES, Verdict.BROKEN, Owner.DRIVER, blocking=blocking,
                hint="report the invalid ResourceSlices to the driver's maintainers",
                claim=c.key, request=f.request, pools=[p for p, _ in fr.invalid_pools],
            )
        return
    if step == "taints":
        before = f.count("node") or 0
        named = sorted({nm.message.removeprefix("taint ").removesuffix(" not tolerated")
                        for nm in f.near_misses if nm.condition == "taints"})
        ctx.add(
            ReasonCode.TAINT_NOT_TOLERATED,
            f"{chain}: {before} matching devices, all tainted (untolerated"
            + (f": {', '.join(named)}" if named else "") + f"): {want} needed",
            Stage.DEVICES, Verdict.WAITING, Owner.PLATFORM, blocking=blocking,
            hint="add a toleration to the request, or wait until the taint is removed",
            claim=c.key, request=f.request,
        )
        _near_miss_findings(ctx, c, fr)
        return
    verdict, owner = _STEP_VERDICT.get(step, (Verdict.NEVER, Owner.APPLICATION))
    if step in ("inventory", "class") and (f.count(step) or 0) > 0:
        owner = Owner.APPLICATION  # devices exist, the request asks for more than there are
    code = ExplainCode.NO_MATCHING_DEVICES if not fr.matching else ExplainCode.NOT_ENOUGH_DEVICES
    inventory = f.count("inventory") or 0
    where = {
        "inventory": f"the inventory has {inventory} device(s)" if inventory else "the inventory has no devices",
        "class": f"{f.count('class') or 'no'} device(s) of class {f.device_class}",
        "node": "the matching devices are all on nodes the pod cannot use",
        "capacity": "no device has the requested capacity",
    }.get(step, "")
    if not where and step.startswith("selector-"):
        where = f"selector #{step.split('-')[1]} leaves {f.count(step)} device(s)"
    hint = ""
    if step in ("inventory", "class") and (f.count(step) or 0) > 0:
        hint = f"request at most {f.count(step)} device(s), or ask the platform team for more"
    elif f.near_misses and f.near_misses[0].suggestion:
        hint = f.near_misses[0].suggestion
    elif fr.ceiling:
        hint = fr.ceiling
    elif f.near_misses:
        hint = f"relax the condition the near misses fail: {f.near_misses[0].message}"
    else:
        hint = "relax the request's selectors, or ask the platform team for such devices"
    ctx.add(
        code,
        f"{chain}: {len(fr.matching)} device(s) match, {want} needed: {where}",
        Stage.DEVICES, verdict, owner, blocking=blocking, hint=hint,
        claim=c.key, request=f.request, matching=len(fr.matching), needed=needed, step=step,
    )
    _near_miss_findings(ctx, c, fr)


def _near_miss_findings(ctx: _Ctx, c: _Claim, fr: FunnelResult) -> None:
    for nm in fr.funnel.near_misses:
        ctx.add(
            ExplainCode.NEAR_MISS,
            f"{nm.count} × {nm.product}: {nm.message}",
            Stage.DEVICES, Verdict.NEVER, Owner.APPLICATION, blocking=False,
            hint=nm.suggestion, claim=c.key, request=fr.funnel.request, device=nm.example,
            condition=nm.condition, count=nm.count,
        )


def _dynamic_shortfalls(
    ctx: _Ctx, per_request: list[tuple[_Claim, list[FunnelResult]]], usable: list[Obj], index: ClusterIndex,
    static: set[int],
) -> bool:
    """Enough devices match, but not enough are free (in use, counters, capacity, fragmentation)."""
    blocked = False
    busy: list[Device] = []  # in-use devices of every blocked request and alternative
    for pos, (c, results) in enumerate(per_request):
        if pos in static:
            continue
        viable = [fr for fr in results if len(fr.matching) >= max(fr.funnel.needed, 1)]
        needed_ok = [fr for fr in viable if _per_node_max(ctx, fr.available)[0] >= max(fr.funnel.needed, 1)]
        if needed_ok or not viable:
            continue
        blocked = True
        for alt in viable:
            busy.extend(alt.in_use)
        if len(results) > 1:
            _alternatives_busy(ctx, c, results, viable, index)
        fr = viable[0]
        f = fr.funnel
        needed = max(f.needed, 1)
        chain = f"claim {c.key}, request {f.request}"
        if len(fr.available) >= needed:
            node_max, node = _per_node_max(ctx, fr.available)
            if fr.in_use:
                _holders(ctx, fr.in_use, index)  # who keeps the other devices on those nodes busy
            ctx.add(
                ExplainCode.DEVICES_IN_USE,
                f"{chain}: {len(fr.available)} matching devices are free, but at most {node_max} on one node"
                f" ({node}); {needed} needed",
                Stage.DEVICES, Verdict.WAITING, Owner.PLATFORM,
                hint="wait for claims on a node to finish, or request fewer devices per pod",
                claim=c.key, request=f.request, free=len(fr.available), perNodeMax=node_max, needed=needed,
            )
        elif fr.in_use:
            _holders(ctx, fr.in_use, index)
            starved = f", {len(fr.counter_blocked)} lack shared counters" if fr.counter_blocked else ""
            ctx.add(
                ExplainCode.DEVICES_IN_USE,
                f"{chain}: {len(fr.matching)} devices match, {len(fr.in_use)} in use by "
                f"{len(ctx.holders)} claim(s){starved}, {len(fr.available)} free; {needed} needed",
                Stage.DEVICES, Verdict.WAITING, Owner.PLATFORM,
                hint=_release_hint(ctx, needed - len(fr.available)),
                claim=c.key, request=f.request, inUse=len(fr.in_use), free=len(fr.available), needed=needed,
            )
        elif fr.counter_blocked:
            d, why = fr.counter_blocked[0]
            _counter_holders(ctx, fr)
            ctx.add(
                ReasonCode.COUNTERS_EXHAUSTED,
                f"{chain}: {len(fr.counter_blocked)} matching partitions lack shared counters "
                f"(e.g. {d.ident}: {why}); other partitions of the same device are in use",
                Stage.DEVICES, Verdict.WAITING, Owner.PLATFORM,
                hint="wait for other partitions of the device to be released, or request a smaller partition",
                claim=c.key, request=f.request, device=d.ident, blocked=len(fr.counter_blocked),
            )
        else:
            ctx.add(
                ReasonCode.CAPACITY_EXCEEDED,
                f"{chain}: {len(fr.matching)} shared devices match, but none has the requested capacity left",
                Stage.DEVICES, Verdict.WAITING, Owner.PLATFORM,
                hint="wait for other shares to be released, or request less capacity",
                claim=c.key, request=f.request,
            )
    if busy and not any(f.code == ReasonCode.COUNTERS_EXHAUSTED for f in ctx.blockers):
        _holders(ctx, busy, index)
    return blocked


def _alternatives_busy(
    ctx: _Ctx, c: _Claim, results: list[FunnelResult], viable: list[FunnelResult], index: ClusterIndex
) -> None:
    """Every firstAvailable alternative that could match is taken: name each, with its numbers."""
    parent = results[0].funnel.request.split("/", 1)[0]
    told = []
    for fr in results:
        sub = fr.funnel.request.split("/", 1)[1]
        if fr in viable:
            holders = {key_of(cl) for d in fr.in_use for cl in index.holders(d.key)}
            told.append(f"{sub}: {len(fr.matching)} match, {len(fr.in_use)} in use by {len(holders)} claim(s),"
                        f" {len(fr.available)} free, {max(fr.funnel.needed, 1)} needed")
        else:
            told.append(f"{sub}: {len(fr.matching)} match, {max(fr.funnel.needed, 1)} needed")
    ctx.add(
        ExplainCode.ALTERNATIVES_EXHAUSTED,
        f"claim {c.key}, request {parent}: all {len(results)} alternatives are exhausted ({'; '.join(told)})",
        Stage.DEVICES, Verdict.WAITING, Owner.PLATFORM,
        hint="wait for the holders below to finish, or add an alternative the cluster has free",
        claim=c.key, request=parent, alternatives=[fr.funnel.request for fr in results],
    )


def _never_after_release(
    ctx: _Ctx, pending: list[_Claim], per_request: list[tuple[_Claim, list[FunnelResult]]], usable: list[Obj],
    marker: int,
) -> None:
    """Devices in use, but the claims' constraints would fail even with every device free: never.

    Waiting for the holders would not help, so their findings stay as evidence only.
    """
    constrained = [c for c in pending if c.obj is not None and ((c.obj.get("spec") or {}).get("devices") or {}).get("constraints")]
    if not constrained or _fits_when_empty(ctx, pending, per_request, usable)[0]:
        return
    del ctx.blockers[marker:]
    ctx.holders = []
    c = constrained[0]
    assert c.obj is not None
    con = ((c.obj.get("spec") or {}).get("devices") or {}).get("constraints") or [{}]
    desc = next((f"{k} {v}" for k, v in con[0].items() if k != "requests"), "a claim constraint")
    ctx.add(
        ExplainCode.CONSTRAINTS_UNSATISFIABLE,
        f"claim {c.key}: {desc} cannot hold for the requested devices together on any node, even with every"
        " device free (waiting for the devices in use would not help)",
        Stage.DEVICES, Verdict.NEVER, Owner.APPLICATION,
        hint="relax the constraint or request fewer devices; this topology does not exist on any node",
        claim=c.key,
    )


def _holders(ctx: _Ctx, in_use: Sequence[Device], index: ClusterIndex) -> None:
    """The claims holding ``in_use``, soonest expected back first."""
    # Count per claim object first (a claim holds many devices), then name each claim once.
    per_claim: dict[int, list[Any]] = {}  # id(claim) -> [claim, devices held, last position seen]
    pos = 0
    for d in dict.fromkeys(in_use):
        for cl in index.holders(d.key):
            pos += 1
            entry = per_claim.get(id(cl))
            if entry is None:
                per_claim[id(cl)] = [cl, 1, pos]
            else:
                entry[1] += 1
                entry[2] = pos
    counts: dict[str, int] = {}
    objs: dict[str, tuple[int, Obj]] = {}  # the claim object seen last under each name
    for cl, n, last in per_claim.values():
        k = key_of(cl)
        counts[k] = counts.get(k, 0) + n
        if k not in objs or objs[k][0] < last:
            objs[k] = (last, cl)
    out = []
    for k, n in counts.items():
        cl = objs[k][1]
        ns = namespace_of(cl)
        pods = tuple(
            f"{ns}/{r.get('name', '')}" for r in (cl.get("status") or {}).get("reservedFor") or []
            if r.get("resource", "pods") == "pods"
        )
        out.append(Holder(k, pods, n, ctx.inp.expected_release.get(k)))
    out.sort(key=lambda h: (h.expected_release if h.expected_release is not None else float("inf"), -h.devices, h.claim))
    ctx.holders = out


def _counter_holders(ctx: _Ctx, fr: FunnelResult) -> None:
    """Claims holding other partitions that draw on the same counter sets."""
    sets = {(d.driver, d.pool, name) for d, _ in fr.counter_blocked for name, _ in d.consumes}
    # Published devices (of any slice, any generation) that draw on those sets, counted per
    # (driver, pool, device): one pass over the slices instead of one per allocated result.
    drawing: dict[tuple[Any, Any, Any], int] = {}
    for s in ctx.inp.slices:
        spec = s.get("spec") or {}
        driver, pool = spec.get("driver"), (spec.get("pool") or {}).get("name")
        for dev in spec.get("devices") or []:
            if any((driver, pool, c.get("counterSet")) in sets for c in dev.get("consumesCounters") or []):
                k3 = (driver, pool, dev.get("name"))
                drawing[k3] = drawing.get(k3, 0) + 1
    held: dict[str, tuple[Obj, int]] = {}
    for cl in ctx.inp.claims:
        results = (((cl.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
        n = 0
        for r in results:
            n += drawing.get((r.get("driver"), r.get("pool"), r.get("device")), 0)
        if n:
            held[key_of(cl)] = (cl, n)
    ctx.holders = [
        Holder(
            k,
            tuple(f"{namespace_of(cl)}/{r.get('name', '')}" for r in (cl.get("status") or {}).get("reservedFor") or []),
            n,
            ctx.inp.expected_release.get(k),
        )
        for k, (cl, n) in sorted(held.items())
    ]


def _release_hint(ctx: _Ctx, missing: int) -> str:
    timed = [h for h in ctx.holders if h.expected_release is not None]
    if timed:
        freed = 0
        for h in timed:
            freed += h.devices
            if freed >= missing:
                when = h.expected_release
                now = ctx.inp.now
                rel = f"t={when:g}s" if now is None else f"in {max(0.0, (when or 0) - now):g}s (t={when:g}s)"
                return f"enough devices are expected back {rel}, when {h.claim} ends"
    return "wait for the holding claims to finish, or preempt lower-priority work"


def _run_allocator(
    ctx: _Ctx,
    pending: list[_Claim],
    per_request: list[tuple[_Claim, list[FunnelResult]]],
    usable: list[Obj],
    index: ClusterIndex,
) -> None:
    """Counting says the pod could fit: ask the allocator on the most promising nodes."""
    by_name = _by_name(ctx, usable)
    score: dict[str, int] = {}
    for _, results in per_request:
        for fr in results:
            for n, k in ctx.shared.once("score", (fr.available, usable), functools.partial(_node_score, fr.available, usable)).items():
                score[n] = score.get(n, 0) + k
    candidates = [n for n, _ in sorted(score.items(), key=lambda kv: (-kv[1], kv[0])) if n in by_name]
    if not candidates:
        candidates = sorted(by_name)
    tried_nodes = candidates[:MAX_ALLOCATOR_NODES]
    inv = ctx.shared.once(("inventory", *tried_nodes), (), functools.partial(_inventory_with_state, ctx, tried_nodes, index))
    claims = [dict(c.obj) for c in pending if c.obj is not None]
    first_failure: tuple[str, Trace, str, str] | None = None
    for name in tried_nodes:
        out = allocate(
            node=by_name[name], slices=(), classes=(), claims=claims, features=ctx.features,
            timeout=ctx.timeout, inventory=inv,
        )
        trace = Trace()
        if out.status == "unsatisfiable" and first_failure is None:
            # Tracing costs a reason per device of the cluster: only for the node we report on.
            out = allocate(
                node=by_name[name], slices=(), classes=(), claims=claims, features=ctx.features,
                timeout=ctx.timeout, trace=trace, inventory=inv,
            )
        if out.status == "allocated":
            ctx.placement = name
            ctx.add(
                ExplainCode.FITS,
                f"would fit on node {name} (the claim controller creates the claim)"
                if ctx.from_template
                else f"the allocator finds devices for every claim on node {name}",
                Stage.DEVICES, Verdict.OK, Owner.PLATFORM, blocking=False,
                placed=[f"{r['request']}: {r['driver']}/{r['pool']}/{r['device']}" for a in out.results for r in a["devices"]["results"]],
            )
            return
        if first_failure is None:
            first_failure = (name, trace, out.status, out.message)
    assert first_failure is not None
    node, trace, status, message = first_failure
    if status == "error":
        if message.startswith("timed out"):
            ctx.add(ExplainCode.ALLOCATION_TIMEOUT, f"allocation on node {node} {message}",
                    Stage.DEVICES, Verdict.WAITING, Owner.PLATFORM,
                    hint="simplify the request (fewer devices, fewer constraints); 1.35 searches factorially")
        else:
            ctx.add(ExplainCode.ALLOCATION_ERROR, f"allocation on node {node} failed: {message}",
                    Stage.DEVICES, Verdict.BROKEN, Owner.APPLICATION,
                    hint="fix the claim; the scheduler reports this error on every attempt", error=message)
        return
    codes = trace.codes()
    constraint = [r for r in trace.reasons if r.code in (ReasonCode.CONSTRAINT_MISMATCH, ReasonCode.MISSING_ATTRIBUTE)]
    if constraint:
        _constraint_failure(ctx, pending, per_request, usable, index, constraint[0], tried_nodes, inv)
        ctx.partial = _partial(ctx, pending, by_name[node], inv)
        return
    for code in (
        ReasonCode.COUNTERS_EXHAUSTED,
        ReasonCode.CAPACITY_EXCEEDED,
        ReasonCode.TAINT_NOT_TOLERATED,
        ReasonCode.DEVICE_IN_USE,
    ):
        if code in codes:
            r = next(x for x in trace.reasons if x.code == code)
            ctx.add(code, f"allocation on node {node}: {r.message}", Stage.DEVICES, verdict_of(code), Owner.PLATFORM,
                    hint=r.hint or "wait for devices to be freed", claim=r.claim, request=r.request, device=r.device)
            return
    ctx.add(ExplainCode.NOT_ENOUGH_DEVICES, f"the allocator cannot place the claims on node {node}: {message}",
            Stage.DEVICES, Verdict.WAITING, Owner.PLATFORM, hint=f"see the allocator's trace for node {quote(node)}")


def _by_name(ctx: _Ctx, usable: list[Obj]) -> dict[str, Obj]:
    return ctx.shared.once("by-name", (usable,), lambda: {name_of(n): n for n in usable})


def _node_score(available: Sequence[Device], usable: Sequence[Obj]) -> dict[str, int]:
    """Per node, how many of the ``available`` devices it can use."""
    score: dict[str, int] = {}
    for d in available:
        for n in device_nodes(d, usable) if not (d.slice.node_name or d.node_name) else [d.slice.node_name or d.node_name]:
            score[n] = score.get(n, 0) + 1
    return score


def _inventory_with_state(ctx: _Ctx, nodes: Sequence[str], index: ClusterIndex) -> Inventory:
    """The allocator's inventory of the pools ``nodes`` see, with the claims holding their
    devices (allocate() reads both and modifies neither, so diagnoses share it)."""
    inv = Inventory(_slices_for(ctx.inp, nodes), ctx.inp.classes)
    inv.state = index.allocated_state({(s.driver, s.pool) for s in inv.slices})
    return inv


def _empty_inventory(ctx: _Ctx, node: str) -> Inventory:
    return Inventory(_slices_for(ctx.inp, [node]), ctx.inp.classes)


def _slices_for(inp: ClusterSnapshot, nodes: Sequence[str]) -> list[Obj]:
    """Every slice of each pool that one of ``nodes`` can see (on the node, or without a nodeName).

    ``allocate`` on a node reads only such slices, plus the other slices of their pools (pool
    completeness, counter sets), so an index over these answers as one over the whole cluster
    would, without parsing 40,000 devices for a run on one node.
    """
    names = set(nodes)
    pools: set[tuple[str, str]] = set()
    keyed: list[tuple[tuple[str, str], Obj]] = []
    for s in inp.slices:
        spec = s.get("spec") or {}
        pid = (spec.get("driver", ""), (spec.get("pool") or {}).get("name", ""))
        keyed.append((pid, s))
        node = spec.get("nodeName") or ""
        if not node or node in names:
            pools.add(pid)
    return [s for pid, s in keyed if pid in pools]


def _constraint_failure(
    ctx: _Ctx,
    pending: list[_Claim],
    per_request: list[tuple[_Claim, list[FunnelResult]]],
    usable: list[Obj],
    index: ClusterIndex,
    first: Any,
    tried: list[str],
    inv: Inventory,
) -> None:
    """Constraints fail on the nodes with free devices: never, or waiting for a busy node?

    "Never" only when no usable node holding enough matching devices fits with every device
    free; otherwise the pod waits for the holders on the nodes that would fit.  The what-if
    (the claims without their constraints, on the nodes tried, as things are now) tells the
    user what the constraint costs.
    """
    desc = str(first.detail.get("constraint") or "a claim constraint")
    topology, untried = _fits_when_empty(ctx, pending, per_request, usable)
    loose = _fits_without_constraints(ctx, pending, usable, tried, inv)
    if loose:
        ctx.add(
            ExplainCode.FITS_WITHOUT_CONSTRAINT,
            f"without the constraint it would fit now on node {loose}",
            Stage.DEVICES, Verdict.OK, Owner.APPLICATION, blocking=False, claim=first.claim, node=loose,
        )
    what_if = f"; without the constraint it would fit now on node {loose}" if loose else ""
    if not topology:
        ctx.add(
            ExplainCode.CONSTRAINTS_UNSATISFIABLE,
            f"claim {first.claim}: enough devices match, but {desc} cannot hold for all of them together"
            + (f" on any of the {MAX_SHAPES} node shapes tried ({untried} more not tried)" if untried else " on any node")
            + ", even with every device free",
            Stage.DEVICES, Verdict.NEVER, Owner.APPLICATION,
            hint="relax the constraint or request fewer devices; this topology does not exist on any node" + what_if,
            claim=first.claim, request=first.request, example=first.message,
        )
        return
    on = set(topology)
    busy = [
        d for _, results in per_request for fr in results for d in fr.in_use
        if on.intersection(device_nodes(d, usable))
    ]
    _holders(ctx, busy, index)
    shown = ", ".join(topology[:4]) + (f" and {len(topology) - 4} more" if len(topology) > 4 else "")
    ctx.add(
        ExplainCode.CONSTRAINTS_UNSATISFIABLE,
        f"claim {first.claim}: {desc} holds for the requested devices together only on node(s) {shown},"
        f" where matching devices are in use by {len(ctx.holders)} claim(s)",
        Stage.DEVICES, Verdict.WAITING, Owner.PLATFORM,
        hint=f"wait for the claims holding devices on {topology[0]} to finish" + what_if,
        claim=first.claim, request=first.request, example=first.message, nodes=list(topology),
    )


MAX_SHAPES = 64
"""Distinct node shapes tried with every device free before a constraint is called "never"."""


def _fits_when_empty(
    ctx: _Ctx, pending: list[_Claim], per_request: list[tuple[_Claim, list[FunnelResult]]], usable: list[Obj]
) -> tuple[list[str], int]:
    """Usable nodes on which the pending claims fit with every device free, by name; and how
    many node shapes were beyond :data:`MAX_SHAPES` and not tried.

    Every node with enough *matching* devices (free or not) is a candidate; nodes with the same
    shape (their matching devices equal but for names and UUIDs) answer alike, so one
    allocator run per shape decides for all of them.
    """
    shape, gids, attrs = _shaper(ctx, pending, per_request)
    # The node shapes read the claims only through their funnels' matching lists (one object
    # per candidate set) and the shaper's groups and attributes: claims alike share the walk.
    layout = tuple(tuple((id(fr.matching), fr.funnel.needed) for fr in results) for _, results in per_request)
    held = (gids, usable, *(fr.matching for _, results in per_request for fr in results))
    by_shape = ctx.shared.once(
        ("node-shapes", attrs, layout), held, functools.partial(_node_shapes, per_request, usable, shape)
    )
    by_name = _by_name(ctx, usable)
    claims = [dict(c.obj) for c in pending if c.obj is not None]
    fits: list[str] = []
    for names in list(by_shape.values())[:MAX_SHAPES]:
        empty = ctx.shared.once(
            ("empty-inventory", names[0]), (), functools.partial(_empty_inventory, ctx, names[0])
        )
        out = allocate(node=by_name[names[0]], slices=(), classes=(), claims=claims, features=ctx.features,
                       timeout=ctx.timeout, inventory=empty)
        if out.status == "allocated":
            fits.extend(names)
    return sorted(fits), max(0, len(by_shape) - MAX_SHAPES)


def _node_shapes(
    per_request: list[tuple[_Claim, list[FunnelResult]]],
    usable: list[Obj],
    shape: Callable[[Sequence[Device]], tuple[Any, ...]],
) -> dict[tuple[Any, ...], list[str]]:
    """The nodes with enough matching devices for every request, by shape, most devices first."""
    per_node: dict[str, list[Device]] = {}
    enough: dict[str, int] = {}
    for _, results in per_request:
        counted: set[str] = set()
        for fr in results:
            here = _devices_by_node(fr.matching, usable)
            for n, devs in here.items():
                per_node.setdefault(n, []).extend(devs)
            counted.update(n for n, devs in here.items() if len(devs) >= max(fr.funnel.needed, 1))
        for n in counted:
            enough[n] = enough.get(n, 0) + 1
    candidates = sorted((n for n, k in enough.items() if k == len(per_request)), key=lambda n: (-len(per_node[n]), n))
    by_shape: dict[tuple[Any, ...], list[str]] = {}
    for n in candidates:
        by_shape.setdefault(shape(per_node[n]), []).append(n)
    return by_shape


def _devices_by_node(devices: Sequence[Device], usable: Sequence[Obj]) -> dict[str, list[Device]]:
    """Per usable node, the ``devices`` it can use."""
    out: dict[str, list[Device]] = {}
    for d in devices:
        for n in device_nodes(d, usable):
            out.setdefault(n, []).append(d)
    return out


def _shaper(
    ctx: _Ctx, pending: list[_Claim], per_request: list[tuple[_Claim, list[FunnelResult]]]
) -> tuple[Callable[[Sequence[Device]], tuple[Any, ...]], Sequence[int], tuple[str, ...]]:
    """A node's devices as the pending claims see them, without names: equal shapes fit alike.
    Also what the shape reads: the projection groups and the compared attributes.

    A device is its projection group (every field the claims' selectors read, see
    :meth:`Selectors.groups`), the values of the attributes the claims' constraints compare,
    and whether it is tainted, consumes counters or is shared.
    """
    sel = ctx.shared.selectors
    index = ctx.shared.index
    exprs: list[str] = []
    attrs: list[str] = []
    for c in pending:
        devices = ((c.obj or {}).get("spec") or {}).get("devices") or {}
        for con in devices.get("constraints") or []:
            attrs += [str(con[k]) for k in ("matchAttribute", "distinctAttribute") if con.get(k)]
    for _, results in per_request:
        for fr in results:
            cls = ctx.inp.find_class(fr.funnel.device_class) or {}
            exprs += [str(((x or {}).get("cel") or {}).get("expression", "")) for x in (cls.get("spec") or {}).get("selectors") or []]
    for c in pending:
        for alts in claim_requests(c.obj or {}, c.key):
            for req in alts:
                exprs += req.selectors
    sel.scope(exprs)
    gids, _ = sel.groups(index.devices)
    position = ctx.shared.positions
    static = ctx.shared.device_facts(tuple(attrs))

    def shape(devices: Sequence[Device]) -> tuple[Any, ...]:
        at = {position[id(d)] for d in devices}
        return tuple(sorted((gids[p], static[p]) for p in at))

    return shape, gids, tuple(attrs)


def _device_facts(d: Device, attrs: tuple[str, ...]) -> tuple[Any, ...]:
    found = d.raw.get("attributes") or {}
    values = tuple(
        repr(found.get(a, found.get(a.split("/", 1)[1]) if a.startswith(d.driver + "/") else None)) for a in attrs
    )
    return (values, bool(d.raw.get("taints")), bool(d.raw.get("consumesCounters")), d.allow_multiple,
            repr(d.raw.get("capacity")) if d.allow_multiple else "")


def _fits_without_constraints(
    ctx: _Ctx, pending: list[_Claim], usable: list[Obj], nodes: list[str], inv: Inventory
) -> str:
    """The first of ``nodes`` where the claims fit now once their constraints are dropped."""
    claims = []
    for c in pending:
        if c.obj is None:
            continue
        loose = copy.deepcopy(dict(c.obj))
        ((loose.get("spec") or {}).get("devices") or {}).pop("constraints", None)
        claims.append(loose)
    by_name = _by_name(ctx, usable)
    for name in nodes:
        out = allocate(node=by_name[name], slices=(), classes=(), claims=claims, features=ctx.features,
                       timeout=ctx.timeout, inventory=inv)
        if out.status == "allocated":
            return name
    return ""


def _partial(ctx: _Ctx, pending: list[_Claim], node: Obj, inv: Inventory) -> Partial | None:
    """The largest prefix of one claim's requests (and count of the next) that fits on ``node``."""
    for c in pending:
        if c.obj is None:
            continue
        spec = (c.obj.get("spec") or {}).get("devices") or {}
        requests = list(spec.get("requests") or [])
        if not requests:
            continue
        full = allocate(node=node, slices=(), classes=(), claims=[dict(c.obj)], features=ctx.features,
                        timeout=ctx.timeout, inventory=inv)
        if full.status == "allocated":
            continue
        best: tuple[Any, ...] = ()
        missing = ""
        for k in range(len(requests) - 1, -1, -1):
            # keep requests[:k] whole, and as much of requests[k] as fits
            target = requests[k]
            exact = target.get("exactly") or {}
            counts = list(range(int(exact.get("count") or 1) - 1, 0, -1)) if exact and exact.get("allocationMode", "ExactCount") == "ExactCount" else []
            for n in [*counts, 0]:
                trial = copy.deepcopy(dict(c.obj))
                reqs = copy.deepcopy(requests[:k])
                if n:
                    part = copy.deepcopy(target)
                    part["exactly"]["count"] = n
                    reqs.append(part)
                if not reqs:
                    continue
                names = {r.get("name") for r in reqs}
                trial["spec"]["devices"]["requests"] = reqs
                trial["spec"]["devices"]["constraints"] = [
                    {**con, "requests": [r for r in con.get("requests") or [] if r.split("/")[0] in names]}
                    for con in spec.get("constraints") or []
                    if not con.get("requests") or any(r.split("/")[0] in names for r in con.get("requests") or [])
                ]
                trial["spec"]["devices"].pop("config", None)
                out = allocate(node=node, slices=(), classes=(), claims=[trial], features=ctx.features,
                               timeout=ctx.timeout, inventory=inv)
                if out.status == "allocated":
                    best = tuple(
                        (r["request"], f"{r['driver']}/{r['pool']}/{r['device']}")
                        for r in out.results[0]["devices"]["results"]
                    )
                    total = int(exact.get("count") or 1) if exact else 1
                    missing = (
                        f"request {target.get('name')}: {n} of {total} devices fit together"
                        if n
                        else f"request {target.get('name')} cannot be added"
                    )
                    break
            if best:
                break
        return Partial(name_of(node), c.key, best, missing or "no request fits on its own")
    return None


# --- 7. node preparation ----------------------------------------------------------------------

def _node_prepare(ctx: _Ctx, pod: Obj, claims: list[_Claim], node: str, via: str = "") -> bool:
    """Stage 7 for a bound pod; ``via`` names the pod when a claim is the target.  True if blocked."""
    if _kubelet_failure(ctx, pod, node, via):
        return True
    if via:
        return False
    for c in claims:
        if c.obj is not None and _binding(ctx, c.obj, c.key):
            return True
    for e in ctx.inp.events_for("Pod", name_of(pod), namespace_of(pod)):
        if e.get("reason") == "BindingConditionsPending":
            ctx.add(ExplainCode.BINDING_CONDITIONS_PENDING, f"node {node}: {e.get('message') or 'waiting for binding conditions'}",
                    Stage.NODE_PREPARE, Verdict.WAITING, Owner.DRIVER,
                    hint="the device's controller must report the binding conditions as True")
            return True
    ctx.add(ExplainCode.ALLOCATED, f"every claim is allocated and the pod is bound to node {node}; "
            "no preparation failure reported", Stage.DONE, Verdict.OK, Owner.PLATFORM, blocking=False)
    return False


def _kubelet_failure(ctx: _Ctx, pod: Obj, node: str, via: str = "") -> bool:
    """The newest ``FailedPrepareDynamicResources`` of ``pod``, classified (:mod:`drakit.explain.events`)."""
    events = [
        e for e in ctx.inp.events_for("Pod", name_of(pod), namespace_of(pod)) if e.get("reason") == PREPARE_REASON
    ]
    if not events:
        return False
    msg = str(in_time_order(events)[-1].get("message") or "")
    failure = classify_prepare(msg, node=node)
    ctx.add(failure.code, f"{via}node {node}: kubelet cannot prepare the devices: {msg}", Stage.NODE_PREPARE,
            failure.verdict, failure.owner, hint=failure.next_step, event=msg, pod=key_of(pod),
            prepare=failure.cls.value, driver=failure.names.get("driver", ""), grpc=failure.names.get("grpc", ""))
    return True


def _not_released(ctx: _Ctx, pod: Obj, claims: list[_Claim], node: str, via: str = "") -> bool:
    """A deleted pod whose claims are still reserved for it: the kubelet has not released the devices.

    The kubelet unprepares after the containers stopped and before it reports the pod's final
    status; while that fails it retries and the Pod is not removed.  v1.37.2 records no Event
    for it (only its log has ``unprepare dynamic resources: ...``), so the finding stands on the
    state alone unless some event carries that text.  True if reported.
    """
    if not (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    held = [c.key for c in claims if c.allocated and _reserved_for(c.obj, pod)]
    if not held:
        return False
    key = key_of(pod)
    events = [e for e in ctx.inp.events_for("Pod", name_of(pod), namespace_of(pod))
              if e.get("reason") == UNPREPARE_REASON or is_unprepare(str(e.get("message") or ""))]
    if events:
        msg = str(in_time_order(events)[-1].get("message") or "")
        f = classify_unprepare(msg, node=node)
        ctx.add(f.code, f"{via}node {node}: kubelet cannot release the devices of the deleted pod: {msg}",
                Stage.NODE_PREPARE, f.verdict, f.owner, hint=f.next_step, event=msg, pod=key,
                unprepare=f.cls.value, driver=f.names.get("driver", ""), grpc=f.names.get("grpc", ""), claims=held)
        return True
    deleted = (pod.get("metadata") or {}).get("deletionTimestamp")
    ctx.add(ExplainCode.DEVICES_NOT_RELEASED,
            f"{via}node {node}: the pod is being deleted (deletionTimestamp {deleted}) and still holds claim(s) "
            f"{', '.join(held)}",
            Stage.NODE_PREPARE, Verdict.WAITING, Owner.PLATFORM, pod=key, claims=held,
            hint=f"the kubelet on node {node} releases the devices once the containers stopped and the driver's "
                 "NodeUnprepareResources succeeded; if this outlasts the grace period, its log says why "
                 "(journalctl -u kubelet | grep 'unprepare dynamic resources'): v1.37.2 posts no event for it")  # fmt: skip
    return True


def _binding(ctx: _Ctx, claim: Obj, key: str) -> bool:
    """Binding conditions of allocated devices that are not yet (or never will be) met."""
    status = claim.get("status") or {}
    conds: dict[tuple[str, str, str], dict[str, str]] = {}
    for ds in status.get("devices") or []:
        conds[(ds.get("driver", ""), ds.get("pool", ""), ds.get("device", ""))] = {
            c.get("type", ""): c.get("status", "") for c in ds.get("conditions") or []
        }
    for r in ((status.get("allocation") or {}).get("devices") or {}).get("results") or []:
        key3 = (r.get("driver", ""), r.get("pool", ""), r.get("device", ""))
        have = conds.get(key3, {})
        failed = [t for t in r.get("bindingFailureConditions") or [] if have.get(t) == "True"]
        ident = "/".join(key3)
        if failed:
            ctx.add(ExplainCode.BINDING_FAILED, f"claim {key}: device {ident} reports binding failure {failed[0]}",
                    Stage.NODE_PREPARE, Verdict.BROKEN, Owner.DRIVER, claim=key, device=ident,
                    hint="the scheduler deallocates and retries; check the device's controller")
            return True
        waiting = [t for t in r.get("bindingConditions") or [] if have.get(t) != "True"]
        if waiting:
            ctx.add(ExplainCode.BINDING_CONDITIONS_PENDING,
                    f"claim {key}: device {ident} waits for binding condition(s) {', '.join(waiting)}",
                    Stage.NODE_PREPARE, Verdict.WAITING, Owner.DRIVER, claim=key, device=ident,
                    hint="the device's controller must set them to True (timeout: 600 s by default)")
            return True
    return False
