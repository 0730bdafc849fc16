"""``drakit match`` on the demo inventory: grouping, class selectors first, runtime errors listed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from drakit.demo import demo_paths

CLUSTER = demo_paths()[0]
MEM48 = "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('48Gi')) >= 0"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "drakit.cli.main", "match", "-f", CLUSTER, *args, "-o", "json"],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "want_matched", "want_errors", "want_rc"),
    [
        pytest.param(["--class", "gpu.nvidia.com", "--selector", MEM48], 8, 0, 0, id="class-then-selector"),
        pytest.param(["--class", "gpu.nvidia.com"], 16, 0, 0, id="class-only"),
        pytest.param(["--class", "gpu.example.com"], 8, 0, 0, id="example-class"),
        # The example driver's devices have no productName: a runtime error, listed per device.
        pytest.param(["--selector", "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L4'"], 8, 8, 1, id="errors"),
        pytest.param(["--selector", "'productName' in device.attributes['gpu.nvidia.com'] && "
                      "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L4'"], 8, 0, 0, id="guarded"),
    ],
)
def test_match(args: list[str], want_matched: int, want_errors: int, want_rc: int) -> None:
    proc = run(*args)
    assert proc.returncode == want_rc, proc.stderr
    report = json.loads(proc.stdout)
    assert report["matched"] == want_matched
    assert len(report["errors"]) == want_errors
    assert report["devices"] == 24


def test_match_groups_by_node_and_product() -> None:
    report = json.loads(run("--class", "gpu.nvidia.com").stdout)
    assert {(g["node"], g["product"], g["count"]) for g in report["groups"]} == {
        ("l4-node-1", "NVIDIA L4", 4),
        ("l4-node-2", "NVIDIA L4", 4),
        ("h100-node-1", "NVIDIA H100 80GB HBM3", 8),
    }


@pytest.mark.parametrize(
    ("args", "want_rc", "want_text"),
    [
        pytest.param(["--selector", "device.driver =="], 1, "CEL compile error", id="compile-error"),
        pytest.param(["--class", "nope"], 2, 'device class "nope"', id="unknown-class"),
        pytest.param([], 2, "-s/--cel", id="nothing-to-match"),
    ],
)
def test_match_bad_input(args: list[str], want_rc: int, want_text: str) -> None:
    proc = run(*args)
    assert proc.returncode == want_rc
    assert want_text in proc.stderr
    assert "Traceback" not in proc.stderr
