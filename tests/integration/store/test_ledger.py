"""The QueueLedger contract on the twin, SQLite and PostgreSQL: limits hold under 50 concurrent submitters."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest

from drakit.queues import ClusterQueue, MemoryLedger, QueueLedger, Refused, Reserved, ResourceQuota, Setup
from drakit.queues.ledger import RefusalCode
from drakit.store.engine import head_revision, make_engine, upgrade
from drakit.store.ledger import SqlQueueLedger
from tests.integration.store.conftest import DIALECTS

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
F = "default"
GROUP = ((("gpu", "pods"), (F,)),)
# train: 4 GPUs of its own, may borrow 2; research: 2 GPUs, lends 1 at most; train runs at most 5 jobs.
SETUP = Setup(
    cluster_queues=(
        ClusterQueue("train", GROUP, {(F, "gpu"): ResourceQuota(4, borrowing_limit=2), (F, "pods"): ResourceQuota(8)},
                     cohort="org", max_running=5),
        ClusterQueue("research", GROUP, {(F, "gpu"): ResourceQuota(2, lending_limit=1), (F, "pods"): ResourceQuota(8)},
                     cohort="org"),
        ClusterQueue("solo", ((("gpu",), (F,)),), {(F, "gpu"): ResourceQuota(1)}),
    ),
    local_queues={},
)
LIMITS = {"train": 5, "research": 6}  # train: 4 + what research lends (1); research: its 2 + train's 4
COHORT_GPUS = 6  # every GPU of the cohort


@pytest.fixture(params=DIALECTS)
def ledger(request: pytest.FixtureRequest, empty_url: Callable[[str], str]) -> Iterator[QueueLedger]:
    if request.param == "memory":
        yield MemoryLedger(SETUP)
        return
    engine = make_engine(empty_url(request.param))
    upgrade(engine)
    yield SqlQueueLedger(engine, SETUP)
    engine.dispose()


def test_migration_history_holds_the_ledger() -> None:
    # 0003 made the ledger's tables; later revisions (0004: the web's tokens) chain after it.
    assert head_revision() >= "0003"


@pytest.mark.parametrize(
    ("queue", "demand", "code"),
    [
        pytest.param("nope", {"gpu": 1}, RefusalCode.UNKNOWN_QUEUE, id="unknown-queue"),
        pytest.param("train", {"gpu": 7}, RefusalCode.EXCEEDS_MAX, id="more-than-ever"),
        pytest.param("solo", {"cpu": 1}, RefusalCode.UNCOVERED, id="uncovered-resource"),
    ],
)
def test_refusals_that_retrying_cannot_fix(ledger: QueueLedger, queue: str, demand: dict[str, int], code: RefusalCode) -> None:
    out = ledger.reserve(queue, "r1", demand, T0)
    assert isinstance(out, Refused)
    assert (out.code, out.retry) == (code, False)
    assert ledger.held() == ()


def test_borrowing_then_waiting_then_release(ledger: QueueLedger) -> None:
    assert isinstance(ledger.reserve("train", "a", {"gpu": 4}, T0), Reserved)
    assert isinstance(ledger.reserve("train", "b", {"gpu": 1}, T0 + timedelta(seconds=1)), Reserved)  # borrows 1
    waiting = ledger.reserve("research", "c", {"gpu": 2}, T0 + timedelta(seconds=2))
    assert isinstance(waiting, Refused)
    assert waiting.code is RefusalCode.WAITING_FOR_QUOTA and waiting.retry
    assert "needs 2, 1 free" in waiting.message
    assert ledger.release("b") and not ledger.release("b")
    assert isinstance(ledger.reserve("research", "c", {"gpu": 2}, T0 + timedelta(seconds=3)), Reserved)
    assert [r.run_id for r in ledger.held()] == ["a", "c"]
    assert ledger.held("research")[0].demand == {"gpu": 2, "pods": 1}


def test_reserving_twice_is_idempotent_and_other_queue_refused(ledger: QueueLedger) -> None:
    first = ledger.reserve("train", "a", {"gpu": 1}, T0)
    again = ledger.reserve("train", "a", {"gpu": 1}, T0 + timedelta(seconds=5))
    assert isinstance(first, Reserved) and again == first
    other = ledger.reserve("research", "a", {"gpu": 1}, T0)
    assert isinstance(other, Refused) and other.code is RefusalCode.DUPLICATE
    assert len(ledger.held()) == 1


def test_concurrency_limit(ledger: QueueLedger) -> None:
    for i in range(5):
        assert isinstance(ledger.reserve("train", f"r{i}", {}, T0), Reserved)
    refused = ledger.reserve("train", "r5", {}, T0)
    assert isinstance(refused, Refused) and refused.code is RefusalCode.CONCURRENCY
    assert "runs 5 of 5 allowed" in refused.message


SUBMITTERS = 50
# `make test` runs 40 per submitter (2,000 reservations per store) to keep CI inside its budget;
# DRAKIT_CONCURRENCY_RUNS=200 is the full 50 × 200 check.
PER_SUBMITTER = int(os.environ.get("DRAKIT_CONCURRENCY_RUNS", "40"))
HOLD_S = 0.001


@pytest.mark.slow
def test_50_submitters_never_exceed_a_limit(ledger: QueueLedger) -> None:
    """50 threads × PER_SUBMITTER runs each: every run reserved exactly once, no limit ever exceeded.

    Each thread counts what it holds in a shared tally *after* its reservation committed and
    *before* it releases, so the tally never exceeds what the ledger holds: a tally over a limit
    means the ledger was over it.  Every tenth reservation also reads the ledger's own view.
    (A ledger without its lock fails this test: checked by hand by removing it.)
    """
    lock = threading.Lock()
    gpus = {"train": 0, "research": 0}
    running = {"train": 0, "research": 0}
    worst = {"train": 0, "research": 0, "cohort": 0, "train-running": 0}
    reserved: list[str] = []
    errors: list[BaseException] = []

    def submitter(n: int) -> None:
        try:
            for i in range(PER_SUBMITTER):
                queue = "train" if (n + i) % 3 else "research"
                run_id = f"s{n}-{i}"
                want = 1 + (n + i) % 2
                while True:
                    out = ledger.reserve(queue, run_id, {"gpu": want}, T0)
                    if isinstance(out, Reserved):
                        break
                    assert out.retry, out.message
                    time.sleep(0.0005)
                with lock:
                    reserved.append(run_id)
                    gpus[queue] += want
                    running[queue] += 1
                    worst[queue] = max(worst[queue], gpus[queue])
                    worst["cohort"] = max(worst["cohort"], gpus["train"] + gpus["research"])
                    worst["train-running"] = max(worst["train-running"], running["train"])
                if i % 10 == 0:  # the ledger's own view, one consistent read
                    held = ledger.held()
                    seen = {q: sum(r.demand.get("gpu", 0) for r in held if r.queue == q) for q in ("train", "research")}
                    with lock:
                        worst["held-cohort"] = max(worst.get("held-cohort", 0), seen["train"] + seen["research"])
                        worst["held-train"] = max(worst.get("held-train", 0), seen["train"])
                time.sleep(HOLD_S)  # the run: reservations overlap, so a race would show
                with lock:
                    gpus[queue] -= want
                    running[queue] -= 1
                assert ledger.release(run_id)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=submitter, args=(n,)) for n in range(SUBMITTERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(reserved) == len(set(reserved)) == SUBMITTERS * PER_SUBMITTER
    assert worst["train"] <= LIMITS["train"] and worst["research"] <= LIMITS["research"]
    assert worst["cohort"] <= COHORT_GPUS
    assert worst["train-running"] <= 5
    assert worst["held-cohort"] <= COHORT_GPUS and worst["held-train"] <= LIMITS["train"]
    assert ledger.held() == ()
