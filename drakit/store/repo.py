"""The SQL RecordStore: every change one transaction, the run row locked while its state moves.

SQLAlchemy Core, not the ORM: a run's life is a handful of tiny transactions, and the unit of
work (identity map, flush, merge's SELECT) cost more than the statements themselves.  The
tables in :mod:`drakit.store.tables` stay the one schema definition.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from sqlalchemy import Connection, Engine, Row, Subquery, Table, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from drakit.outcomes import Reason, Verdict
from drakit.records.compare import BUILTIN_METRICS, By, Group, parse_by, summarise
from drakit.records.run import (
    TERMINAL,
    MetricPoint,
    ResultProblem,
    Run,
    RunClaim,
    RunDevice,
    RunEnv,
    RunRecord,
    RunResult,
    RunState,
    Transition,
    check_step,
)
from drakit.store.engine import StoreError, first_line, make_engine, reading, shown, upgrade
from drakit.store.memory import run_exists, run_not_found, utc_now
from drakit.store.tables import Base, ClaimRow, DeviceRow, EnvRow, MetricRow, PointRow, ResultRow, RunRow

_RUNS, _CLAIMS, _DEVICES, _ENVS, _RESULTS, _METRICS, _POINTS = (
    Base.metadata.tables[row.__tablename__] for row in (RunRow, ClaimRow, DeviceRow, EnvRow, ResultRow, MetricRow, PointRow)
)

__all__ = ["SqlRecordStore", "open_store"]

# Forward states and the column that keeps when the run entered each; every end state shares ended_at.
_STAMPS = (
    (RunState.SUBMITTED, "submitted_at"),
    (RunState.ADMITTED, "admitted_at"),
    (RunState.CLAIM_ALLOCATED, "claim_allocated_at"),
    (RunState.CONTAINER_STARTED, "container_started_at"),
)
_CLAIM_FIELDS = ("namespace", "name", "uid", "template", "pod_name", "pod_uid", "node")
_DEVICE_FIELDS = ("request", "driver", "pool", "device", "product", "uuid", "memory_bytes", "driver_version",
                  "cuda_driver_version", "compute_capability", "pcie_root", "numa_node", "slice_name",
                  "pool_generation", "share_id", "joined")


def open_store(url: str | None = None, *, now: Callable[[], datetime] = utc_now) -> SqlRecordStore:
    """The store at ``url`` (or ``$DRAKIT_STORE``, or the default file), migrated to the newest schema."""
    engine = make_engine(url)
    upgrade(engine)
    return SqlRecordStore(engine, now=now)


def _utc(at: datetime | None) -> datetime | None:
    # SQLite returns naive datetimes even for timezone=True columns; everything written is UTC.
    if at is None:
        return None
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


def _run_of(row: Any) -> Run:
    """A run from a row with the ``runs`` columns."""
    transitions = [Transition(state, when) for state, column in _STAMPS if (when := _utc(getattr(row, column)))]
    state = RunState(row.state)
    if state in TERMINAL:
        ended = _utc(row.ended_at)
        assert ended is not None
        transitions.append(Transition(state, ended))
    return Run(
        id=row.id, recipe=row.recipe, profile=row.profile, queue=row.queue, namespace=row.namespace,
        executor=row.executor, command=tuple(row.command), image=row.image, transitions=tuple(transitions),
        reason_code=row.reason_code, verdict=Verdict(row.verdict) if row.verdict else None, message=row.message,
        pinned_product=row.pinned_product, env=MappingProxyType(dict(row.env)), image_used=row.image_used,
    )


def _run_values(run: Run) -> dict[str, object]:
    values: dict[str, object] = {
        name: getattr(run, name)
        for name in ("id", "recipe", "profile", "queue", "namespace", "executor", "image", "reason_code", "message",
                     "pinned_product", "image_used")
    }
    values.update(command=list(run.command), env=dict(run.env), state=run.state.value, verdict=run.verdict.value if run.verdict else None,
                  ended_at=_utc(run.transitions[-1].at) if run.state in TERMINAL else None)
    entered = {t.state: t.at for t in reversed(run.transitions)}  # the first entry into each state wins
    values.update({column: _utc(entered.get(state)) for state, column in _STAMPS})
    return values


class SqlRecordStore:
    def __init__(self, engine: Engine, *, now: Callable[[], datetime] = utc_now) -> None:
        self.engine = engine
        self._now = now
        self._reading = reading(engine)

    def _fail(self, error: SQLAlchemyError) -> StoreError:
        return StoreError(f"store {shown(self.engine.url)}: {first_line(error)}")

    def create(self, run: Run) -> None:
        run.check()
        try:
            with self.engine.begin() as c:
                c.execute(insert(_RUNS).values(_run_values(run)))
        except IntegrityError:
            raise run_exists(run.id) from None
        except SQLAlchemyError as e:
            raise self._fail(e) from None

    def advance(
        self,
        run_id: str,
        to: RunState,
        *,
        at: datetime | None = None,
        reason: Reason | None = None,
        claim: RunClaim | None = None,
        devices: tuple[RunDevice, ...] = (),
        result: RunResult | None = None,
    ) -> Run:
        check_step(to, claim, devices, result)
        try:
            with self.engine.begin() as c:
                # FOR UPDATE locks the row on PostgreSQL; SQLite's BEGIN IMMEDIATE already holds the write lock.
                row = c.execute(select(_RUNS).where(_RUNS.c.id == run_id).with_for_update()).one_or_none()
                if row is None:
                    raise run_not_found(run_id)
                before = _run_of(row)
                run = before.advance(to, at or self._now(), reason=reason)
                old, new = _run_values(before), _run_values(run)
                c.execute(update(_RUNS).where(_RUNS.c.id == run_id).values({k: v for k, v in new.items() if v != old[k]}))
                # A run enters claim-allocated once, so its claim and devices are new rows, never replacements.
                if claim is not None:
                    c.execute(insert(_CLAIMS).values(run_id=run_id, **{f: getattr(claim, f) for f in _CLAIM_FIELDS}))
                if devices:
                    c.execute(insert(_DEVICES), _device_values(run_id, devices))
                if result is not None:
                    _insert_results(c, [(run_id, result)])
                return run
        except SQLAlchemyError as e:
            raise self._fail(e) from None

    def import_records(self, records: Iterable[RunRecord]) -> int:
        """Write whole records (say, the simulator's finished runs) in one transaction; returns how many."""
        runs, claims, devices, envs = [], [], [], []
        results: list[tuple[str, RunResult]] = []
        for record in records:
            record.check()
            run_id = record.run.id
            runs.append(_run_values(record.run))
            if record.claim is not None:
                claims.append({"run_id": run_id, **{f: getattr(record.claim, f) for f in _CLAIM_FIELDS}})
            devices += _device_values(run_id, record.devices)
            if record.env is not None:
                envs.append(_env_values(run_id, record.env))
            if record.result is not None:
                results.append((run_id, record.result))
        try:
            with self.engine.begin() as c:
                for table, values in ((_RUNS, runs), (_CLAIMS, claims), (_DEVICES, devices), (_ENVS, envs)):
                    if values:  # executemany, parents first
                        c.execute(insert(table), values)
                _insert_results(c, results)
        except IntegrityError as e:
            raise StoreError(f"store {shown(self.engine.url)}: nothing was imported, a run in the batch is "
                             f"already recorded ({first_line(e)})") from None
        except SQLAlchemyError as e:
            raise self._fail(e) from None
        return len(runs)

    def record_env(self, run_id: str, env: RunEnv) -> None:
        env.check()
        try:
            with self.engine.begin() as c:
                if c.execute(select(_RUNS.c.id).where(_RUNS.c.id == run_id)).first() is None:
                    raise run_not_found(run_id)
                c.execute(delete(_ENVS).where(_ENVS.c.run_id == run_id))
                c.execute(insert(_ENVS).values(_env_values(run_id, env)))
        except SQLAlchemyError as e:
            raise self._fail(e) from None

    def get(self, run_id: str) -> RunRecord:
        """One snapshot, few statements: the run with its claim, environment and result in one join."""
        joined = select(_RUNS, *_prefixed(_CLAIMS, "claim_"), *_prefixed(_ENVS, "env_"), *_prefixed(_RESULTS, "result_"))
        joined = joined.select_from(_RUNS.outerjoin(_CLAIMS).outerjoin(_ENVS).outerjoin(_RESULTS))
        try:
            with self._reading.connect() as c, c.begin():
                row = c.execute(joined.where(_RUNS.c.id == run_id)).one_or_none()
                if row is None:
                    raise run_not_found(run_id)
                claim, env, result = (_part(row, p, t) for p, t in (("claim_", _CLAIMS), ("env_", _ENVS),
                                                                    ("result_", _RESULTS)))
                devices = c.execute(select(_DEVICES).where(_DEVICES.c.run_id == run_id).order_by(_DEVICES.c.position))
                return RunRecord(
                    run=_run_of(row),
                    claim=RunClaim(**{f: claim[f] for f in _CLAIM_FIELDS}) if claim else None,
                    devices=tuple(_device_of(d) for d in devices),
                    env=_env_of(env) if env else None,
                    result=_result_of(c, result) if result else None,
                )
        except SQLAlchemyError as e:
            raise self._fail(e) from None

    def runs(self, *, state: RunState | None = None, limit: int | None = None) -> tuple[Run, ...]:
        query = select(_RUNS).order_by(_RUNS.c.submitted_at, _RUNS.c.id).limit(limit)
        if state is not None:
            query = query.where(_RUNS.c.state == state.value)
        try:
            with self._reading.connect() as c, c.begin():
                return tuple(_run_of(row) for row in c.execute(query))
        except SQLAlchemyError as e:
            raise self._fail(e) from None

    def compare(self, by: By | str, metric: str = "runtime") -> tuple[Group, ...]:
        """GROUP BY in the database; PostgreSQL computes the quantiles too (``percentile_cont``).

        SQLite has no ordered-set aggregates, so there the database sorts by group and value and
        the quantiles are read off the sorted rows in one pass.
        """
        pairs = _metric_pairs(parse_by(by), metric)
        try:
            with self._reading.connect() as c, c.begin():
                if self.engine.dialect.name == "postgresql":
                    key, value = pairs.c.key, pairs.c.value
                    grouped = select(
                        key, func.count(), *(func.percentile_cont(q).within_group(value) for q in (0.5, 0.25, 0.75)),
                        func.min(value), func.max(value),
                    ).group_by(key).order_by(key)
                    return tuple(
                        Group(k, n, float(m), float(q1), float(q3), float(lo), float(hi))
                        for k, n, m, q1, q3, lo, hi in c.execute(grouped)
                    )
                rows = c.execute(select(pairs.c.key, pairs.c.value).order_by(pairs.c.key, pairs.c.value))
                return _groups_of_sorted(tuple(r) for r in rows)
        except SQLAlchemyError as e:
            raise self._fail(e) from None


def _metric_pairs(by: By, metric: str) -> Subquery:
    """One (group key, value) row per run and distinct key: a run with two GPUs of one product counts once."""
    if metric in BUILTIN_METRICS:
        value = getattr(ResultRow, BUILTIN_METRICS[metric])
        measured = select(ResultRow.run_id.label("run_id"), value.label("value")).where(value.is_not(None))
    else:
        measured = select(MetricRow.run_id.label("run_id"), MetricRow.value.label("value")).where(
            MetricRow.name == metric
        )
    values = measured.subquery()
    if by is By.PROFILE:
        return select(RunRow.profile.label("key"), values.c.value).join(values, values.c.run_id == RunRow.id).subquery()
    column = DeviceRow.product if by is By.PRODUCT else DeviceRow.driver_version
    keys = select(DeviceRow.run_id, column.label("key")).distinct().subquery()
    return select(keys.c.key, values.c.value).join(values, values.c.run_id == keys.c.run_id).subquery()


def _groups_of_sorted(rows: Iterable[tuple[str, float]]) -> tuple[Group, ...]:
    groups: list[Group] = []
    key: str | None = None
    values: list[float] = []
    for k, v in rows:
        if k != key and values:
            groups.append(summarise(str(key), values))
            values = []
        key = k
        values.append(float(v))
    if values:
        groups.append(summarise(str(key), values))
    return tuple(groups)


def _device_values(run_id: str, devices: tuple[RunDevice, ...]) -> list[dict[str, object]]:
    return [
        {"run_id": run_id, "position": i, "consumed_capacity": dict(d.consumed_capacity),
         "attributes": dict(d.attributes), "capacity": dict(d.capacity), **{f: getattr(d, f) for f in _DEVICE_FIELDS}}
        for i, d in enumerate(devices)
    ]


def _prefixed(table: Table, prefix: str) -> list[Any]:
    return [column.label(prefix + column.name) for column in table.c]


def _part(row: Row[Any], prefix: str, table: Table) -> dict[str, Any] | None:
    """The columns of an outer-joined ``table`` in ``row``, or ``None`` where it had no row."""
    values = row._mapping
    if values[prefix + "run_id"] is None:
        return None
    return {column.name: values[prefix + column.name] for column in table.c}


def _device_of(row: Any) -> RunDevice:
    return RunDevice(
        consumed_capacity=MappingProxyType(dict(row.consumed_capacity)),
        attributes=MappingProxyType(dict(row.attributes)),
        capacity=MappingProxyType(dict(row.capacity)),
        **{f: getattr(row, f) for f in _DEVICE_FIELDS},
    )


def _insert_results(c: Connection, results: list[tuple[str, RunResult]]) -> None:
    plain = [{"run_id": i, "exit_status": r.exit_status, "startup_s": r.startup_s, "runtime_s": r.runtime_s,
              "problem_count": r.problem_count, "problems": [dataclasses.asdict(p) for p in r.problems]}
             for i, r in results]
    metrics = [{"run_id": i, "name": k, "value": v} for i, r in results for k, v in r.correctness.items()]
    points = [{"run_id": i, "name": p.name, "step": p.step, "value": p.value} for i, r in results for p in r.series]
    for table, values in ((_RESULTS, plain), (_METRICS, metrics), (_POINTS, points)):
        if values:
            c.execute(insert(table), values)


def _env_values(run_id: str, env: RunEnv) -> dict[str, object]:
    return {"run_id": run_id, "image_digest": env.image_digest, "python": env.python,
            "frameworks": dict(env.frameworks), "nvml": [dict(g) for g in env.nvml]}


def _env_of(row: dict[str, Any]) -> RunEnv:
    return RunEnv(image_digest=row["image_digest"], python=row["python"],
                  frameworks=MappingProxyType(dict(row["frameworks"])),
                  nvml=tuple(MappingProxyType(dict(g)) for g in row["nvml"]))


def _result_of(c: Connection, row: dict[str, Any]) -> RunResult:
    run_id = row["run_id"]
    metrics = c.execute(select(_METRICS.c.name, _METRICS.c.value).where(_METRICS.c.run_id == run_id)
                        .order_by(_METRICS.c.name))
    points = c.execute(select(_POINTS.c.name, _POINTS.c.step, _POINTS.c.value).where(_POINTS.c.run_id == run_id)
                       .order_by(_POINTS.c.name, _POINTS.c.step))
    return RunResult(
        exit_status=row["exit_status"], startup_s=row["startup_s"], runtime_s=row["runtime_s"],
        correctness=MappingProxyType({name: value for name, value in metrics}),
        series=tuple(MetricPoint(name, step, value) for name, step, value in points),
        problems=tuple(ResultProblem(p["line"], p["reason"], p["raw"]) for p in row["problems"]),
        problem_count=row["problem_count"],
    )
