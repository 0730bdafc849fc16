"""Why a workload waits in a queue, in one paragraph with the numbers, from the engine's state.

"ClusterQueue training: quota 4 × gpu-48g, 4 used by jobs a, b (1 borrowed by research); 2 ahead
of you (StrictFIFO)" — the quota line per resource the workload needs, then Kueue's own message,
then what to do.  :func:`stuck_after_fix` recognises Kueue issue 13969 from a Workload's
conditions: marked ``Requeued=False`` / ``Inadmissible`` by DRA validation and never retried,
even once the configuration is fixed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from drakit.queues.admission import Engine, WaitReason, Workload, format_amount, workload_usage

__all__ = ["QueueExplanation", "explain_workload", "stuck_after_fix"]

_HINTS = {
    WaitReason.NO_QUEUE: "create the LocalQueue in the workload's namespace, or fix its kueue.x-k8s.io/queue-name label",
    WaitReason.NAMESPACE: "add the namespace to the ClusterQueue's namespaceSelector (the catalog queue's namespaces or teams)",
    WaitReason.MISCONFIGURED: "map the DeviceClass in Kueue's deviceClassMappings (drakit queue compile emits the patch) "
                              "or cover the resource in the ClusterQueue",
    WaitReason.EXCEEDS_MAX: "ask for less: the queue can never hold this much, even with the whole cohort idle",
    WaitReason.WAITING_FOR_QUOTA: "wait for running workloads to finish, or raise the quota / borrowing limit",
    WaitReason.CONCURRENCY: "wait for a running workload of the queue to finish",
    WaitReason.BEHIND_HEAD: "StrictFIFO admits in order: the workloads ahead of you go first",
    WaitReason.NOT_TRIED: "it has not been tried yet",
    WaitReason.INACTIVE: "activate the ClusterQueue: clear spec.stopPolicy, or create the ResourceFlavors it names",
}


@dataclass(frozen=True)
class QueueExplanation:
    workload: str
    admitted: bool
    cluster_queue: str
    reason: str  # a WaitReason value, or "Admitted"
    lines: tuple[str, ...]
    message: str  # Kueue's words
    hint: str

    def text(self) -> str:
        head = (f"{self.workload}: admitted by ClusterQueue {self.cluster_queue}" if self.admitted
                else f"{self.workload}: waiting ({self.reason})")
        out = [head, *[f"  {line}" for line in self.lines]]
        if self.message:
            out.append(f"  Kueue: {self.message}")
        if self.hint:
            out.append(f"  fix: {self.hint}")
        return "\n".join(out) + "\n"

    def to_json(self) -> dict[str, Any]:
        return {"workload": self.workload, "admitted": self.admitted, "clusterQueue": self.cluster_queue,
                "reason": self.reason, "lines": list(self.lines), "message": self.message, "hint": self.hint}


def _short(key: str) -> str:
    return key.split("/", 1)[-1]


def _names(keys: list[str], limit: int = 4) -> str:
    shown = ", ".join(_short(k) for k in keys[:limit])
    return shown + (f" and {len(keys) - limit} more" if len(keys) > limit else "")


def explain_workload(engine: Engine, key: str) -> QueueExplanation:
    """The explanation for ``namespace/name``; raises KeyError when the engine never saw it."""
    wl = engine.workloads[key]
    adm = engine.admitted.get(key)
    if adm is not None:
        usage = ", ".join(f"{format_amount(r, v)} × {r}" for ps in adm.pod_sets for r, v in sorted(ps.resource_usage.items()))
        return QueueExplanation(key, True, adm.cluster_queue, "Admitted", (f"holds {usage}",) if usage else (), "", "")
    wait = engine.waits[key]
    lines: list[str] = []
    cq = next((q for q in engine.setup.cluster_queues if q.name == wait.cluster_queue), None)
    if cq is not None and cq.inactive:
        lines.append(f"ClusterQueue {cq.name} is inactive: {cq.inactive}")
    if wait.cluster_queue and wait.cluster_queue in {q.name for q in engine.setup.cluster_queues}:
        lines += _quota_lines(engine, wl, wait.cluster_queue, len(wait.ahead))
    return QueueExplanation(key, False, wait.cluster_queue, wait.reason.value, tuple(lines), wait.message,
                            _HINTS.get(wait.reason, ""))


def _quota_lines(engine: Engine, wl: Workload, cq_name: str, ahead: int) -> list[str]:
    cq = engine.setup.queue(cq_name)
    per_set, _ = workload_usage(wl, engine.setup)
    needed = sorted({r for _, total in per_set for r in total})
    flavor_of = {r: flavors[0] for covered, flavors in cq.groups for r in covered}
    tree = engine.tree
    root = tree.root_of(cq_name)
    peers = [q for q in tree.queues_under(root) if q != cq_name] if root.startswith("cohort/") else []
    lines = []
    for r in needed:
        if r not in flavor_of:
            lines.append(f"ClusterQueue {cq_name}: does not cover {r}")
            continue
        fr = (flavor_of[r], r)
        holders = sorted(k for k, a in engine.admitted.items() if a.cluster_queue == cq_name and a.usage().get(fr, 0))
        used = tree.usage(cq_name, fr)
        line = f"ClusterQueue {cq_name}: quota {format_amount(r, tree.nominal(cq_name, fr))} × {r}, {format_amount(r, used)} used"
        if holders:
            line += f" by jobs {_names(holders)}"
        borrowers = [(q, tree.borrowed(q, fr)) for q in peers if tree.borrowed(q, fr) > 0]
        mine = tree.borrowed(cq_name, fr)
        notes = [f"{format_amount(r, n)} borrowed by {q}" for q, n in borrowers]
        if mine:
            notes.insert(0, f"{format_amount(r, mine)} of them borrowed from cohort {root.split('/', 1)[1]}")
        if notes:
            line += f" ({'; '.join(notes)})"
        lines.append(line)
    if lines:
        lines[-1] += f"; {ahead} ahead of you ({cq.strategy})"
    return lines


def stuck_after_fix(workload: Mapping[str, Any], engine: Engine | None = None) -> str:
    """Kueue issue 13969: the remedy when a Workload is parked Inadmissible by DRA validation, else "".

    The state: ``Requeued=False`` with reason ``Inadmissible`` and no quota reserved.  With an
    ``engine`` built from the *current* configuration, it is only reported when the workload's
    device classes are mapped now (the fix is in, the workload still parked).
    """
    status = workload.get("status") or {}
    conds = {c.get("type"): c for c in status.get("conditions") or [] if isinstance(c, dict)}
    requeued = conds.get("Requeued") or {}
    if requeued.get("status") != "False" or requeued.get("reason") != "Inadmissible":
        return ""
    if (conds.get("QuotaReserved") or {}).get("status") == "True":
        return ""
    meta = workload.get("metadata") or {}
    key = f"{meta.get('namespace', 'default')}/{meta.get('name', '')}"
    if engine is not None:
        wl = engine.workloads.get(key)
        if wl is not None and workload_usage(wl, engine.setup)[1]:
            return ""  # still misconfigured: fix the configuration first
    message = requeued.get("message") or (conds.get("QuotaReserved") or {}).get("message") or ""
    ns, name = meta.get("namespace", "default"), meta.get("name", "")
    # The same remedy as the live explainer (workload_status.py): v0.19.2's workload controller
    # clears the condition when it next processes the DRA requests, which a manager restart with
    # the fixed Configuration triggers; deleting the Workload is the fallback.
    return (f"Workload {key} is parked Inadmissible ({message or 'DRA validation'}) and Kueue does not retry it by "
            "itself after the configuration is fixed (kueue issue 13969): restart the Kueue manager so it reprocesses "
            "the workload with the current deviceClassMappings; if it is still parked, delete the Workload "
            f"(kubectl delete workload -n {ns} {name}); Kueue's Job integration creates a fresh one for the Job")
