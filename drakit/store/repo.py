"""The SQL RecordStore: every change one transaction, the run row locked while its state moves."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from types import MappingProxyType

from sqlalchemy import Engine, Subquery, func, insert, select
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from drakit.outcomes import Reason, Verdict
from drakit.records.compare import BUILTIN_METRICS, By, Group, parse_by, summarise
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
    Transition,
    check_step,
)
from drakit.store.engine import StoreError, first_line, make_engine, reading, shown, upgrade
from drakit.store.memory import run_exists, run_not_found, utc_now
from drakit.store.tables import Base, ClaimRow, DeviceRow, EnvRow, MetricRow, PointRow, ResultRow, RunRow

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


def _run_of(row: RunRow) -> Run:
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
    )


def _run_values(run: Run) -> dict[str, object]:
    values: dict[str, object] = {
        name: getattr(run, name)
        for name in ("id", "recipe", "profile", "queue", "namespace", "executor", "image", "reason_code", "message")
    }
    values.update(command=list(run.command), state=run.state.value, verdict=run.verdict.value if run.verdict else None,
                  ended_at=_utc(run.transitions[-1].at) if run.state in TERMINAL else None)
    entered = {t.state: t.at for t in reversed(run.transitions)}  # the first entry into each state wins
    values.update({column: _utc(entered.get(state)) for state, column in _STAMPS})
    return values


class SqlRecordStore:
    def __init__(self, engine: Engine, *, now: Callable[[], datetime] = utc_now) -> None:
        self.engine = engine
        self._now = now
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        self._reads = sessionmaker(reading(engine), expire_on_commit=False)

    def _session(self) -> Session:
        return self._sessions()

    def _fail(self, error: SQLAlchemyError) -> StoreError:
        return StoreError(f"store {shown(self.engine.url)}: {first_line(error)}")

    def create(self, run: Run) -> None:
        run.check()
        row = RunRow(**_run_values(run))
        try:
            with self._session() as session, session.begin():
                session.add(row)
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
            with self._session() as session, session.begin():
                # FOR UPDATE locks the row on PostgreSQL; SQLite's BEGIN IMMEDIATE already holds the write lock.
                row = session.get(RunRow, run_id, with_for_update=True)
                if row is None:
                    raise run_not_found(run_id)
                run = _run_of(row).advance(to, at or self._now(), reason=reason)
                for name, value in _run_values(run).items():
                    setattr(row, name, value)
                if claim is not None:
                    session.merge(ClaimRow(run_id=run_id, **{f: getattr(claim, f) for f in _CLAIM_FIELDS}))
                session.add_all(DeviceRow(**v) for v in _device_values(run_id, devices))
                if result is not None:
                    _insert_results(session, [(run_id, result)])
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
            with self._session() as session, session.begin():
                # Core executemany on the session's connection, parents first: the ORM's unit of work,
                # and even its bulk-insert path, made batches 2-3x slower than a bare insert.
                connection = session.connection()
                for table, values in ((RunRow, runs), (ClaimRow, claims), (DeviceRow, devices), (EnvRow, envs)):
                    if values:
                        connection.execute(insert(Base.metadata.tables[table.__tablename__]), values)
                _insert_results(session, results)
        except IntegrityError as e:
            raise StoreError(f"store {shown(self.engine.url)}: nothing was imported, a run in the batch is "
                             f"already recorded ({first_line(e)})") from None
        except SQLAlchemyError as e:
            raise self._fail(e) from None
        return len(runs)

    def record_env(self, run_id: str, env: RunEnv) -> None:
        env.check()
        try:
            with self._session() as session, session.begin():
                if session.get(RunRow, run_id) is None:
                    raise run_not_found(run_id)
                session.merge(EnvRow(**_env_values(run_id, env)))
        except SQLAlchemyError as e:
            raise self._fail(e) from None

    def get(self, run_id: str) -> RunRecord:
        try:
            with self._reads() as session, session.begin():
                row = session.get(RunRow, run_id)
                if row is None:
                    raise run_not_found(run_id)
                claim = session.get(ClaimRow, run_id)
                devices = session.scalars(
                    select(DeviceRow).where(DeviceRow.run_id == run_id).order_by(DeviceRow.position)
                ).all()
                env = session.get(EnvRow, run_id)
                result = session.get(ResultRow, run_id)
                return RunRecord(
                    run=_run_of(row),
                    claim=RunClaim(**{f: getattr(claim, f) for f in _CLAIM_FIELDS}) if claim else None,
                    devices=tuple(_device_of(d) for d in devices),
                    env=_env_of(env) if env else None,
                    result=_result_of(session, result) if result else None,
                )
        except SQLAlchemyError as e:
            raise self._fail(e) from None

    def runs(self, *, state: RunState | None = None, limit: int | None = None) -> tuple[Run, ...]:
        query = select(RunRow).order_by(RunRow.submitted_at, RunRow.id).limit(limit)
        if state is not None:
            query = query.where(RunRow.state == state.value)
        try:
            with self._reads() as session, session.begin():
                return tuple(_run_of(row) for row in session.scalars(query))
        except SQLAlchemyError as e:
            raise self._fail(e) from None

    def compare(self, by: By | str, metric: str = "runtime") -> tuple[Group, ...]:
        """GROUP BY in the database; PostgreSQL computes the quantiles too (``percentile_cont``).

        SQLite has no ordered-set aggregates, so there the database sorts by group and value and
        the quantiles are read off the sorted rows in one pass.
        """
        pairs = _metric_pairs(parse_by(by), metric)
        try:
            with self._reads() as session, session.begin():
                if self.engine.dialect.name == "postgresql":
                    key, value = pairs.c.key, pairs.c.value
                    grouped = select(
                        key, func.count(), *(func.percentile_cont(q).within_group(value) for q in (0.5, 0.25, 0.75)),
                        func.min(value), func.max(value),
                    ).group_by(key).order_by(key)
                    return tuple(
                        Group(k, n, float(m), float(q1), float(q3), float(lo), float(hi))
                        for k, n, m, q1, q3, lo, hi in session.execute(grouped)
                    )
                rows = session.execute(select(pairs.c.key, pairs.c.value).order_by(pairs.c.key, pairs.c.value))
                return _groups_of_sorted(rows)
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


def _device_of(row: DeviceRow) -> RunDevice:
    return RunDevice(
        consumed_capacity=MappingProxyType(dict(row.consumed_capacity)),
        attributes=MappingProxyType(dict(row.attributes)),
        capacity=MappingProxyType(dict(row.capacity)),
        **{f: getattr(row, f) for f in _DEVICE_FIELDS},
    )


def _insert_results(session: Session, results: list[tuple[str, RunResult]]) -> None:
    plain = [{"run_id": i, "exit_status": r.exit_status, "startup_s": r.startup_s, "runtime_s": r.runtime_s}
             for i, r in results]
    metrics = [{"run_id": i, "name": k, "value": v} for i, r in results for k, v in r.correctness.items()]
    points = [{"run_id": i, "name": p.name, "step": p.step, "value": p.value} for i, r in results for p in r.series]
    connection = session.connection()
    for table, values in ((ResultRow, plain), (MetricRow, metrics), (PointRow, points)):
        if values:
            connection.execute(insert(Base.metadata.tables[table.__tablename__]), values)


def _env_values(run_id: str, env: RunEnv) -> dict[str, object]:
    return {"run_id": run_id, "image_digest": env.image_digest, "python": env.python,
            "frameworks": dict(env.frameworks), "nvml": [dict(g) for g in env.nvml]}


def _env_of(row: EnvRow) -> RunEnv:
    return RunEnv(image_digest=row.image_digest, python=row.python,
                  frameworks=MappingProxyType(dict(row.frameworks)),
                  nvml=tuple(MappingProxyType(dict(g)) for g in row.nvml))


def _result_of(session: Session, row: ResultRow) -> RunResult:
    metrics = session.scalars(select(MetricRow).where(MetricRow.run_id == row.run_id).order_by(MetricRow.name))
    points = session.scalars(
        select(PointRow).where(PointRow.run_id == row.run_id).order_by(PointRow.name, PointRow.step)
    )
    return RunResult(
        exit_status=row.exit_status, startup_s=row.startup_s, runtime_s=row.runtime_s,
        correctness=MappingProxyType({m.name: m.value for m in metrics}),
        series=tuple(MetricPoint(p.name, p.step, p.value) for p in points),
    )
