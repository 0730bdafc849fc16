"""The MLflow mirror against a real MLflow tracking store (SQLite): tags present, limits respected.

MLflow's own store validates every ``log_batch`` (key charset, lengths, batch sizes), so a mirror
that oversteps a limit fails here the way it would against a tracking server.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

mlflow = pytest.importorskip("mlflow")

from mlflow.tracking import MlflowClient  # noqa: E402

from drakit.executors.mlflow import LIMITS, batches, metrics_of, mirror, tags_of  # noqa: E402
from drakit.records.run import MetricPoint, Run, RunClaim, RunDevice, RunEnv, RunRecord, RunResult, RunState  # noqa: E402

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _record(devices: int = 2, points: int = 3, **result: Any) -> RunRecord:
    run = Run.submit(T0, id="run-abc", recipe="training", profile="training-48g", queue="training", namespace="ml",
                     executor="local", command=("python", "train.py"))
    for i, state in enumerate((RunState.ADMITTED, RunState.CLAIM_ALLOCATED, RunState.CONTAINER_STARTED,
                               RunState.FINISHED), 1):
        run = run.advance(state, T0 + timedelta(seconds=i))
    devs = tuple(RunDevice(request="gpu", driver="gpu.nvidia.com", pool="node-a", device=f"gpu-{i}",
                           product="NVIDIA H100 80GB HBM3", uuid=f"GPU-{i:04d}", driver_version="580.126.20",
                           memory_bytes=85520809984) for i in range(devices))
    res = RunResult(exit_status=0, startup_s=0.5, runtime_s=12.0, correctness=result.get("correctness", {"accuracy": 0.97}),
                    series=tuple(MetricPoint(result.get("series_name", "loss"), s, 1.0 / (s + 1)) for s in range(points)))
    return RunRecord(run, RunClaim("ml", "run-abc-claim", "3c83aa00-1111-4000-8000-000000000000", "training-48g",
                                   node="node-a"), devs, RunEnv(python="CPython 3.12", frameworks={"numpy": "2.4.6"}), res)


@pytest.fixture(scope="module")
def tracking(tmp_path_factory: pytest.TempPathFactory) -> str:
    return f"sqlite:///{Path(tmp_path_factory.mktemp('mlflow')) / 'mlflow.db'}"


def test_run_is_mirrored_with_drakit_tags(tracking: str) -> None:
    run_id = mirror(_record(), tracking)
    got = MlflowClient(tracking_uri=tracking).get_run(run_id)
    tags = got.data.tags
    assert tags["drakit.claim.uid"] == "3c83aa00-1111-4000-8000-000000000000"
    assert tags["drakit.device.0.uuid"] == "GPU-0000" and tags["drakit.device.1.uuid"] == "GPU-0001"
    assert tags["drakit.device.0.product"] == "NVIDIA H100 80GB HBM3" == tags["drakit.device.product"]
    assert tags["drakit.device.0.pool"] == "node-a" and tags["drakit.device.0.driverVersion"] == "580.126.20"
    assert (tags["drakit.queue"], tags["drakit.profile"], tags["mlflow.runName"]) == ("training", "training-48g", "run-abc")
    assert got.data.metrics["drakit.runtime_s"] == 12.0 and got.data.metrics["correctness.accuracy"] == 0.97
    assert got.info.status == "FINISHED" and got.info.start_time == int(T0.timestamp() * 1000)
    history = MlflowClient(tracking_uri=tracking).get_metric_history(run_id, "loss")
    assert [(m.step, m.value) for m in history] == [(0, 1.0), (1, 0.5), (2, 1 / 3)]


def test_limits_hold_for_a_large_hostile_record(tracking: str) -> None:
    """150 devices (over 1,800 tags), 2,500 points, a 9,000-character value and names MLflow refuses."""
    record = _record(devices=150, points=2500, series_name="../loss?/" + "x" * 300,
                     correctness={"max error (abs)": 1e-9, "a\x00b": 1.0})
    record = RunRecord(record.run, record.claim, record.devices,
                       RunEnv(python="CPython 3.12", frameworks={"long": "v" * 9000}), record.result)
    tags, cut = tags_of(record)
    assert cut == ["drakit.env.long"] and len(tags["drakit.env.long"]) == LIMITS.tag_value
    assert tags["drakit.truncated"] == "drakit.env.long"
    parts = list(batches(tags, metrics_of(record)))
    assert len(parts) > 1
    for b in parts:
        assert len(b.tags) <= LIMITS.tags_per_batch and len(b.metrics) <= LIMITS.metrics_per_batch
        assert len(b.tags) + len(b.metrics) <= LIMITS.entities_per_batch
    run_id = mirror(record, tracking)  # MLflow's store validates each batch
    got = MlflowClient(tracking_uri=tracking).get_run(run_id)
    assert got.data.tags["drakit.device.149.uuid"] == "GPU-0149"
    assert len([k for k in got.data.tags if k.startswith("drakit.device.")]) == len([k for k in tags if k.startswith("drakit.device.")])
    names = set(got.data.metrics)
    assert "correctness.max error _abs_" in names and "correctness.a_b" in names
    series = [k for k in names if k.endswith("x" * 10) or "loss" in k]
    assert len(series) == 1 and len(series[0]) <= LIMITS.key and not series[0].startswith((".", "/"))
    assert len(MlflowClient(tracking_uri=tracking).get_metric_history(run_id, series[0])) == 2500


def test_drakit_run_mirrors_the_record(tracking: str, tmp_path: Path) -> None:
    """``run --mlflow`` writes the finished record to MLflow (the child's MLFLOW_RUN_CONTEXT: test_local)."""
    import json
    import sys

    from drakit.cli.testing import run

    child = "import json, os; assert 'drakit.claim.uid' in json.loads(os.environ['MLFLOW_RUN_CONTEXT'])"
    done = run("run", "-p", "evaluation", "--demo", "--run-id", "ml-1", "--store", f"sqlite:///{tmp_path / 'r.db'}",
               "--mlflow", tracking, "-o", "json", "--", sys.executable, "-c", child)
    assert done.exit_code == 0, done.stderr
    mirrored = done.stderr.strip().rsplit(" ", 1)[-1]
    tags = MlflowClient(tracking_uri=tracking).get_run(mirrored).data.tags
    record = json.loads(done.stdout)
    assert tags["drakit.run.id"] == "ml-1" and tags["drakit.claim.uid"] == record["claim"]["uid"]
    assert tags["drakit.device.0.uuid"] == record["devices"][0]["uuid"]

