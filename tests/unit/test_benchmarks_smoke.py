"""The benchmark scripts run and print their comparison table (``--quick``; no timing is checked).

With ``dra-oracle`` built the Go columns are filled; without it they read ``n/a`` and the
scripts still run, so this test does not depend on Go.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
HEADER = "| scenario"


@pytest.mark.parametrize(
    ("script", "scenarios"),
    [
        pytest.param("bench_allocator.py", ["(a) ", "(b) ", "(c) ", "(d) "], id="allocator"),
        pytest.param("bench_queues.py", ["(a) drain the backlog"], id="queues"),
        pytest.param(
            "bench_selectors.py",
            ["(i) ", "(ii) ", "drakit cold", "allocator path, cached"],
            id="selectors",
        ),
    ],
)
def test_quick_run_prints_table(script: str, scenarios: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert any(line.startswith("### ") for line in lines), proc.stdout
    header = [line for line in lines if line.startswith(HEADER)]
    assert len(header) == 1 and "ratio drakit/Go" in header[0], proc.stdout
    rows = [line for line in lines if line.startswith("| (")]
    for scenario in scenarios:
        assert any(scenario in row for row in rows), f"no row for {scenario!r}:\n{proc.stdout}"
    # every row has the table's seven columns
    assert all(row.count("|") == header[0].count("|") for row in rows), proc.stdout


def test_load_benchmark_quick_run_prints_its_table() -> None:
    """bench_load compares with bare parsing (no Go side): its table has its own ratio column."""
    proc = subprocess.run([sys.executable, str(BENCHMARKS / "bench_load.py"), "--quick"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = [line for line in lines if line.startswith(HEADER)]
    assert len(header) == 1 and "ratio drakit/parse" in header[0] and "peak RSS" in header[0], proc.stdout
    rows = [line for line in lines if line.startswith("| (")]
    for scenario in ("(json) drakit explain", "(yaml) drakit explain", "(json) load + validate + explain"):
        assert any(scenario in row for row in rows), proc.stdout
    assert all(row.count("|") == header[0].count("|") for row in rows), proc.stdout


def test_webhook_benchmark_quick_run_prints_its_table() -> None:
    """bench_webhook compares /mutate with an echo route on the same server (no Go side)."""
    pytest.importorskip("uvicorn")
    pytest.importorskip("trustme")
    proc = subprocess.run([sys.executable, str(BENCHMARKS / "bench_webhook.py"), "--quick"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = [line for line in lines if line.startswith(HEADER)]
    assert len(header) == 1 and "ratio p99 mutate/echo" in header[0], proc.stdout
    rows = [line for line in lines if line.startswith("| (")]
    # closed loop and one open-loop rate, each route side by side
    assert [r.split("|")[1].strip().split()[0] for r in rows] == ["(echo)", "(mutate)"] * 2, proc.stdout
    assert all(row.count("|") == header[0].count("|") for row in rows), proc.stdout
