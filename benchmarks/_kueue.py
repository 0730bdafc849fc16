"""Real Kueue's side of ``bench_queues.py``: admission decisions per second on a backlog.

The backlog is Workload objects (``kueue.x-k8s.io/v1beta2``) created directly while their
ClusterQueues are held (``stopPolicy: Hold``), so nothing is admitted during creation; then the
queues are released together and the clock runs until the last admission. Creating Workloads
rather than Jobs keeps the job controller, pods and the scheduler out of the measurement: what
is timed is Kueue's queueing and scheduling loop, which is what drakit's engine replaces.

Two rates are reported:

* **decisions/s**: from the scheduler's own log ("Workload assumed in the cache", verbosity 2,
  microsecond timestamps), first to last decision — Kueue's loop alone;
* **admissions/s**: release to the last Workload seen with ``QuotaReserved=True`` through a
  watch — what a user observes, API writes included.

The control plane and Kueue are the integration tests' (``tests/integration/controlplane.py``,
``tests/integration/kueue.py``), started here and stopped afterwards.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from kubernetes import watch
from kubernetes.client import CustomObjectsApi

from tests.integration.controlplane import start_control_plane
from tests.integration.kube import Cluster
from tests.integration.kueue import KUEUE_API, kueue_dir, missing_parts, start_kueue, stop_kueue

GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"


@dataclass(frozen=True)
class Backlog:
    """Kueue objects (ResourceFlavor, ClusterQueues, LocalQueues, priority classes, claim
    templates), the Workloads in creation order, and the deviceClassMappings they need."""

    objects: tuple[Mapping[str, Any], ...]
    workloads: tuple[Mapping[str, Any], ...]
    device_class_mappings: tuple[Mapping[str, Any], ...]
    namespaces: tuple[str, ...]


@dataclass(frozen=True)
class KueueRun:
    workloads: int
    admitted: int
    decisions_seconds: float  # first to last decision in Kueue's log
    admissions_seconds: float  # release to the last admission seen through the watch
    create_seconds: float

    @property
    def decisions_per_second(self) -> float:
        return self.admitted / self.decisions_seconds if self.decisions_seconds > 0 else float("inf")

    @property
    def admissions_per_second(self) -> float:
        return self.admitted / self.admissions_seconds if self.admissions_seconds > 0 else float("inf")


def available() -> str:
    """'' when Kueue is built, else why not."""
    missing = missing_parts(kueue_dir())
    return f"Kueue not built ({', '.join(missing)}); run `make cluster`" if missing else ""


def _held(obj: Mapping[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(obj))
    if out.get("kind") == "ClusterQueue":
        out.setdefault("spec", {})["stopPolicy"] = "Hold"
    return out


def _decision_times(log: Path, since: int) -> list[float]:
    times: list[float] = []
    with log.open("rb") as f:
        f.seek(since)
        for line in f:
            if b"Workload assumed in the cache" in line:
                try:
                    ts = json.loads(line)["ts"]
                except (ValueError, KeyError):
                    continue
                times.append(datetime.fromisoformat(str(ts).replace("Z", "+00:00")).timestamp())
    return times


def measure(backlog: Backlog, *, creators: int = 8, timeout: float = 900.0) -> KueueRun:
    """Start a control plane and Kueue, create the held backlog, release it, time the admissions."""
    with tempfile.TemporaryDirectory(prefix="drakit-bench-kueue-") as tmp:
        plane = start_control_plane(Path(tmp) / "plane")
        cluster = Cluster(plane)
        manager = None
        try:
            manager = start_kueue(
                cluster, Path(tmp) / "kueue", device_class_mappings=backlog.device_class_mappings
            )
            custom = CustomObjectsApi(cluster.api_client)
            for ns in backlog.namespaces:
                cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
            held = [_held(o) for o in backlog.objects]
            for obj in held:
                cluster.create(obj)
            start = time.monotonic()
            with ThreadPoolExecutor(creators) as pool:
                list(pool.map(cluster.create, backlog.workloads))
            create_seconds = time.monotonic() - start
            listed: dict[str, Any] = custom.list_cluster_custom_object(GROUP, VERSION, "workloads")  # type: ignore[assignment]
            rv = listed["metadata"]["resourceVersion"]
            time.sleep(2.0)  # Kueue's workload controller has queued them (they are held)
            offset = manager.log_file.stat().st_size
            released = time.time()
            for obj in held:
                if obj["kind"] == "ClusterQueue":
                    custom.patch_cluster_custom_object(
                        GROUP,
                        VERSION,
                        "clusterqueues",
                        obj["metadata"]["name"],
                        {"spec": {"stopPolicy": "None"}},
                    )
            admitted: set[str] = set()
            last_seen = released
            expected = len(backlog.workloads)
            deadline = time.monotonic() + timeout
            w = watch.Watch()
            for ev in w.stream(custom.list_cluster_custom_object, GROUP, VERSION, "workloads",
                               resource_version=rv, timeout_seconds=int(timeout)):  # fmt: skip
                obj = ev["object"]
                conds = {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}
                if (conds.get("QuotaReserved") or {}).get("status") == "True":
                    key = f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"
                    if key not in admitted:
                        admitted.add(key)
                        last_seen = time.time()
                if len(admitted) >= expected or time.monotonic() > deadline:
                    w.stop()
            decisions = _decision_times(manager.log_file, offset)
            return KueueRun(
                workloads=expected,
                admitted=len(admitted),
                decisions_seconds=(decisions[-1] - decisions[0]) if len(decisions) > 1 else 0.0,
                admissions_seconds=last_seen - released,
                create_seconds=create_seconds,
            )
        finally:
            if manager is not None:
                stop_kueue(cluster, manager)
            cluster.close()
            plane.stop()


def default_backlog(n: int = 2000, queues: int = 4) -> Backlog:
    """``n`` single-pod Workloads, each one device of class ``gpu-48g``, round-robin over
    ``queues`` BestEffortFIFO ClusterQueues in one cohort whose quota admits all of them, with
    two priorities; only when ``bench_queues.py`` defines no backlog of its own."""
    resource = "example.com/gpu-48g"
    mappings = ({"name": resource, "deviceClassNames": ["gpu-48g"]},)
    ns = "bench-queues"
    objs: list[dict[str, Any]] = [
        {"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": {"name": "bench"}},
        {"apiVersion": KUEUE_API, "kind": "WorkloadPriorityClass", "metadata": {"name": "bench-high"}, "value": 1000},
        {"apiVersion": KUEUE_API, "kind": "WorkloadPriorityClass", "metadata": {"name": "bench-low"}, "value": 100},
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu-48g"}, "spec": {}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "one", "namespace": ns},
         "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu-48g"}}]}}}},
    ]  # fmt: skip
    per_queue = -(-n // queues)
    for q in range(queues):
        objs.append({
            "apiVersion": KUEUE_API, "kind": "ClusterQueue", "metadata": {"name": f"bench-{q}"},
            "spec": {"cohortName": "bench", "namespaceSelector": {},
                     "resourceGroups": [{"coveredResources": [resource], "flavors": [
                         {"name": "bench", "resources": [{"name": resource, "nominalQuota": str(per_queue)}]}]}]},
        })  # fmt: skip
        objs.append({"apiVersion": KUEUE_API, "kind": "LocalQueue", "metadata": {"name": f"lq-{q}", "namespace": ns},
                     "spec": {"clusterQueue": f"bench-{q}"}})  # fmt: skip
    workloads = [workload(f"wl-{i:05d}", ns, f"lq-{i % queues}", "bench-high" if i % 3 == 0 else "bench-low", "one")
                 for i in range(n)]  # fmt: skip
    return Backlog(tuple(objs), tuple(workloads), mappings, (ns,))


def workload(
    name: str, namespace: str, queue: str, priority_class: str, template: str, count: int = 1
) -> dict[str, Any]:
    """A standalone Workload: one pod set whose pods claim one ResourceClaimTemplate."""
    return {
        "apiVersion": KUEUE_API,
        "kind": "Workload",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "queueName": queue,
            "priorityClassRef": {"group": GROUP, "kind": "WorkloadPriorityClass", "name": priority_class},
            "podSets": [
                {
                    "name": "main",
                    "count": count,
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [
                                {"name": "c", "image": "pause", "resources": {"claims": [{"name": "g"}]}}
                            ],
                            "resourceClaims": [{"name": "g", "resourceClaimTemplateName": template}],
                        }
                    },
                }
            ],
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the Kueue side alone: ``python -m benchmarks._kueue [N]``."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    why = available()
    if why:
        print(why)
        return 2
    n = int(args[0]) if args else 2000
    run = measure(default_backlog(n))
    print(
        f"Kueue v0.19.2: {run.admitted}/{run.workloads} admitted; decisions {run.decisions_per_second:.0f}/s "
        f"({run.decisions_seconds:.2f} s); admissions seen {run.admissions_per_second:.0f}/s "
        f"({run.admissions_seconds:.2f} s); backlog created in {run.create_seconds:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
