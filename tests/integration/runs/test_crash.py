"""Crash safety: SIGKILL the recording process at random points, 1,000 times, then check and resume.

The recorder is a forked child (no interpreter start-up, so a thousand kills take seconds) that
records runs step by step as an executor does and reports each step on a pipe *after* its
transaction committed.  After every kill: each reported step is in the store, and the runs it
touched are whole (a claim-allocated run has its claim and both devices, a finished one its
whole result; nothing in between is visible).  At the end a new process resumes the open runs
through the executors' own resume, and none is left open.
"""

from __future__ import annotations

import os
import random
import signal
import time
from datetime import UTC, datetime

import pytest

from drakit.clock import SeededIds
from drakit.demo import cluster_objects
from drakit.executors.base import resume_open
from drakit.executors.local import SimLauncher
from drakit.executors.placement import DeviceBook
from drakit.features import Features
from drakit.inventory.snapshot import ClusterSnapshot
from drakit.profiles.trial import trial_profiles
from drakit.records.run import (
    TERMINAL,
    MetricPoint,
    Run,
    RunClaim,
    RunDevice,
    RunEnv,
    RunRecord,
    RunResult,
    RunState,
)
from drakit.store.engine import make_engine
from drakit.store.repo import SqlRecordStore, open_store

KILLS = int(os.environ.get("DRAKIT_CRASH_KILLS", "1000"))
ORDER = [RunState.SUBMITTED, RunState.ADMITTED, RunState.CLAIM_ALLOCATED, RunState.CONTAINER_STARTED, RunState.FINISHED]
CLAIM = RunClaim(namespace="ml", name="c", uid="3c83aa00-0000-4000-8000-000000000000", template="evaluation", node="node-a")
DEVICES = tuple(
    RunDevice(request="gpu", driver="gpu.nvidia.com", pool="node-a", device=f"gpu-{i}", product="NVIDIA H100 80GB HBM3",
              uuid=f"GPU-{i:08d}", memory_bytes=85520809984, driver_version="580.126.20", pcie_root="pci0000:15",
              slice_name="node-a-gpu.nvidia.com", pool_generation=1, attributes={"uuid": {"string": f"GPU-{i:08d}"}})
    for i in range(2)
)
RESULT = RunResult(exit_status=0, startup_s=0.5, runtime_s=2.0, correctness={"accuracy": 0.98, "max_error": 1e-9},
                   series=tuple(MetricPoint("loss", s, 1.0 / (s + 1)) for s in range(3)))
ENV = RunEnv(python="CPython 3.12", frameworks={"numpy": "2.4.6"}, nvml=({"uuid": "GPU-00000000"},))


def _record_one(store: SqlRecordStore, run_id: str, pipe: int | None) -> None:
    store.create(Run.submit(datetime.now(UTC), id=run_id, recipe="evaluation", profile="evaluation",
                            namespace="ml", executor="local", command=("python", "-c", "pass")))
    if pipe is not None:
        os.write(pipe, f"{run_id} submitted\n".encode())
    for to in ORDER[1:]:
        store.advance(run_id, to, claim=CLAIM if to is RunState.CLAIM_ALLOCATED else None,
                      devices=DEVICES if to is RunState.CLAIM_ALLOCATED else (),
                      result=RESULT if to is RunState.FINISHED else None)
        if to is RunState.CONTAINER_STARTED:
            store.record_env(run_id, ENV)
        if pipe is not None:
            os.write(pipe, f"{run_id} {to.value}\n".encode())


def _recorder(url: str, prefix: str, pipe: int, ready: int) -> None:
    """The child: record runs forever, reporting ``run state`` after each committed step."""
    try:
        store = SqlRecordStore(make_engine(url))
        store.engine.connect().close()  # connected: the kills now land among the writes
        os.write(ready, b".")
        for n in range(10**9):
            _record_one(store, f"{prefix}-{n}", pipe)
    finally:
        os._exit(0)


def _intact(record: RunRecord) -> None:
    run = record.run
    states = [t.state for t in run.transitions]
    assert states == ORDER[: len(states)] or (states[:-1] == ORDER[: len(states) - 1] and states[-1] in TERMINAL), states
    assert [t.at for t in run.transitions] == sorted(t.at for t in run.transitions)
    reached = max(ORDER.index(s) if s in ORDER else ORDER.index(RunState.CONTAINER_STARTED) for s in states)
    allocated = reached >= ORDER.index(RunState.CLAIM_ALLOCATED)
    assert (record.claim == CLAIM) is allocated and (record.devices == DEVICES) is allocated
    assert (record.result == RESULT) is (run.state is RunState.FINISHED)
    assert record.env is None or record.env == ENV


def _read_all(fd: int) -> list[tuple[str, str]]:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return [tuple(line.split(" ", 1)) for line in b"".join(chunks).decode().splitlines()]  # type: ignore[misc]


@pytest.mark.slow
def test_sigkill_at_random_points_leaves_every_committed_run_intact(store_url: str) -> None:
    parent = open_store(store_url)  # migrated once, before any child
    _record_one(parent, "warm-up", None)  # children inherit SQLAlchemy's compiled statements
    rng = random.Random(16)
    committed = 0
    started = time.monotonic()
    for kill in range(KILLS):
        read, write = os.pipe()
        ready_read, ready_write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child never returns
            os.close(read)
            os.close(ready_read)
            _recorder(store_url, f"k{kill}", write, ready_write)
        os.close(write)
        os.close(ready_write)
        os.read(ready_read, 1)
        os.close(ready_read)
        time.sleep(rng.uniform(0.0, 0.04))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        reported = _read_all(read)
        os.close(read)
        committed += len(reported)
        last: dict[str, str] = {}
        for run_id, state in reported:
            last[run_id] = state
        for run_id, state in last.items():
            record = parent.get(run_id)
            assert ORDER.index(record.run.state) >= ORDER.index(RunState(state)), (run_id, state, record.run.state)
            _intact(record)
        # the step the child was in when it died is either whole or absent
        in_flight = f"k{kill}-{len(last)}"
        try:
            _intact(parent.get(in_flight))
        except Exception as e:
            assert "not found" in str(e), e
    everything = [parent.get(r.id) for r in parent.runs()]
    for record in everything:
        _intact(record)
    open_runs = [r for r in everything if r.run.state not in TERMINAL]
    print(f"\n{KILLS} kills in {time.monotonic() - started:.1f}s, {committed} committed steps, "
          f"{len(everything)} runs, {len(open_runs)} open")
    # The kills landed between every pair of steps, not all before the first write.
    assert {r.run.state for r in open_runs} == set(ORDER[:-1]) or KILLS < 200
    # A restarted recorder: every open run is carried on to its end (or failed, if its command was running).
    book = DeviceBook(ClusterSnapshot.from_objects(cluster_objects()), Features.for_version("1.37"), SeededIds(1))
    resumed = resume_open(open_store(store_url), book, SimLauncher(), trial_profiles().get, executor="local")
    assert {r.run.id for r in resumed} == {r.run.id for r in open_runs}
    assert all(r.run.state in (RunState.FINISHED, RunState.FAILED) for r in resumed)
    assert not [r for r in parent.runs() if r.state not in TERMINAL]
    for record in resumed:
        was = next(o for o in open_runs if o.run.id == record.run.id).run.state
        assert record.run.state is (RunState.FAILED if was is RunState.CONTAINER_STARTED else RunState.FINISHED)
