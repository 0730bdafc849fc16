"""``drakit run --executor kubernetes``: the run as a Job on the cluster of a kubeconfig.

The queue is the LocalQueue the Job is labelled for: ``--queue`` as given, else what the
QueueCatalog's routing (``--queues``) picks for the profile and namespace, else the profile's
own ``spec.queue``.  Everything the cluster refuses before the run is recorded (no cluster, a
namespace that does not exist, a missing permission) is one line with the live verbs' exit
codes (docs/live.md); a run that cannot be placed is recorded *failed* with its reason (exit 3).
"""

from __future__ import annotations

from typing import Any

from drakit.errors import InvalidArgument
from drakit.features import Features

__all__ = ["catalog_queue", "run_on_cluster"]


def catalog_queue(catalog_path: str, queue: str, profile: str, namespace: str) -> str:
    """``queue`` checked against the catalog (it exists and admits ``namespace``), or the one routing picks."""
    from drakit.queues import load_catalog_text
    from drakit.queues.routing import route
    from drakit.sources.read import read_one

    catalog = load_catalog_text(read_one(catalog_path), catalog_path).catalog
    if not queue:
        chosen = route(catalog, profile=profile, namespace=namespace)
        if chosen.queue is None:
            raise InvalidArgument(f"{catalog_path}: no queue takes profile {profile} in namespace {namespace} "
                                  f"({chosen.why}); give --queue")
        return chosen.queue
    try:
        allowed = catalog.namespaces_of(catalog.queue(queue))
    except KeyError:
        names = ", ".join(q.name for q in catalog.spec.queues) or "none"
        raise InvalidArgument(f"--queue {queue}: {catalog_path} defines no such queue (it has {names})") from None
    if allowed is not None and namespace not in allowed:
        raise InvalidArgument(f"--queue {queue}: {catalog_path} opens it to namespaces {', '.join(allowed)}, "
                              f"not {namespace}")
    return queue


def run_on_cluster(records: Any, request: Any, feats: Features, *, queues: str | None, kubeconfig: str | None,
                   context: str | None, request_timeout: float, wait_s: float, timeout_s: float | None,
                   keep_job: bool) -> Any:
    """Record ``request`` run as a Job; returns the record (the caller prints it and exits)."""
    import dataclasses

    from drakit.cli.door import Source, live_client
    from drakit.executors.kubernetes import KubernetesExecutor, plan_run

    if queues:
        request = dataclasses.replace(request, queue=catalog_queue(queues, request.queue, request.profile.name,
                                                                   request.namespace))
    plan_run(request)  # a profile that does not compile, no image, a bad run ID: refused before connecting
    client = live_client(Source((), kubeconfig, context, timeout=request_timeout))
    try:
        executor = KubernetesExecutor(records, client, features=feats, wait_s=wait_s, timeout_s=timeout_s,
                                      keep_job=keep_job)
        return executor.execute(request)
    finally:
        client.close()
