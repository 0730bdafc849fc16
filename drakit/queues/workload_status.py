"""Why a Kueue Workload waits, read from what a live cluster says: the Workload's conditions and
messages, its ClusterQueue's quota and usage, and the other Workloads of that queue.

The answer has the shape the offline explain gives from the engine, e.g.
``ClusterQueue training: quota 4 × gpu-48g, 4 used by jobs a, b (1 borrowed from cohort
research); 2 ahead of you (StrictFIFO)``, with Kueue's own message kept verbatim beside it.

Kueue issue 13969 is recognised: a Workload that DRA validation marked ``Requeued=False``
(reason ``Inadmissible``) is never retried by the queue (``backoffWaitingTimeExpired`` in
``pkg/cache/queue/cluster_queue.go`` refuses it), so it can sit there after the cause was fixed.
When the current ``deviceClassMappings`` show the cause is gone, the verdict says so with the
remedy. Read from Kueue v0.19.2's workload controller (not yet seen on a cluster): it drops those
conditions when it next processes the DRA requests successfully, which a manager restart with
the fixed mappings triggers (they are read only at start); a Workload still parked after that
is deleted, and Kueue's Job integration creates a fresh one.

Pure: plain API dicts in, a frozen value out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

__all__ = ["LiveVerdict", "WorkloadExplanation", "explain_job_without_workload", "explain_workload"]

KUEUE_13969 = "https://github.com/kubernetes-sigs/kueue/issues/13969"
_UNMAPPED = re.compile(r"DeviceClass (\S+) is not mapped in DRA configuration")
# Requeued=False messages that come from DRA preprocessing in the workload controller
# (pkg/controller/core/workload_controller.go, pkg/dra/claims.go at v0.19.2).
_DRA_MARKERS = (
    "is not mapped in DRA configuration",
    "DRA resource claims not supported",
    "FirstAvailable device selection is not supported",
    "AdminAccess is not supported",
    "AllocationMode 'All' is not supported",
    "insufficient matching devices for CEL selector",
    "KueueDRAIntegration feature gate is not enabled",
    "resourceclaimtemplate",
)


class LiveVerdict(StrEnum):
    """Stable values (stored and compared): what the live state says about the Workload."""

    ADMITTED = "Admitted"
    FINISHED = "Finished"
    WAITING_FOR_QUOTA = "WaitingForQuota"
    BEHIND_OTHERS = "BehindOthers"
    INADMISSIBLE = "Inadmissible"
    STUCK_INADMISSIBLE = "StuckInadmissible"  # Kueue issue 13969
    QUEUE_STOPPED = "QueueStopped"
    NO_QUEUE = "NoQueue"
    PENDING = "Pending"
    NO_WORKLOAD = "NoWorkload"  # a Job for Kueue whose Workload does not exist (yet)
    NOT_MANAGED = "NotManagedByKueue"

    @property
    def waiting(self) -> bool:
        """Whether the Job waits for Kueue (the verb's exit 3)."""
        return self not in (LiveVerdict.ADMITTED, LiveVerdict.FINISHED, LiveVerdict.NOT_MANAGED)


@dataclass(frozen=True)
class WorkloadExplanation:
    workload: str  # namespace/name
    job: str  # the owning Job's name, or "" when none
    cluster_queue: str
    verdict: LiveVerdict
    summary: str  # one line
    details: tuple[str, ...] = ()
    kueue_message: str = ""  # Kueue's own condition message, verbatim
    remedy: str = ""

    def text(self) -> str:
        lines = [self.summary, *(f"  {d}" for d in self.details)]
        if self.kueue_message:
            lines.append(f"  Kueue says: {self.kueue_message}")
        if self.remedy:
            lines.append(f"  remedy: {self.remedy}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "workload": self.workload,
            "job": self.job,
            "clusterQueue": self.cluster_queue,
            "verdict": self.verdict.value,
            "summary": self.summary,
            "details": list(self.details),
            "kueueMessage": self.kueue_message,
            "remedy": self.remedy,
        }


# --------------------------------------------------------------------------------- reading


def _conditions(wl: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {str(c.get("type")): c for c in (wl.get("status") or {}).get("conditions") or []}


def _is(conds: Mapping[str, Mapping[str, Any]], kind: str, status: str) -> bool:
    return str((conds.get(kind) or {}).get("status")) == status


def _key(wl: Mapping[str, Any]) -> str:
    meta = wl.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def _job(wl: Mapping[str, Any]) -> str:
    owners = (wl.get("metadata") or {}).get("ownerReferences") or []
    return next((str(o.get("name")) for o in owners if o.get("kind") == "Job"), "")


def _label(wl: Mapping[str, Any]) -> str:
    return _job(wl) or (wl.get("metadata") or {}).get("name", "")


def _created(wl: Mapping[str, Any]) -> float:
    ts = (wl.get("metadata") or {}).get("creationTimestamp")
    if not ts:
        return 0.0
    return datetime.fromisoformat(str(ts).replace("Z", "+00:00")).timestamp()


def _priority(wl: Mapping[str, Any]) -> int:
    return int((wl.get("spec") or {}).get("priority") or 0)


def _cluster_queue_of(wl: Mapping[str, Any], local_queues: Sequence[Mapping[str, Any]]) -> str:
    admission = (wl.get("status") or {}).get("admission") or {}
    if admission.get("clusterQueue"):
        return str(admission["clusterQueue"])
    meta, spec = wl.get("metadata") or {}, wl.get("spec") or {}
    for lq in local_queues:
        lq_meta = lq.get("metadata") or {}
        if lq_meta.get("namespace") == meta.get("namespace") and lq_meta.get("name") == spec.get("queueName"):
            return str((lq.get("spec") or {}).get("clusterQueue", ""))
    return ""


def _usage_of(wl: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for ps in ((wl.get("status") or {}).get("admission") or {}).get("podSetAssignments") or []:
        out.update({str(k): str(v) for k, v in (ps.get("resourceUsage") or {}).items()})
    return out


def _requests_of(wl: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for ps in (wl.get("status") or {}).get("resourceRequests") or []:
        out.update({str(k): str(v) for k, v in (ps.get("resources") or {}).items()})
    return out


def _quotas(cq: Mapping[str, Any]) -> dict[str, tuple[str, str, str | None]]:
    """resource -> (flavor, nominal, borrowingLimit) over the ClusterQueue's resource groups."""
    out: dict[str, tuple[str, str, str | None]] = {}
    for group in (cq.get("spec") or {}).get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            for r in flavor.get("resources") or []:
                limit = r.get("borrowingLimit")
                out.setdefault(
                    str(r["name"]),
                    (
                        str(flavor["name"]),
                        str(r.get("nominalQuota", "0")),
                        None if limit is None else str(limit),
                    ),
                )
    return out


def _flavor_usage(cq: Mapping[str, Any]) -> dict[tuple[str, str], tuple[str, str]]:
    """(flavor, resource) -> (total, borrowed) from ``status.flavorsUsage``."""
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for f in (cq.get("status") or {}).get("flavorsUsage") or []:
        for r in f.get("resources") or []:
            out[(str(f["name"]), str(r["name"]))] = (str(r.get("total", "0")), str(r.get("borrowed", "0")))
    return out


def _display(resource: str, mappings: Sequence[Mapping[str, Any]]) -> str:
    """A mapped DRA resource by its DeviceClass (when it maps exactly one), else its name."""
    for m in mappings:
        classes = m.get("deviceClassNames") or []
        if m.get("name") == resource and len(classes) == 1:
            return str(classes[0])
    return resource


def _ahead(wl: Mapping[str, Any], pending: Sequence[Mapping[str, Any]]) -> list[str]:
    """Pending Workloads Kueue orders first: higher priority, then older (then UID, unknowable)."""
    mine = (-_priority(wl), _created(wl))
    return [
        _label(o)
        for o in sorted(pending, key=lambda o: (-_priority(o), _created(o)))
        if (-_priority(o), _created(o)) < mine
    ]


# --------------------------------------------------------------------------------- explaining


def explain_workload(
    wl: Mapping[str, Any],
    *,
    cluster_queues: Sequence[Mapping[str, Any]] = (),
    local_queues: Sequence[Mapping[str, Any]] = (),
    workloads: Sequence[Mapping[str, Any]] = (),
    device_class_mappings: Sequence[Mapping[str, Any]] | None = None,
) -> WorkloadExplanation:
    """Explain one Workload from the live objects around it.

    ``device_class_mappings``: the manager's current ``resources.deviceClassMappings`` when
    known; it is what tells a parked Workload whose cause is fixed (13969) from one still broken.
    """
    mappings = list(device_class_mappings or [])
    conds = _conditions(wl)
    key, job = _key(wl), _job(wl)
    ns, wl_name = key.split("/", 1)
    cq_name = _cluster_queue_of(wl, local_queues)
    cq = next((c for c in cluster_queues if (c.get("metadata") or {}).get("name") == cq_name), None)
    name = f"Workload {key}" + (f" (Job {job})" if job else "")

    def out(
        verdict: LiveVerdict, summary: str, details: Sequence[str] = (), message: str = "", remedy: str = ""
    ) -> WorkloadExplanation:
        return WorkloadExplanation(key, job, cq_name, verdict, summary, tuple(details), message, remedy)

    if _is(conds, "Finished", "True"):
        return out(
            LiveVerdict.FINISHED,
            f"{name} finished: {(conds['Finished'].get('message') or '').strip()}".rstrip(": "),
        )
    if _is(conds, "QuotaReserved", "True"):
        usage = ", ".join(f"{v} × {_display(r, mappings)}" for r, v in sorted(_usage_of(wl).items()))
        return out(
            LiveVerdict.ADMITTED,
            f"{name} is admitted in ClusterQueue {cq_name}" + (f", holding {usage}" if usage else ""),
        )

    reserved = conds.get("QuotaReserved") or {}
    requeued = conds.get("Requeued") or {}
    message = str(reserved.get("message") or requeued.get("message") or "")

    if _is(conds, "Requeued", "False") and requeued.get("reason") == "Inadmissible":
        cause = str(requeued.get("message") or message)
        if any(m in cause for m in _DRA_MARKERS):
            found = _UNMAPPED.search(cause)
            unmapped = found.group(1) if found else ""
            if unmapped and any(unmapped in (m.get("deviceClassNames") or []) for m in mappings):
                return out(
                    LiveVerdict.STUCK_INADMISSIBLE,
                    f"{name} is parked as inadmissible although DeviceClass {unmapped} is mapped now",
                    [
                        "Kueue marked it Requeued=False (Inadmissible) when the class was unmapped and does not "
                        f"retry such a workload by itself (Kueue issue 13969, {KUEUE_13969})",
                    ],
                    cause,
                    "restart the Kueue manager so it reprocesses the workload with the current deviceClassMappings; "
                    f"if it is still parked, delete the Workload (kubectl delete workload -n {ns} {wl_name}); "
                    "Kueue's Job integration creates a fresh one for the Job",
                )
            return out(
                LiveVerdict.INADMISSIBLE,
                f"{name} is inadmissible: Kueue refused its device requests",
                [
                    "Kueue will not retry it on its own (Requeued=False); fix the cause, then restart Kueue or recreate it"
                ],
                cause,
                f"map DeviceClass {unmapped} in the Kueue Configuration's resources.deviceClassMappings"
                if unmapped
                else "use ResourceClaimTemplates with ExactCount requests only",
            )

    if not cq_name:
        queue = (wl.get("spec") or {}).get("queueName", "")
        return out(
            LiveVerdict.NO_QUEUE,
            f"{name} names LocalQueue {queue!r}, which does not exist in its namespace",
            message=message,
            remedy=f"create LocalQueue {queue} or fix the {'Job' if job else 'workload'}'s kueue.x-k8s.io/queue-name label",
        )
    if cq is None:
        return out(LiveVerdict.NO_QUEUE, f"{name}: ClusterQueue {cq_name} does not exist", message=message,
                   remedy=f"create ClusterQueue {cq_name}")  # fmt: skip
    spec = cq.get("spec") or {}
    strategy = str(spec.get("queueingStrategy") or "BestEffortFIFO")
    stop = str(spec.get("stopPolicy") or "None")
    if stop != "None":
        return out(LiveVerdict.QUEUE_STOPPED, f"{name} waits: ClusterQueue {cq_name} is stopped (stopPolicy {stop})",
                   message=message, remedy=f"set ClusterQueue {cq_name} spec.stopPolicy to None")  # fmt: skip

    same_cq = [o for o in workloads if _cluster_queue_of(o, local_queues) == cq_name and _key(o) != key]
    running = [
        o
        for o in same_cq
        if _is(_conditions(o), "QuotaReserved", "True") and not _is(_conditions(o), "Finished", "True")
    ]
    pending = [
        o
        for o in same_cq
        if not _is(_conditions(o), "QuotaReserved", "True") and not _is(_conditions(o), "Finished", "True")
    ]
    ahead = _ahead(wl, pending)
    quotas, used = _quotas(cq), _flavor_usage(cq)
    needs = _requests_of(wl)
    cohort = spec.get("cohortName")
    parts: list[str] = []
    for resource in sorted(needs) or sorted(quotas):
        if resource not in quotas:
            parts.append(f"no quota for {_display(resource, mappings)} (not covered)")
            continue
        flavor, nominal, limit = quotas[resource]
        total, borrowed = used.get((flavor, resource), ("0", "0"))
        users = [_label(o) for o in running if resource in _usage_of(o)]
        part = f"quota {nominal} × {_display(resource, mappings)}, {total} used"
        if users:
            part += f" by jobs {', '.join(users)}"
        if borrowed not in ("0", ""):
            part += f" ({borrowed} borrowed from cohort {cohort})" if cohort else f" ({borrowed} borrowed)"
        if limit is not None and cohort:
            part += f", may borrow up to {limit}"
        if resource in needs:
            part += f"; needs {needs[resource]}"
        parts.append(part)
    line = f"ClusterQueue {cq_name}: " + "; ".join(parts) if parts else f"ClusterQueue {cq_name}"
    if ahead:
        line += f"; {len(ahead)} ahead of you ({strategy})"
    details = [f"ahead: {', '.join(ahead)}"] if ahead else []
    if strategy == "StrictFIFO" and ahead:
        details.append(
            "StrictFIFO: the oldest workload of the highest priority blocks younger ones even when they would fit"
        )
    counts = cq.get("status") or {}
    if "pendingWorkloads" in counts or "admittedWorkloads" in counts:
        details.append(f"ClusterQueue {cq_name} status: {counts.get('admittedWorkloads', 0)} admitted, "
                       f"{counts.get('reservingWorkloads', 0)} reserving quota, {counts.get('pendingWorkloads', 0)} pending")  # fmt: skip
    insufficient = "insufficient" in message
    verdict = (
        LiveVerdict.WAITING_FOR_QUOTA
        if insufficient
        else (LiveVerdict.BEHIND_OTHERS if ahead else LiveVerdict.PENDING)
    )
    return out(verdict, f"{name} waits. {line}", details, message)


def explain_job_without_workload(job: Mapping[str, Any], queue_label: str = "kueue.x-k8s.io/queue-name") -> WorkloadExplanation:
    """A Job no Workload belongs to: not for Kueue (no queue label), or Kueue has not taken it yet.

    (A manager run with ``manageJobsWithoutQueueName`` takes unlabelled Jobs too; then a
    Workload exists and :func:`explain_workload` answers.)
    """
    meta, spec = job.get("metadata") or {}, job.get("spec") or {}
    ns, name = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
    queue = (meta.get("labels") or {}).get(queue_label)
    suspended = bool(spec.get("suspend"))
    if not queue:
        return WorkloadExplanation(
            f"{ns}/{name}", name, "", LiveVerdict.NOT_MANAGED,
            f"Job {ns}/{name} is not managed by Kueue: it has no {queue_label} label and no Workload",
            ("it is suspended (spec.suspend) and nothing will resume it",) if suspended else (),
            remedy=f"label it {queue_label}=LOCALQUEUE to queue it" if suspended else "",
        )  # fmt: skip
    return WorkloadExplanation(
        f"{ns}/{name}", name, "", LiveVerdict.NO_WORKLOAD,
        f"Job {ns}/{name} names LocalQueue {queue} but Kueue has not created its Workload",
        (f"the Job is {'suspended' if suspended else 'not suspended'}; Kueue's Job integration makes a Workload "
         "within seconds of seeing a labelled Job",),
        remedy="check that the Kueue manager runs and its Configuration enables the batch/job integration",
    )  # fmt: skip
