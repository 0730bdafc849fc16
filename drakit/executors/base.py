"""The executor seam: a run request goes in, the run's record comes out, written step by step.

Every executor walks the same record: *submitted*, *admitted* by its queue's ledger (at once
when it names no queue), *claim-allocated* with the claim and its devices joined to the slices
of that moment, *container-started*, then *finished* with exit status, startup, runtime and the
metrics the application sent.  A failure before the command starts is *failed* with the core's
reason; a command that exits non-zero still *finished* (placement worked; the result says how
the application did).  Executors differ only in how a placed run is launched (:class:`Launcher`).
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from drakit.executors.placement import DeviceBook, Placement, claim_for
from drakit.outcomes import ExplainCode, Owner, Reason, Stage, Verdict
from drakit.profiles.loader import ResolvedProfile
from drakit.queues.admission import Setup
from drakit.queues.ledger import QueueLedger, RefusalCode, Refused
from drakit.records.run import (
    MAX_PROBLEMS,
    TERMINAL,
    MetricPoint,
    ResultProblem,
    Run,
    RunRecord,
    RunResult,
    RunState,
)
from drakit.store.protocol import RecordStore

__all__ = ["Executor", "Launched", "Launcher", "RunRequest", "demand_of", "execute", "resume_open", "run_context"]


@dataclass(frozen=True)
class RunRequest:
    run_id: str
    profile: ResolvedProfile
    command: tuple[str, ...]
    recipe: str = ""
    queue: str = ""
    namespace: str = "default"
    image: str = ""
    product: str | None = None  # pin the run to one product (the trial runs each eligible one)
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Launched:
    """What a launcher measured: ``started`` is called once the command runs (container-started).

    ``problems``: reports it could not use (the first ones; ``problem_count`` counts all, and
    is raised to ``len(problems)`` when smaller).
    """

    exit_status: int
    startup_s: float
    runtime_s: float
    correctness: Mapping[str, float] = field(default_factory=dict)
    series: tuple[MetricPoint, ...] = ()
    problems: tuple[ResultProblem, ...] = ()
    problem_count: int = 0


class Launcher(Protocol):
    # Whether the command runs inside the request's image (a container); a launcher that runs
    # on the host leaves it False, and the record says the image was requested, not used.
    runs_image: bool

    def launch(self, request: RunRequest, placement: Placement, started: Callable[[], None]) -> Launched: ...


class Executor(Protocol):
    name: str

    def execute(self, request: RunRequest) -> RunRecord:
        """Run ``request`` to its end and return what was recorded."""
        ...


def run_context(request: RunRequest, placement: Placement | None = None) -> dict[str, str]:
    """``MLFLOW_RUN_CONTEXT`` tags: MLflow adds them to every run the launched command starts."""
    tags = {"drakit.run.id": request.run_id, "drakit.profile": request.profile.name}
    if request.queue:
        tags["drakit.queue"] = request.queue
    if placement is not None:
        tags["drakit.claim.uid"] = placement.record.uid
        tags["drakit.node"] = placement.node
        for i, d in enumerate(placement.devices):
            tags.update({f"drakit.device.{i}.uuid": d.uuid, f"drakit.device.{i}.product": d.product})
    return tags


def _failed(store: RecordStore, run_id: str, reason: Reason) -> RunRecord:
    store.advance(run_id, RunState.FAILED, reason=reason)
    return store.get(run_id)


def _backoff(poll_s: float, attempt: int) -> float:
    """Poll fast at first, then back off to 50 ms: many waiting submitters must not spin on one lock."""
    return min(poll_s * 2 ** min(attempt, 16), 0.05)


# The ledger's refusals in the core's vocabulary: waiting for quota or a slot, never fitting, misconfigured.
_REFUSALS = {
    RefusalCode.WAITING_FOR_QUOTA: (ExplainCode.DEVICES_IN_USE, Verdict.WAITING),
    RefusalCode.CONCURRENCY: (ExplainCode.DEVICES_IN_USE, Verdict.WAITING),
    RefusalCode.EXCEEDS_MAX: (ExplainCode.NOT_ENOUGH_DEVICES, Verdict.NEVER),
    RefusalCode.UNCOVERED: (ExplainCode.NOT_ENOUGH_DEVICES, Verdict.NEVER),
}


def _queue_reason(answer: Refused, wait_s: float) -> Reason:
    code, verdict = _REFUSALS.get(answer.code, (ExplainCode.ALLOCATION_ERROR, Verdict.BROKEN))
    waited = f" after waiting {wait_s:g}s" if answer.retry else ""
    return Reason(code=code, message=f"queue {answer.queue}: {answer.message}{waited}", verdict=verdict,
                  owner=Owner.PLATFORM, stage=Stage.CLAIMS,
                  hint=answer.hint or f"the queue ledger answered {answer.code.value}")


def demand_of(claim: Mapping[str, Any], setup: Setup | None) -> dict[str, int]:
    """What the claim charges a queue: devices per catalog resource (its device-class mapping).

    Classes no mapping names are not charged (the ledger adds the run's ``pods`` itself).
    """
    resource_of = {c: m.name for m in (setup.mappings if setup else ()) for c in m.device_classes}
    demand: dict[str, int] = {}
    for request in claim["spec"]["devices"]["requests"]:
        part = request.get("exactly") or (request.get("firstAvailable") or [{}])[0]
        resource = resource_of.get(str(part.get("deviceClassName", "")))
        if resource is not None:
            count = int(part.get("count", 1)) if part.get("allocationMode", "ExactCount") == "ExactCount" else 1
            demand[resource] = demand.get(resource, 0) + count
    return demand


def _admit(store: RecordStore, ledger: QueueLedger | None, request: RunRequest, demand: Mapping[str, int],
           wait_s: float, poll_s: float, *, advance: bool = True) -> Reason | None:
    if request.queue and ledger is not None:
        deadline = time.monotonic() + wait_s
        for attempt in itertools.count():
            answer = ledger.reserve(request.queue, request.run_id, demand, datetime.now(UTC))
            if not isinstance(answer, Refused):
                break
            if not answer.retry or time.monotonic() > deadline:
                return _queue_reason(answer, wait_s)
            time.sleep(_backoff(poll_s, attempt))
    if advance:
        store.advance(request.run_id, RunState.ADMITTED)
    return None


def execute(store: RecordStore, book: DeviceBook, launcher: Launcher, request: RunRequest, *,
            executor: str, ledger: QueueLedger | None = None, wait_s: float = 3600.0,
            poll_s: float = 0.002) -> RunRecord:
    """Record ``request`` from submission to its end through ``launcher``; every step one store transaction.

    The profile is compiled before anything is recorded: a profile that cannot express its claim
    is the caller's error (raised), not a run left open.
    """
    compiled = claim_for(request.profile, namespace=request.namespace, name=f"{request.run_id}-claim",
                         uid=book.ids.new_id(), product=request.product)
    run = Run.submit(datetime.now(UTC), id=request.run_id, recipe=request.recipe or request.profile.name,
                     profile=request.profile.name, queue=request.queue, namespace=request.namespace,
                     executor=executor, command=request.command, image=request.image,
                     image_used=bool(request.image) and getattr(launcher, "runs_image", False),
                     pinned_product=request.product or "", env=dict(request.env))
    store.create(run)
    return _carry_on(store, book, launcher, request, run.state, ledger, wait_s, poll_s, compiled=compiled)


def _carry_on(store: RecordStore, book: DeviceBook, launcher: Launcher, request: RunRequest, state: RunState,
              ledger: QueueLedger | None, wait_s: float, poll_s: float, record: RunRecord | None = None,
              compiled: tuple[dict[str, Any], dict[str, Any], str] | None = None) -> RunRecord:
    """Take a run from ``state`` (submitted, admitted or claim-allocated) to its end."""
    run_id = request.run_id
    claim, device_class, template = compiled or claim_for(request.profile, namespace=request.namespace,
                                                          name=f"{run_id}-claim", uid=book.ids.new_id(),
                                                          product=request.product)
    try:
        if state in (RunState.SUBMITTED, RunState.ADMITTED):
            refusal = _admit(store, ledger, request, demand_of(claim, getattr(ledger, "setup", None)), wait_s, poll_s,
                             advance=state is RunState.SUBMITTED)
            if refusal is not None:
                return _failed(store, run_id, refusal)
            deadline = time.monotonic() + wait_s
            attempt = 0
            while isinstance(placed := book.allocate(run_id, claim, device_class, template), Reason):
                if placed.verdict is not Verdict.WAITING or time.monotonic() > deadline:
                    return _failed(store, run_id, placed)
                time.sleep(_backoff(poll_s, attempt))
                attempt += 1
            store.advance(run_id, RunState.CLAIM_ALLOCATED, claim=placed.record, devices=placed.devices)
        else:
            assert record is not None and record.claim is not None
            placed = _recorded_placement(record)
            book.held(run_id, placed.claim)
        return _launch(store, launcher, request, placed)
    finally:
        book.release(run_id)
        if ledger is not None:
            ledger.release(run_id)


def _recorded_placement(record: RunRecord) -> Placement:
    """A claim-allocated run's placement as recorded: the same devices, held again."""
    assert record.claim is not None
    results = [{"request": d.request, "driver": d.driver, "pool": d.pool, "device": d.device} for d in record.devices]
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": record.claim.name, "namespace": record.claim.namespace, "uid": record.claim.uid},
             "spec": {"devices": {"requests": []}}, "status": {"allocation": {"devices": {"results": results}}}}
    return Placement(record.claim.node, claim, record.claim, record.devices)


def _launch(store: RecordStore, launcher: Launcher, request: RunRequest, placed: Placement) -> RunRecord:
    def started() -> None:
        store.advance(request.run_id, RunState.CONTAINER_STARTED)

    done = launcher.launch(request, placed, started)
    result = RunResult(exit_status=done.exit_status, startup_s=done.startup_s, runtime_s=done.runtime_s,
                       correctness=dict(done.correctness), series=tuple(done.series),
                       problems=done.problems[:MAX_PROBLEMS], problem_count=max(done.problem_count, len(done.problems)))
    store.advance(request.run_id, RunState.FINISHED, result=result)
    return store.get(request.run_id)


def resume_open(store: RecordStore, book: DeviceBook, launcher: Launcher, profiles: Callable[[str], ResolvedProfile],
                *, executor: str, ledger: QueueLedger | None = None, wait_s: float = 3600.0,
                poll_s: float = 0.002) -> tuple[RunRecord, ...]:
    """Carry on the open runs of ``executor`` that a dead recorder left behind, each to its end.

    A run not yet started is taken on from the step it reached (a claim-allocated run keeps the
    devices recorded for it), with everything its request carried (product pin, environment).
    One whose command was running fails: nothing can reattach to a process another recorder
    started, and running it twice could repeat its side effects.
    """
    done = []
    for run in store.runs():
        if run.state in TERMINAL or run.executor != executor:
            continue
        if run.state is RunState.CONTAINER_STARTED:
            store.advance(run.id, RunState.FAILED)
            if ledger is not None:  # a durable reservation outlives the recorder that held it
                ledger.release(run.id)
            done.append(store.get(run.id))
            continue
        request = RunRequest(run_id=run.id, profile=profiles(run.profile), command=run.command, recipe=run.recipe,
                             queue=run.queue, namespace=run.namespace, image=run.image,
                             product=run.pinned_product or None, env=dict(run.env))
        done.append(_carry_on(store, book, launcher, request, run.state, ledger, wait_s, poll_s, store.get(run.id)))
    return tuple(done)


def tags_json(request: RunRequest, placement: Placement | None = None) -> str:
    return json.dumps(run_context(request, placement), sort_keys=True)
