"""``drakit trial --execute``: the shipped workload on every eligible product, measured and reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drakit.cli.testing import run
from drakit.demo.workload import main as workload


def test_execute_runs_every_eligible_product_and_writes_both_reports(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'records.db'}"
    done = run("trial", "--demo", "--execute", "--report", str(tmp_path / "report"), "--store", store, "-o", "json")
    assert done.exit_code == 0, done.stderr
    executed = json.loads(done.stdout)["executed"]
    pairs = {(p["profile"], p["product"]) for p in executed["products"]}
    # The demo: training-48g may use only the H100s; evaluation both the L4s and the H100s.
    assert pairs == {("training-48g", "NVIDIA H100 80GB HBM3"), ("evaluation", "NVIDIA L4"),
                     ("evaluation", "NVIDIA H100 80GB HBM3")}
    for p in executed["products"]:
        assert p["placed"] == p["correct"] == 1
        assert p["startupMedianSeconds"] > 0 and p["runtimeMedianSeconds"] > 0 and p["worstError"] < 1e-6
    markdown = (tmp_path / "report" / "trial.md").read_text()
    assert "| training-48g | NVIDIA H100 80GB HBM3 | 1/1 |" in markdown
    assert "training-48g excludes every device below 48Gi" in markdown and "NVIDIA L4 — memory" in markdown
    page = (tmp_path / "report" / "trial.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page and "PASSED" in page
    # The runs are in the store, comparable by product like any other.
    compared = json.loads(run("runs", "compare", "--by", "product", "--store", store, "-o", "json").stdout)
    assert {g["key"]: g["n"] for g in compared["groups"]} == {"NVIDIA H100 80GB HBM3": 2, "NVIDIA L4": 1}


def test_workload_fails_its_check_when_it_does_not_converge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRAKIT_METRICS", str(tmp_path / "m.jsonl"))
    monkeypatch.setattr("drakit.demo.workload.TOLERANCE", 0.0)
    assert workload(["w", "train"]) == 1
    lines = [json.loads(line) for line in (tmp_path / "m.jsonl").read_text().splitlines()]
    assert {"correctness": "passed", "value": 0.0} in lines and lines[0]["ready"] is True
    assert workload(["w", "bogus"]) == 2
