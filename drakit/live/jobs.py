"""Runs on Kubernetes: a run's batch/v1 Job, and what its pod says about the run, read as values.

The Job carries the profile's claim through the same pod-fragment merge ``drakit profile
apply-to`` uses, the run's ID as the ``drakit.dev/run-id`` label (on the Job and its pods, so a
restarted recorder finds both again) and, when the run is queued, Kueue's queue label with the
Job created suspended: Kueue unsuspends it when it admits the Workload, and without Kueue a
queued Job never starts, which is right.

:func:`pod_view` reads one pod into the facts the executor's state machine needs: the claim
the resourceclaim controller generated (``status.resourceClaimStatuses``), the node, the
scheduler's last word, the container's start and end.  Pure; the watching is in
:mod:`drakit.executors.kubernetes`, on the :class:`~drakit.live.client.ClusterClient` seam.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import yaml

from drakit.explain.events import component_of, event_time, in_time_order
from drakit.live.client import ClusterClient, Obj
from drakit.live.kueue import QUEUE_NAME_LABEL
from drakit.live.snapshot import list_all
from drakit.profiles.apply import apply_fragment
from drakit.profiles.compile import PodFragment

__all__ = [
    "CONTAINER",
    "RUN_ID_LABEL",
    "PodView",
    "Terminated",
    "event_line",
    "find_job",
    "job_manifest",
    "job_name",
    "pod_events",
    "pod_view",
    "workload_message",
]

RUN_ID_LABEL = "drakit.dev/run-id"
CONTAINER = "main"  # the run's one container; the claim goes to it
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def job_name(run_id: str) -> str | None:
    """The Job's name for ``run_id`` (the ID itself), or ``None`` when the ID cannot name a Job:
    the name is also a label value on its pods, so a DNS-1123 label of at most 63 characters."""
    return run_id if len(run_id) <= 63 and _DNS_LABEL.fullmatch(run_id) else None


def job_manifest(*, name: str, namespace: str, run_id: str, fragment: PodFragment, image: str,
                 command: Sequence[str], queue: str = "", env: Mapping[str, str] | None = None) -> Obj:
    """The run's Job: one pod, never restarted (a retry would be another run), the claim merged in."""
    labels = {RUN_ID_LABEL: run_id}
    job: Obj = {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": namespace,
                     "labels": {**labels, **({QUEUE_NAME_LABEL: queue} if queue else {})}},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{
                        "name": CONTAINER, "image": image, "command": list(command),
                        "env": [{"name": k, "value": v} for k, v in sorted((env or {}).items())],
                    }],
                },
            },
        },
    }
    if queue:
        job["spec"]["suspend"] = True
    merged = apply_fragment(yaml.safe_dump(job, sort_keys=False), fragment, containers=(CONTAINER,),
                            source=f"Job {namespace}/{name}")
    out: Obj = yaml.safe_load(merged.text)
    return out


def find_job(client: ClusterClient, namespace: str, run_id: str) -> Obj | None:
    """The run's Job, found by its label (a resumed run knows only its ID and namespace)."""
    items, _ = list_all(client, "Job", namespace=namespace, label_selector=f"{RUN_ID_LABEL}={run_id}")
    return items[0] if items else None


@dataclass(frozen=True)
class Terminated:
    exit_code: int
    reason: str
    message: str
    started_at: datetime | None
    finished_at: datetime | None


@dataclass(frozen=True)
class PodView:
    """What one of the run's pods says now."""

    name: str
    uid: str
    node: str
    phase: str
    created_at: datetime | None
    claim: str  # the claim serving the pod's claim entry ('' until the controller has made it)
    unschedulable: str  # kube-scheduler's PodScheduled=False message, '' when scheduled or not tried
    started_at: datetime | None  # the container's state.running.startedAt
    terminated: Terminated | None
    image_id: str

    @property
    def digest(self) -> str:
        """The image digest of ``imageID`` (``repo@sha256:…`` or ``sha256:…``; a runtime may add a scheme)."""
        return self.image_id.rpartition("@")[2] if "@" in self.image_id else self.image_id.rpartition("://")[2]


def _time(value: Any) -> datetime | None:
    return event_time({"eventTime": value}) if isinstance(value, str) and value else None


def pod_view(pod: Obj, fragment: PodFragment) -> PodView:
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    if fragment.template_name:
        claim = next((str(s.get("resourceClaimName") or "") for s in status.get("resourceClaimStatuses") or []
                      if s.get("name") == fragment.claim_name), "")
    else:
        claim = str(fragment.claim_ref or "")
    scheduled: Mapping[str, Any] = next((c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"), {})
    unschedulable = str(scheduled.get("message") or scheduled.get("reason") or "") \
        if scheduled.get("status") == "False" else ""
    container: Mapping[str, Any] = next((c for c in status.get("containerStatuses") or [] if c.get("name") == CONTAINER), {})
    state = container.get("state") or {}
    running, ended = state.get("running") or {}, state.get("terminated")
    terminated = None
    started = _time(running.get("startedAt"))
    if isinstance(ended, Mapping):
        terminated = Terminated(int(ended.get("exitCode") or 0), str(ended.get("reason") or ""),
                                str(ended.get("message") or ""), _time(ended.get("startedAt")),
                                _time(ended.get("finishedAt")))
        started = started or terminated.started_at
    return PodView(
        name=str(meta.get("name") or ""), uid=str(meta.get("uid") or ""), node=str(spec.get("nodeName") or ""),
        phase=str(status.get("phase") or "Pending"), created_at=_time(meta.get("creationTimestamp")), claim=claim,
        unschedulable=unschedulable, started_at=started,
        terminated=terminated, image_id=str(container.get("imageID") or ""),
    )


def pod_events(client: ClusterClient, pod: Obj) -> list[Obj]:
    """The Events about ``pod`` (scheduler, claim controller, kubelet), oldest first."""
    meta = pod.get("metadata") or {}
    selector = f"involvedObject.kind=Pod,involvedObject.name={meta.get('name')}"
    page = client.list("Event", namespace=str(meta.get("namespace") or "default"), field_selector=selector)
    uid = meta.get("uid")
    mine = [e for e in page.items if not uid or (e.get("involvedObject") or {}).get("uid") in (None, "", uid)]
    return [dict(e) for e in in_time_order(mine)]


def event_line(event: Mapping[str, Any]) -> str:
    """``2026-12-01T16:00:00+00:00 kubelet Started: Started container main`` (one line)."""
    when = event_time(event)
    count = int(event.get("count") or 1)
    text = " ".join(str(event.get("message") or "").split())
    return (f"{when.isoformat() if when else '-'} {component_of(event) or '-'} {event.get('reason') or '-'}"
            f"{f' (x{count})' if count > 1 else ''}: {text}")


def workload_message(client: ClusterClient, job: Obj) -> str:
    """What Kueue says about the Job's Workload (its QuotaReserved or Admitted condition), or ''."""
    meta = job.get("metadata") or {}
    uid = meta.get("uid")
    items, _ = list_all(client, "Workload", namespace=str(meta.get("namespace") or "default"))
    for wl in items:
        owners = (wl.get("metadata") or {}).get("ownerReferences") or []
        if any(o.get("uid") == uid for o in owners):
            for cond in (wl.get("status") or {}).get("conditions") or []:
                if cond.get("type") in ("QuotaReserved", "Admitted") and cond.get("status") == "False":
                    return str(cond.get("message") or cond.get("reason") or "")
    return ""
