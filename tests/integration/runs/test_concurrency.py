"""Concurrency: 50 submitters × 200 runs on the local executor against one queue with limit 8.

Every run really launches a process (``true``) through the local executor, admitted through the
queue engine's SQL ledger (in the same database as the records) and placed by the allocator on the demo inventory.  Afterwards the records alone
prove the outcome: every run is there exactly once and finished, no device was held by two runs
at once, and at no instant were more than 8 runs admitted.  ``DRAKIT_CONCURRENCY_RUNS`` scales
the runs per submitter (200 is the full check; the default keeps a routine run short).
"""

from __future__ import annotations

import itertools
import os
import shutil
import threading
import time
from datetime import datetime

import pytest

from drakit.clock import SeededIds
from drakit.demo import cluster_objects
from drakit.executors.base import RunRequest, execute
from drakit.executors.local import LocalLauncher
from drakit.executors.placement import DeviceBook
from drakit.features import Features
from drakit.inventory.snapshot import ClusterSnapshot
from drakit.profiles.trial import trial_profiles
from drakit.queues import ClusterQueue, ResourceQuota, Setup
from drakit.queues.admission import DeviceClassMapping
from drakit.records.run import RunRecord, RunState
from drakit.store.ledger import SqlQueueLedger
from drakit.store.repo import open_store

SUBMITTERS = 50
PER_SUBMITTER = int(os.environ.get("DRAKIT_CONCURRENCY_RUNS", "20"))
LIMIT = 8


def _peak(intervals: list[tuple[datetime, datetime]]) -> int:
    """Most intervals open at one instant; an end at the same instant as a start comes first."""
    events = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals], key=lambda e: (e[0], e[1]))
    live = peak = 0
    for _, delta in events:
        live += delta
        peak = max(peak, live)
    return peak


def _device_overlaps(records: list[RunRecord]) -> list[str]:
    by_device: dict[str, list[tuple[datetime, datetime, str]]] = {}
    for r in records:
        start, end = r.run.at(RunState.CLAIM_ALLOCATED), r.run.transitions[-1].at
        assert start is not None
        for d in r.devices:
            by_device.setdefault(f"{d.pool}/{d.device}", []).append((start, end, r.run.id))
    clashes = []
    for device, spans in by_device.items():
        spans.sort()
        clashes += [f"{device}: {a[2]} and {b[2]}" for a, b in itertools.pairwise(spans) if b[0] < a[1]]
    return clashes


@pytest.mark.slow
def test_fifty_submitters_one_queue_limit_eight(store_url: str) -> None:
    store = open_store(store_url)
    book = DeviceBook(ClusterSnapshot.from_objects(cluster_objects()), Features.for_version("1.37"), SeededIds(50))
    # The queue engine's durable ledger, in the same database as the records: limit 8 concurrent runs.
    quotas = {("default", "gpu"): ResourceQuota(64), ("default", "pods"): ResourceQuota(64)}
    setup = Setup((ClusterQueue("shared", ((("gpu", "pods"), ("default",)),), quotas, max_running=LIMIT),), {},
                  mappings=(DeviceClassMapping("gpu", ("evaluation.gpu.nvidia.com",)),))
    ledger = SqlQueueLedger(store.engine, setup)
    evaluation = trial_profiles().get("evaluation")
    true = shutil.which("true") or "/bin/true"
    errors: list[BaseException] = []

    def submitter(s: int) -> None:
        try:
            for n in range(PER_SUBMITTER):
                request = RunRequest(run_id=f"s{s:02d}-{n:03d}", profile=evaluation, command=(true,), queue="shared")
                execute(store, book, LocalLauncher(), request, executor="local", ledger=ledger, poll_s=0.001)
        except BaseException as e:  # surfaced below; a thread's exception would otherwise vanish
            errors.append(e)

    started = time.monotonic()
    threads = [threading.Thread(target=submitter, args=(s,)) for s in range(SUBMITTERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    assert not errors, errors[0]
    runs = store.runs()
    records = [store.get(r.id) for r in runs]
    expected = {f"s{s:02d}-{n:03d}" for s in range(SUBMITTERS) for n in range(PER_SUBMITTER)}
    assert len(runs) == len(expected) and {r.id for r in runs} == expected  # none lost, none twice
    assert all(r.run.state is RunState.FINISHED and r.result and r.result.exit_status == 0 for r in records)
    intervals = []
    for r in records:
        admitted = r.run.at(RunState.ADMITTED)
        assert admitted is not None
        intervals.append((admitted, r.run.transitions[-1].at))
    peak = _peak(intervals)
    print(f"\n{len(runs)} runs by {SUBMITTERS} submitters in {elapsed:.1f}s ({len(runs) / elapsed:.0f} runs/s), "
          f"peak admitted {peak} (limit {LIMIT})")
    assert 1 < peak <= LIMIT
    assert _device_overlaps(records) == []
