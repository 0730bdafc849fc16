"""The ``kubernetes`` executor: the run is a Job on a cluster, and the record follows its pod.

The same record as every executor, each step taken when the cluster shows it:

- *submitted* once the Job would be accepted: the profile compiled, its claim template applied
  (server-side, as ``profile apply`` does) and the Job created as a server dry run, so a
  namespace that does not exist or a missing permission is one line before anything is recorded;
- *admitted* when Kueue unsuspends the Job (the run names a queue), else when it is created;
- *claim-allocated* when the pod's ``status.resourceClaimStatuses`` names the generated claim
  and that claim has ``status.allocation``: the allocated devices are joined to the
  ResourceSlices **as they are at that moment** (:func:`drakit.records.capture.capture_devices`),
  because a template's claim is deleted with its pod and a pool may be republished;
- *container-started* at the container's ``state.running``, *finished* at its ``terminated``
  state (exit code; startup is pod creation to container start, runtime start to finish, both
  from the pod's own timestamps).

A pod that cannot be scheduled is diagnosed by :func:`drakit.explain.diagnose.diagnose` on a
snapshot of the cluster: when the answer is *never* or *broken* the run fails at once with that
reason ("does not fit" is an answer, not an exception); when it is *waiting* the run waits
until ``wait_s``.  A kubelet that cannot prepare the devices is classified by
:func:`drakit.explain.events.classify_prepare`.  The pod's Events and its image digest go into
the record's environment.

Timeouts and Ctrl-C end the run *failed* or *cancelled* and delete its Job (with its pod and
claim) unless ``keep_job``; a finished run's Job is left, as Kubernetes leaves it.
:meth:`KubernetesExecutor.resume_open` takes an open run on from the step it reached, finding
its Job by the ``drakit.dev/run-id`` label: unlike a local process, a pod can be watched again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TypeVar

from drakit.errors import DrakitError, InvalidArgument
from drakit.executors.base import RunRequest, tags_json
from drakit.explain.events import PREPARE_REASON, classify_prepare
from drakit.features import Features
from drakit.live.apply import Action, apply_objects
from drakit.live.client import KUEUE_V1BETA2, ClusterClient, ClusterError, ErrorCode, Obj
from drakit.live.jobs import (
    RUN_ID_LABEL,
    PodView,
    event_line,
    find_job,
    job_manifest,
    job_name,
    pod_events,
    pod_view,
    workload_message,
)
from drakit.live.kueue import QUEUE_NAME_LABEL
from drakit.live.snapshot import Scope, list_all, read_snapshot
from drakit.live.watch import Reflector
from drakit.outcomes import ExplainCode, Owner, Reason, Stage, Verdict
from drakit.profiles.compile import CompiledProfile, compile_profile, drivers_for
from drakit.profiles.loader import ResolvedProfile
from drakit.records.capture import capture_devices
from drakit.records.run import MAX_TEXT, TERMINAL, Run, RunClaim, RunEnv, RunRecord, RunResult, RunState
from drakit.store.protocol import RecordStore

__all__ = ["EVENT_KEY", "KubernetesExecutor", "RunPlan", "plan_run", "queue_of"]

EVENT_KEY = "k8s.event."  # the environment keys the pod's Events are recorded under, numbered in time order
_MAX_EVENTS = 50
T = TypeVar("T")


@dataclass(frozen=True)
class RunPlan:
    """What a run sends to the cluster: the compiled profile and its Job."""

    compiled: CompiledProfile
    job: Obj
    queue: str  # the LocalQueue the Job is labelled for ('' when none)

    @property
    def name(self) -> str:
        return str(self.job["metadata"]["name"])

    @property
    def namespace(self) -> str:
        return str(self.job["metadata"]["namespace"])


def plan_run(request: RunRequest) -> RunPlan:
    """The compiled profile and the run's Job; raises on what no run can be recorded for
    (a run ID that cannot name a Job, no image, a profile that does not compile, two queues)."""
    name = job_name(request.run_id)
    if name is None:
        raise InvalidArgument(f"run ID {request.run_id!r} cannot name a Job: use lowercase letters, digits and "
                              "'-', at most 63 characters")
    if not request.image:
        raise InvalidArgument("the kubernetes executor needs an image: the container the command runs in")
    if request.product is not None:
        raise InvalidArgument("the kubernetes executor does not pin a product yet; use a profile that allows only "
                              "that product")
    compiled = compile_profile(request.profile, drivers_for(request.profile)[0], namespace=request.namespace)
    queue = queue_of(request, compiled)
    if queue:
        _require_admissible(queue, compiled)
    env = {**request.env, "DRAKIT_RUN_ID": request.run_id, "MLFLOW_RUN_CONTEXT": tags_json(request)}
    job = job_manifest(name=name, namespace=request.namespace, run_id=request.run_id, fragment=compiled.fragment,
                       image=request.image, command=request.command, queue=queue, env=env)
    return RunPlan(compiled, job, queue)


class KubernetesExecutor:
    """Runs each request as a Job through ``client`` and records it in ``store``.

    ``wait_s`` bounds admission, placement and start together; ``timeout_s`` (``None``: no
    limit) the command once started.  ``stream_s`` is the longest a quiet watch stream is kept
    open before the deadlines are looked at again.
    """

    name = "kubernetes"

    def __init__(self, store: RecordStore, client: ClusterClient, *, features: Features | None = None,
                 wait_s: float = 3600.0, timeout_s: float | None = None, keep_job: bool = False,
                 stream_s: int = 5, idle_s: float = 0.2, clock: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self.client = client
        self.features = features or Features.for_version()
        self.wait_s = wait_s
        self.timeout_s = timeout_s
        self.keep_job = keep_job
        self.stream_s = stream_s
        self.idle_s = idle_s
        self.clock = clock

    # -- submission --------------------------------------------------------------------------

    def _prepare(self, plan: RunPlan) -> None:
        """What must hold before the run is recorded: the Job is acceptable (dry run), the claim
        template and DeviceClass are applied.  A conflict on them is the cluster's answer, raised."""
        self.client.create(plan.job, dry_run=True)
        if plan.queue:
            self._require_kueue(plan)
        for applied in apply_objects(self.client, [plan.compiled.claim, plan.compiled.device_class]):
            if applied.action is Action.CONFLICT:
                raise ClusterError(ErrorCode.CONFLICT, applied.line(False), conflicts=applied.conflicts,
                                   hint="another manager owns the profile's objects; `drakit profile apply` shows them")

    def _require_kueue(self, plan: RunPlan) -> None:
        """A queued Job is created suspended: without Kueue nothing would ever start it."""
        try:
            self.client.list("Workload", namespace=plan.namespace, limit=1)
        except ClusterError as e:
            if e.code is ErrorCode.NOT_FOUND:
                raise ClusterError(ErrorCode.UNSUPPORTED, f"queue {plan.queue}: the cluster does not serve Kueue's API "
                                   f"{KUEUE_V1BETA2}, so nothing would admit Job {plan.namespace}/{plan.name}",
                                   hint="run without a queue (a profile without spec.queue) or install Kueue") from None
            if e.code is not ErrorCode.FORBIDDEN:  # may not read Workloads: admission is still watched on the Job
                raise

    def execute(self, request: RunRequest) -> RunRecord:
        """Record ``request`` from submission to its end; cluster errors before submission raise."""
        plan = plan_run(request)
        self._prepare(plan)
        self.store.create(Run.submit(datetime.now(UTC), id=request.run_id, recipe=request.recipe or request.profile.name,
                                     profile=request.profile.name, queue=plan.queue, namespace=request.namespace,
                                     executor=self.name, command=request.command, image=request.image,
                                     image_used=True, env=dict(request.env)))
        return self._guarded(request.run_id, plan, lambda: self._submit_and_follow(request, plan))

    def _submit_and_follow(self, request: RunRequest, plan: RunPlan) -> RunRecord:
        try:
            job = self.client.create(plan.job)
        except ClusterError as e:
            return self._end(request.run_id, plan, Reason(
                code=ExplainCode.ALLOCATION_ERROR, message=f"Job {plan.namespace}/{plan.name}: {e}",
                verdict=Verdict.BROKEN, owner=Owner.PLATFORM, stage=Stage.CLAIMS,
                hint="the API server refused the Job after its dry run accepted it"), delete=False)
        return self._follow(request, plan, job)

    def resume_open(self, profiles: Callable[[str], ResolvedProfile]) -> tuple[RunRecord, ...]:
        """Carry on every open kubernetes run from the step it reached, its Job found by label."""
        done = []
        for run in self.store.runs():
            if run.state in TERMINAL or run.executor != self.name:
                continue
            request = RunRequest(run_id=run.id, profile=profiles(run.profile), command=run.command, recipe=run.recipe,
                                 queue=run.queue, namespace=run.namespace, image=run.image, env=dict(run.env))
            plan = plan_run(request)
            job = find_job(self.client, run.namespace, run.id)
            if job is None and run.state is not RunState.SUBMITTED:
                self.store.advance(run.id, RunState.CANCELLED)  # someone deleted the Job while nobody watched
                done.append(self.store.get(run.id))
            else:  # followed again; a submitted run without a Job (its recorder died first) is submitted
                done.append(self._guarded(run.id, plan, self._carry_on(request, plan, job)))
        return tuple(done)

    def _carry_on(self, request: RunRequest, plan: RunPlan, job: Obj | None) -> Callable[[], RunRecord]:
        if job is not None:
            return lambda: self._follow(request, plan, job)

        def resubmit() -> RunRecord:
            self._prepare(plan)
            return self._submit_and_follow(request, plan)

        return resubmit

    def _guarded(self, run_id: str, plan: RunPlan, body: Callable[[], RunRecord]) -> RunRecord:
        """``body``, with Ctrl-C ending the run *cancelled* (and its Job deleted unless kept)."""
        try:
            return body()
        except KeyboardInterrupt:
            with suppress(Exception):  # a second Ctrl-C or a lost connection must not hide the first
                if self.store.get(run_id).run.state not in TERMINAL:
                    self.store.advance(run_id, RunState.CANCELLED)
                    self._cleanup(plan)
            raise

    # -- following the Job -------------------------------------------------------------------

    def _follow(self, request: RunRequest, plan: RunPlan, job: Obj) -> RunRecord:
        run_id = request.run_id
        deadline = self.clock() + self.wait_s
        if self.store.get(run_id).run.state is RunState.SUBMITTED:
            if plan.queue:
                admitted = self._admission(plan, deadline)
                if isinstance(admitted, Reason):
                    return self._end(run_id, plan, admitted)
            self.store.advance(run_id, RunState.ADMITTED)
        return self._pod(run_id, plan, deadline)

    def _admission(self, plan: RunPlan, deadline: float) -> Obj | Reason:
        jobs = Reflector(self.client, "Job", namespace=plan.namespace, label_selector=_selector(plan))

        def admitted() -> Obj | Reason | None:
            job = jobs.objects.get((plan.namespace, plan.name))
            if job is None:
                return _gone(plan) if jobs.resource_version else None
            return job if (job.get("spec") or {}).get("suspend") is False else None

        found = self._watch(jobs, admitted, lambda: deadline)
        if found is not None:
            return found
        job = jobs.objects.get((plan.namespace, plan.name)) or plan.job
        why = ""
        with suppress(ClusterError):
            why = workload_message(self.client, job)
        return Reason(code=ExplainCode.DEVICES_IN_USE, verdict=Verdict.WAITING, owner=Owner.PLATFORM, stage=Stage.CLAIMS,
                      message=_clip(f"queue {plan.queue}: Job {plan.namespace}/{plan.name} was not admitted within "
                                    f"{self.wait_s:g}s" + (f" ({why})" if why else " (is Kueue running?)")),
                      hint=f"`drakit queue explain job/{plan.name} -n {plan.namespace}` says what it waits for")

    def _pod(self, run_id: str, plan: RunPlan, deadline: float) -> RunRecord:
        pods = Reflector(self.client, "Pod", namespace=plan.namespace, label_selector=_selector(plan))
        checked: set[str] = set()  # scheduler messages already diagnosed
        ends = {"at": deadline}

        def step() -> RunRecord | None:
            pod = _newest(pods.objects.values())
            state = self.store.get(run_id).run.state
            if pod is None:
                return None
            view = pod_view(pod, plan.compiled.fragment)
            if state is RunState.ADMITTED:
                state = self._claim(run_id, plan, pod, view)
            if state is RunState.CLAIM_ALLOCATED and (view.started_at or view.terminated):
                self.store.advance(run_id, RunState.CONTAINER_STARTED)
                state = RunState.CONTAINER_STARTED
                if self.timeout_s is not None:
                    ends["at"] = self.clock() + self.timeout_s
            if state is RunState.CONTAINER_STARTED and view.terminated is not None:
                return self._finish(run_id, pod, view)
            if state is not RunState.CONTAINER_STARTED:
                blocked = self._blocked(plan, pod, view, checked)
                if blocked is not None:
                    return self._end(run_id, plan, blocked, pod)
            return None

        done = self._watch(pods, step, lambda: ends["at"])
        if isinstance(done, RunRecord):
            return done
        pod = _newest(pods.objects.values())
        if self.store.get(run_id).run.state is not RunState.CONTAINER_STARTED:
            return self._end(run_id, plan, self._waiting(plan, pod), pod)
        if pod is not None:  # it ran past timeout_s
            self._record_pod(run_id, pod, pod_view(pod, plan.compiled.fragment))
        self.store.advance(run_id, RunState.CANCELLED)
        self._cleanup(plan)
        return self.store.get(run_id)

    def _watch(self, reflector: Reflector, check: Callable[[], T | Reason | None],
               deadline: Callable[[], float]) -> T | Reason | None:
        """Stream ``reflector``'s events, calling ``check`` after each and after each stream,
        until it answers or ``deadline()`` passes (``None``)."""
        while True:
            left = deadline() - self.clock()
            if left <= 0:
                return None
            reflector.timeout_seconds = max(1, min(self.stream_s, int(left) + 1))
            quiet = True
            for _ in reflector.stream():
                quiet = False
                if (answer := check()) is not None:
                    return answer
            if (answer := check()) is not None:
                return answer
            if quiet and self.idle_s:
                time.sleep(self.idle_s)

    def _claim(self, run_id: str, plan: RunPlan, pod: Obj, view: PodView) -> RunState:
        """Record *claim-allocated* when the claim is allocated: its devices joined to the slices now."""
        if not view.claim:
            return RunState.ADMITTED
        claim = self.client.get("ResourceClaim", view.claim, plan.namespace)
        allocation = ((claim or {}).get("status") or {}).get("allocation")
        done = view.terminated is not None or view.phase in ("Succeeded", "Failed")
        if not allocation and not (claim is None and done):
            return RunState.ADMITTED
        slices = self._slices(allocation) if allocation else []
        record = RunClaim(namespace=plan.namespace, name=view.claim, uid=str(((claim or {}).get("metadata") or {}).get("uid") or ""),
                          template=plan.compiled.fragment.template_name or "", pod_name=view.name, pod_uid=view.uid,
                          node=view.node or _allocated_node(allocation or {}))
        # A claim deleted with its pod before it was seen leaves the reference without devices.
        self.store.advance(run_id, RunState.CLAIM_ALLOCATED, claim=record,
                           devices=capture_devices(allocation, slices) if allocation else ())
        return RunState.CLAIM_ALLOCATED

    def _slices(self, allocation: Obj) -> list[Obj]:
        """The slices of the allocated devices' drivers, as they are now (the API server filters by driver)."""
        drivers = sorted({str(r.get("driver")) for r in (allocation.get("devices") or {}).get("results") or []})
        return [s for d in drivers for s in list_all(self.client, "ResourceSlice", field_selector=f"spec.driver={d}")[0]]

    def _blocked(self, plan: RunPlan, pod: Obj, view: PodView, checked: set[str]) -> Reason | None:
        """Why the pod can never start, as soon as that is known; ``None`` while it may still."""
        if view.unschedulable and not view.node and view.unschedulable not in checked:
            checked.add(view.unschedulable)
            reason = self._diagnosis(plan, view)
            if reason is not None and reason.verdict in (Verdict.NEVER, Verdict.BROKEN):
                return reason
        if view.node:
            failure = self._prepare_failure(pod)
            if failure is not None and failure.verdict is not Verdict.WAITING:
                return failure
        if view.phase == "Failed" and view.terminated is None:
            status = pod.get("status") or {}
            return Reason(code=ExplainCode.PREPARE_FAILED, verdict=Verdict.BROKEN, owner=Owner.PLATFORM,
                          stage=Stage.NODE_PREPARE, message=_clip(f"pod {plan.namespace}/{view.name} failed before its "
                                                                  f"container started: {status.get('reason') or ''} "
                                                                  f"{status.get('message') or ''}".rstrip()),
                          hint="its Events (recorded with the run) say why")
        return None

    def _diagnosis(self, plan: RunPlan, view: PodView) -> Reason | None:
        """drakit's own answer for the unscheduled pod, on a snapshot of the cluster now."""
        from drakit.explain.diagnose import diagnose

        try:
            snapshot = read_snapshot(self.client, Scope(namespace=plan.namespace))
            d = diagnose(snapshot, "pod", view.name, plan.namespace, features=self.features)
        except DrakitError:
            return None
        return Reason(code=d.code, message=_clip(f"pod {plan.namespace}/{view.name}: {d.headline}"), verdict=d.verdict,
                      owner=d.owner, stage=d.stage, claim=view.claim, hint=_clip(d.fix),
                      detail={"scheduler": view.unschedulable})

    def _prepare_failure(self, pod: Obj) -> Reason | None:
        """The kubelet's newest ``FailedPrepareDynamicResources``, classified; ``None`` without one."""
        try:
            events = [e for e in pod_events(self.client, pod) if e.get("reason") == PREPARE_REASON]
        except ClusterError:
            return None
        if not events:
            return None
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        message = str(events[-1].get("message") or "")
        f = classify_prepare(message, node=node)
        return Reason(code=f.code, message=_clip(f"node {node}: {message}"), verdict=f.verdict, owner=f.owner,
                      stage=Stage.NODE_PREPARE, hint=_clip(f.next_step))

    def _waiting(self, plan: RunPlan, pod: Obj | None) -> Reason:
        """Why the run did not start within ``wait_s``: the best evidence there is."""
        wait = f"within {self.wait_s:g}s"
        if pod is None:
            return Reason(code=ExplainCode.CLAIM_NOT_CREATED, verdict=Verdict.WAITING, owner=Owner.PLATFORM,
                          stage=Stage.CLAIMS, message=f"Job {plan.namespace}/{plan.name} made no pod {wait}",
                          hint="the Job controller's Events on the Job say why")
        view = pod_view(pod, plan.compiled.fragment)
        if view.node:
            failure = self._prepare_failure(pod)
            return failure or Reason(
                code=ExplainCode.PREPARE_FAILED, verdict=Verdict.WAITING, owner=Owner.PLATFORM, stage=Stage.NODE_PREPARE,
                message=f"pod {plan.namespace}/{view.name} on node {view.node} did not start its container {wait}",
                hint="the kubelet's Events (recorded with the run) say why")
        diagnosed = self._diagnosis(plan, view) if view.unschedulable else None
        if diagnosed is not None:
            return replace(diagnosed, message=_clip(f"{diagnosed.message} (not scheduled {wait})"))
        return Reason(code=ExplainCode.ALLOCATION_TIMEOUT, verdict=Verdict.WAITING, owner=Owner.PLATFORM,
                      stage=Stage.DEVICES, message=_clip(f"pod {plan.namespace}/{view.name} was not scheduled {wait}"
                                                          + (f": {view.unschedulable}" if view.unschedulable else "")),
                      hint="`drakit explain pod/NAME` says what it waits for")

    # -- ending ------------------------------------------------------------------------------

    def _finish(self, run_id: str, pod: Obj, view: PodView) -> RunRecord:
        t = view.terminated
        assert t is not None
        started = view.started_at or t.started_at
        result = RunResult(exit_status=t.exit_code, startup_s=_seconds(view.created_at, started),
                           runtime_s=_seconds(started, t.finished_at))
        self._record_pod(run_id, pod, view)
        self.store.advance(run_id, RunState.FINISHED, result=result)
        return self.store.get(run_id)

    def _end(self, run_id: str, plan: RunPlan, reason: Reason, pod: Obj | None = None, *, delete: bool = True) -> RunRecord:
        """The run *failed* for ``reason``: its pod's evidence recorded, its Job deleted unless kept."""
        if pod is not None:
            self._record_pod(run_id, pod, pod_view(pod, plan.compiled.fragment))
        self.store.advance(run_id, RunState.FAILED, reason=reason)
        if delete:
            self._cleanup(plan)
        return self.store.get(run_id)

    def _cleanup(self, plan: RunPlan) -> None:
        if not self.keep_job:
            self.client.delete("Job", plan.name, plan.namespace)

    def _record_pod(self, run_id: str, pod: Obj, view: PodView) -> None:
        """The image digest and the pod's Events, kept beside what ``record-env`` saw inside."""
        try:
            events = pod_events(self.client, pod)[-_MAX_EVENTS:]
        except ClusterError:
            events = []
        have = self.store.get(run_id).env or RunEnv()
        kept = {k: v for k, v in have.frameworks.items() if not k.startswith(EVENT_KEY)}
        lines = {f"{EVENT_KEY}{i:03d}": _clip(event_line(e)) for i, e in enumerate(events)}
        self.store.record_env(run_id, replace(have, image_digest=view.digest or have.image_digest,
                                              frameworks={**kept, **lines}))


def queue_of(request: RunRequest, compiled: CompiledProfile) -> str:
    """The LocalQueue of the run: the one asked for, else the one its profile names (``spec.queue``)."""
    named = dict(compiled.fragment.labels).get(QUEUE_NAME_LABEL, "")
    if request.queue and named and request.queue != named:
        raise InvalidArgument(f"queue {request.queue}: profile {request.profile.name} sends its pods to queue "
                              f"{named} (spec.queue); ask for queue {named} or use a profile without a queue")
    return request.queue or named


def _require_admissible(queue: str, compiled: CompiledProfile) -> None:
    """Refuse a queued run Kueue would never admit (firstAvailable, All, admin access...): it would wait out ``wait_s``."""
    from drakit.queues.lint import KUEUE_HINT, kueue_profile_problems

    problems = kueue_profile_problems([compiled.claim, compiled.device_class])
    if problems:
        what, at, why = problems[0]
        raise InvalidArgument(f"queue {queue}: Kueue would never admit profile {compiled.profile}: {what} {at}: {why}; "
                              f"{KUEUE_HINT}")


def _selector(plan: RunPlan) -> str:
    return f"{RUN_ID_LABEL}={plan.job['metadata']['labels'][RUN_ID_LABEL]}"


def _gone(plan: RunPlan) -> Reason:
    return Reason(code=ExplainCode.CLAIM_NOT_CREATED, verdict=Verdict.BROKEN, owner=Owner.APPLICATION,
                  stage=Stage.CLAIMS, message=f"Job {plan.namespace}/{plan.name} was deleted before it was admitted",
                  hint="submit the run again")


def _newest(pods: Iterable[Obj]) -> Obj | None:
    """The Job's newest pod (backoffLimit 0 makes one; a pod the Job replaced is older)."""
    items = list(pods)
    return max(items, key=lambda p: str((p.get("metadata") or {}).get("creationTimestamp") or "")) if items else None


def _allocated_node(allocation: Obj) -> str:
    """The node a node-local allocation is pinned to (``nodeSelector`` on ``metadata.name``)."""
    for term in ((allocation.get("nodeSelector") or {}).get("nodeSelectorTerms") or []):
        for f in term.get("matchFields") or []:
            if f.get("key") == "metadata.name" and f.get("values"):
                return str(f["values"][0])
    return ""


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    return None if start is None or end is None else max((end - start).total_seconds(), 0.0)


def _clip(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"

