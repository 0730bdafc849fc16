"""Polyaxon presets that Polyaxon 2.x really accepts, in one of two modes per profile.

Polyaxon's models forbid unknown keys, and its converter rebuilds container ``resources`` from
``limits`` and ``requests`` only: there is no field through which a DRA claim reaches the pod.
Two routes do work, checked with Polyaxon 2.18.0's own parser and converter (tests/polyaxon):

``extended-resource``
    the profile's DeviceClass carries ``extendedResourceName`` (DRA extended resources, beta in
    1.36 and GA in 1.37) and the preset asks for it in ``container.resources.limits``, which
    passes through Polyaxon unchanged.  The scheduler turns it into a claim for *count* devices
    of that one class, so a profile needing more than one class can express (alternatives, a
    colocation constraint, request tolerations, admin access, a shared claim) is refused.
``label``
    the preset only labels the pods (``environment.labels``: ``drakit.dev/profile``) and stamps
    the profile's digest; the claims are injected at admission (``drakit webhook`` or
    ``drakit admission policy``), which sees the pods the Polyaxon operator creates.  Polyaxon
    writes ``NVIDIA_VISIBLE_DEVICES=none`` into a main container that asks for no resource named
    like a GPU; no preset can prevent that, so the injector removes it where it adds the claim.

The Kueue queue is a pod label (``kueue.x-k8s.io/queue-name``); Polyaxon's own ``queue`` key
names an agent queue (``agent/queue``), a different thing, and is written only from
``spec.polyaxon.agentQueue``.  Distributed kinds get the settings per replica; a dag has no pod
of its own and is refused.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from drakit.errors import InvalidInput
from drakit.profiles.compile import DIGEST_ANNOTATION, PROFILE_LABEL, QUEUE_LABEL, CompiledProfile

PolyaxonMode = Literal["label", "extended-resource"]
MODES: tuple[str, ...] = ("label", "extended-resource")
DEFAULT_MODE: PolyaxonMode = "label"
EXTENDED_RESOURCE_DOMAIN = "gpu.drakit.dev"  # "gpu" in the name keeps NVIDIA_VISIBLE_DEVICES=none away

# Replica roles per distributed run kind, and the ones that get devices by default (a TF parameter
# server, an MPI launcher or an evaluator computes no gradients).
REPLICAS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "tfjob": (("chief", "ps", "worker", "evaluator"), ("chief", "worker")),
    "pytorchjob": (("master", "worker"), ("master", "worker")),
    "mpijob": (("launcher", "worker"), ("worker",)),
    "xgbjob": (("master", "worker"), ("master", "worker")),
    "paddlejob": (("master", "worker"), ("master", "worker")),
}
SINGLE_POD = ("job", "service")
REFUSED_KINDS = {
    "dag": "a dag runs other operations and has no pod of its own: apply the profile to the operations it runs",
    "matrix": "a matrix is a search over operations: apply the profile to the operation it runs",
}


def is_polyaxon_document(data: Any) -> bool:
    """A Polyaxon file (``version`` + ``kind: operation|component``, no ``apiVersion``): not a
    Kubernetes object, so the door's decoder must not see it."""
    return (isinstance(data, dict) and "apiVersion" not in data and "version" in data
            and data.get("kind") in ("operation", "component"))


def extended_resource_name(profile: str) -> str:
    return f"{EXTENDED_RESOURCE_DOMAIN}/{profile}"


def extended_resource_refusals(cp: CompiledProfile) -> list[str]:
    """Why ``cp`` cannot be one extended resource: each thing a single class and count cannot say."""
    spec_claim = cp.claim["kind"] == "ResourceClaim"
    exact = cp.claim["spec"]["devices"]["requests"][0] if spec_claim else cp.claim["spec"]["spec"]["devices"]["requests"][0]
    out = []
    if cp.first_available:
        out.append(f"alternatives ({len(cp.options)} firstAvailable options) need per-request selectors")
    if cp.colocate:
        out.append(f"colocate needs a matchAttribute constraint on {cp.colocate}")
    if spec_claim:
        out.append("claim: shared needs a ResourceClaim shared by pods; an extended resource is allocated per pod")
    if "exactly" in exact and exact["exactly"].get("adminAccess"):
        out.append("adminAccess cannot be requested through an extended resource")
    if "exactly" in exact and exact["exactly"].get("tolerations"):
        out.append("device tolerations need the request's tolerations field")
    return out


def extended_resource_class(cp: CompiledProfile) -> dict[str, Any]:
    """The profile's DeviceClass naming its extended resource; InvalidInput with every reason when refused."""
    refusals = extended_resource_refusals(cp)
    if refusals:
        raise InvalidInput(f"profile {cp.profile}: mode extended-resource cannot express it: {'; '.join(refusals)} "
                           "(use mode label: the claims are injected at admission)")
    dc = copy.deepcopy(cp.device_class)
    dc["spec"]["extendedResourceName"] = extended_resource_name(cp.profile)
    return dc


def _count(cp: CompiledProfile) -> int:
    return cp.options[0].count


@dataclass(frozen=True)
class PodSettings:
    """What each pod-producing section of a Polyaxon run gets (``environment`` and ``container``)."""

    environment: dict[str, Any]
    container: dict[str, Any]


def pod_settings(cp: CompiledProfile, mode: PolyaxonMode) -> PodSettings:
    f = cp.fragment
    env: dict[str, Any] = {}
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    container: dict[str, Any] = {}
    if mode == "label":
        labels[PROFILE_LABEL] = cp.profile
        annotations[DIGEST_ANNOTATION] = cp.digest()  # the main container is the first: the injector's default
    else:
        extended_resource_class(cp)  # refuses with the reasons
        container = {"resources": {"limits": {extended_resource_name(cp.profile): _count(cp)}}}
    queue = dict(f.labels).get(QUEUE_LABEL)
    if queue:
        labels[QUEUE_LABEL] = queue
    if labels:
        env["labels"] = labels
    if annotations:
        env["annotations"] = annotations
    if f.priority_class_name:
        env["priorityClassName"] = f.priority_class_name
    if f.tolerations:
        env["tolerations"] = [dict(t) for t in f.tolerations]
    return PodSettings(env, container)


def _roles(kind: str, replicas: Sequence[str] | None) -> tuple[str, ...]:
    known, default = REPLICAS[kind]
    if not replicas:
        return default
    unknown = [r for r in replicas if r not in known]
    if unknown:
        raise InvalidInput(f"run kind {kind} has no replica {', '.join(unknown)} (has {', '.join(known)})")
    return tuple(replicas)


def check_kind(kind: str) -> None:
    if kind in REFUSED_KINDS:
        raise InvalidInput(f"run kind {kind}: {REFUSED_KINDS[kind]}")
    if kind not in SINGLE_POD and kind not in REPLICAS:
        raise InvalidInput(f"run kind {kind}: drakit places devices in {', '.join((*SINGLE_POD, *REPLICAS))} runs only")


def run_patch(cp: CompiledProfile, mode: PolyaxonMode, kind: str = "job", replicas: Sequence[str] | None = None) -> dict[str, Any]:
    """The ``runPatch`` for a run of ``kind``: at the top for a job, per replica for distributed kinds."""
    check_kind(kind)
    s = pod_settings(cp, mode)
    section: dict[str, Any] = {"environment": s.environment}
    if s.container:
        section["container"] = s.container
    if kind in SINGLE_POD:
        return {"kind": kind, **section}
    return {"kind": kind, **{role: copy.deepcopy(section) for role in _roles(kind, replicas)}}


def preset(cp: CompiledProfile, mode: PolyaxonMode, *, kind: str = "job", replicas: Sequence[str] | None = None,
           agent_queue: str | None = None) -> dict[str, Any]:
    """A Polyaxon preset (``isPreset: true``) composing with any operation of ``kind``."""
    doc: dict[str, Any] = {"version": 1.1, "kind": "operation", "isPreset": True, "patchStrategy": "post_merge"}
    if agent_queue:
        check_agent_queue(agent_queue)
        doc["queue"] = agent_queue
    doc["runPatch"] = run_patch(cp, mode, kind, replicas)
    return doc


def check_agent_queue(value: str) -> None:
    """Polyaxon's queue format: ``queue`` or ``agent/queue`` (``.`` is read as ``/``)."""
    parts = value.replace(".", "/").split("/")
    if len(parts) > 2 or not all(parts):
        raise InvalidInput(f"Polyaxon queue {value!r}: want QUEUE or AGENT/QUEUE")
