"""Run-record store speed next to bare SQLAlchemy on the same rows (issue 16).

* **record**: whole runs written in batches through ``SqlRecordStore.import_records`` (values
  checked, one transaction per batch) vs a bare ``insert()`` executemany of the same row dicts;
* **lifecycle**: one run through its five states, one transaction each (no bare counterpart:
  it is the price of "no half-written run visible");
* **executor**: a run through ``executors.base.execute`` with the sim launcher (the profile's
  claim compiled and allocated, then the five transactions) next to the bare lifecycle;
* **compare**: ``store.compare("product")`` over N runs vs the bare query it is built on
  (PostgreSQL: the same ``percentile_cont`` GROUP BY; SQLite: the same ordered SELECT).

Ratio = store / bare (target within 2x).  Not a test: nothing here asserts a time.

    .venv/bin/python benchmarks/bench_store.py [--runs 100000] [--pg URL] [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import func, insert, select, text

from drakit.clock import SeededIds
from drakit.demo import cluster_objects
from drakit.executors.base import RunRequest, execute
from drakit.executors.local import SimLauncher
from drakit.executors.placement import DeviceBook
from drakit.features import Features
from drakit.inventory.snapshot import ClusterSnapshot
from drakit.profiles.trial import trial_profiles
from drakit.records import Run, RunDevice, RunRecord, RunResult, RunState
from drakit.store.engine import make_engine, upgrade
from drakit.store.repo import SqlRecordStore
from drakit.store.tables import Base, DeviceRow, ResultRow, RunRow

T0 = datetime(2026, 1, 1, tzinfo=UTC)
PRODUCTS = ("NVIDIA T4", "NVIDIA L4", "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3")
BATCH = 1000


def _records(start: int, n: int) -> list[RunRecord]:
    out = []
    for i in range(start, start + n):
        run = Run.submit(T0, id=f"run-{i:07d}", recipe="mnist", profile=("train", "eval")[i % 2], queue="q")
        for step, state in enumerate((RunState.ADMITTED, RunState.CLAIM_ALLOCATED, RunState.CONTAINER_STARTED,
                                      RunState.FINISHED), 1):
            run = run.advance(state, T0 + timedelta(seconds=step))
        device = RunDevice("gpu", "gpu.nvidia.com", f"node-{i % 50}", "gpu-0", product=PRODUCTS[i % 4],
                           uuid=f"GPU-{i}", driver_version="580.65.6", slice_name=f"node-{i % 50}-gpu")
        out.append(RunRecord(run, devices=(device,), result=RunResult(0, 1.0 + i % 7, 10.0 + (i * 37) % 101)))
    return out


def _bare_rows(records: list[RunRecord]) -> tuple[list[dict[str, object]], list[dict[str, object]], list[dict[str, object]]]:
    runs, devices, results = [], [], []
    for r in records:
        runs.append({"id": r.run.id, "recipe": r.run.recipe, "profile": r.run.profile, "queue": r.run.queue,
                     "namespace": r.run.namespace, "executor": r.run.executor, "command": [], "image": "",
                     "state": r.run.state.value, "reason_code": "", "verdict": None, "message": "",
                     "submitted_at": T0, "admitted_at": T0, "claim_allocated_at": T0, "container_started_at": T0,
                     "ended_at": T0})
        d = r.devices[0]
        devices.append({"run_id": r.run.id, "position": 0, "request": d.request, "driver": d.driver, "pool": d.pool,
                        "device": d.device, "product": d.product, "uuid": d.uuid, "memory_bytes": None,
                        "driver_version": d.driver_version, "cuda_driver_version": "", "compute_capability": "",
                        "pcie_root": "", "numa_node": None, "slice_name": d.slice_name, "pool_generation": None,
                        "share_id": "", "consumed_capacity": {}, "attributes": {}, "capacity": {}, "joined": True})
        assert r.result is not None
        results.append({"run_id": r.run.id, "exit_status": 0, "startup_s": r.result.startup_s,
                        "runtime_s": r.result.runtime_s})
    return runs, devices, results


def _fresh(url: str) -> SqlRecordStore:
    engine = make_engine(url)
    if engine.dialect.name == "postgresql":
        with engine.begin() as c:
            c.execute(text("DROP SCHEMA public CASCADE"))
            c.execute(text("CREATE SCHEMA public"))
    upgrade(engine)
    return SqlRecordStore(engine)


def _clear(store: SqlRecordStore) -> None:
    with store.engine.begin() as c:
        for table in reversed(Base.metadata.sorted_tables):
            c.execute(table.delete())
    # Give the space back, so the bare insert that follows does not reuse the free pages (SQLite)
    # or dead tuples' room (PostgreSQL) that drakit's run had to allocate.
    raw = store.engine.raw_connection()
    try:
        if store.engine.dialect.name == "postgresql":
            raw.driver_connection.autocommit = True  # type: ignore[union-attr]
        raw.cursor().execute("VACUUM")  # pysqlite here runs without implicit transactions
    finally:
        raw.close()


def bench(url: str, n: int, lifecycle: int) -> list[tuple[str, float, float]]:
    store = _fresh(url)
    batches = [_records(i, min(BATCH, n - i)) for i in range(0, n, BATCH)]
    t = time.perf_counter()
    for batch in batches:
        store.import_records(batch)
    ours = time.perf_counter() - t
    _clear(store)
    t = time.perf_counter()
    for batch in batches:
        runs, devices, results = _bare_rows(batch)
        with store.engine.begin() as c:
            c.execute(insert(RunRow), runs)
            c.execute(insert(DeviceRow), devices)
            c.execute(insert(ResultRow), results)
    bare = time.perf_counter() - t
    rows = [(f"record {n:,} runs (batches of {BATCH})", n / ours, n / bare)]

    store.compare("product")  # warm both sides: the first call compiles the statements and fills caches
    t = time.perf_counter()
    got = store.compare("product")
    ours = time.perf_counter() - t
    keys = select(DeviceRow.run_id, DeviceRow.product.label("key")).distinct().subquery()
    pairs = select(keys.c.key, ResultRow.runtime_s.label("value")).join(
        ResultRow, ResultRow.run_id == keys.c.run_id).where(ResultRow.runtime_s.is_not(None)).subquery()
    if store.engine.dialect.name == "postgresql":
        query = select(pairs.c.key, func.count(), *(func.percentile_cont(q).within_group(pairs.c.value)
                                                   for q in (0.5, 0.25, 0.75)),
                       func.min(pairs.c.value), func.max(pairs.c.value)).group_by(pairs.c.key)
    else:
        query = select(pairs.c.key, pairs.c.value).order_by(pairs.c.key, pairs.c.value)
    with store.engine.connect() as c:
        c.execute(query).all()
    t = time.perf_counter()
    with store.engine.connect() as c:
        c.execute(query).all()
    bare = time.perf_counter() - t
    assert sum(g.n for g in got) == n
    rows.append((f"compare --by product over {n:,} runs", 1 / ours, 1 / bare))

    t = time.perf_counter()
    for i in range(lifecycle):
        run_id = f"life-{i}"
        store.create(Run.submit(T0, id=run_id, recipe="mnist", profile="train"))
        for state in (RunState.ADMITTED, RunState.CLAIM_ALLOCATED, RunState.CONTAINER_STARTED, RunState.FINISHED):
            store.advance(run_id, state, result=RunResult(0, 1.0, 2.0) if state is RunState.FINISHED else None)
    life_rate = lifecycle / (time.perf_counter() - t)
    rows.append((f"lifecycle, 5 transactions per run ({lifecycle})", life_rate, 0.0))

    # The executor's path: the same five transactions plus compiling the profile's claim and
    # allocating it on the demo inventory; the lifecycle above is its bare counterpart.
    book = DeviceBook(ClusterSnapshot.from_objects(cluster_objects()), Features.for_version("1.37"), SeededIds(1))
    evaluation = trial_profiles().get("evaluation")
    t = time.perf_counter()
    for i in range(lifecycle):
        execute(store, book, SimLauncher(), RunRequest(run_id=f"exec-{i}", profile=evaluation, command=("true",)),
                executor="sim")
    rows.append((f"executor (allocate + record, sim launch, {lifecycle})", lifecycle / (time.perf_counter() - t), life_rate))
    store.engine.dispose()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--pg", default=os.environ.get("DRAKIT_TEST_PG_URL", ""), help="PostgreSQL URL (optional)")
    parser.add_argument("--quick", action="store_true", help="2,000 runs")
    args = parser.parse_args()
    n = 2_000 if args.quick else args.runs
    with tempfile.TemporaryDirectory() as tmp:
        targets = [("sqlite", f"sqlite:///{tmp}/bench.db")] + ([("postgresql", args.pg)] if args.pg else [])
        print(f"### store: {n:,} runs\n")
        print("| scenario | store | drakit (/s) | bare SQLAlchemy (/s) | ratio (bare/drakit) |")
        print("| --- | --- | ---: | ---: | ---: |")
        for name, url in targets:
            for scenario, ours, bare in bench(url, n, 50 if args.quick else 200):
                ratio = f"{bare / ours:.2f}" if bare else "–"
                shown = f"{bare:,.1f}" if bare else "–"
                print(f"| {scenario} | {name} | {ours:,.1f} | {shown} | {ratio} |")


if __name__ == "__main__":
    main()
