"""``benchmarks/bench_live.py --quick`` runs against its own control plane and prints its table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.controlplane import bin_dir, missing_binaries
from tests.integration.gating import unavailable

pytestmark = pytest.mark.cluster
SCRIPT = Path(__file__).resolve().parents[3] / "benchmarks" / "bench_live.py"


def test_quick_run_prints_both_rows() -> None:
    if missing_binaries(bin_dir()) or not (bin_dir() / "kubectl").exists():
        unavailable(f"control-plane binaries or kubectl not built in {bin_dir()}; run `make cluster`")
    proc = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--runs", "1"], capture_output=True, text=True,
                          timeout=900, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| scenario | drakit | reference | ratio |")
    assert any(r.startswith("| snapshot -A vs kubectl get -A -o json |") for r in rows)
    assert any(r.startswith("| explain pod/pending: live vs offline on the snapshot |") for r in rows)
    assert "peak RSS target for drakit snapshot" in proc.stdout
