"""Run-record store speed next to bare SQLAlchemy doing the same logical work (issue 16).

* **record**: whole runs written in batches through ``SqlRecordStore.import_records`` (values
  checked, one transaction per batch) vs a bare ``insert()`` executemany of the same row dicts;
* **compare**: ``store.compare("product")`` over N runs vs the bare query it is built on
  (PostgreSQL: the same ``percentile_cont`` GROUP BY; SQLite: the same ordered SELECT);
* **lifecycle**: one run through its five states with ``create`` + ``advance``, one transaction
  each, vs bare Core doing the same: an INSERT, then per step a ``SELECT … FOR UPDATE`` of the
  run row (the state machine must check the state it moves from under a lock; SQLite's
  ``BEGIN IMMEDIATE`` is that lock) and an UPDATE, the result rows with the last step;
* **executor**: a run through ``executors.base.execute`` with the sim launcher (the profile's
  claim compiled and allocated on the demo inventory, five transactions, the record read back)
  vs the bare lifecycle writing the very same claim and device rows with the claim-allocated
  step and reading the record back in one snapshot (run ⟕ claim ⟕ environment ⟕ result,
  devices, metrics, points).  The bare side does no allocation: that is drakit's own work.

Both sides use the same engine (so the same pool, pre-ping and SQLite pragmas), and the
lifecycle and executor rows alternate drakit and bare in small rounds, so the load of a shared
machine falls on both alike.  Ratio = bare rate / drakit rate (target within 2x).  Not a test:
nothing here asserts a time.

    .venv/bin/python benchmarks/bench_store.py [--runs 100000] [--pg URL] [--quick]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import Engine, func, insert, select, text, update

from drakit.clock import SeededIds
from drakit.demo import cluster_objects
from drakit.executors.base import RunRequest, execute
from drakit.executors.local import SimLauncher
from drakit.executors.placement import DeviceBook
from drakit.features import Features
from drakit.inventory.snapshot import ClusterSnapshot
from drakit.profiles.trial import trial_profiles
from drakit.records import Run, RunDevice, RunRecord, RunResult, RunState
from drakit.store.engine import make_engine, reading, upgrade
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
    runs: list[dict[str, object]] = []
    devices: list[dict[str, object]] = []
    results: list[dict[str, object]] = []
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

    rows += _lifecycles(store, lifecycle)
    store.engine.dispose()
    return rows


_STEPS = (("admitted", "admitted_at"), ("claim-allocated", "claim_allocated_at"),
          ("container-started", "container_started_at"), ("finished", "ended_at"))


def _bare_lifecycle(engine: Engine, run_id: str, claim: dict[str, Any] | None = None,
                    devices: Sequence[dict[str, Any]] = (), read: bool = False) -> None:
    """What any store keeping "no half-written run visible" must do, in bare Core on the same engine."""
    runs, claims, devs = (Base.metadata.tables[t] for t in ("runs", "run_claims", "run_devices"))
    envs, results, metrics, points = (Base.metadata.tables[t] for t in ("run_envs", "run_results", "run_metrics",
                                                                        "run_metric_points"))
    now = datetime.now(UTC)
    with engine.begin() as c:
        c.execute(insert(runs).values(id=run_id, recipe="evaluation", profile="evaluation", queue="", namespace="default",
                                      executor="sim", command=["true"], image="", state="submitted", reason_code="",
                                      verdict=None, message="", submitted_at=now))
    for state, column in _STEPS:
        with engine.begin() as c:
            row = c.execute(select(runs).where(runs.c.id == run_id).with_for_update()).one()
            assert row.state != state
            c.execute(update(runs).where(runs.c.id == run_id).values({"state": state, column: datetime.now(UTC)}))
            if state == "claim-allocated" and claim is not None:
                c.execute(insert(claims).values(run_id=run_id, **claim))
                c.execute(insert(devs), [{"run_id": run_id, **d} for d in devices])
            if state == "finished":
                c.execute(insert(results).values(run_id=run_id, exit_status=0, startup_s=0.0, runtime_s=0.0))
    if read:
        with reading(engine).connect() as c, c.begin():
            c.execute(select(runs, claims, envs, results).select_from(
                runs.outerjoin(claims).outerjoin(envs).outerjoin(results)).where(runs.c.id == run_id)).one()
            c.execute(select(devs).where(devs.c.run_id == run_id).order_by(devs.c.position)).all()
            c.execute(select(metrics).where(metrics.c.run_id == run_id)).all()
            c.execute(select(points).where(points.c.run_id == run_id)).all()


def _lifecycles(store: SqlRecordStore, n: int, rounds: int = 10) -> list[tuple[str, float, float]]:
    """drakit and bare alternating in ``rounds`` rounds (each side first every other round)."""
    book = DeviceBook(ClusterSnapshot.from_objects(cluster_objects()), Features.for_version("1.37"), SeededIds(1))
    evaluation = trial_profiles().get("evaluation")
    sample = execute(store, book, SimLauncher(), RunRequest(run_id="sample", profile=evaluation, command=("true",)),
                     executor="sim")
    assert sample.claim is not None and sample.run.state is RunState.FINISHED
    claim = {f.name: getattr(sample.claim, f.name) for f in dataclasses.fields(sample.claim)}
    devices = [{"position": i, **{f.name: getattr(d, f.name) for f in dataclasses.fields(d)}}
               for i, d in enumerate(sample.devices)]
    for d in devices:
        d.update(attributes=dict(d["attributes"]), capacity=dict(d["capacity"]),
                 consumed_capacity=dict(d["consumed_capacity"]))

    def life(i: int) -> None:
        run_id = f"life-{i}"
        store.create(Run.submit(T0, id=run_id, recipe="mnist", profile="train"))
        for state in (RunState.ADMITTED, RunState.CLAIM_ALLOCATED, RunState.CONTAINER_STARTED, RunState.FINISHED):
            store.advance(run_id, state, result=RunResult(0, 1.0, 2.0) if state is RunState.FINISHED else None)

    def executor(i: int) -> None:
        execute(store, book, SimLauncher(), RunRequest(run_id=f"exec-{i}", profile=evaluation, command=("true",)),
                executor="sim")

    pairs = (
        (f"lifecycle, 5 transactions per run ({n})", life, lambda i: _bare_lifecycle(store.engine, f"bare-life-{i}")),
        (f"executor (allocate + record + read back, sim launch, {n})", executor,
         lambda i: _bare_lifecycle(store.engine, f"bare-exec-{i}", claim, devices, read=True)),
    )
    out = []
    for name, ours, bare in pairs:
        spent = {"ours": 0.0, "bare": 0.0}
        per = max(1, n // rounds)
        for r in range(rounds):
            for side in (("ours", "bare") if r % 2 == 0 else ("bare", "ours")):
                fn = ours if side == "ours" else bare
                t = time.perf_counter()
                for i in range(r * per, (r + 1) * per):
                    fn(i)
                spent[side] += time.perf_counter() - t
        done = per * rounds
        out.append((name, done / spent["ours"], done / spent["bare"]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--pg", default=os.environ.get("DRAKIT_TEST_PG_URL", ""), help="PostgreSQL URL (optional; its public schema is wiped: give a scratch database)")
    parser.add_argument("--quick", action="store_true", help="2,000 runs, 50 lifecycles")
    parser.add_argument("--lifecycles", type=int, default=0, help="runs through the lifecycle rows (default 200)")
    args = parser.parse_args()
    n = 2_000 if args.quick else args.runs
    with tempfile.TemporaryDirectory() as tmp:
        targets = [("sqlite", f"sqlite:///{tmp}/bench.db")] + ([("postgresql", args.pg)] if args.pg else [])
        print(f"### store: {n:,} runs\n")
        print("| scenario | store | drakit (/s) | bare SQLAlchemy (/s) | ratio (bare/drakit) |")
        print("| --- | --- | ---: | ---: | ---: |")
        for name, url in targets:
            for scenario, ours, bare in bench(url, n, args.lifecycles or (50 if args.quick else 200)):
                ratio = f"{bare / ours:.2f}" if bare else "–"
                shown = f"{bare:,.1f}" if bare else "–"
                print(f"| {scenario} | {name} | {ours:,.1f} | {shown} | {ratio} |")


if __name__ == "__main__":
    main()
