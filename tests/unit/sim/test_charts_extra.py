"""matplotlib is the optional ``charts`` extra: without it, asking for a chart is one clear line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from drakit.cli.testing import run
from drakit.sim.report import CHARTS_EXTRA

EXAMPLE = Path(__file__).resolve().parents[3] / "drakit/sim/examples/mixed.yaml"


def test_chart_without_matplotlib_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    result = run("simulate", str(EXAMPLE), "-q", "--chart", str(tmp_path / "c.png"))
    assert (result.exit_code, result.stderr) == (1, f"error: {CHARTS_EXTRA}\n")
    assert not (tmp_path / "c.png").exists()


def test_the_core_does_not_import_matplotlib() -> None:
    """Only drawing a chart loads it (a fresh interpreter imports the whole simulator without it)."""
    import subprocess

    code = "import sys, drakit, drakit.sim, drakit.sim.report, drakit.cli.main; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
