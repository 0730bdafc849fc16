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
* workload kinds give their pod templates, validated as pods and offered as pods with an
  ownerReference to the workload (``<name>-0``; a JobSet's ``<name>-<replicatedJob>-0``);
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


@dataclass(frozen=True)
class TemplatePod:
    """A pod made from a workload's template: its wire dict, the template's path, the owner."""

    data: dict[str, Any]
    path: str
    owner: str


@dataclass(frozen=True)
class Triage:
    """What to do with one document: type ``data`` (maybe converted), skip it, or refuse it."""

    data: dict[str, Any] | None = None
    pods: tuple[TemplatePod, ...] = ()
    skip: str = ""  # the kind, for the one note per kind
    converted: str = ""  # "resource.k8s.io/v1beta1 ResourceClaim"
    error: str = ""
    template_errors: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # (path, detail)


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
        pods, errors = _template_pods(kind, api, data, workload[1])
        return Triage(None, pods, skip=kind, template_errors=errors)
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


def _template_pods(kind: str, api: str, data: dict[str, Any], path: tuple[str, ...]
                   ) -> tuple[tuple[TemplatePod, ...], tuple[tuple[str, str], ...]]:
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    name = meta.get("name") if isinstance(meta.get("name"), str) else ""
    templates: list[tuple[str, str, Any]] = []  # (pod name, template path, template)
    errors: list[tuple[str, str]] = []
    if kind == "JobSet":
        jobs, bad = _at(data, ("spec", "replicatedJobs"))
        if bad or not isinstance(jobs, list):
            if jobs is not None or bad:
                errors.append((bad or "spec.replicatedJobs", "must be a list"))
            jobs = []
        for i, job in enumerate(jobs):
            job_name = job.get("name") if isinstance(job, dict) and isinstance(job.get("name"), str) else str(i)
            tpl, bad = _at(job, ("template", "spec", "template"))
            templates.append((f"{name}-{job_name}-0", f"spec.replicatedJobs[{i}].template.spec.template", tpl))
            if bad:
                errors.append((f"spec.replicatedJobs[{i}].{bad}", "must be an object"))
    else:
        tpl, bad = _at(data, path)
        if bad:
            errors.append((bad, "must be an object"))
        templates.append((f"{name}-0", ".".join(path), tpl))
    pods: list[TemplatePod] = []
    owner = {"apiVersion": api, "kind": kind, "name": name, "uid": str(meta.get("uid") or ""), "controller": True}
    for pod_name, tpl_path, tpl in templates:
        if tpl is None:
            continue
        if not isinstance(tpl, dict):
            errors.append((tpl_path, "must be an object"))
            continue
        tpl_meta = tpl.get("metadata")
        if tpl_meta is not None and not isinstance(tpl_meta, dict):
            errors.append((f"{tpl_path}.metadata", "must be an object"))
            continue
        pod_meta: dict[str, Any] = {**(tpl_meta or {}), "name": pod_name, "ownerReferences": [owner]}
        if isinstance(meta.get("namespace"), str):
            pod_meta["namespace"] = meta["namespace"]
        pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta}
        if "spec" in tpl:
            pod["spec"] = tpl["spec"]
        extra = sorted(k for k in tpl if k not in ("metadata", "spec"))
        for k in extra:
            errors.append((f"{tpl_path}.{k}", "unknown field"))
        pods.append(TemplatePod(pod, tpl_path, f"{kind}/{name}"))
    return tuple(pods), tuple(errors)
