"""Real Kueue's column of ``bench_queues.py``: seconds per admission decision on the same backlog.

``kueue_seconds_per_decision(catalog_text, jobs, templates)`` starts the integration tests'
control plane and Kueue v0.19.2 (``tests/integration/controlplane.py``, ``tests/integration/kueue.py``),
creates the catalog's compiled objects with every ClusterQueue held (``stopPolicy: Hold``), then
one Workload per backlog Job — the Workload Kueue's Job integration would create, so the job
controller, pods and kube-scheduler stay out of the measurement — releases the queues and drains
the backlog: each Workload is marked ``Finished`` as soon as it is admitted, freeing its quota,
as the engine's column finishes admitted Jobs and settles again.

Time per decision = (last decision - release) / decisions, the decisions read from the
scheduler's own log ("Workload assumed in the cache", verbosity 2, timestamps in microseconds).
What it covers: Kueue's scheduling loop plus the API round trips that free quota, which is what
a cluster does; creating the backlog is not timed. Returns ``None`` when Kueue is not built.
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kubernetes import watch
from kubernetes.client import CustomObjectsApi

from drakit.queues import compile_catalog, load_catalog_text
from drakit.queues.kueue import PRIORITY_LABEL, QUEUE_LABEL
from tests.integration.controlplane import start_control_plane
from tests.integration.kube import Cluster
from tests.integration.kueue import KUEUE_API, kueue_dir, missing_parts, start_kueue, stop_kueue

GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
DECISION = b"Workload assumed in the cache"


def workload_of(job: Mapping[str, Any], priorities: Mapping[str, int]) -> dict[str, Any]:
    """The Workload Kueue's batch/job integration creates for ``job``: one pod set ``main``, the
    priority class's value copied into ``spec.priority`` (Kueue's webhook requires both)."""
    meta, spec = job["metadata"], job["spec"]
    labels = meta.get("labels") or {}
    count = min(int(spec.get("parallelism", 1)), int(spec.get("completions", spec.get("parallelism", 1))))
    out: dict[str, Any] = {
        "apiVersion": KUEUE_API,
        "kind": "Workload",
        "metadata": {"name": f"job-{meta['name']}", "namespace": meta["namespace"]},
        "spec": {
            "queueName": labels.get(QUEUE_LABEL, ""),
            "podSets": [{"name": "main", "count": count, "template": spec["template"]}],
        },
    }
    if labels.get(PRIORITY_LABEL):
        out["spec"]["priorityClassRef"] = {
            "group": GROUP,
            "kind": "WorkloadPriorityClass",
            "name": labels[PRIORITY_LABEL],
        }
        out["spec"]["priority"] = priorities[labels[PRIORITY_LABEL]]
    return out


def _decision_times(log: Path, since: int) -> list[float]:
    times: list[float] = []
    with log.open("rb") as f:
        f.seek(since)
        for line in f:
            if DECISION in line:
                try:
                    ts = str(json.loads(line)["ts"])
                except (ValueError, KeyError):
                    continue
                times.append(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp())
    return times


def _finished(ns: str, name: str, now: str) -> dict[str, Any]:
    """A server-side apply of the Finished condition alone (conditions are a list map keyed by
    type, so Kueue's own conditions stay as they are), as a Job integration would set it."""
    condition = {"type": "Finished", "status": "True", "reason": "Succeeded", "message": "benchmark",
                 "lastTransitionTime": now}  # fmt: skip
    return {"apiVersion": KUEUE_API, "kind": "Workload", "metadata": {"name": name, "namespace": ns},
            "status": {"conditions": [condition]}}  # fmt: skip


def kueue_seconds_per_decision(
    catalog_text: str,
    jobs: Sequence[Mapping[str, Any]],
    templates: Mapping[str, Mapping[str, Any]],
    *,
    creators: int = 4,
    timeout: float = 900.0,
) -> float | None:
    if missing_parts(kueue_dir()):
        return None
    objects = compile_catalog(load_catalog_text(catalog_text, "catalog.yaml").catalog)
    config, objects = objects[-1], objects[:-1]
    mappings = (config.get("resources") or {}).get("deviceClassMappings") or []
    priorities = {
        o["metadata"]["name"]: int(o["value"]) for o in objects if o["kind"] == "WorkloadPriorityClass"
    }
    namespaces = sorted({j["metadata"]["namespace"] for j in jobs})
    classes = sorted({c for m in mappings for c in m.get("deviceClassNames") or []})
    with tempfile.TemporaryDirectory(prefix="drakit-bench-kueue-") as tmp:
        plane = start_control_plane(Path(tmp) / "plane")
        cluster = Cluster(plane)
        manager = None
        try:
            manager = start_kueue(cluster, Path(tmp) / "kueue", device_class_mappings=mappings)
            custom = CustomObjectsApi(cluster.api_client)
            for ns in namespaces:
                cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
                for t in templates.values():
                    cluster.create({**t, "metadata": {**t["metadata"], "namespace": ns}})
            for dc in classes:
                cluster.create(
                    {
                        "apiVersion": "resource.k8s.io/v1",
                        "kind": "DeviceClass",
                        "metadata": {"name": dc},
                        "spec": {},
                    }
                )
            cqs = [o["metadata"]["name"] for o in objects if o["kind"] == "ClusterQueue"]
            for obj in objects:
                if obj["kind"] == "ClusterQueue":
                    obj = {**obj, "spec": {**obj["spec"], "stopPolicy": "Hold"}}
                cluster.create(obj)
            with ThreadPoolExecutor(creators) as pool:
                list(pool.map(lambda j: cluster.create(workload_of(j, priorities)), jobs))
            listed: dict[str, Any] = custom.list_cluster_custom_object(GROUP, VERSION, "workloads")  # type: ignore[assignment]
            rv = listed["metadata"]["resourceVersion"]

            def queued() -> bool:
                pending = 0
                for name in cqs:
                    obj = cluster.get(KUEUE_API, "ClusterQueue", name) or {}
                    pending += int((obj.get("status") or {}).get("pendingWorkloads") or 0)
                return pending >= len(jobs)

            cluster.wait_for("the backlog queued in Kueue", queued, timeout=timeout, interval=1.0)
            offset = manager.log_file.stat().st_size
            released = time.time()
            for name in cqs:
                custom.patch_cluster_custom_object(
                    GROUP, VERSION, "clusterqueues", name, {"spec": {"stopPolicy": "None"}}
                )
            done: set[tuple[str, str]] = set()
            lock = threading.Lock()
            finishers = ThreadPoolExecutor(creators)
            futures: list[Any] = []
            drain_deadline = time.monotonic() + timeout

            def finish(ns: str, name: str) -> None:
                now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                custom.patch_namespaced_custom_object_status(
                    GROUP, VERSION, ns, "workloads", name, _finished(ns, name, now),
                    field_manager="drakit-bench", force=True, _content_type="application/apply-patch+yaml",
                )  # fmt: skip

            w = watch.Watch()
            for ev in w.stream(custom.list_cluster_custom_object, GROUP, VERSION, "workloads",
                               resource_version=rv, timeout_seconds=int(timeout)):  # fmt: skip
                obj = ev["object"]
                conds = {
                    c["type"]: c.get("status") for c in (obj.get("status") or {}).get("conditions") or []
                }
                key = (obj["metadata"]["namespace"], obj["metadata"]["name"])
                if conds.get("QuotaReserved") == "True" and conds.get("Finished") != "True":
                    with lock:
                        fresh = key not in done
                        done.add(key)
                    if fresh:
                        futures.append(finishers.submit(finish, *key))
                failed = next((f.exception() for f in futures if f.done() and f.exception()), None)
                if failed is not None:
                    raise RuntimeError(f"marking a Workload Finished failed: {failed}")
                if time.monotonic() > drain_deadline:
                    raise RuntimeError(f"Kueue admitted {len(done)} of {len(jobs)} within {timeout:.0f} s")
                if len(done) >= len(jobs):
                    w.stop()
            finishers.shutdown(wait=True)
            decisions = _decision_times(manager.log_file, offset)
            if not decisions:
                return None
            return (decisions[-1] - released) / len(decisions)
        finally:
            if manager is not None:
                stop_kueue(cluster, manager)
            cluster.close()
            plane.stop()
