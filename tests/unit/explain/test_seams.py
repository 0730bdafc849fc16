"""The simulator seam (expected release times) and the CLI verb."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from drakit.cli.main import app
from drakit.explain.diagnose import diagnose
from drakit.explain.inputs import ExplainInput
from drakit.features import Features
from tests.unit.explain.conftest import SCENARIOS, scenario_input


def test_expected_release_from_simulator_state() -> None:
    base = scenario_input("devices-in-use")
    inp = ExplainInput.from_state(
        pods=base.pods,
        claims=base.claims,
        slices=base.slices,
        classes=base.classes,
        nodes=base.nodes,
        templates=base.templates,
        expected_release={"ml/eval-2": 300.0, "ml/eval-1": 900.0},
        now=120.0,
    )
    d = diagnose(inp, "pod", "train", "ml", features=Features.for_version())
    assert [(h.claim, h.expected_release) for h in d.holders] == [
        ("ml/eval-2", 300.0),
        ("ml/eval-1", 900.0),
        ("ml/eval-3", None),
    ]
    assert d.fix == "enough devices are expected back in 180s (t=300s), when ml/eval-2 ends"


def test_cli_text_and_exit_code() -> None:
    result = CliRunner().invoke(
        app, ["explain", "pod/train", "-n", "ml", "-f", str(SCENARIOS / "memory-80gi-near-miss.yaml")]
    )
    assert result.exit_code == 3
    assert result.output.startswith("pod/ml/train: NEVER (NoMatchingDevices)")


def test_cli_json() -> None:
    result = CliRunner().invoke(
        app, ["explain", "claim/big-gpu", "-n", "ml", "-o", "json", "-f", str(SCENARIOS / "claim-target-near-miss.yaml")]
    )
    assert result.exit_code == 3
    doc = json.loads(result.output)
    assert doc["verdict"] == "never" and doc["codes"] == ["NoMatchingDevices", "NearMiss"]


def test_cli_ok_and_broken_exit_codes() -> None:
    ok = CliRunner().invoke(app, ["explain", "pod/train", "-n", "ml", "-f", str(SCENARIOS / "fits.yaml")])
    assert ok.exit_code == 0
    broken = CliRunner().invoke(app, ["explain", "pod/train", "-n", "ml", "-f", str(SCENARIOS / "class-missing.yaml")])
    assert broken.exit_code == 1


def test_cli_unknown_target() -> None:
    result = CliRunner().invoke(app, ["explain", "pod/nope", "-n", "ml", "-f", str(SCENARIOS / "fits.yaml")])
    assert result.exit_code != 0
    bad = CliRunner().invoke(app, ["explain", "deployment/x", "-f", str(SCENARIOS / "fits.yaml")])
    assert bad.exit_code != 0
