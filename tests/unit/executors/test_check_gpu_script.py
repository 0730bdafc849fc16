"""``scripts/check-gpu.sh --replay``: every step of the GPU machine's check on a golden NVML recording.

Only the real NVML read is left to a machine with a GPU; discover, validate, the local run with
``record-env``'s cross-check, the record's own checks and the mismatch alarm all run here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = ROOT / "tests" / "golden" / "nvml"

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="the script is bash")


def _check(tmp_path: Path, recording: str, expect: str | None = None) -> subprocess.CompletedProcess[str]:
    args = ["bash", str(ROOT / "scripts" / "check-gpu.sh"), "--replay", str(GOLDEN / f"{recording}.recording.json")]
    if expect:
        args += ["--expect", str(GOLDEN / f"{expect}.slice.yaml")]
    env = {**os.environ, "PYTHON": sys.executable, "NODE": "node-1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([*args, str(tmp_path / "out")], capture_output=True, text=True, env=env, timeout=600, check=False)


def _summary(done: subprocess.CompletedProcess[str]) -> list[str]:
    return done.stdout.split("== summary", 1)[1].splitlines()[1:]


def test_every_step_passes_on_a_recorded_machine(tmp_path: Path) -> None:
    done = _check(tmp_path, "h100", expect="h100")
    assert done.returncode == 0, done.stdout + done.stderr
    summary = _summary(done)
    assert summary[-1] == "check-gpu: OK" and not any(line.startswith(("FAIL", "SKIP")) for line in summary)
    assert sum(line.startswith("PASS") for line in summary) == 7
    assert "ok   cross-check match" in done.stdout and "MISMATCH" in done.stdout


def test_a_failed_step_fails_the_check_and_the_rest_still_run(tmp_path: Path) -> None:
    done = _check(tmp_path, "l4", expect="t4")  # the L4's recording does not map to the T4's slice
    assert done.returncode == 1
    summary = _summary(done)
    assert summary[-1] == "check-gpu: FAILED"
    assert [line.split()[0] for line in summary[:-1]] == ["PASS", "FAIL", "PASS", "PASS", "PASS", "PASS", "PASS"]


def test_a_mig_only_machine_skips_the_run_and_says_why(tmp_path: Path) -> None:
    done = _check(tmp_path, "a100-mig")
    assert done.returncode == 0, done.stdout + done.stderr
    assert any(line.startswith("SKIP  run: the slice has no whole GPU") for line in _summary(done))
