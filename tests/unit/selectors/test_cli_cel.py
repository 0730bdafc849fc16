"""``drakit cel eval`` / ``drakit cel check``: output shape and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from drakit.cli.main import app

DEVICE = """
name: gpu-0
driver: gpu.nvidia.com
attributes:
  model: {string: A100}
  cores: {ints: [1, 2]}
capacity:
  memory: {value: 80Gi}
"""


@pytest.mark.parametrize(
    ("args", "code", "doc"),
    [
        pytest.param(["1 + 1"], 0, {"value": 2, "type": "int"}, id="int"),
        pytest.param(["quantity('1Gi')"], 0, {"value": "1Gi", "type": "quantity"}, id="quantity"),
        pytest.param(["semver('1.2.3')"], 0, {"value": "1.2.3", "type": "semver"}, id="semver"),
        pytest.param(["[1u, 2u]"], 0, {"value": [1, 2], "type": "list"}, id="uint-list"),
        pytest.param(
            ['device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("48Gi"))', "--device", "DEV"],
            0,
            {"value": True, "type": "bool"},
            id="device",
        ),
        pytest.param(
            ['device.attributes["gpu.nvidia.com"].nope', "--device", "DEV"],
            1,
            {"error": {"phase": "runtime", "message": "no such key: nope"}},
            id="runtime-error",
        ),
        pytest.param(
            [
                'device.attributes["gpu.nvidia.com"].cores.size() == 2',
                "--device",
                "DEV",
                "--environment",
                "new",
                "--kubernetes-version",
                "1.35",
            ],
            1,
            {"error": {"phase": "runtime", "message": "attribute cores: unsupported attribute value"}},
            id="list-attr-gate-off",
        ),
        pytest.param(
            [
                'device.attributes["gpu.nvidia.com"].cores.size() == 2',
                "--device",
                "DEV",
                "--environment",
                "new",
                "--feature-gates",
                "DRAListTypeAttributes=true",
            ],
            0,
            {"value": True, "type": "bool"},
            id="list-attr-gate-on",
        ),
    ],
)
def test_eval(tmp_path: Path, args: list[str], code: int, doc: dict[str, object]) -> None:
    dev = tmp_path / "dev.yaml"
    dev.write_text(DEVICE)
    argv = ["cel", "eval", *[str(dev) if a == "DEV" else a for a in args]]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == code, result.output
    assert json.loads(result.output) == doc


def test_eval_compile_error() -> None:
    result = CliRunner().invoke(app, ["cel", "eval", "1 +"])
    assert result.exit_code == 1
    err = json.loads(result.output)["error"]
    assert err["phase"] == "compile"
    assert "Syntax error" in err["message"]


def test_check() -> None:
    result = CliRunner().invoke(app, ["cel", "check", 'device.driver == "x"', "-o", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["type"] == "bool"
    assert doc["costEstimate"] == 3
    assert doc["errors"] == []
    bad = CliRunner().invoke(app, ["cel", "check", "device.nope"])
    assert bad.exit_code == 1
    assert "undefined field 'nope'" in json.loads(bad.output)["errors"][0]
