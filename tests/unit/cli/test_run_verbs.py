"""``drakit run``, ``record-env``, ``log-metric``, ``discover`` and ``runs``: end to end on a SQLite store."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from drakit.cli.testing import run
from drakit.drivers.nvml import GpuRecord, NvmlSnapshot
from drakit.executors.environment import CROSS_CHECK, collect

GOLDEN = Path(__file__).parents[2] / "golden" / "nvml"

# The child reports through both channels the run offers: the CLI and the file directly.
CHILD = f"""
import subprocess, sys
drakit = [{sys.executable!r}, "-m", "drakit.cli.main"]
subprocess.run(drakit + ["log-metric", "--ready", "loss", "0.5", "--step", "1"], check=True)
subprocess.run(drakit + ["log-metric", "--correctness", "max_abs_error", "1e-9"], check=True)
subprocess.run(drakit + ["record-env"], check=True)
"""


def _has_nvml() -> bool:
    from drakit.executors.nvmlread import NvmlUnavailable, load_nvml

    try:
        load_nvml()
    except NvmlUnavailable:
        return False
    return True


CATALOG = """
apiVersion: drakit.dev/v1alpha1
kind: QueueCatalog
metadata: {name: lab}
spec:
  flavor: default
  resources:
    - {name: gpu, deviceClasses: [evaluation.gpu.nvidia.com, gpu.nvidia.com]}
  queues:
    - name: eval
      namespaces: [default]
      quotas: [{resource: gpu, nominal: 2}]
      pods: 4
      concurrency: 2
"""


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path / 'records.db'}"
    monkeypatch.setenv("DRAKIT_STORE", url)
    return url


def test_run_records_and_runs_show_it(store: str, tmp_path: Path) -> None:
    catalog = tmp_path / "queues.yaml"
    catalog.write_text(CATALOG)
    done = run("run", "--profile", "evaluation", "--demo", "--queue", "eval", "--queues", str(catalog), "--run-id", "r-1",
               "-o", "json", "--", sys.executable, "-c", CHILD)
    assert done.exit_code == 0, done.stderr
    shown = yaml.safe_load(run("runs", "show", "r-1").stdout)
    assert shown["state"] == "finished" and shown["queue"] == "eval"
    assert shown["devices"][0]["product"] == "NVIDIA L4"  # evaluation prefers L4 (firstAvailable)
    assert shown["result"]["correctness"] == {"max_abs_error": 1e-9}
    assert shown["result"]["series"] == [{"name": "loss", "step": 1, "value": 0.5}]
    env = shown["environment"]
    assert env["frameworks"][CROSS_CHECK] == "unchecked"  # no NVML on a declared inventory
    assert env["frameworks"]["env.NVIDIA_VISIBLE_DEVICES"] == "void"
    assert env["frameworks"]["env.CUDA_VISIBLE_DEVICES"] == shown["devices"][0]["uuid"]
    listed = json.loads(run("runs", "ls", "-o", "json").stdout)["runs"]
    assert [r["id"] for r in listed] == ["r-1"]
    compared = json.loads(run("runs", "compare", "--by", "product", "-o", "json").stdout)
    assert [(g["key"], g["n"]) for g in compared["groups"]] == [("NVIDIA L4", 1)]
    for name in ("c.png", "c.html"):
        assert run("runs", "compare", "--metric", "max_abs_error", "--chart", str(tmp_path / name)).exit_code == 0
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
    page = (tmp_path / "c.html").read_text()
    assert "<svg" in page and "NVIDIA L4" in page and "<script" not in page


def test_exit_status_of_the_command_is_drakits(store: str) -> None:
    assert run("run", "-p", "evaluation", "--demo", "--", sys.executable, "-c", "raise SystemExit(5)").exit_code == 5
    killed = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"
    assert run("run", "-p", "evaluation", "--demo", "--run-id", "k", "--", sys.executable, "-c", killed).exit_code == 143
    assert yaml.safe_load(run("runs", "show", "k").stdout)["result"]["exitStatus"] == -15


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        pytest.param(("run", "-p", "evaluation", "--executor", "slurm", "--", "true"), 2, "choose one of", id="bad-executor"),
        pytest.param(("run", "-p", "evaluation", "--executor", "kubernetes", "--", "true"), 2, "needs an image", id="k8s-no-image"),
        pytest.param(("run", "-p", "nope", "--demo", "--", "true"), 1, "no such profile", id="unknown-profile"),
        pytest.param(("run", "-p", "evaluation", "--demo", "--product", "B200", "--", "true"), 3, "NotEnoughDevices",
                     id="no-such-product"),
        pytest.param(("run", "-p", "evaluation", "--demo", "--queue", "q", "--", "true"), 2, "--queues CATALOG",
                     id="queue-without-catalog"),
        pytest.param(("run", "-p", "evaluation", "--", "true"), 1, "pass -f INVENTORY or --demo", id="no-gpu-no-inventory",
                     marks=pytest.mark.skipif(_has_nvml(), reason="this machine has NVML: run uses its GPUs")),
        pytest.param(("log-metric", "loss", "1"), 2, "DRAKIT_METRICS is not set", id="log-metric-outside-a-run"),
        pytest.param(("runs", "show", "missing"), 2, "not found", id="show-missing"),
        pytest.param(("runs", "compare", "--by", "gpu"), 2, "cannot group runs by", id="compare-bad-by"),
        pytest.param(("runs", "compare", "--chart", "x.pdf"), 2, "must end in .png or .html", id="chart-suffix"),
        pytest.param(("runs", "ls", "--state", "done"), 2, "choose one of", id="ls-bad-state"),
        pytest.param(("discover", "--replay", "/nonexistent.json"), 1, "nonexistent.json", id="replay-missing"),
        pytest.param(("record-env", "--replay", "/nonexistent.json"), 1, "nonexistent.json", id="record-env-replay-missing"),
        pytest.param(("record-env", "--replay", str(GOLDEN / "h100.slice.yaml")), 2, "not an NVML recording",
                     id="record-env-replay-not-a-recording"),
    ],
)
def test_hostile_inputs_get_one_line_and_an_exit_code(store: str, args: tuple[str, ...], code: int, message: str) -> None:
    done = run(*args)
    assert done.exit_code == code, (done.stdout, done.stderr)
    assert message in done.stderr + done.stdout
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) <= 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(("loss", "nan"), "'nan' is not a finite number", id="nan"),
        pytest.param(("loss", "1e999"), "is not a finite number", id="overflow"),
        pytest.param(("loss", "fast"), "'fast' is not a finite number", id="not-a-number"),
        pytest.param(("loss", "1", "--step", "-1"), "'-1' is not an integer 0 ≤ step < 2^63", id="negative-step"),
        pytest.param(("loss", "1", "--step", "1.5"), "'1.5' is not an integer", id="float-step"),
        pytest.param(("loss", "1", "--step", str(2**63)), "is not an integer 0 ≤ step", id="huge-step"),
        pytest.param(("x" * 2000, "1"), "metric name of 2000 characters", id="long-name"),
        pytest.param(("", "1"), "metric name of 0 characters", id="empty-name"),
    ],
)
def test_a_refused_log_metric_call_exits_2_and_is_kept_in_the_channel(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], message: str) -> None:
    from drakit.executors import metrics

    path = tmp_path / "m.jsonl"
    monkeypatch.setenv("DRAKIT_METRICS", str(path))
    done = run("log-metric", *args)
    assert done.exit_code == 2 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    got = metrics.read(str(path))
    assert got.series == () and got.problem_count == 1 and message in got.problems[0].reason


# Good and bad reports mixed: every good one is recorded, every bad one kept with its line.
MIXED = f"""
import os, subprocess, sys
drakit = [{sys.executable!r}, "-m", "drakit.cli.main"]
subprocess.run(drakit + ["log-metric", "loss", "0.5", "--step", "1"], check=True)
assert subprocess.run(drakit + ["log-metric", "loss", "nan", "--step", "2"]).returncode == 2
with open(os.environ["DRAKIT_METRICS"], "a") as f:
    f.write("{{not json\\n")
subprocess.run(drakit + ["log-metric", "--correctness", "acc", "0.99"], check=True)
"""


def test_bad_metric_lines_are_stored_and_shown(store: str) -> None:
    done = run("run", "-p", "evaluation", "--demo", "--run-id", "mixed", "--", sys.executable, "-c", MIXED)
    assert done.exit_code == 0, done.stderr
    result = yaml.safe_load(run("runs", "show", "mixed").stdout)["result"]
    assert result["series"] == [{"name": "loss", "step": 1, "value": 0.5}] and result["correctness"] == {"acc": 0.99}
    assert result["problemCount"] == 2
    assert [(p["line"], p["raw"]) for p in result["problems"]][1] == (3, "{not json")
    assert result["problems"][0]["line"] == 2 and "'nan' is not a finite number" in result["problems"][0]["reason"]


def test_the_request_is_recorded_whole_and_an_unused_image_says_so(store: str) -> None:
    done = run("run", "-p", "evaluation", "--demo", "--run-id", "pinned", "--product", "NVIDIA H100 80GB HBM3",
               "--image", "nvcr.io/nvidia/pytorch:25.01-py3", "--", sys.executable, "-c", "pass")
    assert done.exit_code == 0, done.stderr
    assert "--image nvcr.io/nvidia/pytorch:25.01-py3: the local executor runs the command on this host" in done.stderr
    shown = yaml.safe_load(run("runs", "show", "pinned").stdout)
    assert shown["image"] == "nvcr.io/nvidia/pytorch:25.01-py3" and shown["imageUsed"] is False
    assert shown["pinnedProduct"] == "NVIDIA H100 80GB HBM3"
    assert {d["product"] for d in shown["devices"]} == {"NVIDIA H100 80GB HBM3"}  # not the L4 it prefers
    assert shown["env"] == {}  # the store's URL reaches the command, not the record


def test_discover_replays_a_recording() -> None:
    done = run("discover", "--replay", str(GOLDEN / "h100.recording.json"), "--node", "node-1")
    assert done.exit_code == 0
    golden = yaml.safe_load((GOLDEN / "h100.slice.yaml").read_text())
    assert yaml.safe_load(done.stdout) == golden


def _snapshot(*uuids: str) -> NvmlSnapshot:
    gpus = tuple(GpuRecord(index=i, minor=i, uuid=u, name="NVIDIA H100 80GB HBM3", brand=14, architecture=9,
                           compute_capability=(9, 0), bus_id=f"00000000:{i + 1:02x}:00.0", memory_total=2**36)
                 for i, u in enumerate(uuids))
    return NvmlSnapshot("580.126.20", 13000, gpus)


@pytest.mark.parametrize(
    ("env", "status"),
    [
        pytest.param({"DRAKIT_CLAIM_DEVICES": "GPU-b", "CUDA_VISIBLE_DEVICES": "GPU-b"}, "match", id="uuid-listed"),
        pytest.param({"DRAKIT_CLAIM_DEVICES": "GPU-b", "CUDA_VISIBLE_DEVICES": "1"}, "match", id="index-listed"),
        pytest.param({"DRAKIT_CLAIM_DEVICES": "GPU-a", "CUDA_VISIBLE_DEVICES": "GPU-b"}, "mismatch", id="other-gpu"),
        pytest.param({"DRAKIT_CLAIM_DEVICES": "GPU-a"}, "mismatch", id="all-visible-in-a-container"),
        pytest.param({"CUDA_VISIBLE_DEVICES": "GPU-a"}, "unchecked", id="no-claim"),
    ],
)
def test_cross_check_by_uuid(env: dict[str, str], status: str) -> None:
    recorded, check = collect(env, _snapshot("GPU-a", "GPU-b"))
    assert check.status == status
    assert recorded.frameworks[CROSS_CHECK] == status
    if status == "mismatch":
        assert check.message.startswith("MISMATCH")
    assert [g["uuid"] for g in recorded.nvml] == ["GPU-a", "GPU-b"]


def test_record_env_without_nvml_is_unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRAKIT_CLAIM_DEVICES", "GPU-x")
    done = run("record-env", "-o", "json")
    assert done.exit_code == 0
    doc: dict[str, Any] = json.loads(done.stdout)
    assert doc["crossCheck"]["status"] == "unchecked" and doc["python"].startswith("CPython")
