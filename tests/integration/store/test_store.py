"""The RecordStore contract on every implementation: round trip, state machine, atomicity, compare, concurrency."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import inspect, text

from drakit.errors import InvalidArgument, NotFound
from drakit.outcomes import ExplainCode, Owner, Reason, Verdict
from drakit.records import (
    By,
    MetricPoint,
    RecordCode,
    RecordRejected,
    ResultProblem,
    Run,
    RunClaim,
    RunDevice,
    RunEnv,
    RunRecord,
    RunResult,
    RunState,
    compare,
)
from drakit.records.run import MAX_RAW
from drakit.store.engine import StoreError, current_revision, head_revision, make_engine, revisions, upgrade
from drakit.store.memory import MemoryRecordStore
from drakit.store.protocol import RecordStore
from drakit.store.repo import SqlRecordStore, open_store
from tests.integration.store.conftest import DIALECTS

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
FORWARD = (RunState.ADMITTED, RunState.CLAIM_ALLOCATED, RunState.CONTAINER_STARTED, RunState.FINISHED)


@pytest.fixture(params=DIALECTS)
def store(request: pytest.FixtureRequest, empty_url: Callable[[str], str]) -> Iterator[RecordStore]:
    if request.param == "memory":
        yield MemoryRecordStore()
        return
    sql = open_store(empty_url(request.param))
    yield sql
    sql.engine.dispose()


def _device(i: int, product: str = "NVIDIA H100 80GB HBM3", driver_version: str = "580.65.6") -> RunDevice:
    return RunDevice(
        request="gpu", driver="gpu.nvidia.com", pool="node-a", device=f"gpu-{i}", product=product,
        uuid=f"GPU-{i:08d}", memory_bytes=85_899_345_920, driver_version=driver_version,
        cuda_driver_version="13.0.0", compute_capability="9.0.0", pcie_root="pci0000:00", numa_node=i % 2,
        slice_name="node-a-gpu", pool_generation=3, share_id="", consumed_capacity={"memory": "10Gi"},
        attributes={"productName": {"string": product}, "uuid": {"string": f"GPU-{i:08d}"}},
        capacity={"memory": "80Gi"},
    )


def _finish(store: RecordStore, run_id: str, *, profile: str = "train", devices: tuple[RunDevice, ...] = (),
            runtime: float = 10.0, accuracy: float = 0.9) -> None:
    store.create(Run.submit(T0, id=run_id, recipe="mnist", profile=profile, queue="team-a",
                            command=("python", "-c", "print(1)"), image="repo/img:1", image_used=True,
                            pinned_product="NVIDIA H100 80GB HBM3", env={"SEED": "7", "EMPTY": ""}))
    store.advance(run_id, RunState.ADMITTED, at=T0 + timedelta(seconds=1))
    store.advance(run_id, RunState.CLAIM_ALLOCATED, at=T0 + timedelta(seconds=2),
                  claim=RunClaim("team-a", f"{run_id}-gpu", f"uid-{run_id}", "gpu-template", f"{run_id}-pod",
                                 f"pod-uid-{run_id}", "node-a"),
                  devices=devices or (_device(0),))
    store.advance(run_id, RunState.CONTAINER_STARTED, at=T0 + timedelta(seconds=3))
    store.advance(run_id, RunState.FINISHED, at=T0 + timedelta(seconds=3 + runtime),
                  result=RunResult(0, 1.5, runtime, {"accuracy": accuracy},
                                   (MetricPoint("loss", 1, 0.7), MetricPoint("loss", 2, 0.3)), PROBLEMS, 41))


PROBLEMS = (ResultProblem.of(3, "not JSON (Expecting value at column 1)", "{not json"),
            ResultProblem.of(9, "not UTF-8 (invalid start byte at byte 0)", "\ufffd\u2028" + "x" * 500),
            ResultProblem.of(0, "cannot start 'x': No such file or directory"))


def test_round_trip_keeps_every_field(store: RecordStore) -> None:
    devices = (_device(0), _device(1))
    _finish(store, "r1", devices=devices)
    env = RunEnv("sha256:" + "a" * 64, "3.12.3", {"torch": "2.9.0", "cuda": "13.0"},
                 ({"uuid": "GPU-00000000", "name": "NVIDIA H100 80GB HBM3"},))
    store.record_env("r1", env)
    record = store.get("r1")
    assert [t.state for t in record.run.transitions] == [RunState.SUBMITTED, *FORWARD]
    assert [t.at for t in record.run.transitions] == [T0 + timedelta(seconds=s) for s in (0, 1, 2, 3, 13)]
    assert record.run.command == ("python", "-c", "print(1)")
    assert record.claim == RunClaim("team-a", "r1-gpu", "uid-r1", "gpu-template", "r1-pod", "pod-uid-r1", "node-a")
    assert record.devices == devices
    assert record.env == env
    assert record.result is not None
    assert (record.result.exit_status, record.result.startup_s, record.result.runtime_s) == (0, 1.5, 10.0)
    assert dict(record.result.correctness) == {"accuracy": 0.9}
    assert record.result.series == (MetricPoint("loss", 1, 0.7), MetricPoint("loss", 2, 0.3))
    assert record.result.problems == PROBLEMS and record.result.problem_count == 41
    assert len(PROBLEMS[1].raw) == MAX_RAW and PROBLEMS[1].raw.endswith("…")
    run = record.run
    assert (run.image, run.image_used, run.pinned_product) == ("repo/img:1", True, "NVIDIA H100 80GB HBM3")
    assert dict(run.env) == {"SEED": "7", "EMPTY": ""}
    copy = RunRecord(replace(run, id="r1-copy"), record.claim, record.devices, record.env, record.result)
    assert store.import_records([copy]) == 1
    assert store.get("r1-copy") == copy


def test_failure_keeps_the_cores_reason(store: RecordStore) -> None:
    store.create(Run.submit(T0, id="r1", recipe="mnist", profile="train"))
    reason = Reason(ExplainCode.NOT_ENOUGH_DEVICES, "needs 2 devices, 1 left", Verdict.WAITING, Owner.PLATFORM)
    store.advance("r1", RunState.FAILED, at=T0, reason=reason)
    run = store.get("r1").run
    assert (run.state, run.reason_code, run.verdict, run.message) == (
        RunState.FAILED, "NotEnoughDevices", Verdict.WAITING, "needs 2 devices, 1 left")
    assert run.at(RunState.FAILED) == T0


@pytest.mark.parametrize(
    ("steps", "code"),
    [
        pytest.param((RunState.CLAIM_ALLOCATED,), RecordCode.ILLEGAL_TRANSITION, id="skips-admission"),
        pytest.param((RunState.ADMITTED, RunState.ADMITTED), RecordCode.ILLEGAL_TRANSITION, id="repeats"),
        pytest.param((RunState.CANCELLED, RunState.ADMITTED), RecordCode.ILLEGAL_TRANSITION, id="after-end"),
    ],
)
def test_illegal_transitions_change_nothing(store: RecordStore, steps: tuple[RunState, ...], code: RecordCode) -> None:
    store.create(Run.submit(T0, id="r1", recipe="mnist", profile="train"))
    *legal, last = steps
    for step in legal:
        store.advance("r1", step, at=T0)
    before = store.get("r1")
    with pytest.raises(RecordRejected) as refused:
        store.advance("r1", last, at=T0)
    assert refused.value.refusal.code is code
    assert store.get("r1") == before


def test_time_going_back_is_refused(store: RecordStore) -> None:
    store.create(Run.submit(T0, id="r1", recipe="mnist", profile="train"))
    with pytest.raises(RecordRejected, match=r"entered submitted at .*, 5s after") as refused:
        store.advance("r1", RunState.ADMITTED, at=T0 - timedelta(seconds=5))
    assert refused.value.refusal.code is RecordCode.TIME_WENT_BACK


def test_duplicate_and_missing_runs(store: RecordStore) -> None:
    store.create(Run.submit(T0, id="r1", recipe="mnist", profile="train"))
    with pytest.raises(RecordRejected, match="run r1 is already recorded"):
        store.create(Run.submit(T0, id="r1", recipe="other", profile="train"))
    assert store.get("r1").run.recipe == "mnist"
    with pytest.raises(NotFound, match="run nope not found in the store"):
        store.get("nope")
    with pytest.raises(NotFound):
        store.advance("nope", RunState.ADMITTED)


@pytest.mark.parametrize(
    ("make", "pattern"),
    [
        pytest.param(lambda: RunResult(0, 1.0, float("nan")), r"result.runtimeSeconds: nan is not a finite number",
                     id="nan-runtime"),
        pytest.param(lambda: RunResult(0, 1.0, 2.0, {"accuracy": float("inf")}),
                     r"result.correctness\[accuracy\]: inf is not a finite", id="inf-metric"),
        pytest.param(lambda: RunResult(0, 1.0, 2.0, series=(MetricPoint("loss", 1, float("-inf")),)),
                     r"result.series\[0\].value", id="inf-point"),
        pytest.param(lambda: RunResult(0, -1.0, 2.0), r"result.startupSeconds: -1 is negative", id="negative"),
        pytest.param(lambda: RunResult(0, 1.0, 2.0, {"x" * 5000: 1.0}), r"5000 characters, at most 1024",
                     id="huge-metric-name"),
    ],
)
def test_hostile_results_are_refused_in_one_line(
    store: RecordStore, make: Callable[[], RunResult], pattern: str
) -> None:
    store.create(Run.submit(T0, id="r1", recipe="mnist", profile="train"))
    with pytest.raises(RecordRejected, match=pattern) as refused:
        store.advance("r1", RunState.FINISHED, at=T0, result=make())
    assert "\n" not in str(refused.value)
    assert store.get("r1").run.state is RunState.SUBMITTED
    assert store.get("r1").result is None


@pytest.mark.parametrize(
    ("fields", "pattern"),
    [
        pytest.param({"recipe": "r" * 2_000_000}, r"recipe: 2000000 characters, at most 1024", id="huge-recipe"),
        pytest.param({"image": "img\x00"}, r"image: contains a NUL", id="nul"),
        pytest.param({"command": ("x" * 70_000,)}, r"command: 70000 characters", id="huge-command"),
    ],
)
def test_hostile_runs_are_refused_in_one_line(store: RecordStore, fields: dict[str, object], pattern: str) -> None:
    base: dict[str, object] = {"id": "r1", "recipe": "mnist", "profile": "train"}
    with pytest.raises(RecordRejected, match=pattern) as refused:
        store.create(Run.submit(T0, **{**base, **fields}))
    assert "\n" not in str(refused.value)
    assert store.runs() == ()


def test_claim_only_with_its_step(store: RecordStore) -> None:
    store.create(Run.submit(T0, id="r1", recipe="mnist", profile="train"))
    with pytest.raises(RecordRejected, match="a claim is recorded with claim-allocated, not admitted"):
        store.advance("r1", RunState.ADMITTED, at=T0, devices=(_device(0),))
    assert store.get("r1").devices == ()


def test_runs_lists_oldest_first_and_filters(store: RecordStore) -> None:
    for i in (2, 0, 1):
        store.create(Run.submit(T0 + timedelta(minutes=i), id=f"r{i}", recipe="mnist", profile="train"))
    store.advance("r1", RunState.CANCELLED, at=T0 + timedelta(hours=1))
    assert [r.id for r in store.runs()] == ["r0", "r1", "r2"]
    assert [r.id for r in store.runs(state=RunState.SUBMITTED)] == ["r0", "r2"]
    assert [r.id for r in store.runs(limit=1)] == ["r0"]


def test_compare_agrees_with_the_pure_function(store: RecordStore) -> None:
    rng = random.Random(7)
    products = ("NVIDIA T4", "NVIDIA L4", "NVIDIA H100 80GB HBM3")
    for i in range(60):
        product = products[i % 3]
        devices = tuple(_device(d, product, ("570.1", "580.2")[i % 2]) for d in range(1 + i % 2))
        _finish(store, f"r{i:03d}", profile=("train", "eval")[i % 2], devices=devices,
                runtime=round(rng.uniform(1, 100), 3), accuracy=round(rng.random(), 4))
    store.create(Run.submit(T0, id="unfinished", recipe="mnist", profile="train"))
    records: list[RunRecord] = [store.get(r.id) for r in store.runs()]
    for by in By:
        for metric in ("runtime", "startup", "accuracy"):
            got = store.compare(by, metric)
            assert got == pytest.approx(compare(records, by, metric)), (by, metric)
    by_product = {g.key: g for g in store.compare("product")}
    assert {k: g.n for k, g in by_product.items()} == dict.fromkeys(products, 20)  # a 2-GPU run counts once
    assert store.compare("profile", "no-such-metric") == ()
    with pytest.raises(InvalidArgument, match='cannot group runs by "vendor"; choose one of product, profile'):
        store.compare("vendor")


def test_concurrent_transitions_never_lose_or_repeat_a_step(store: RecordStore) -> None:
    """20 threads × 50 attempts race over 25 runs; each step is won exactly once, readers never see half a step."""
    runs = [f"r{i:02d}" for i in range(25)]
    for run_id in runs:
        store.create(Run.submit(datetime.now(UTC) - timedelta(hours=1), id=run_id, recipe="mnist", profile="p"))
    wins: list[tuple[str, RunState]] = []
    lock = threading.Lock()
    errors: list[BaseException] = []
    stop = threading.Event()

    def submitter(seed: int) -> None:
        rng = random.Random(seed)
        try:
            for _ in range(50):
                run_id = rng.choice(runs)
                state = store.get(run_id).run.state
                if state is RunState.FINISHED:
                    continue
                to = FORWARD[FORWARD.index(state) + 1] if state in FORWARD else RunState.ADMITTED
                kwargs = {"claim": RunClaim("ns", run_id, run_id), "devices": (_device(0), _device(1))} \
                    if to is RunState.CLAIM_ALLOCATED else {}
                try:
                    store.advance(run_id, to, **kwargs)  # type: ignore[arg-type]
                except RecordRejected as refused:  # another thread took this step first
                    assert refused.refusal.code is RecordCode.ILLEGAL_TRANSITION
                    continue
                with lock:
                    wins.append((run_id, to))
        except BaseException as e:
            errors.append(e)

    def reader() -> None:
        try:
            while not stop.is_set():
                for run_id in runs:
                    record = store.get(run_id)
                    allocated = record.run.at(RunState.CLAIM_ALLOCATED) is not None
                    assert allocated == (record.claim is not None) == (len(record.devices) == 2)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=submitter, args=(i,)) for i in range(20)]
    watcher = threading.Thread(target=reader)
    watcher.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    watcher.join()
    assert not errors, errors[0]
    assert len(wins) == len(set(wins)), "a step was won twice"
    for run_id in runs:
        run = store.get(run_id).run
        history = [t.state for t in run.transitions[1:]]
        assert history == list(FORWARD[: len(history)])
        assert sorted((s for r, s in wins if r == run_id), key=FORWARD.index) == history
        times = [t.at for t in run.transitions]
        assert times == sorted(times)
    assert len(wins) > 25


# -- SQL only: schema history and opening -----------------------------------------------------------------


@pytest.mark.parametrize("start", [None, *revisions()[:-1]], ids=lambda r: f"from-{r or 'empty'}")
@pytest.mark.parametrize("dialect", DIALECTS[1:])
def test_schema_upgrades_from_empty_and_from_every_revision(
    dialect: str, start: str | None, empty_url: Callable[[str], str]
) -> None:
    """Each earlier schema with a run it could hold (a finished one from 0002 on) upgrades to head, the run readable."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from drakit.store.tables import Base

    url = empty_url(dialect)
    engine = make_engine(url)
    assert current_revision(engine) is None
    if start is not None:
        assert upgrade(engine, start) == start
        finished = start >= "0002"
        with engine.begin() as connection:  # columns every revision has: what an old drakit wrote
            connection.execute(text(
                "INSERT INTO runs (id, recipe, profile, queue, namespace, executor, command, image, state, reason_code,"
                " message, submitted_at, ended_at) VALUES ('old', 'mnist', 'train', '', 'default', 'sim', '[]',"
                " 'repo/img:1', :state, '', '', :at, :ended)"),
                {"at": T0, "state": "finished" if finished else "submitted", "ended": T0 if finished else None})
            if finished:
                connection.execute(text("INSERT INTO run_results (run_id, exit_status, startup_s, runtime_s)"
                                        " VALUES ('old', 0, 1.0, 2.0)"))
    assert upgrade(engine) == head_revision()
    assert upgrade(engine) == head_revision()  # idempotent
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"version_table": "drakit_schema_version"})
        diff = compare_metadata(context, Base.metadata)
    assert diff == [], "the migrations do not create exactly the tables in tables.py"
    store = SqlRecordStore(engine)
    if start is not None:
        old = store.get("old")
        assert old.run.transitions[0].at == T0
        # What an old run implicitly was: no pin, no extra environment, its image recorded but not run in.
        assert (old.run.image, old.run.image_used, old.run.pinned_product, dict(old.run.env)) == ("repo/img:1", False, "", {})
        if old.run.state is RunState.SUBMITTED:
            store.advance("old", RunState.CANCELLED, at=T0)
            assert store.get("old").run.state is RunState.CANCELLED
        else:
            assert old.result is not None and (old.result.problems, old.result.problem_count) == ((), 0)
    _finish(store, "new")  # and the upgraded schema takes a whole new record
    assert store.get("new").result is not None
    assert set(inspect(engine).get_table_names()) >= {"runs", "run_devices", "run_results", "drakit_schema_version"}
    engine.dispose()


@pytest.mark.parametrize("dialect", DIALECTS[1:])
def test_a_newer_schema_is_refused(dialect: str, empty_url: Callable[[str], str]) -> None:
    engine = make_engine(empty_url(dialect))
    upgrade(engine)
    with engine.begin() as connection:
        connection.execute(text("UPDATE drakit_schema_version SET version_num = '9999'"))
    with pytest.raises(StoreError, match="schema revision 9999, newer than this drakit knows"):
        upgrade(engine)
    engine.dispose()


@pytest.mark.parametrize(
    ("url", "pattern"),
    [
        pytest.param("nonsense", r"store URL 'nonsense' is not a database URL", id="not-a-url"),
        pytest.param("mysql://h/db", r"only sqlite and postgresql", id="mysql"),
        pytest.param("postgresql://u:secret@127.0.0.1:1/db", r"store postgresql\+psycopg://u:\*\*\*@127.0.0.1:1/db: ",
                     id="unreachable"),
    ],
)
def test_bad_stores_are_one_line_errors(url: str, pattern: str) -> None:
    with pytest.raises(StoreError, match=pattern) as failed:
        open_store(url)
    assert "\n" not in str(failed.value) and "secret" not in str(failed.value)


def test_default_store_is_a_file_under_the_data_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    from drakit.store.engine import resolve_url

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert resolve_url(None, env={}).database == f"{tmp_path}/drakit/records.db"
    assert resolve_url(None, env={"DRAKIT_STORE": "postgresql://h/db"}).drivername == "postgresql+psycopg"
    assert resolve_url("sqlite:///x.db", env={"DRAKIT_STORE": "postgresql://h/db"}).database == "x.db"


def test_sqlite_runs_in_wal_mode(empty_url: Callable[[str], str]) -> None:
    engine = make_engine(empty_url("sqlite"))
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30_000
    engine.dispose()


def test_import_is_all_or_nothing(store: RecordStore) -> None:
    _finish(store, "r0")
    whole = store.get("r0")
    batch = [RunRecord(Run.submit(T0, id=f"b{i}", recipe="mnist", profile="train"), whole.claim, whole.devices,
                       whole.env, whole.result) for i in range(3)]
    assert store.import_records(batch) == 3
    assert store.get("b1").devices == whole.devices and store.get("b1").result == whole.result
    with pytest.raises((RecordRejected, StoreError), match="already recorded"):
        store.import_records([RunRecord(Run.submit(T0, id="new", recipe="m", profile="p")), batch[0]])
    with pytest.raises(NotFound):
        store.get("new")


@pytest.mark.parametrize("dialect", DIALECTS[1:])
def test_concurrent_first_opens_migrate_once(dialect: str, empty_url: Callable[[str], str]) -> None:
    """Eight processes' worth of first opens on an empty database: one migrates, none fails."""
    url = empty_url(dialect)
    failures: list[BaseException] = []

    def opener() -> None:
        try:
            open_store(url).engine.dispose()
        except BaseException as e:
            failures.append(e)

    threads = [threading.Thread(target=opener) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[0]
    engine = make_engine(url)
    assert current_revision(engine) == head_revision()
    engine.dispose()
