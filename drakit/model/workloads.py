"""What a real manifest set holds besides DRA objects, sorted before typing.

A platform team's folder has Namespaces, Services, ConfigMaps, Deployments, Jobs, CRDs and
``kubectl get -o yaml`` dumps next to its claims.  None of that may void the bundle:

* kinds drakit types (:data:`drakit.model.kinds.KINDS`) are typed and validated;
* ``resource.k8s.io/v1beta1`` and ``v1beta2`` objects are converted to v1 as the API server
  converts them (``pkg/apis/resource/v1beta1/conversion.go``: a request's flat
  ``deviceClassName/selectors/allocationMode/count/adminAccess/tolerations/capacity`` become
  ``exactly`` whenever any of them is set, next to ``firstAvailable``; a device's ``basic``
  wrapper is flattened; a slice's ``nodeName: ""`` and ``allNodes: false`` mean unset);
  v1beta2 has v1's shape;
* ``events.k8s.io/v1`` Events are read as core v1 Events (``pkg/apis/events/v1/conversion.go``:
  ``regarding`` is ``involvedObject``, ``note`` is ``message``, the ``deprecated*`` fields are
  the core ones);
* workload kinds give their pod templates, validated as pods and offered as the pods their
  controller would create, each with an ownerReference to the workload: ``spec.replicas``
  of them (a Deployment, ReplicaSet, ReplicationController or StatefulSet), a Job's (or a
  CronJob's job's) ``parallelism`` capped by ``completions``, a JobSet's ``replicas`` times
  that per replicated job, one for a DaemonSet (one per node, which the manifest cannot tell).
  A StatefulSet's names are exact (``<name>-<ordinal>``, from ``spec.ordinals.start``); every
  other controller generates names, so ``<name>-<i>`` (a JobSet's ``<name>-<job>-<i>``) stands
  in for them and the pod says so.  At most :data:`MAX_TEMPLATE_REPLICAS` per template;
* every other kind is skipped (one note per kind).  A kind unknown in a group drakit serves
  (core ``v1``, ``resource.k8s.io``) is an error, as the API server would answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from drakit.model.kinds import KINDS

CORE_SKIPPED = frozenset({
    "Binding", "ComponentStatus", "ConfigMap", "Endpoints", "LimitRange", "Namespace", "PersistentVolume",
    "PersistentVolumeClaim", "ReplicationController", "ResourceQuota", "Secret", "Service", "ServiceAccount",
})
"""core/v1 kinds that carry nothing for DRA; any other core kind drakit does not type is an error."""

# kind -> (API groups, path of each pod template inside the object)
WORKLOAD_KINDS: dict[str, tuple[frozenset[str], tuple[str, ...]]] = {
    "CronJob": (frozenset({"batch"}), ("spec", "jobTemplate", "spec", "template")),
    "DaemonSet": (frozenset({"apps"}), ("spec", "template")),
    "Deployment": (frozenset({"apps"}), ("spec", "template")),
    "Job": (frozenset({"batch"}), ("spec", "template")),
    "JobSet": (frozenset({"jobset.x-k8s.io"}), ()),  # spec.replicatedJobs[].template.spec.template
    "ReplicaSet": (frozenset({"apps"}), ("spec", "template")),
    "ReplicationController": (frozenset({""}), ("spec", "template")),
    "StatefulSet": (frozenset({"apps"}), ("spec", "template")),
}

_CONVERTED_KINDS = frozenset({"DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice"})
_MAIN_REQUEST_FIELDS = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations",
                        "capacity")
_EVENT_FIELDS = {
    "regarding": "involvedObject", "note": "message", "reportingController": "reportingComponent",
    "deprecatedSource": "source", "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp", "deprecatedCount": "count",
}


MAX_TEMPLATE_REPLICAS = 1000
"""Replicas offered as pods per template: enough for any trial, bounded for ``replicas: 1e9``."""


@dataclass(frozen=True)
class TemplatePod:
    """A pod made from a workload's template: its wire dict, the template's path, the owner.

    ``replica`` is its index among the ``replicas`` pods of the template (the first is the one
    validated: the others differ only by name); ``generated`` says the controller would
    generate the name, so ``data``'s is a stand-in."""

    data: dict[str, Any]
    path: str
    owner: str
    replica: int = 0
    replicas: int = 1
    generated: bool = True


@dataclass(frozen=True)
class Triage:
    """What to do with one document: type ``data`` (maybe converted), skip it, or refuse it."""

    data: dict[str, Any] | None = None
    pods: tuple[TemplatePod, ...] = ()
    skip: str = ""  # the kind, for the one note per kind
    converted: str = ""  # "resource.k8s.io/v1beta1 ResourceClaim"
    error: str = ""
    template_errors: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # (path, detail)
    notes: tuple[str, ...] = ()


def triage(data: dict[str, Any]) -> Triage:
    api, kind = data.get("apiVersion"), data.get("kind")
    if not isinstance(api, str) or not isinstance(kind, str) or not api or not kind or (api, kind) in KINDS:
        return Triage(data)  # typing reports what is missing or wrong
    group, _, version = api.rpartition("/")
    if group == "resource.k8s.io":
        if version in ("v1beta1", "v1beta2") and kind in _CONVERTED_KINDS:
            converted = _from_v1beta1(kind, data) if version == "v1beta1" else dict(data)
            converted["apiVersion"] = "resource.k8s.io/v1"
            return Triage(converted, converted=f"{api} {kind}")
        return Triage(data)
    if api == "events.k8s.io/v1" and kind == "Event":
        return Triage(_event_to_core(data))
    workload = WORKLOAD_KINDS.get(kind)
    if workload is not None and group in workload[0]:
        pods, errors, notes = _template_pods(kind, api, data, workload[1])
        return Triage(None, pods, skip=kind, template_errors=errors, notes=notes)
    if not group and kind not in CORE_SKIPPED:
        return Triage(data)  # an unknown core kind: "no matches for kind"
    return Triage(None, skip=kind)


# --------------------------------------------------------------------------- conversions


def _event_to_core(data: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in data.items():
        out[_EVENT_FIELDS.get(k, k)] = v
    out["apiVersion"] = "v1"
    return out


def _request_to_v1(req: Any) -> Any:
    if not isinstance(req, dict) or not any(k in req for k in _MAIN_REQUEST_FIELDS):
        return req
    out = {k: v for k, v in req.items() if k not in _MAIN_REQUEST_FIELDS}
    out["exactly"] = {k: req[k] for k in _MAIN_REQUEST_FIELDS if k in req}
    return out


def _claim_spec_to_v1(spec: Any) -> Any:
    if not isinstance(spec, dict) or not isinstance(spec.get("devices"), dict):
        return spec
    devices = dict(spec["devices"])
    if isinstance(devices.get("requests"), list):
        devices["requests"] = [_request_to_v1(r) for r in devices["requests"]]
    return {**spec, "devices": devices}


def _device_to_v1(device: Any) -> Any:
    if not isinstance(device, dict) or "basic" not in device:
        return device
    basic = device["basic"]
    out = {k: v for k, v in device.items() if k != "basic"}
    if isinstance(basic, dict):
        out.update(basic)
    elif basic is not None:
        out["basic"] = basic  # a wrong type: left for strict decoding to report
    return out


def _from_v1beta1(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    out = dict(data)
    spec = data.get("spec")
    if kind == "ResourceClaim":
        out["spec"] = _claim_spec_to_v1(spec)
    elif kind == "ResourceClaimTemplate" and isinstance(spec, dict):
        out["spec"] = {**spec, "spec": _claim_spec_to_v1(spec.get("spec"))}
    elif kind == "ResourceSlice" and isinstance(spec, dict):
        new = dict(spec)
        if new.get("nodeName") == "":
            del new["nodeName"]
        if new.get("allNodes") is False:
            del new["allNodes"]
        if isinstance(new.get("devices"), list):
            new["devices"] = [_device_to_v1(d) for d in new["devices"]]
        out["spec"] = new
    return out


# --------------------------------------------------------------------------- workloads


def _at(data: Any, path: tuple[str, ...]) -> tuple[Any, str]:
    """The value at ``path`` or (None, the first path that is not an object)."""
    here = ""
    for p in path:
        if not isinstance(data, dict):
            return None, here
        here = f"{here}.{p}" if here else p
        data = data.get(p)
    return data, ""


def _count(obj: Any, key: str, path: str, default: int, errors: list[tuple[str, str]]) -> int:
    """A replica-like count (``replicas``, ``parallelism``, ``completions``) as the API checks it."""
    value = obj.get(key, default) if isinstance(obj, dict) else default
    if value is None:
        return default
    if value.__class__ is not int:
        errors.append((f"{path}.{key}" if path else key, "must be an integer"))
        return 0
    if value < 0:
        errors.append((f"{path}.{key}" if path else key, "must be greater than or equal to 0"))
        return 0
    return int(value)


def _job_pods(job_spec: Any, path: str, errors: list[tuple[str, str]]) -> int:
    """Pods a Job runs at once: ``parallelism`` (default 1), at most ``completions`` when set."""
    parallelism = _count(job_spec, "parallelism", path, 1, errors)
    completions = job_spec.get("completions") if isinstance(job_spec, dict) else None
    return parallelism if completions is None else min(parallelism, _count(job_spec, "completions", path, 1, errors))


# (name prefix, template path, template, pods the controller makes, names exact, ordinal start)
_Template = tuple[str, str, Any, int, bool, int]


def _templates(kind: str, data: dict[str, Any], path: tuple[str, ...], name: str,
               errors: list[tuple[str, str]]) -> list[_Template]:
    spec = data.get("spec")
    if kind == "JobSet":
        jobs, bad = _at(data, ("spec", "replicatedJobs"))
        if bad or not isinstance(jobs, list):
            if jobs is not None or bad:
                errors.append((bad or "spec.replicatedJobs", "must be a list"))
            jobs = []
        out: list[_Template] = []
        for i, job in enumerate(jobs):
            job_name = job.get("name") if isinstance(job, dict) and isinstance(job.get("name"), str) else str(i)
            tpl, bad = _at(job, ("template", "spec", "template"))
            if bad:
                errors.append((f"spec.replicatedJobs[{i}].{bad}", "must be an object"))
            jpath = f"spec.replicatedJobs[{i}]"
            job_spec, _ = _at(job, ("template", "spec"))
            n = _count(job, "replicas", jpath, 1, errors) * _job_pods(job_spec, f"{jpath}.template.spec", errors)
            out.append((f"{name}-{job_name}", f"{jpath}.template.spec.template", tpl, n, False, 0))
        return out
    tpl, bad = _at(data, path)
    if bad:
        errors.append((bad, "must be an object"))
    start, exact = 0, kind == "StatefulSet"
    if kind in ("Job", "CronJob"):
        job_spec, _ = _at(data, ("spec", "jobTemplate", "spec")) if kind == "CronJob" else (spec, "")
        n = _job_pods(job_spec, "spec.jobTemplate.spec" if kind == "CronJob" else "spec", errors)
    elif kind == "DaemonSet":
        n = 1
    else:
        n = _count(spec, "replicas", "spec", 1, errors)
        if exact:
            ordinals = spec.get("ordinals") if isinstance(spec, dict) else None
            start = _count(ordinals, "start", "spec.ordinals", 0, errors) if isinstance(ordinals, dict) else 0
    return [(name, ".".join(path), tpl, n, exact, start)]


def _template_pods(kind: str, api: str, data: dict[str, Any], path: tuple[str, ...]
                   ) -> tuple[tuple[TemplatePod, ...], tuple[tuple[str, str], ...], tuple[str, ...]]:
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    name = meta.get("name") if isinstance(meta.get("name"), str) else ""
    errors: list[tuple[str, str]] = []
    notes: list[str] = []
    pods: list[TemplatePod] = []
    owner = {"apiVersion": api, "kind": kind, "name": name, "uid": str(meta.get("uid") or ""), "controller": True}
    for prefix, tpl_path, tpl, replicas, exact, start in _templates(kind, data, path, str(name), errors):
        if tpl is None:
            continue
        if not isinstance(tpl, dict):
            errors.append((tpl_path, "must be an object"))
            continue
        tpl_meta = tpl.get("metadata")
        if tpl_meta is not None and not isinstance(tpl_meta, dict):
            errors.append((f"{tpl_path}.metadata", "must be an object"))
            continue
        extra = sorted(k for k in tpl if k not in ("metadata", "spec"))
        for k in extra:
            errors.append((f"{tpl_path}.{k}", "unknown field"))
        if replicas > MAX_TEMPLATE_REPLICAS:
            notes.append(f"{kind} {name} ({tpl_path}): {replicas} pods; the first {MAX_TEMPLATE_REPLICAS} are offered")
        offered = min(replicas, MAX_TEMPLATE_REPLICAS)
        for i in range(offered):  # the replicas share the template's spec: nothing downstream writes to it
            pod_meta: dict[str, Any] = {**(tpl_meta or {}), "name": f"{prefix}-{start + i}", "ownerReferences": [owner]}
            if isinstance(meta.get("namespace"), str):
                pod_meta["namespace"] = meta["namespace"]
            pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta}
            if "spec" in tpl:
                pod["spec"] = tpl["spec"]
            pods.append(TemplatePod(pod, tpl_path, f"{kind}/{name}", i, replicas, not exact))
    return tuple(pods), tuple(errors), tuple(notes)
