"""AdmissionReview in, JSONPatch or a denial out: the claim injector's whole decision, pure.

Frameworks such as Polyaxon cannot write DRA claims into the pods they create, so a workload
carrying the ``drakit.dev/profile`` label gets them at admission.  The rules:

* CREATE injects; UPDATE only puts back what an earlier CREATE injected (a re-applied manifest
  would otherwise drop the claims; pod templates and pod specs do not change otherwise);
* the pod references the profile's ResourceClaimTemplate (or shared claim): admission never
  creates claims, since a later admission step can still reject the object and leave them behind;
* both halves: ``spec.resourceClaims[]`` and ``resources.claims`` of each selected container
  (the first one unless the ``drakit.dev/container`` annotation names one);
* workloads get it in their pod template, so Kueue, which counts the template, sees the devices;
  a bare Pod only where Kueue manages Pods or the profile routes to no queue;
* idempotent: a second invocation finds everything in place and returns no patch;
* a container also asking for the same vendor's device-plugin resource (``nvidia.com/gpu``) would
  get its GPUs twice: denied, or converted (the legacy request removed) by policy.

The fragment comes from the profile compiler (:class:`drakit.profiles.compile.PodFragment`), the
same one ``drakit profile apply-to`` merges, so the three ways to attach a profile agree.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from drakit.profiles.apply import LEGACY_GPU_RESOURCES, POD_SPEC_PATHS, SKIPPED_ROLES
from drakit.profiles.compile import (
    DIGEST_ANNOTATION,
    PROFILE_LABEL,
    QUEUE_LABEL,
    CompiledProfile,
    PodFragment,
)
from drakit.webhook import codec

CONTAINER_ANNOTATION = "drakit.dev/container"
INJECTED_ANNOTATION = "drakit.dev/injected"  # the profile whose claims admission added

# Which device-plugin resources hand out the same devices as a DRA driver.
LEGACY_DRIVER = {
    "nvidia.com/gpu": "gpu.nvidia.com",
    "amd.com/gpu": "gpu.amd.com",
    "gpu.intel.com/i915": "gpu.intel.com",
    "gpu.intel.com/xe": "gpu.intel.com",
}
assert set(LEGACY_DRIVER) == set(LEGACY_GPU_RESOURCES)

NVIDIA_DRIVER = "gpu.nvidia.com"
HIDE_GPUS_ENV = "NVIDIA_VISIBLE_DEVICES"

LegacyPolicy = Literal["deny", "convert"]

# Stable denial codes (stored by callers, asserted by tests).
UNKNOWN_PROFILE = "unknown-profile"
DOUBLE_ALLOCATION = "double-allocation"
DIGEST_MISMATCH = "digest-mismatch"
CLAIM_CONFLICT = "claim-conflict"
NO_CONTAINER = "no-container"
NO_POD_SPEC = "no-pod-spec"
BYPASSES_KUEUE = "bypasses-kueue"


class MalformedReview(ValueError):
    """Not an AdmissionReview v1 request this endpoint can answer (HTTP 400, not a denial)."""


@dataclass(frozen=True)
class Rule:
    """One profile as the injector needs it."""

    profile: str
    digest: str
    driver: str
    fragment: PodFragment

    @classmethod
    def of(cls, cp: CompiledProfile) -> Rule:
        return cls(cp.profile, cp.digest(), cp.schema.driver, cp.fragment)

    @property
    def queue(self) -> str | None:
        return dict(self.fragment.labels).get(QUEUE_LABEL)

    def legacy_resources(self) -> tuple[str, ...]:
        return tuple(r for r, d in LEGACY_DRIVER.items() if d == self.driver)


@dataclass(frozen=True)
class Injector:
    """The served profiles and the site's choices (see docs/admission.md)."""

    rules: Mapping[str, Rule]
    legacy: LegacyPolicy = "deny"
    kueue_pods: bool = False  # Kueue's pod integration is on, so it counts claims injected into Pods

    @classmethod
    def of(cls, compiled: Sequence[CompiledProfile], **options: Any) -> Injector:
        return cls({cp.profile: Rule.of(cp) for cp in compiled}, **options)


@dataclass(frozen=True)
class Denial:
    code: str
    message: str
    hint: str = ""

    def line(self) -> str:
        """One line, the same shape the validating policy writes: ``drakit (code): message; hint``."""
        return f"drakit ({self.code}): {self.message}" + (f"; {self.hint}" if self.hint else "")


@dataclass(frozen=True)
class Decision:
    uid: str
    patch: tuple[dict[str, Any], ...] = ()
    denial: Denial | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)

    @property
    def allowed(self) -> bool:
        return self.denial is None

    def response(self) -> dict[str, Any]:
        """The AdmissionReview v1 answer, patch base64-encoded as the API server wants it."""
        resp: dict[str, Any] = {"uid": self.uid, "allowed": self.allowed}
        if self.denial is not None:
            resp["status"] = {"code": 403, "reason": "Forbidden", "message": self.denial.line()}
        elif self.patch:
            resp["patchType"] = "JSONPatch"
            resp["patch"] = base64.b64encode(codec.dumps(list(self.patch))).decode()
        if self.warnings:
            resp["warnings"] = list(self.warnings)
        return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp}


def _request(review: Mapping[str, Any]) -> Mapping[str, Any]:
    if not isinstance(review, Mapping) or review.get("kind") != "AdmissionReview":
        raise MalformedReview("not an AdmissionReview")
    if review.get("apiVersion") != "admission.k8s.io/v1":
        raise MalformedReview(f"AdmissionReview {review.get('apiVersion')!r}: only admission.k8s.io/v1 is served")
    req = review.get("request")
    if not isinstance(req, Mapping) or not isinstance(req.get("uid"), str):
        raise MalformedReview("AdmissionReview without request.uid")
    return req


def _pod_specs(obj: dict[str, Any], kind: str) -> Iterator[dict[str, Any]] | None:
    """Every pod spec of ``obj`` (the workload's templates), or None when a step is missing."""
    found: list[Any] = [obj]
    for step in POD_SPEC_PATHS[kind]:
        nxt: list[Any] = []
        for n in found:
            if step == "[]":
                nxt += n if isinstance(n, list) else [None]
            elif step == "{}":
                nxt += [v for k, v in n.items() if k not in SKIPPED_ROLES] if isinstance(n, dict) else [None]
            else:
                nxt.append(n.get(step) if isinstance(n, dict) else None)
        if not nxt or not all(isinstance(n, dict | list) for n in nxt):
            return None
        found = nxt
    if not all(isinstance(n, dict) for n in found):
        return None
    return iter(found)


def _labels(meta: Any, key: str) -> dict[str, Any]:
    value = meta.get(key) if isinstance(meta, dict) else None
    return value if isinstance(value, dict) else {}


def _quantity_positive(value: Any) -> bool:
    return str(value).strip() not in ("", "0")


def mutate(review: Mapping[str, Any], injector: Injector) -> Decision:
    """The decision for one AdmissionReview v1 (see the module docstring for the rules)."""
    req = _request(review)
    uid = str(req["uid"])
    operation = req.get("operation")
    obj = req.get("object")
    kind = (req.get("kind") or {}).get("kind") if isinstance(req.get("kind"), Mapping) else None
    if not isinstance(obj, dict) or kind not in POD_SPEC_PATHS or operation not in ("CREATE", "UPDATE"):
        return Decision(uid)
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    name = _labels(meta, "labels").get(PROFILE_LABEL)
    if name is None:
        return Decision(uid)  # not opted in: untouched
    annotations = _labels(meta, "annotations")
    rule = injector.rules.get(str(name))
    if rule is None:
        known = ", ".join(sorted(injector.rules)) or "none"
        return Decision(uid, denial=Denial(
            UNKNOWN_PROFILE, f"{PROFILE_LABEL}={name}: no such profile (served: {known})",
            "fix the label, or serve the profile (drakit webhook serve PROFILE...)"))
    if operation == "UPDATE":
        old = req.get("oldObject")
        if not (isinstance(old, dict) and _labels(old.get("metadata"), "annotations").get(INJECTED_ANNOTATION) == rule.profile):
            return Decision(uid)  # nothing of ours to keep
    digest = annotations.get(DIGEST_ANNOTATION)
    if digest is not None and digest != rule.digest:
        return Decision(uid, denial=Denial(
            DIGEST_MISMATCH, f"{DIGEST_ANNOTATION} is {digest} but profile {rule.profile} is now {rule.digest}",
            "regenerate the preset or manifest from the profile the cluster serves"))
    spec0: dict[str, Any] = obj["spec"] if isinstance(obj.get("spec"), dict) else {}
    if kind == "Pod" and rule.queue and not injector.kueue_pods and operation == "CREATE" and not _has_claim(spec0, rule.fragment):
        return Decision(uid, denial=Denial(
            BYPASSES_KUEUE, f"profile {rule.profile} routes to Kueue queue {rule.queue}, which counts devices from the "
            "workload's pod template, not from Pods",
            "submit a Job (or another workload) with the label, or enable Kueue's pod integration (--kueue-pods)"))
    mutated = _writable(obj, POD_SPEC_PATHS[kind])
    specs = _pod_specs(mutated, kind)
    if specs is None:
        return Decision(uid, denial=Denial(NO_POD_SPEC, f"{kind} has no pod spec at {'.'.join(POD_SPEC_PATHS[kind])}"))
    warnings: list[str] = []
    target = annotations.get(CONTAINER_ANNOTATION)
    for i, spec in enumerate(specs):
        denial = _inject(spec, rule, injector.legacy, target, warnings, f"pod spec #{i}" if i else "the pod spec")
        if denial is not None:
            return Decision(uid, denial=denial)
    # The marker tells a later UPDATE what to keep; set again (a no-op) on reinvocation.
    mutated.setdefault("metadata", {}).setdefault("annotations", {})[INJECTED_ANNOTATION] = rule.profile
    if rule.queue and _labels(meta, "labels").get(QUEUE_LABEL) is None and kind != "Pod":
        warnings.append(f"profile {rule.profile} routes to Kueue queue {rule.queue} but the {kind} has no "
                        f"{QUEUE_LABEL} label: Kueue will not manage it")
    ops: list[dict[str, Any]] = []
    _diff(obj, mutated, (), ops)
    return Decision(uid, tuple(ops), warnings=tuple(warnings))


def _writable(obj: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """A copy of ``obj`` for :func:`_inject` to edit, of just what it edits: the object, its
    metadata and annotations, the way down to each pod spec, the spec, its containers and their
    resources, limits and requests.  Everything else stays the request's own objects, so the copy
    costs little and :func:`_diff` passes over the shared parts by identity.  A pod from the API
    server is a few KB; copying it all and comparing it all again was most of the decision."""
    out = dict(obj)
    meta = out["metadata"] = dict(obj["metadata"])  # a dict: mutate returned early otherwise
    annotations = meta.get("annotations")
    meta["annotations"] = dict(annotations) if isinstance(annotations, dict) else {}
    return _writable_path(out, path)


def _writable_path(node: Any, path: tuple[str, ...]) -> Any:
    if not path:
        return _writable_spec(node) if isinstance(node, dict) else node
    step, rest = path[0], path[1:]
    if step == "[]":
        return [_writable_path(n, rest) for n in node] if isinstance(node, list) else node
    if step == "{}":
        return {k: v if k in SKIPPED_ROLES else _writable_path(v, rest) for k, v in node.items()} if isinstance(
            node, dict) else node
    if not isinstance(node, dict) or step not in node:
        return node
    return {**node, step: _writable_path(node[step], rest)}


def _writable_spec(spec: dict[str, Any]) -> dict[str, Any]:
    spec = dict(spec)
    if isinstance(spec.get("containers"), list):
        spec["containers"] = [_writable_container(c) if isinstance(c, dict) else c for c in spec["containers"]]
    return spec


def _writable_container(c: dict[str, Any]) -> dict[str, Any]:
    c = dict(c)
    if isinstance(c.get("resources"), dict):
        res = c["resources"] = dict(c["resources"])
        for part in ("limits", "requests"):
            if isinstance(res.get(part), dict):
                res[part] = dict(res[part])
    return c


def _diff(old: Any, new: Any, at: tuple[str | int, ...], ops: list[dict[str, Any]]) -> None:
    """RFC 6902 operations turning ``old`` into ``new`` for the edits made here: keys added or
    removed, lists extended at the end (``add`` at each new index, never ``-``), items taken out
    of a list removed one by one.  jsonpatch's own differ looks for moves in every list, which
    costs ten times the decision itself; these edits never move anything."""
    if old is new or old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for k in old:
            if k not in new:
                ops.append({"op": "remove", "path": _pointer((*at, k))})
        for k, v in new.items():
            if k not in old:
                ops.append({"op": "add", "path": _pointer((*at, k)), "value": v})
            else:
                _diff(old[k], v, (*at, k), ops)
    elif isinstance(old, list) and isinstance(new, list) and len(new) >= len(old) and (
            new[: len(old)] == old or len(new) == len(old)):
        for i, v in enumerate(new):
            if i >= len(old):
                ops.append({"op": "add", "path": _pointer((*at, i)), "value": v})
            else:
                _diff(old[i], v, (*at, i), ops)
    elif isinstance(old, list) and isinstance(new, list) and (gone := _removed(old, new)) is not None:
        ops += [{"op": "remove", "path": _pointer((*at, i))} for i in reversed(gone)]  # back to front
    else:
        ops.append({"op": "replace", "path": _pointer(at), "value": new})


def _removed(old: list[Any], new: list[Any]) -> list[int] | None:
    """The indices of ``old`` that ``new`` dropped, when ``new`` is ``old`` with items taken out."""
    gone, j = [], 0
    for i, v in enumerate(old):
        if j < len(new) and new[j] == v:
            j += 1
        else:
            gone.append(i)
    return gone if j == len(new) else None


def _pointer(parts: tuple[str | int, ...]) -> str:
    """RFC 6901: ``~`` as ``~0``, then ``/`` as ``~1`` (in that order, so ``~1`` in a key stays itself)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _has_claim(spec: dict[str, Any], fragment: PodFragment) -> bool:
    return any(isinstance(c, dict) and c.get("name") == fragment.claim_name for c in spec.get("resourceClaims") or [])


def _inject(spec: dict[str, Any], rule: Rule, legacy: LegacyPolicy, target: str | None, warnings: list[str],
            where: str) -> Denial | None:
    """Add both halves to one pod spec in place; a denial when that cannot be done safely."""
    fragment = rule.fragment
    entry = fragment.resource_claim()
    containers = [c for c in spec.get("containers") or [] if isinstance(c, dict)]
    if not containers:
        return Denial(NO_CONTAINER, f"{where} has no containers")
    if target is not None:
        chosen = [c for c in containers if c.get("name") == target]
        if not chosen:
            have = ", ".join(str(c.get("name")) for c in containers)
            return Denial(NO_CONTAINER, f"{CONTAINER_ANNOTATION}={target}: {where} has no such container (have {have})")
    else:
        chosen = containers[:1]  # the first container is the workload; sidecars get no devices
    claims = spec.get("resourceClaims")
    same = [c for c in claims or [] if isinstance(c, dict) and c.get("name") == entry["name"]]
    if same and same[0] != entry:
        return Denial(CLAIM_CONFLICT, f"{where} already has resourceClaims {entry['name']} with another source "
                      f"({source_text(same[0])}), profile {rule.profile} references {source_text(entry)}",
                      "rename the existing claim or drop the profile label")
    legacy_names = rule.legacy_resources()
    for c in chosen:
        res: dict[str, Any] = c["resources"] if isinstance(c.get("resources"), dict) else {}
        asked = sorted({r for part in ("limits", "requests") for r, v in (res.get(part) or {}).items()
                        if r in legacy_names and _quantity_positive(v)})
        if asked and legacy == "deny":
            return Denial(DOUBLE_ALLOCATION, f"container {c.get('name')} asks for {', '.join(asked)} from the device "
                          f"plugin and profile {rule.profile} claims devices of {rule.driver}: the pod would be "
                          "allocated the same GPUs twice",
                          f"remove {', '.join(asked)} from its resources (the claim replaces it)")
        if asked:
            for part in ("limits", "requests"):
                for r in asked:
                    (res.get(part) or {}).pop(r, None)
                if part in res and not res[part]:
                    del res[part]
            warnings.append(f"container {c.get('name')}: {', '.join(asked)} replaced by profile {rule.profile}'s claim")
    if rule.driver == NVIDIA_DRIVER:
        for c in chosen:
            _drop_hidden_gpus(c)
    if not same:
        spec["resourceClaims"] = [*(claims or []), entry]
    for c in chosen:
        if not isinstance(c.get("resources"), dict):
            c["resources"] = {}
        mine = c["resources"].get("claims") or []
        if not any(isinstance(x, dict) and x.get("name") == fragment.claim_name for x in mine):
            c["resources"]["claims"] = [*mine, fragment.container_claim()]
    if fragment.priority_class_name and spec.get("priorityClassName") != fragment.priority_class_name:
        # Not set here: the Priority admission plugin has already resolved the pod's priority.
        warnings.append(f"profile {rule.profile} wants priorityClassName {fragment.priority_class_name}; "
                        "set it in the manifest")
    if fragment.tolerations:
        present: list[Any] = spec.get("tolerations") or []
        new = [dict(t) for t in fragment.tolerations if dict(t) not in present]
        if new:
            spec["tolerations"] = [*present, *new]
    return None


def _drop_hidden_gpus(container: dict[str, Any]) -> None:
    """Remove ``NVIDIA_VISIBLE_DEVICES=none``, which frameworks (Polyaxon) write into containers that
    ask for no device-plugin GPU: the claim is the container's GPU now.  Under CDI the driver's own
    edit would override it, but the pod spec should not say the opposite of what it gets."""
    env = container.get("env")
    if isinstance(env, list) and any(_hides_gpus(e) for e in env):
        container["env"] = [e for e in env if not _hides_gpus(e)]


def _hides_gpus(e: Any) -> bool:
    return isinstance(e, dict) and e.get("name") == HIDE_GPUS_ENV and e.get("value") == "none"


def source_text(entry: Mapping[str, Any]) -> str:
    if entry.get("resourceClaimTemplateName"):
        return f"template {entry['resourceClaimTemplateName']}"
    return f"claim {entry.get('resourceClaimName')}"
