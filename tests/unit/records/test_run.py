"""The run state machine and the value checks, without a store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drakit.outcomes import Reason, ReasonCode
from drakit.records import RecordCode, RecordRejected, Run, RunState
from drakit.records.run import TERMINAL

T0 = datetime(2026, 3, 1, tzinfo=UTC)
LIVE = (RunState.SUBMITTED, RunState.ADMITTED, RunState.CLAIM_ALLOCATED, RunState.CONTAINER_STARTED)


def _run() -> Run:
    return Run.submit(T0, id="r1", recipe="mnist", profile="train")


def _at(run: Run, *states: RunState) -> Run:
    for state in states:
        run = run.advance(state, T0)
    return run


@pytest.mark.parametrize(
    ("path", "to", "allowed"),
    [
        pytest.param((), RunState.ADMITTED, True, id="submitted-admitted"),
        pytest.param((), RunState.CONTAINER_STARTED, False, id="submitted-started"),
        pytest.param((), RunState.FINISHED, False, id="submitted-finished"),
        pytest.param((), RunState.CANCELLED, True, id="submitted-cancelled"),
        pytest.param((RunState.ADMITTED,), RunState.CLAIM_ALLOCATED, True, id="admitted-allocated"),
        pytest.param((RunState.ADMITTED,), RunState.SUBMITTED, False, id="admitted-back"),
        pytest.param((RunState.ADMITTED, RunState.CLAIM_ALLOCATED), RunState.FAILED, True, id="allocated-failed"),
        pytest.param(LIVE[1:], RunState.FINISHED, True, id="started-finished"),
        pytest.param((*LIVE[1:], RunState.FINISHED), RunState.FAILED, False, id="finished-failed"),
        pytest.param((RunState.FAILED,), RunState.ADMITTED, False, id="failed-admitted"),
    ],
)
def test_transition_table(path: tuple[RunState, ...], to: RunState, allowed: bool) -> None:
    run = _at(_run(), *path)
    refusal = run.refusal(to, T0)
    assert (refusal is None) == allowed
    if refusal is not None:
        assert refusal.code is RecordCode.ILLEGAL_TRANSITION
        assert f"cannot go from {run.state} to {to}" in refusal.message and refusal.hint


def test_failure_reason_carries_the_cores_verdict() -> None:
    reason = Reason.of(ReasonCode.CAPACITY_EXCEEDED, "needs 40Gi, 20Gi left")
    run = _run().advance(RunState.FAILED, T0, reason=reason)
    assert (run.reason_code, run.verdict, run.message) == ("CapacityExceeded", reason.verdict, "needs 40Gi, 20Gi left")


@pytest.mark.parametrize(
    ("fields", "code", "pattern"),
    [
        pytest.param({"id": ""}, RecordCode.INVALID_VALUE, "id: is empty", id="no-id"),
        pytest.param({"reason_code": "Bogus"}, RecordCode.INVALID_VALUE, "'Bogus' is not a drakit reason code",
                     id="unknown-code"),
        pytest.param({"profile": "p" * 1025}, RecordCode.TOO_LONG, "profile: 1025 characters, at most 1024",
                     id="long"),
    ],
)
def test_bad_runs_are_refused(fields: dict[str, str], code: RecordCode, pattern: str) -> None:
    base = {"id": "r1", "recipe": "mnist", "profile": "train"}
    with pytest.raises(RecordRejected, match=pattern) as refused:
        Run.submit(T0, **{**base, **fields})
    assert refused.value.refusal.code is code


def test_naive_timestamps_are_refused() -> None:
    with pytest.raises(RecordRejected, match="has no time zone"):
        Run.submit(datetime(2026, 3, 1), id="r1", recipe="mnist", profile="train")


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(list(RunState)), st.integers(-5, 30)), max_size=12))
def test_every_accepted_history_is_a_legal_path(steps: list[tuple[RunState, int]]) -> None:
    """Whatever is attempted, the history kept moves forward one step at a time, ends at most once, in time order."""
    run = _run()
    for state, seconds in steps:
        at = run.transitions[-1].at + timedelta(seconds=seconds)
        try:
            run = run.advance(state, at)
        except RecordRejected as refused:
            assert refused.refusal.code in (RecordCode.ILLEGAL_TRANSITION, RecordCode.TIME_WENT_BACK)
    states = [t.state for t in run.transitions]
    live = [s for s in states if s not in TERMINAL]
    assert live == list(LIVE[: len(live)])
    assert all(s not in TERMINAL for s in states[:-1])
    assert [t.at for t in run.transitions] == sorted(t.at for t in run.transitions)
