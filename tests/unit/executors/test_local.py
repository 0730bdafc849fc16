"""The local and sim executors on the declared demo inventory, through the memory twins of store and ledger."""

from __future__ import annotations

import sys
import threading
from typing import Any

import pytest

from drakit.clock import SeededIds
from drakit.demo import cluster_objects
from drakit.executors.base import RunRequest, execute, resume_open
from drakit.executors.local import LocalLauncher, SimLauncher
from drakit.executors.placement import DeviceBook
from drakit.features import Features
from drakit.inventory.snapshot import ClusterSnapshot
from drakit.outcomes import ExplainCode
from drakit.profiles.trial import trial_profiles
from drakit.queues import ClusterQueue, MemoryLedger, ResourceQuota, Setup
from drakit.queues.admission import DeviceClassMapping
from drakit.records.run import Run, RunState
from drakit.store.memory import MemoryRecordStore

FEATURES = Features.for_version("1.37")
PROFILES = trial_profiles()

# A workload that reports what it was given: the device UUIDs, a ready mark, a series and a check.
WORKLOAD = """
import json, os, time
path = os.environ["DRAKIT_METRICS"]
def put(item):
    with open(path, "a") as f:
        f.write(json.dumps(item) + "\\n")
put({"ready": True, "at": time.time()})
for step in range(3):
    put({"metric": "loss", "step": step, "value": 1.0 / (step + 1)})
uuids = os.environ["CUDA_VISIBLE_DEVICES"].split(",")
put({"correctness": "devices_seen", "value": len(uuids)})
assert os.environ["NVIDIA_VISIBLE_DEVICES"] == "void"
assert os.environ["DRAKIT_CLAIM_DEVICES"] == os.environ["CUDA_VISIBLE_DEVICES"]
assert "drakit.claim.uid" in json.loads(os.environ["MLFLOW_RUN_CONTEXT"])
"""


def _ledger(limits: dict[str, int] | None = None, max_running: int | None = 8) -> MemoryLedger:
    """One queue ``q`` charging GPUs of the profiles' classes to ``gpu``; ``limits``: its quotas."""
    quotas = {("default", r): ResourceQuota(n) for r, n in (limits or {"gpu": 64, "pods": 64}).items()}
    group = (((*sorted(quotas and {r for _, r in quotas}),), ("default",)),)
    classes = ("gpu.nvidia.com", "training-48g.gpu.nvidia.com", "evaluation.gpu.nvidia.com")
    return MemoryLedger(Setup((ClusterQueue("q", group, quotas, max_running=max_running),), {},
                              mappings=(DeviceClassMapping("gpu", classes),)))


def _book() -> DeviceBook:
    return DeviceBook(ClusterSnapshot.from_objects(cluster_objects()), FEATURES, SeededIds(7))


def _request(run_id: str, profile: str = "training-48g", **kw: Any) -> RunRequest:
    return RunRequest(run_id=run_id, profile=PROFILES.get(profile), command=(sys.executable, "-c", WORKLOAD), **kw)


def test_local_run_records_devices_environment_and_results(tmp_path: Any) -> None:
    store = MemoryRecordStore()
    ledger = _ledger()
    record = execute(store, _book(), LocalLauncher(str(tmp_path)), _request("r1", queue="q"),
                     executor="local", ledger=ledger)
    assert ledger.held() == ()  # released when the run ended
    assert record.run.state is RunState.FINISHED
    assert [t.state for t in record.run.transitions] == [RunState.SUBMITTED, RunState.ADMITTED,
                                                          RunState.CLAIM_ALLOCATED, RunState.CONTAINER_STARTED,
                                                          RunState.FINISHED]
    assert record.result is not None and record.result.exit_status == 0
    # training-48g: two GPUs of at least 48Gi on one PCIe root: two H100s of the demo's h100 node.
    assert record.claim is not None and record.claim.node == "h100-node-1"
    assert [d.product for d in record.devices] == ["NVIDIA H100 80GB HBM3"] * 2
    assert len({d.pcie_root for d in record.devices}) == 1 and all(d.joined for d in record.devices)
    assert record.result.correctness == {"devices_seen": 2.0}
    assert [(p.step, p.value) for p in record.result.series] == [(0, 1.0), (1, 0.5), (2, 1 / 3)]
    assert record.result.startup_s is not None and record.result.runtime_s is not None


def test_failing_command_still_finishes_with_its_exit_status(tmp_path: Any) -> None:
    store = MemoryRecordStore()
    req = RunRequest(run_id="r2", profile=PROFILES.get("evaluation"), command=(sys.executable, "-c", "raise SystemExit(3)"))
    record = execute(store, _book(), LocalLauncher(str(tmp_path)), req, executor="local")
    assert record.run.state is RunState.FINISHED and record.result is not None and record.result.exit_status == 3


def test_missing_program_is_exit_127(tmp_path: Any) -> None:
    req = RunRequest(run_id="r3", profile=PROFILES.get("evaluation"), command=("/nonexistent/program",))
    record = execute(MemoryRecordStore(), _book(), LocalLauncher(str(tmp_path)), req, executor="local")
    assert record.result is not None and record.result.exit_status == 127


def test_product_that_is_not_there_fails_with_a_reason() -> None:
    req = _request("r4", product="NVIDIA B200")
    record = execute(MemoryRecordStore(), _book(), SimLauncher(), req, executor="sim")
    assert record.run.state is RunState.FAILED
    assert record.run.reason_code == ExplainCode.NOT_ENOUGH_DEVICES.value
    assert "h100-node-1" not in record.run.message and "every node" in record.run.message


@pytest.mark.parametrize(
    ("queue", "limits", "code"),
    [pytest.param("nope", None, ExplainCode.ALLOCATION_ERROR, id="unknown-queue"),
     pytest.param("q", {"gpu": 1, "pods": 8}, ExplainCode.NOT_ENOUGH_DEVICES, id="exceeds-quota")],
)
def test_queue_refusals_are_reasons(queue: str, limits: dict[str, int] | None, code: ExplainCode) -> None:
    # training-48g asks for two GPUs; a queue holding one can never admit it.
    record = execute(MemoryRecordStore(), _book(), SimLauncher(), _request("r5", queue=queue),
                     executor="sim", ledger=_ledger(limits))
    assert record.run.state is RunState.FAILED and record.run.reason_code == code.value
    assert f"queue {queue}" in record.run.message


def test_concurrent_runs_never_share_a_device_and_the_queue_limit_holds() -> None:
    store, book, ledger = MemoryRecordStore(), _book(), _ledger(max_running=3)
    peak, live, lock = [0], [0], threading.Lock()

    class Counting(SimLauncher):
        def launch(self, request: Any, placement: Any, started: Any) -> Any:
            with lock:
                live[0] += 1
                peak[0] = max(peak[0], live[0])
            try:
                return super().launch(request, placement, started)
            finally:
                with lock:
                    live[0] -= 1

    threads = [threading.Thread(target=execute, args=(store, book, Counting(0.0), _request(f"c{i}", "evaluation", queue="q")),
                                kwargs={"executor": "sim", "ledger": ledger}) for i in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    runs = store.runs()
    assert len(runs) == 24 and all(r.state is RunState.FINISHED for r in runs)
    assert 1 <= peak[0] <= 3


def test_resume_carries_on_open_runs_and_fails_started_ones(tmp_path: Any) -> None:
    store, book = MemoryRecordStore(), _book()
    from datetime import UTC, datetime

    now = datetime.now(UTC)
    for run_id in ("a", "b", "c"):
        store.create(Run.submit(now, id=run_id, recipe="evaluation", profile="evaluation", executor="local",
                                command=(sys.executable, "-c", "pass")))
    store.advance("b", RunState.ADMITTED)
    # "c" had its command running when the recorder died.
    first = execute(MemoryRecordStore(), book, SimLauncher(), _request("x", "evaluation"), executor="sim")
    assert first.claim is not None
    store.advance("c", RunState.ADMITTED)
    store.advance("c", RunState.CLAIM_ALLOCATED, claim=first.claim, devices=first.devices)
    store.advance("c", RunState.CONTAINER_STARTED)
    done = resume_open(store, book, LocalLauncher(str(tmp_path)), PROFILES.get, executor="local")
    states = {r.run.id: r.run.state for r in done}
    assert states == {"a": RunState.FINISHED, "b": RunState.FINISHED, "c": RunState.FAILED}
    assert all(r.run.state in (RunState.FINISHED, RunState.FAILED) for r in map(store.get, "abc"))


# The resumed command reports what it was given: its devices' UUIDs and its extra environment.
REPORT = """
import json, os
with open(os.environ["DRAKIT_METRICS"], "a") as f:
    f.write(json.dumps({"correctness": "devices", "value": len(os.environ["CUDA_VISIBLE_DEVICES"].split(","))}) + "\\n")
    f.write(json.dumps({"correctness": "seed", "value": float(os.environ["SEED"])}) + "\\n")
"""


@pytest.mark.parametrize("crashed_at", [RunState.SUBMITTED, RunState.ADMITTED], ids=["submitted", "admitted"])
def test_a_resumed_run_keeps_everything_its_request_carried(tmp_path: Any, crashed_at: RunState) -> None:
    """--product and the extra environment survive the recorder: evaluation prefers an L4, the pin says H100."""
    store, book = MemoryRecordStore(), _book()

    class Dies(Exception):
        pass

    class DyingStore(MemoryRecordStore):  # the recorder dies right after ``crashed_at`` was recorded
        def advance(self, run_id: str, to: RunState, **kw: Any) -> Any:
            if crashed_at is RunState.SUBMITTED or to is not RunState.ADMITTED:
                raise Dies
            store.advance(run_id, to, **kw)
            raise Dies

        def create(self, run: Run) -> None:
            store.create(run)

    request = RunRequest(run_id="pinned", profile=PROFILES.get("evaluation"), command=(sys.executable, "-c", REPORT),
                         product="NVIDIA H100 80GB HBM3", env={"SEED": "7"}, image="registry.example/eval:1")
    with pytest.raises(Dies):
        execute(DyingStore(), book, LocalLauncher(str(tmp_path)), request, executor="local")
    assert store.get("pinned").run.state is crashed_at
    (done,) = resume_open(store, book, LocalLauncher(str(tmp_path)), PROFILES.get, executor="local")
    assert done.run.state is RunState.FINISHED and done.result is not None
    assert {d.product for d in done.devices} == {"NVIDIA H100 80GB HBM3"}
    assert done.result.correctness == {"devices": 1.0, "seed": 7.0}
    assert done.run.pinned_product == "NVIDIA H100 80GB HBM3" and dict(done.run.env) == {"SEED": "7"}
    assert done.run.image == "registry.example/eval:1" and done.run.image_used is False


def test_launch_problems_are_kept_in_the_result(tmp_path: Any) -> None:
    req = RunRequest(run_id="r3", profile=PROFILES.get("evaluation"), command=("/nonexistent/program",))
    record = execute(MemoryRecordStore(), _book(), LocalLauncher(str(tmp_path)), req, executor="local")
    assert record.result is not None and record.result.problem_count == 1
    assert record.result.problems[0].line == 0 and "cannot start '/nonexistent/program'" in record.result.problems[0].reason
