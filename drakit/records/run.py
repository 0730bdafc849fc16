"""The run record as values: what ran, where, on which devices, in which environment, with which result.

A record is written over a run's life (submitted, then admitted by a queue, then its claim
allocated, then its container started, then finished), so the state machine lives here, pure,
and the store only persists what it accepts.  Every refusal is a value with a code, a message
that quotes the numbers and a hint, so that the CLI, the store and the web page word it alike.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from drakit.errors import InvalidArgument
from drakit.outcomes import ExplainCode, Reason, ReasonCode, Verdict

__all__ = [
    "MAX_COMMAND",
    "MAX_PROBLEMS",
    "MAX_RAW",
    "MAX_TEXT",
    "MetricPoint",
    "RecordCode",
    "RecordRejected",
    "Refusal",
    "ResultProblem",
    "Run",
    "RunClaim",
    "RunDevice",
    "RunEnv",
    "RunRecord",
    "RunResult",
    "RunState",
    "Transition",
    "check_finite",
    "check_step",
    "check_text",
]

# Column sizes shared with the store's tables: a value that does not fit is refused here, with
# its length, instead of being truncated by one database and stored whole by another.
MAX_TEXT = 1024
MAX_COMMAND = 65536
# A result keeps the first MAX_PROBLEMS unusable reports (and counts all of them), each raw line cut
# to MAX_RAW characters: a workload spewing garbage must not turn its record into the garbage.
MAX_PROBLEMS = 20
MAX_RAW = 240


class RunState(StrEnum):
    """Where a run is; the values are stored, so they never change."""

    SUBMITTED = "submitted"
    ADMITTED = "admitted"
    CLAIM_ALLOCATED = "claim-allocated"
    CONTAINER_STARTED = "container-started"
    FINISHED = "finished"
    FAILED = "failed"
    CANCELLED = "cancelled"


TERMINAL = frozenset({RunState.FINISHED, RunState.FAILED, RunState.CANCELLED})
_FORWARD = (RunState.SUBMITTED, RunState.ADMITTED, RunState.CLAIM_ALLOCATED, RunState.CONTAINER_STARTED)
# Each live state may move one step forward, or end early (a failed prepare, a cancelled queue entry).
_NEXT: Mapping[RunState, frozenset[RunState]] = MappingProxyType(
    {
        state: frozenset({_FORWARD[i + 1] if i + 1 < len(_FORWARD) else RunState.FINISHED})
        | {RunState.FAILED, RunState.CANCELLED}
        for i, state in enumerate(_FORWARD)
    }
)


class RecordCode(StrEnum):
    """Why a record was refused; stored and shown, so values never change."""

    ILLEGAL_TRANSITION = "IllegalTransition"
    TIME_WENT_BACK = "TimeWentBack"
    NOT_FINITE = "NotFinite"
    TOO_LONG = "TooLong"
    INVALID_VALUE = "InvalidValue"
    RUN_EXISTS = "RunExists"
    RUN_NOT_FOUND = "RunNotFound"


@dataclass(frozen=True)
class Refusal:
    """A refused record change: stable code, the field it concerns, numbers in the message, a hint."""

    code: RecordCode
    field: str
    message: str
    hint: str = ""

    def line(self) -> str:
        hint = f" ({self.hint})" if self.hint else ""
        return f"{self.field}: {self.message}{hint}"


class RecordRejected(InvalidArgument):
    """A record change the state machine or the value checks refused; ``refusal`` says why."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.line())
        self.refusal = refusal


def check_text(path: str, value: str, limit: int = MAX_TEXT) -> None:
    """Refuse text that would not fit its column, or that holds a NUL (PostgreSQL cannot store one)."""
    if len(value) > limit:
        raise RecordRejected(
            Refusal(RecordCode.TOO_LONG, path, f"{len(value)} characters, at most {limit} allowed", "shorten it")
        )
    if "\x00" in value:
        raise RecordRejected(Refusal(RecordCode.INVALID_VALUE, path, "contains a NUL character", "remove it"))


def check_finite(path: str, value: float | None) -> None:
    """Refuse NaN and infinities: they sort and aggregate differently in each database."""
    if value is not None and not math.isfinite(value):
        raise RecordRejected(
            Refusal(RecordCode.NOT_FINITE, path, f"{value!r} is not a finite number", "record a finite value")
        )


def _frozen() -> Mapping[str, Any]:
    return MappingProxyType({})


@dataclass(frozen=True)
class Transition:
    state: RunState
    at: datetime


@dataclass(frozen=True)
class Run:
    """What was asked for and where it stands; ``transitions`` is the history, oldest first."""

    id: str
    recipe: str
    profile: str
    queue: str = ""
    namespace: str = "default"
    executor: str = "sim"
    command: tuple[str, ...] = ()
    image: str = ""
    transitions: tuple[Transition, ...] = ()
    # Why the run failed or was cancelled, in the core's vocabulary (empty while it is fine).
    reason_code: str = ""
    verdict: Verdict | None = None
    message: str = ""
    # The rest of what was asked for, so that a resumed run is the run that was asked for.
    pinned_product: str = ""  # --product: only devices of this product
    env: Mapping[str, str] = field(default_factory=_frozen)  # extra environment for the command
    # Whether the command really ran in ``image``: the local executor runs on the host and only records it.
    image_used: bool = False

    @classmethod
    def submit(cls, at: datetime, **fields: Any) -> Run:
        """A new run in state *submitted*, its values checked."""
        run = cls(transitions=(Transition(RunState.SUBMITTED, _aware(at)),), **fields)
        run.check()
        return run

    @property
    def state(self) -> RunState:
        return self.transitions[-1].state

    def at(self, state: RunState) -> datetime | None:
        """When the run entered ``state``, or ``None`` if it never did."""
        return next((t.at for t in self.transitions if t.state is state), None)

    def check(self) -> None:
        """Refuse values no store could keep the same way on every dialect."""
        for name in ("id", "recipe", "profile", "queue", "namespace", "executor", "image", "reason_code"):
            check_text(name, getattr(self, name))
        check_text("pinnedProduct", self.pinned_product)
        for key, value in self.env.items():
            check_text("env", key)
            check_text(f"env[{key}]", value, MAX_COMMAND)
        if self.image_used and not self.image:
            raise RecordRejected(Refusal(RecordCode.INVALID_VALUE, "imageUsed", "is true but no image is named",
                                         "record the image the command ran in"))
        check_text("message", self.message, MAX_COMMAND)
        check_text("command", "\x1f".join(self.command), MAX_COMMAND)
        if not self.id:
            raise RecordRejected(Refusal(RecordCode.INVALID_VALUE, "id", "is empty", "give the run an ID"))
        if not self.transitions or self.transitions[0].state is not RunState.SUBMITTED:
            raise RecordRejected(
                Refusal(RecordCode.ILLEGAL_TRANSITION, "state", "a run starts as submitted", "use Run.submit")
            )
        if self.reason_code and self.reason_code not in _CODES:
            raise RecordRejected(
                Refusal(RecordCode.INVALID_VALUE, "reasonCode", f"{self.reason_code!r} is not a drakit reason code",
                        "use a drakit.outcomes ReasonCode or ExplainCode")
            )

    def refusal(self, to: RunState, at: datetime) -> Refusal | None:
        """Why moving to ``to`` at ``at`` is not allowed, or ``None`` when it is."""
        if to not in _NEXT.get(self.state, frozenset()):
            allowed = ", ".join(sorted(_NEXT.get(self.state, ()))) or "none (the run has ended)"
            return Refusal(
                RecordCode.ILLEGAL_TRANSITION, "state",
                f"run {self.id} cannot go from {self.state} to {to}; allowed: {allowed}",
                "record the missing step first" if self.state not in TERMINAL else "start a new run",
            )
        last = self.transitions[-1].at
        if _aware(at) < last:
            return Refusal(
                RecordCode.TIME_WENT_BACK, "state",
                f"run {self.id} entered {self.state} at {last.isoformat()}, "
                f"{(last - _aware(at)).total_seconds():g}s after the {to} time {_aware(at).isoformat()}",
                "pass timestamps from one clock",
            )
        return None

    def advance(self, to: RunState, at: datetime, *, reason: Reason | None = None) -> Run:
        """The run after moving to ``to``; raises :class:`RecordRejected` when the move is illegal.

        ``reason`` (why a run failed or was cancelled) keeps the core's code and verdict as they are.
        """
        refusal = self.refusal(to, at)
        if refusal is not None:
            raise RecordRejected(refusal)
        moved = replace(self, transitions=(*self.transitions, Transition(to, _aware(at))))
        if reason is not None:
            moved = replace(moved, reason_code=reason.code.value, verdict=reason.verdict, message=reason.message)
        moved.check()
        return moved


_CODES = frozenset(c.value for c in ReasonCode) | frozenset(c.value for c in ExplainCode)


def _aware(at: datetime) -> datetime:
    if at.tzinfo is None:
        raise RecordRejected(
            Refusal(RecordCode.INVALID_VALUE, "at", f"{at.isoformat()} has no time zone", "pass an aware datetime (UTC)")
        )
    return at


@dataclass(frozen=True)
class RunClaim:
    """The ResourceClaim that served the run: it may be deleted with its pod, so it is copied here."""

    namespace: str
    name: str
    uid: str
    template: str = ""
    pod_name: str = ""
    pod_uid: str = ""
    node: str = ""

    def check(self) -> None:
        for name in ("namespace", "name", "uid", "template", "pod_name", "pod_uid", "node"):
            check_text(f"claim.{name}", getattr(self, name))


@dataclass(frozen=True)
class RunDevice:
    """One allocated device joined to its ResourceSlice as it was at allocation time.

    ``joined`` is false when the allocation names a device that no given slice publishes:
    the row keeps what the allocation said, and the gap stays visible instead of failing the run.
    """

    request: str
    driver: str
    pool: str
    device: str
    product: str = ""
    uuid: str = ""
    memory_bytes: int | None = None
    driver_version: str = ""
    cuda_driver_version: str = ""
    compute_capability: str = ""
    pcie_root: str = ""
    numa_node: int | None = None
    slice_name: str = ""
    pool_generation: int | None = None
    share_id: str = ""
    consumed_capacity: Mapping[str, str] = field(default_factory=_frozen)
    attributes: Mapping[str, Any] = field(default_factory=_frozen)
    capacity: Mapping[str, str] = field(default_factory=_frozen)
    joined: bool = True

    def check(self, path: str = "device") -> None:
        for name in ("request", "driver", "pool", "device", "product", "uuid", "driver_version",
                     "cuda_driver_version", "compute_capability", "pcie_root", "slice_name", "share_id"):
            check_text(f"{path}.{name}", getattr(self, name))


@dataclass(frozen=True)
class RunEnv:
    """The application's environment as seen from inside its container."""

    image_digest: str = ""
    python: str = ""
    frameworks: Mapping[str, str] = field(default_factory=_frozen)  # torch, jax, cuda runtime, cudnn, nccl...
    nvml: tuple[Mapping[str, str], ...] = ()  # one mapping per GPU NVML shows (uuid, name, driver...)

    def check(self) -> None:
        check_text("env.imageDigest", self.image_digest)
        check_text("env.python", self.python)
        for key, value in self.frameworks.items():
            check_text(f"env.frameworks[{key}]", value)


@dataclass(frozen=True)
class MetricPoint:
    name: str
    step: int
    value: float


@dataclass(frozen=True)
class ResultProblem:
    """A report of the run that could not be used, kept so that the record says what was dropped.

    ``line`` is the 1-based line of the metrics channel (0: the channel or the launch as a
    whole), ``raw`` that line as written, cut to :data:`MAX_RAW` characters.
    """

    line: int
    reason: str
    raw: str = ""

    @classmethod
    def of(cls, line: int, reason: str, raw: str = "") -> ResultProblem:
        """A storable problem: the raw text cut to MAX_RAW (marked by a trailing …), NULs replaced."""
        raw = raw.replace("\x00", "\N{REPLACEMENT CHARACTER}")
        if len(raw) > MAX_RAW:
            raw = raw[: MAX_RAW - 1] + "…"
        return cls(line, reason.replace("\x00", "\N{REPLACEMENT CHARACTER}")[:MAX_TEXT], raw)

    def check(self, path: str) -> None:
        check_text(f"{path}.reason", self.reason)
        check_text(f"{path}.raw", self.raw, MAX_RAW)
        if self.line < 0:
            raise RecordRejected(Refusal(RecordCode.INVALID_VALUE, f"{path}.line", f"{self.line} is negative",
                                         "count lines from 1, or 0 for the whole channel"))


@dataclass(frozen=True)
class RunResult:
    """What came out: placement is proven by the claim, so correctness, startup and runtime are separate.

    ``problems`` are the first reports that could not be used (bad metric lines, a launch that
    failed); ``problem_count`` counts all of them.
    """

    exit_status: int | None = None
    startup_s: float | None = None
    runtime_s: float | None = None
    correctness: Mapping[str, float] = field(default_factory=_frozen)
    series: tuple[MetricPoint, ...] = ()
    problems: tuple[ResultProblem, ...] = ()
    problem_count: int = 0

    def check(self) -> None:
        if len(self.problems) > MAX_PROBLEMS:
            raise RecordRejected(Refusal(RecordCode.TOO_LONG, "result.problems",
                                         f"{len(self.problems)} problems, at most {MAX_PROBLEMS} are kept",
                                         "keep the first ones and count the rest in problemCount"))
        if self.problem_count < len(self.problems):
            raise RecordRejected(Refusal(RecordCode.INVALID_VALUE, "result.problemCount",
                                         f"{self.problem_count} is less than the {len(self.problems)} problems kept",
                                         "count every problem, kept or not"))
        for i, problem in enumerate(self.problems):
            problem.check(f"result.problems[{i}]")
        check_finite("result.startupSeconds", self.startup_s)
        check_finite("result.runtimeSeconds", self.runtime_s)
        for key, value in self.correctness.items():
            check_text("result.correctness", key)
            check_finite(f"result.correctness[{key}]", value)
        for i, point in enumerate(self.series):
            check_text(f"result.series[{i}].name", point.name)
            check_finite(f"result.series[{i}].value", point.value)
        for name, seconds in (("startupSeconds", self.startup_s), ("runtimeSeconds", self.runtime_s)):
            if seconds is not None and seconds < 0:
                raise RecordRejected(
                    Refusal(RecordCode.INVALID_VALUE, f"result.{name}", f"{seconds:g} is negative", "measure a duration")
                )


@dataclass(frozen=True)
class RunRecord:
    """A run with everything recorded about it so far."""

    run: Run
    claim: RunClaim | None = None
    devices: tuple[RunDevice, ...] = ()
    env: RunEnv | None = None
    result: RunResult | None = None

    def check(self) -> None:
        self.run.check()
        for item in (self.claim, self.env, self.result):
            if item is not None:
                item.check()
        for i, device in enumerate(self.devices):
            device.check(f"devices[{i}]")


def check_step(to: RunState, claim: RunClaim | None, devices: tuple[RunDevice, ...], result: RunResult | None) -> None:
    """What each step carries: the claim and its devices come with *claim-allocated*, a result only at the end.

    Recording them in the same step as the state is what keeps a reader from ever seeing an
    allocated run without its devices.
    """
    if (claim is not None or devices) and to is not RunState.CLAIM_ALLOCATED:
        raise RecordRejected(Refusal(RecordCode.INVALID_VALUE, "claim", f"a claim is recorded with {RunState.CLAIM_ALLOCATED}, not {to}",
                                     "pass it when the claim is allocated"))
    if result is not None and to not in TERMINAL:
        raise RecordRejected(Refusal(RecordCode.INVALID_VALUE, "result", f"a result is recorded when the run ends, not at {to}",
                                     "pass it with finished or failed"))
    for item in (claim, result):
        if item is not None:
            item.check()
    for i, device in enumerate(devices):
        device.check(f"devices[{i}]")
