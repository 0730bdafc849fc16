"""What a live cluster says about a Job's place in Kueue: the Job, its Workloads, the queues.

Read through the :class:`~drakit.live.client.ClusterClient` seam only; the verdict itself is
:func:`drakit.queues.workload_status.explain_workload`, pure, on the objects gathered here.

Kueue v0.19.2's Job integration names the Workload ``job-<job name>-<hash>`` and links it to the
Job twice: a controller ownerReference and the ``kueue.x-k8s.io/job-uid`` label
(``pkg/controller/jobframework``); either is enough here, so a renamed Workload is still found.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from drakit.live.client import KUEUE_V1BETA2, ClusterClient, ClusterError, ErrorCode, Obj

__all__ = ["JOB_UID_LABEL", "QUEUE_NAME_LABEL", "KueueState", "read_kueue_state"]

JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"
# Where Kueue's kustomize install keeps the manager's Configuration (config/components/manager).
CONFIG_MAP = ("kueue-system", "kueue-manager-config", "controller_manager_config.yaml")


@dataclass(frozen=True)
class KueueState:
    """The Job (``None`` when a Workload was asked for by name), its Workloads newest first,
    every Workload the reader may see, the queues, and the manager's ``deviceClassMappings``
    (``None`` when its Configuration could not be read)."""

    job: Obj | None
    workloads: tuple[Obj, ...]
    all_workloads: tuple[Obj, ...]
    local_queues: tuple[Obj, ...]
    cluster_queues: tuple[Obj, ...]
    device_class_mappings: tuple[Obj, ...] | None


def read_kueue_state(
    client: ClusterClient, kind: str, name: str, namespace: str, warn: Callable[[str], None] = lambda _: None
) -> KueueState:
    """Gather what :func:`explain_workload` needs for Job (or Workload) ``namespace/name``.

    No Kueue CRDs is a ``ClusterError`` (``unsupported``) saying so; a missing Job or Workload is
    ``not-found``.  Reading other namespaces' Workloads may be forbidden: then only the Job's
    namespace is read (who is ahead in the ClusterQueue may be undercounted, and ``warn`` says so).
    """
    workloads = _workloads(client, namespace, warn)
    if kind == "Workload":
        job = None
        mine = [w for w in workloads if _meta(w).get("namespace") == namespace and _meta(w).get("name") == name]
        if not mine:
            raise ClusterError(ErrorCode.NOT_FOUND, f'workload "{name}" not found in namespace {namespace}')
    else:
        job = client.get("Job", name, namespace)
        if job is None:
            raise ClusterError(ErrorCode.NOT_FOUND, f'job "{name}" not found in namespace {namespace}')
        uid = str(_meta(job).get("uid") or "")
        mine = [w for w in workloads if _meta(w).get("namespace") == namespace and _owned_by(w, uid)]
    mine.sort(key=lambda w: str(_meta(w).get("creationTimestamp") or ""), reverse=True)
    return KueueState(
        job,
        tuple(mine),
        tuple(workloads),
        _list(client, "LocalQueue", namespace),
        _list(client, "ClusterQueue", None),
        _mappings(client),
    )


def _workloads(client: ClusterClient, namespace: str, warn: Callable[[str], None]) -> list[Obj]:
    try:
        return list(_list(client, "Workload", None))
    except ClusterError as e:
        if e.code is ErrorCode.NOT_FOUND:
            raise ClusterError(
                ErrorCode.UNSUPPORTED,
                f"the API server does not serve Kueue's API {KUEUE_V1BETA2} (no workloads resource)",
                status=e.status,
                hint="install Kueue v0.19.2 (its CRDs and manager) or explain offline with -f",
            ) from None
        if e.code is not ErrorCode.FORBIDDEN:
            raise
    warn(f"may not list workloads in every namespace; reading namespace {namespace} only "
         "(workloads of other namespaces in the same ClusterQueue are not counted)")  # fmt: skip
    return list(_list(client, "Workload", namespace))


def _list(client: ClusterClient, kind: str, namespace: str | None) -> tuple[Obj, ...]:
    from drakit.live.snapshot import list_all

    return tuple(list_all(client, kind, namespace=namespace)[0])


def _mappings(client: ClusterClient) -> tuple[Obj, ...] | None:
    """``resources.deviceClassMappings`` of the manager's Configuration, or ``None`` when unreadable."""
    from drakit.model.codec import parse_text

    ns, name, key = CONFIG_MAP
    try:
        cm = client.get("ConfigMap", name, ns)
    except ClusterError as e:
        if e.code in (ErrorCode.FORBIDDEN, ErrorCode.NOT_FOUND):
            return None
        raise
    text = ((cm or {}).get("data") or {}).get(key)
    if not isinstance(text, str):
        return None
    # The one strict decoder (bounded aliases and depth): the ConfigMap's text is input like any other.
    docs, problems = parse_text(f"ConfigMap {ns}/{name} {key}", text)
    if problems or len(docs) != 1:
        return None
    config = docs[0].data
    resources = config.get("resources") if isinstance(config, dict) else None
    found = resources.get("deviceClassMappings") if isinstance(resources, dict) else None
    return tuple(m for m in found if isinstance(m, dict)) if isinstance(found, list) else ()


def _meta(obj: Obj) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _owned_by(wl: Obj, uid: str) -> bool:
    if not uid:
        return False
    if (_meta(wl).get("labels") or {}).get(JOB_UID_LABEL) == uid:
        return True
    return any(o.get("uid") == uid and o.get("kind") == "Job" for o in _meta(wl).get("ownerReferences") or [])
