"""Smoke test of ``benchmarks/bench_scheduler.py --quick``: both sides run to completion on the
same shape and the script prints both throughputs and their ratio.  No time is asserted (the
figures go to the report, not to a threshold): only that every pod was scheduled on both sides
and the numbers are there."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.controlplane import bin_dir, missing_binaries
from tests.integration.gating import unavailable

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
_LINE = re.compile(
    r"measure phase: drakit (?P<sim>[\d.]+) pods/s, kube-scheduler (?P<real>[\d.]+) pods/s .*ratio drakit/real (?P<ratio>[\d.]+)x"
)


def test_bench_scheduler_quick() -> None:
    missing = missing_binaries(bin_dir())
    if missing:
        unavailable(f"control-plane binaries not built ({', '.join(missing)}); run `make cluster`")
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_scheduler.py"), "--quick", "--timeout", "300"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert re.search(r"drakit measure\s+250 pods", out), out
    assert re.search(r"real measure\s+250 pods", out), out
    m = _LINE.search(out)
    assert m, out
    assert float(m["sim"]) > 0 and float(m["real"]) > 0 and float(m["ratio"]) > 0
