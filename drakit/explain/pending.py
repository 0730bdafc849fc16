"""Every waiting pod of a cluster at once (``drakit explain pods --all-pending``), as shared work.

A thousand pending pods are rarely a thousand different problems: replicas of one Job ask for
the same devices under the same node rules.  Pods are grouped by *shape* — everything a
diagnosis reads about a pod (its scheduling spec, its claims' specs and states, its events),
without the names — and one pod per shape is diagnosed; the rest take its answer.  Diagnoses of
different shapes share the cluster index, compiled selectors and reach (:class:`Shared`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drakit.explain.diagnose import Shared, diagnose
from drakit.explain.diagnosis import Diagnosis
from drakit.features import Features
from drakit.inventory.snapshot import ClusterSnapshot, Obj, key_of, name_of, namespace_of
from drakit.outcomes import Verdict

_DONE = {"Running", "Succeeded", "Failed"}
_VERDICT_ORDER = [Verdict.BROKEN, Verdict.NEVER, Verdict.WAITING, Verdict.OK]


@dataclass(frozen=True)
class PendingPod:
    pod: str  # namespace/name
    labels: Mapping[str, str]
    group: int  # index into PendingReport.groups
    origin: str = ""  # "pod template of Job ml/train" for a workload's template pod

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"pod": self.pod, "labels": dict(self.labels), "group": self.group}
        if self.origin:
            out["origin"] = self.origin
        return out


@dataclass(frozen=True)
class PendingGroup:
    """Pods with one verdict and cause; ``diagnosis`` is that of ``pods[0]``."""

    diagnosis: Diagnosis
    pods: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        d = self.diagnosis
        return {
            "verdict": d.verdict.value,
            "code": d.code.value,
            "owner": d.owner.value,
            "headline": d.headline,
            "fix": d.fix,
            "example": self.pods[0],
            "pods": list(self.pods),
        }


@dataclass(frozen=True)
class PendingReport:
    groups: tuple[PendingGroup, ...]
    pods: tuple[PendingPod, ...]
    diagnosed: int  # distinct shapes diagnosed

    @property
    def worst(self) -> Verdict | None:
        verdicts = {g.diagnosis.verdict for g in self.groups}
        return next((v for v in _VERDICT_ORDER if v in verdicts), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "PendingPods",
            "total": len(self.pods),
            "diagnosed": self.diagnosed,
            "groups": [g.to_json() for g in self.groups],
            "pods": [p.to_json() for p in self.pods],
        }


def waiting_pods(
    inp: ClusterSnapshot, namespace: str | None, matches: Callable[[Mapping[str, Any]], bool] = lambda _: True
) -> list[Obj]:
    """Pods that request devices and have not started (in ``namespace``; every one for ``None``)."""
    out = []
    for pod in inp.pods:
        if not (pod.get("spec") or {}).get("resourceClaims"):
            continue
        if (pod.get("status") or {}).get("phase") in _DONE:
            continue
        if namespace is not None and namespace_of(pod) != namespace:
            continue
        if not matches((pod.get("metadata") or {}).get("labels") or {}):
            continue
        out.append(pod)
    return sorted(out, key=key_of)


def explain_pending(
    inp: ClusterSnapshot, pods: Sequence[Obj], *, features: Features | None = None, timeout: float | None = 10.0
) -> PendingReport:
    """Diagnose one pod per shape, group every pod by the (verdict, code) of its shape's answer."""
    features = features or Features.for_version()
    shared = Shared(inp, features)
    by_shape: dict[str, Diagnosis] = {}
    answers: list[tuple[Obj, Diagnosis]] = []
    for pod in pods:
        shape = pod_shape(inp, pod)
        d = by_shape.get(shape)
        if d is None:
            d = by_shape[shape] = diagnose(
                inp, "pod", name_of(pod), namespace_of(pod), features=features, timeout=timeout, shared=shared
            )
        answers.append((pod, d))
    grouped: dict[tuple[str, str, str], list[tuple[Obj, Diagnosis]]] = {}
    for pod, d in answers:
        # Same verdict and code, same story: the headline without the pod's own names.
        grouped.setdefault((d.verdict.value, d.code.value, _story(d)), []).append((pod, d))
    ordered = sorted(
        grouped.values(), key=lambda ms: (_VERDICT_ORDER.index(ms[0][1].verdict), -len(ms), key_of(ms[0][0]))
    )
    groups: list[PendingGroup] = []
    members: list[PendingPod] = []
    for i, ms in enumerate(ordered):
        groups.append(PendingGroup(ms[0][1], tuple(key_of(p) for p, _ in ms)))
        for pod, _ in ms:
            labels = (pod.get("metadata") or {}).get("labels") or {}
            of = inp.origins.get(key_of(pod))
            members.append(PendingPod(key_of(pod), {str(k): str(v) for k, v in labels.items()}, i,
                                      f"pod template of {of}" if of else ""))
    members.sort(key=lambda p: p.pod)
    return PendingReport(tuple(groups), tuple(members), len(by_shape))


def _story(d: Diagnosis) -> str:
    """The headline without the diagnosed pod's name, so that shapes telling one story group.

    Pods that fit are one group whichever node each would land on.
    """
    if d.verdict == Verdict.OK:
        return ""
    return d.headline.replace(d.target.split("/", 1)[1], "<pod>")


def pod_shape(inp: ClusterSnapshot, pod: Obj) -> str:
    """Everything a diagnosis reads about ``pod``, without its name (JSON text, for grouping)."""
    ns = namespace_of(pod)
    meta = pod.get("metadata") or {}
    uid = meta.get("uid")
    spec = {k: v for k, v in (pod.get("spec") or {}).items() if k not in ("resourceClaims", "hostname", "subdomain")}
    statuses = {s.get("name"): s for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []}
    claims: list[Any] = []
    for pc in (pod.get("spec") or {}).get("resourceClaims") or []:
        pc_name = pc.get("name")
        if pc.get("resourceClaimName"):
            claims.append([pc_name, "claim", _claim_shape(inp.find_claim(str(pc["resourceClaimName"]), ns), pod)])
        elif pc.get("resourceClaimTemplateName"):
            status = statuses.get(pc_name)
            template = inp.find_template(str(pc["resourceClaimTemplateName"]), ns)
            generated = None
            if status is not None and status.get("resourceClaimName"):
                generated = _claim_shape(inp.find_claim(str(status["resourceClaimName"]), ns), pod)
            claims.append([pc_name, "template", status is not None, generated,
                           None if template is None else template.get("spec")])
        else:
            claims.append([pc_name, "empty"])
    events = [
        [e.get("reason"), str(e.get("message") or "").replace(name_of(pod), "<pod>")]
        for e in inp.events_for("Pod", name_of(pod), ns)
    ]
    return json.dumps(
        [ns, spec, claims, (pod.get("status") or {}).get("phase"), bool(meta.get("creationTimestamp")), bool(uid), events,
         bool(meta.get("deletionTimestamp"))],  # a deleted pod still holding its claims answers otherwise
        sort_keys=True, default=str,
    )


def _claim_shape(claim: Obj | None, pod: Obj) -> Any:
    if claim is None:
        return None
    meta = claim.get("metadata") or {}
    uid = (pod.get("metadata") or {}).get("uid")
    status = dict(claim.get("status") or {})
    # Whether the claim is reserved for *this* pod matters, not the pod's name.
    status["reservedFor"] = [
        "<pod>" if (r.get("uid") == uid if uid else r.get("name") == name_of(pod)) else r
        for r in status.get("reservedFor") or []
    ]
    owned = any(o.get("controller") and o.get("uid") == uid for o in meta.get("ownerReferences") or [])
    # The claim's name only labels messages: claims with one spec and state answer alike.
    return [claim.get("spec"), status, bool(meta.get("deletionTimestamp")), owned]
