"""The queue agreement scenario: 60 Jobs over three ClusterQueues, run through real Kueue (and the
real scheduler, job and resourceclaim controllers) and through drakit's admission engine.

The scenario is plain Kueue objects plus a script of events, so both sides read the same thing:

* cohort ``research`` holds ``training`` (StrictFIFO, may borrow) and ``inference``
  (BestEffortFIFO); ``batch`` stands alone with a ``pods`` quota of 3;
* quotas on two DeviceClasses through ``deviceClassMappings`` (one logical resource each);
* two WorkloadPriorityClasses;
* one inference Job asks for more than ``inference`` can ever hold, so BestEffortFIFO sets it
  aside while younger Jobs pass it.

Events, each followed by a record of the state once Kueue is quiet: every Job is submitted
while its ClusterQueue is held (``stopPolicy: Hold``) so creation order alone decides queue
order; the queues are released one at a time; then the oldest running Job finishes, one per
event, until nothing runs. Jobs of one ClusterQueue are created at least a second apart
because Kueue orders equal-priority workloads by creation timestamp (one-second resolution in
the API) and breaks ties by UID, which no model could reproduce.

A trace lists, per event, the admitted set per ClusterQueue and the admissions in the order
Kueue decided them, plus each Workload's ``status.admission.podSetAssignments[].resourceUsage``.
The real side's trace is recorded as a golden file, so the engine can be compared with it
without a cluster.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from kubernetes import watch
from kubernetes.client import CustomObjectsApi
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import ProtocolError, ReadTimeoutError

from tests.integration.gating import require
from tests.integration.kube import Cluster
from tests.integration.kueue import KUEUE_API

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "kueue_agreement.json"
DRIVER = "gpu.example.com"
PREFIX = "agree"
QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
V1 = "resource.k8s.io/v1"
CLASSES = ("gpu-48g", "gpu-80g")
RESOURCE = {c: f"example.com/{c}" for c in CLASSES}
DEVICE_CLASS_MAPPINGS: tuple[dict[str, Any], ...] = tuple(
    {"name": RESOURCE[c], "deviceClassNames": [c]} for c in CLASSES
)
FLAVOR = f"{PREFIX}-default"
PRIORITIES = {f"{PREFIX}-high": 1000, f"{PREFIX}-low": 100}
NAMESPACES = {"training": f"{PREFIX}-team-a", "batch": f"{PREFIX}-team-a", "inference": f"{PREFIX}-team-b"}
NODES = (f"{PREFIX}-node-0", f"{PREFIX}-node-1")
JOBS_PER_QUEUE = 20


@dataclass(frozen=True)
class QueueSpec:
    name: str
    strategy: str
    quota: Mapping[str, int]  # device class -> nominal
    borrowing_limit: Mapping[str, int] = field(default_factory=dict)
    cohort: str | None = None
    pods: int | None = None


QUEUES: tuple[QueueSpec, ...] = (
    QueueSpec(
        "training", "StrictFIFO", {"gpu-48g": 4, "gpu-80g": 2}, {"gpu-48g": 2, "gpu-80g": 2}, "research"
    ),
    QueueSpec("inference", "BestEffortFIFO", {"gpu-48g": 2, "gpu-80g": 2}, {}, "research"),
    QueueSpec("batch", "BestEffortFIFO", {"gpu-48g": 2, "gpu-80g": 2}, pods=3),
)


@dataclass(frozen=True)
class JobSpec:
    name: str
    queue: str
    device_class: str
    count: int
    priority: str

    @property
    def namespace(self) -> str:
        return NAMESPACES[self.queue]


def jobs() -> tuple[JobSpec, ...]:
    """60 Jobs in submission order, round-robin over the queues, plus the one that never fits."""
    rng = random.Random(15)
    out: list[JobSpec] = []
    for i in range(JOBS_PER_QUEUE):
        for q in QUEUES:
            out.append(
                JobSpec(
                    name=f"{q.name}-{i:02d}",
                    queue=q.name,
                    device_class=rng.choice(CLASSES),
                    count=rng.choice((1, 1, 1, 2)),
                    priority=rng.choice((f"{PREFIX}-low", f"{PREFIX}-low", f"{PREFIX}-high")),
                )
            )
    # inference may hold 2 gpu-80g and borrow up to what training leaves unused (2): 5 never fits.
    out.insert(7, JobSpec("inference-huge", "inference", "gpu-80g", 5, f"{PREFIX}-high"))
    return tuple(out)


# --------------------------------------------------------------------------------- objects


def _template_name(device_class: str, count: int) -> str:
    return f"{device_class}-x{count}"


def cluster_objects() -> list[dict[str, Any]]:
    """DeviceClasses and ResourceSlices (nodes are added separately; plenty of devices, so only
    quota ever makes a Job wait)."""
    objs: list[dict[str, Any]] = []
    for c in CLASSES:
        objs.append(
            {
                "apiVersion": V1,
                "kind": "DeviceClass",
                "metadata": {"name": c},
                "spec": {
                    "selectors": [
                        {
                            "cel": {
                                "expression": f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].model == "{c}"'
                            }
                        }
                    ]
                },
            }
        )
    for node in NODES:
        devices = [
            {"name": f"{c}-{i}", "attributes": {"model": {"string": c}}} for c in CLASSES for i in range(8)
        ]
        objs.append(
            {
                "apiVersion": V1,
                "kind": "ResourceSlice",
                "metadata": {"name": f"{node}-{DRIVER}"},
                "spec": {
                    "driver": DRIVER,
                    "nodeName": node,
                    "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                    "devices": devices,
                },
            }
        )
    return objs


def kueue_objects(*, held: bool) -> list[dict[str, Any]]:
    """ResourceFlavor, WorkloadPriorityClasses, ClusterQueues, LocalQueues, ResourceClaimTemplates."""
    objs: list[dict[str, Any]] = [
        {"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": {"name": FLAVOR}}
    ]
    for name, value in PRIORITIES.items():
        objs.append(
            {
                "apiVersion": KUEUE_API,
                "kind": "WorkloadPriorityClass",
                "metadata": {"name": name},
                "value": value,
            }
        )
    for q in QUEUES:
        covered = [RESOURCE[c] for c in CLASSES] + (["pods"] if q.pods is not None else [])
        resources: list[dict[str, Any]] = []
        for c in CLASSES:
            entry: dict[str, Any] = {"name": RESOURCE[c], "nominalQuota": str(q.quota[c])}
            if c in q.borrowing_limit:
                entry["borrowingLimit"] = str(q.borrowing_limit[c])
            resources.append(entry)
        if q.pods is not None:
            resources.append({"name": "pods", "nominalQuota": str(q.pods)})
        spec: dict[str, Any] = {
            "queueingStrategy": q.strategy,
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": NAMESPACES[q.name]}},
            "resourceGroups": [
                {"coveredResources": covered, "flavors": [{"name": FLAVOR, "resources": resources}]}
            ],
            "stopPolicy": "Hold" if held else "None",
        }
        if q.cohort:
            spec["cohortName"] = q.cohort
        objs.append(
            {
                "apiVersion": KUEUE_API,
                "kind": "ClusterQueue",
                "metadata": {"name": cq_name(q.name)},
                "spec": spec,
            }
        )
        objs.append(
            {
                "apiVersion": KUEUE_API,
                "kind": "LocalQueue",
                "metadata": {"name": q.name, "namespace": NAMESPACES[q.name]},
                "spec": {"clusterQueue": cq_name(q.name)},
            }
        )
    for ns in sorted(set(NAMESPACES.values())):
        for c in CLASSES:
            for count in sorted({j.count for j in jobs()}):
                objs.append(
                    {
                        "apiVersion": V1,
                        "kind": "ResourceClaimTemplate",
                        "metadata": {"name": _template_name(c, count), "namespace": ns},
                        "spec": {
                            "spec": {
                                "devices": {
                                    "requests": [
                                        {"name": "gpu", "exactly": {"deviceClassName": c, "count": count}}
                                    ]
                                }
                            }
                        },
                    }
                )
    return objs


def cq_name(queue: str) -> str:
    return f"{PREFIX}-{queue}"


def job_manifest(job: JobSpec) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": job.name,
            "namespace": job.namespace,
            "labels": {QUEUE_NAME_LABEL: job.queue, PRIORITY_LABEL: job.priority},
        },
        "spec": {
            "parallelism": 1,
            "completions": 1,
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "terminationGracePeriodSeconds": 0,
                    "containers": [
                        {
                            "name": "main",
                            "image": "registry.k8s.io/pause:3.10",
                            "resources": {"claims": [{"name": "gpus"}]},
                        }
                    ],
                    "resourceClaims": [
                        {
                            "name": "gpus",
                            "resourceClaimTemplateName": _template_name(job.device_class, job.count),
                        }
                    ],
                }
            },
        },
    }


# --------------------------------------------------------------------------------- traces


@dataclass
class Step:
    """The state after one event."""

    event: str
    admitted: dict[str, list[str]]  # ClusterQueue -> running Job names, in admission order
    new: list[str]  # admitted during this event, in the order Kueue decided
    finished: list[str]  # finished during this event

    def to_json(self) -> dict[str, Any]:
        return {"event": self.event, "admitted": self.admitted, "new": self.new, "finished": self.finished}


@dataclass
class Trace:
    steps: list[Step] = field(default_factory=list)
    usage: dict[str, dict[str, str]] = field(default_factory=dict)  # Job -> resource -> quantity
    pending: dict[str, list[str]] = field(default_factory=dict)  # at the end, per ClusterQueue
    # The real side's Workload creationTimestamp per Job: Kueue's queue order input (second
    # resolution; equal times are ordered by UID, which no model can reproduce).
    created: dict[str, str] = field(default_factory=dict)
    uid: dict[str, str] = field(default_factory=dict)  # Job -> its Workload's UID (the tie-break)

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": {"jobs": len(jobs()), "queues": [q.name for q in QUEUES]},
            "steps": [s.to_json() for s in self.steps],
            "usage": {k: self.usage[k] for k in sorted(self.usage)},
            "pending": self.pending,
            "created": {k: self.created[k] for k in sorted(self.created)},
            "uid": {k: self.uid[k] for k in sorted(self.uid)},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Trace:
        return cls(
            steps=[Step(s["event"], s["admitted"], s["new"], s["finished"]) for s in data["steps"]],
            usage=dict(data["usage"]),
            pending=dict(data["pending"]),
            created=dict(data.get("created") or {}),
            uid=dict(data.get("uid") or {}),
        )


@dataclass(frozen=True)
class Difference:
    """One disagreement between two traces: where, what each side said, and its class."""

    step: int
    event: str
    what: str
    left: Any
    right: Any
    kind: str  # "order-across-queues" | "order" | "admitted-set" | "usage" | "events" | "pending"

    def __str__(self) -> str:
        return f"step {self.step} ({self.event}): {self.what}: {self.left!r} != {self.right!r} [{self.kind}]"


def compare(left: Trace, right: Trace) -> list[Difference]:
    """Every difference between two traces, classified.

    ``order-across-queues``: the same decisions per ClusterQueue, interleaved differently across
    queues (heads of different queues decided in one cycle, ranked by borrowing, priority and
    age); ``order``: another order within a queue; ``admitted-set``: a different decision.
    """
    out: list[Difference] = []
    events_l, events_r = [s.event for s in left.steps], [s.event for s in right.steps]
    if events_l != events_r:
        first = next((i for i, (a, b) in enumerate(zip(events_l, events_r, strict=False)) if a != b), None)
        if first is None:
            out.append(Difference(-1, "", "number of events", len(events_l), len(events_r), "events"))
        else:
            out.append(Difference(first, "", "event", events_l[first], events_r[first], "events"))
    for i, (a, b) in enumerate(zip(left.steps, right.steps, strict=False)):
        for cq in sorted(set(a.admitted) | set(b.admitted)):
            sa, sb = a.admitted.get(cq, []), b.admitted.get(cq, [])
            if set(sa) != set(sb):
                out.append(
                    Difference(i, a.event, f"admitted in {cq}", sorted(sa), sorted(sb), "admitted-set")
                )
            elif sa != sb:
                out.append(Difference(i, a.event, f"admission order in {cq}", sa, sb, "order"))
        if a.new != b.new and sorted(a.new) == sorted(b.new):
            per_queue_same = all(
                [n for n in a.new if n.startswith(q.name + "-")]
                == [n for n in b.new if n.startswith(q.name + "-")]
                for q in QUEUES
            )
            kind = "order-across-queues" if per_queue_same else "order"
            out.append(Difference(i, a.event, "decision order", a.new, b.new, kind))
    for name in sorted(set(left.usage) | set(right.usage)):
        if left.usage.get(name) != right.usage.get(name):
            out.append(
                Difference(
                    -1, "", f"resourceUsage of {name}", left.usage.get(name), right.usage.get(name), "usage"
                )
            )
    if left.pending != right.pending:
        out.append(Difference(-1, "end", "pending", left.pending, right.pending, "pending"))
    return out


def events() -> list[str]:
    """The event script up to the finishes (whose number depends on the state)."""
    return [f"submit {len(jobs())}", *(f"release {q.name}" for q in QUEUES)]


def next_to_finish(running: Sequence[str], admitted_at: Mapping[str, int]) -> str | None:
    """The running Job to finish next: admitted at the earliest event, then submitted first.

    Commit order across ClusterQueues within one scheduling cycle is not deterministic in
    Kueue, so it must not decide which Job finishes; the event index and the submission order do.
    """
    index = {j.name: i for i, j in enumerate(jobs())}
    return min(running, key=lambda n: (admitted_at[n], index[n]), default=None)


def _epoch(ts: str) -> float:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def queue_times(created: Mapping[str, str], uid: Mapping[str, str]) -> dict[str, float]:
    """Kueue's queue-order input as one number per Job: the creation second, and among Jobs
    created in the same second the UID order (``cmp.Compare(a.UID, b.UID)``, Kueue's last tie
    break) as millisecond offsets — the API's one-second resolution makes such ties common."""
    out: dict[str, float] = {}
    by_second: dict[float, list[str]] = {}
    for job, ts in created.items():
        by_second.setdefault(_epoch(ts), []).append(job)
    for second, names in by_second.items():
        for rank, job in enumerate(sorted(names, key=lambda n: uid.get(n, n))):
            out[job] = second + rank / 1000
    return out


def engine_trace(created: Mapping[str, str] | None = None, uid: Mapping[str, str] | None = None) -> Trace:
    """The scenario through drakit's engine (``drakit.queues``), with Kueue's objects as input.

    ``created``/``uid``: the real Workloads' creation timestamps and UIDs (from the golden trace),
    so both sides order the queues from the same input (:func:`queue_times`); without them, the
    submission index in seconds.

    A held ClusterQueue's Jobs are submitted to the engine when the queue is released, with
    their original creation times: a held queue takes no part in admission, while its quota
    stays in the cohort, which is what a queue with no workloads yet is to the engine.
    """
    admission = require("drakit.queues.admission", "Engine")
    kueue = require("drakit.queues.kueue", "setup_from_objects", "workload_from_job")
    config = {"kind": "Configuration", "resources": {"deviceClassMappings": list(DEVICE_CLASS_MAPPINGS)}}
    objects = [*kueue_objects(held=False), config]
    setup = kueue.setup_from_objects(objects)
    templates: dict[str, dict[str, dict[str, Any]]] = {}  # namespace -> name -> ResourceClaimTemplate
    for o in objects:
        if o.get("kind") == "ResourceClaimTemplate":
            templates.setdefault(o["metadata"]["namespace"], {})[o["metadata"]["name"]] = o
    engine = admission.Engine(setup)
    times = queue_times(created, uid or {}) if created else {}
    trace = Trace()
    admitted_at: dict[str, int] = {}
    order: list[str] = []
    cq_of: dict[str, str] = {}
    finished: set[str] = set()

    def record(event: str, new_keys: Sequence[str], done: Sequence[str]) -> None:
        new = [k.split("/", 1)[1] for k in new_keys]
        for name in new:
            admitted_at[name] = len(trace.steps)
            order.append(name)
            adm = engine.admitted[f"{by_name[name].namespace}/{name}"]
            cq_of[name] = adm.cluster_queue
            usage: dict[str, str] = {}
            for ps in adm.to_json().get("podSetAssignments") or []:
                usage.update({k: str(v) for k, v in (ps.get("resourceUsage") or {}).items()})
            trace.usage[name] = usage
        admitted: dict[str, list[str]] = {cq_name(q.name): [] for q in QUEUES}
        for name in order:
            if name not in finished:
                admitted[cq_of[name]].append(name)
        trace.steps.append(Step(event, admitted, new, list(done)))

    by_name = {j.name: j for j in jobs()}
    index = {j.name: i for i, j in enumerate(jobs())}
    record(events()[0], [], [])
    for q in QUEUES:
        for job in jobs():
            if job.queue == q.name:
                wl = kueue.workload_from_job(
                    job_manifest(job),
                    templates[job.namespace],
                    setup.priority_classes,
                    created=times[job.name] if times else float(index[job.name]),
                )
                engine.submit(wl)
        record(f"release {q.name}", engine.settle(), [])
    while True:
        running = [n for names in trace.steps[-1].admitted.values() for n in names]
        name = next_to_finish(running, admitted_at)
        if name is None:
            break
        finished.add(name)
        engine.finish(f"{by_name[name].namespace}/{name}")
        record(f"finish {name}", engine.settle(), [name])
    trace.pending = {
        cq_name(q.name): [j.name for j in jobs() if j.queue == q.name and j.name not in admitted_at]
        for q in QUEUES
    }
    return trace


# --------------------------------------------------------------------------------- real Kueue


class RealKueueDriver:
    """Runs the scenario against the cluster with Kueue installed and records a Trace."""

    def __init__(
        self, cluster: Cluster, kueue_log: Path, *, quiet_seconds: float = 2.0, step_timeout: float = 180.0
    ) -> None:
        self.cluster = cluster
        self.kueue_log = kueue_log
        self.log_offset = kueue_log.stat().st_size if kueue_log.exists() else 0
        self.custom = CustomObjectsApi(cluster.api_client)
        self.quiet = quiet_seconds
        self.step_timeout = step_timeout
        self.resource_version = "0"
        # Admission state per Job, and the order Kueue's scheduler decided admissions in.
        self.admitted: dict[str, str] = {}  # Job -> ClusterQueue
        self.finished: set[str] = set()
        self.order: list[str] = []
        self.job_of: dict[tuple[str, str], str] = {}  # (namespace, Workload) -> Job
        self.created: dict[str, str] = {}  # Job -> its Workload's creationTimestamp
        self.uid: dict[str, str] = {}  # Job -> its Workload's UID
        self.scenario_jobs = {(j.namespace, j.name) for j in jobs()}
        self.admitted_at: dict[str, int] = {}  # Job -> index of the event it was admitted in
        self.usage: dict[str, dict[str, str]] = {}

    # ---------------------------------------------------------------- watching Workloads

    def _observe(self, wl: Mapping[str, Any]) -> tuple[str | None, str | None]:
        """Update state from one Workload; returns (newly admitted Job, newly finished Job)."""
        meta = wl.get("metadata") or {}
        job = next((r["name"] for r in meta.get("ownerReferences") or [] if r.get("kind") == "Job"), None)
        if job is None or (meta.get("namespace"), job) not in self.scenario_jobs:
            return None, None  # another test's Workload (its namespace may still be terminating)
        self.job_of[(meta.get("namespace", ""), meta.get("name", ""))] = job
        if meta.get("creationTimestamp"):
            self.created[job] = str(meta["creationTimestamp"])
        if meta.get("uid"):
            self.uid[job] = str(meta["uid"])
        status = wl.get("status") or {}
        conditions = {c["type"]: c for c in status.get("conditions") or []}
        new_admit = new_finish = None
        if conditions.get("Finished", {}).get("status") == "True":
            if job not in self.finished:
                self.finished.add(job)
                new_finish = job
            return None, new_finish
        admission = status.get("admission")
        reserved = conditions.get("QuotaReserved", {}).get("status") == "True"
        if admission and reserved and job not in self.admitted:
            self.admitted[job] = str(admission["clusterQueue"])
            usage: dict[str, str] = {}
            for ps in admission.get("podSetAssignments") or []:
                usage.update({k: str(v) for k, v in (ps.get("resourceUsage") or {}).items()})
            self.usage[job] = usage
            new_admit = job
        return new_admit, None

    def _list(self) -> list[dict[str, Any]]:
        data: dict[str, Any] = self.custom.list_cluster_custom_object(  # type: ignore[assignment]
            "kueue.x-k8s.io", "v1beta2", "workloads"
        )
        self.resource_version = data["metadata"]["resourceVersion"]
        return list(data.get("items") or [])

    def settle(self, done: Callable[[], bool]) -> tuple[list[str], list[str]]:
        """Follow Workload changes until ``done()`` holds and no admission, finish or new Workload
        was seen for ``quiet`` seconds.

        Only those changes reset the quiet clock: Kueue also rewrites conditions of waiting
        Workloads, which must not keep a step open.
        """
        new: list[str] = []
        finished: list[str] = []
        deadline = time.monotonic() + self.step_timeout
        last_change = time.monotonic()

        def quiet() -> bool:
            return time.monotonic() - last_change >= self.quiet and done()

        while time.monotonic() < deadline:
            w = watch.Watch()
            try:
                for ev in w.stream(
                    self.custom.list_cluster_custom_object,
                    "kueue.x-k8s.io",
                    "v1beta2",
                    "workloads",
                    resource_version=self.resource_version,
                    allow_watch_bookmarks=False,
                    timeout_seconds=int(self.step_timeout),
                    _request_timeout=self.quiet,
                ):
                    obj = ev["object"]
                    self.resource_version = obj["metadata"]["resourceVersion"]
                    seen = len(self.job_of)
                    a, f = self._observe(obj)
                    if a or f or len(self.job_of) > seen:
                        last_change = time.monotonic()
                    if a:
                        new.append(a)
                    if f:
                        finished.append(f)
                    if quiet():
                        return new, finished
            except (ReadTimeoutError, ProtocolError, TimeoutError):
                pass  # no event at all for `quiet` seconds
            except ApiException as exc:
                if exc.status != 410:
                    raise
                for item in self._list():  # resourceVersion too old: resync
                    self._observe(item)
            finally:
                w.stop()
            if quiet():
                return new, finished
        raise AssertionError(f"Kueue did not settle within {self.step_timeout}s")

    def _decided(self) -> list[str]:
        """Jobs whose Workloads Kueue's scheduler assumed since the last call, in decision order.

        The Workload's admission is written by a goroutine per admission, so the order of the
        writes (and of watch events) is not the order of decisions; the scheduler's own log line
        "Workload assumed in the cache" (verbosity 2) is written in its loop, in that order.
        """
        with self.kueue_log.open("rb") as f:
            f.seek(self.log_offset)
            data = f.read()
        end = data.rfind(b"\n") + 1
        self.log_offset += end
        out: list[str] = []
        for line in data[:end].splitlines():
            if b"Workload assumed in the cache" not in line:
                continue
            with suppress(ValueError):
                wl = json.loads(line).get("workload") or {}
                job = self.job_of.get((wl.get("namespace", ""), wl.get("name", "")))
                if job:
                    out.append(job)
        return out

    def snapshot(self, trace: Trace, event: str, watched: list[str], finished: list[str]) -> Step:
        decided = [j for j in self._decided() if j in watched]
        new = decided + [j for j in watched if j not in decided]
        self.order += new
        for job in new:
            self.admitted_at[job] = len(trace.steps)
        admitted: dict[str, list[str]] = {cq_name(q.name): [] for q in QUEUES}
        for job in self.order:
            if job not in self.finished:
                admitted[self.admitted[job]].append(job)
        return Step(event, admitted, new, finished)

    # ---------------------------------------------------------------- pods

    def _pod_of(self, job: JobSpec) -> dict[str, Any] | None:
        pods = self.cluster.list_objects("v1", "Pod", job.namespace, label_selector=f"job-name={job.name}")
        return pods[0] if pods and (pods[0].get("spec") or {}).get("nodeName") else None

    def finish(self, job: JobSpec) -> None:
        """The pod succeeds (there is no kubelet: its status is written through the API)."""
        pod = self.cluster.wait_for(f"pod of {job.name} scheduled", lambda: self._pod_of(job), timeout=60)
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        status = {
            "status": {
                "phase": "Succeeded",
                "conditions": [
                    {"type": "Ready", "status": "False", "reason": "PodCompleted", "lastTransitionTime": now}
                ],
                "containerStatuses": [
                    {
                        "name": "main",
                        "image": "registry.k8s.io/pause:3.10",
                        "imageID": "",
                        "ready": False,
                        "restartCount": 0,
                        "state": {
                            "terminated": {
                                "exitCode": 0,
                                "reason": "Completed",
                                "startedAt": now,
                                "finishedAt": now,
                            }
                        },
                    }
                ],
            }
        }
        self.cluster.core.patch_namespaced_pod_status(pod["metadata"]["name"], job.namespace, status)

    # ---------------------------------------------------------------- the script

    def run(self) -> Trace:
        trace = Trace()
        by_name = {j.name: j for j in jobs()}
        for item in self._list():
            self._observe(item)
        # 1. submit everything while the queues are held, a second apart within a queue
        last_created: dict[str, float] = {}
        for job in jobs():
            wait = last_created.get(job.queue, 0.0) + 1.05 - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            self.cluster.create(job_manifest(job))
            last_created[job.queue] = time.monotonic()
        submitted = set(by_name)

        def workloads_exist() -> bool:
            return submitted <= self._known_jobs()

        new, finished = self.settle(workloads_exist)
        trace.steps.append(self.snapshot(trace, events()[0], new, finished))
        # 2. release the queues one at a time
        for q in QUEUES:
            self.custom.patch_cluster_custom_object(
                "kueue.x-k8s.io",
                "v1beta2",
                "clusterqueues",
                cq_name(q.name),
                {"spec": {"stopPolicy": "None"}},
            )
            new, finished = self.settle(lambda: True)
            trace.steps.append(self.snapshot(trace, f"release {q.name}", new, finished))
        # 3. the oldest running Job finishes, until none runs
        while True:
            running = [n for names in trace.steps[-1].admitted.values() for n in names]
            job_name = next_to_finish(running, self.admitted_at)
            if job_name is None:
                break
            self.finish(by_name[job_name])
            new, finished = self.settle(lambda jn=job_name: jn in self.finished)  # type: ignore[misc]
            trace.steps.append(self.snapshot(trace, f"finish {job_name}", new, finished))
        trace.usage = dict(self.usage)
        trace.created = dict(self.created)
        trace.uid = dict(self.uid)
        trace.pending = {
            cq_name(q.name): [j.name for j in jobs() if j.queue == q.name and j.name not in self.admitted]
            for q in QUEUES
        }
        return trace

    def _known_jobs(self) -> set[str]:
        return {
            r["name"]
            for wl in self._list()
            for r in (wl.get("metadata") or {}).get("ownerReferences") or []
            if r.get("kind") == "Job"
        }


@contextmanager
def scenario_installed(cluster: Cluster) -> Iterator[None]:
    """Nodes, devices, namespaces and Kueue objects for the scenario; removed afterwards."""
    for ns in sorted(set(NAMESPACES.values())):
        cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    for node in NODES:
        if cluster.get("v1", "Node", node) is None:
            cluster.add_node(node)
    objects = [*cluster_objects(), *kueue_objects(held=True)]
    for obj in objects:
        cluster.create(obj)
    try:
        yield
    finally:
        for ns in sorted(set(NAMESPACES.values())):
            with suppress(ApiException):
                cluster.core.delete_namespace(ns)
        for obj in reversed(objects):
            if not obj["metadata"].get("namespace"):
                with suppress(ApiException):
                    cluster.delete(obj)
        for node in NODES:
            with suppress(ApiException):
                cluster.core.delete_node(node)


def write_golden(trace: Trace, path: Path = GOLDEN) -> None:
    path.write_text(json.dumps(trace.to_json(), indent=1, sort_keys=False) + "\n")


def read_golden(path: Path = GOLDEN) -> Trace:
    return Trace.from_json(json.loads(path.read_text()))
