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
        pytest.param(["1 + 1"], 0, {"mode": "value", "value": 2, "type": "int"}, id="int"),
        pytest.param(
            ["quantity('1Gi')"], 0, {"mode": "value", "value": "1Gi", "type": "quantity"}, id="quantity"
        ),
        pytest.param(
            ["semver('1.2.3')"], 0, {"mode": "value", "value": "1.2.3", "type": "semver"}, id="semver"
        ),
        pytest.param(["[1u, 2u]"], 0, {"mode": "value", "value": [1, 2], "type": "list"}, id="uint-list"),
        pytest.param(
            ['device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("48Gi"))', "--device", "DEV"],
            0,
            {"mode": "selector", "value": True, "type": "bool"},
            id="device",
        ),
        pytest.param(
            ['device.attributes["gpu.nvidia.com"].nope', "--device", "DEV"],
            1,
            {"mode": "selector", "error": {"phase": "runtime", "message": "no such key: nope"}},
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
            {
                "mode": "selector",
                "error": {"phase": "runtime", "message": "attribute cores: unsupported attribute value"},
            },
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
            {"mode": "selector", "value": True, "type": "bool"},
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
    got = json.loads(result.output)
    assert {k: got[k] for k in doc} == doc
    assert ("cost" in got) == (got.get("error", {}).get("phase") != "compile")


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


@pytest.mark.parametrize(
    ("expr", "as_", "code", "doc"),
    [
        pytest.param(
            "1 == 1", "auto", 0, {"mode": "selector", "value": True, "type": "bool"}, id="auto-bool"
        ),
        pytest.param("1 + 1", "auto", 0, {"mode": "value", "value": 2, "type": "int"}, id="auto-int"),
        pytest.param(
            "1 + 1",
            "selector",
            1,
            {
                "mode": "selector",
                "error": {
                    "phase": "compile",
                    "message": "must evaluate to bool or the unknown type, not int",
                },
            },
            id="selector-int",
        ),
        pytest.param(
            "dyn(1)",
            "auto",
            1,
            {
                "mode": "selector",
                "error": {
                    "phase": "runtime",
                    "message": "CEL result of type int could not be converted to bool: "
                    "unsupported type conversion from 'int' to bool",
                },
            },
            id="auto-dyn-is-a-selector",
        ),
        pytest.param("dyn(1)", "value", 0, {"mode": "value", "value": 1, "type": "int"}, id="value-dyn"),
        pytest.param("true", "value", 0, {"mode": "value", "value": True, "type": "bool"}, id="value-bool"),
        pytest.param(
            "1 +",
            "value",
            1,
            {"mode": "value", "error": {"phase": "compile"}},
            id="value-syntax-error",
        ),
    ],
)
def test_eval_as(expr: str, as_: str, code: int, doc: dict[str, object]) -> None:
    """``--as`` picks the scheduler's selector semantics or plain value evaluation."""
    result = CliRunner().invoke(app, ["cel", "eval", expr, "--as", as_])
    assert result.exit_code == code, result.output
    got = json.loads(result.output)
    assert got["mode"] == doc["mode"]
    if "error" in doc:
        want_err = doc["error"]
        assert isinstance(want_err, dict)
        assert {k: got["error"][k] for k in want_err} == want_err
    else:
        assert (got["value"], got["type"]) == (doc["value"], doc["type"])


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        pytest.param("b'\\xff\\x00a'", "/wBh", id="bytes-base64"),
        pytest.param("0.0/0.0", "NaN", id="nan"),
        pytest.param("1.0/0.0", "Infinity", id="inf"),
        pytest.param("(-1.0/0.0)", "-Infinity", id="minus-inf"),
        pytest.param("9007199254740991", 9007199254740991, id="int-json-safe"),
        pytest.param("9007199254740992", "9007199254740992", id="int-beyond-2^53"),
        pytest.param("(-9007199254740992)", "-9007199254740992", id="negative-int-beyond-2^53"),
        pytest.param("18446744073709551615u", "18446744073709551615", id="uint-beyond-2^53"),
        pytest.param("duration('1h1m1.5s')", "3661.5s", id="duration"),
        pytest.param("timestamp('2020-01-01T00:00:00Z')", "2020-01-01T00:00:00Z", id="timestamp"),
        pytest.param("{1: b'a', 2: b'b'}", {"1": "YQ==", "2": "Yg=="}, id="map-int-keys"),
        pytest.param("{true: [1.5]}", {"true": [1.5]}, id="map-bool-key"),
        pytest.param("optional.none()", None, id="optional-none"),
        pytest.param("optional.of(b'a')", "YQ==", id="optional-of"),
        pytest.param("ip('::1')", "::1", id="ip"),
        pytest.param("cidr('10.0.0.0/8')", "10.0.0.0/8", id="cidr"),
        pytest.param("url('https://a/b?c=d')", "https://a/b?c=d", id="url"),
        pytest.param("format.uuid()", "uuid", id="named-format"),
        pytest.param("type(1)", "int", id="type-value"),
    ],
)
def test_eval_json_rendering(expr: str, value: object) -> None:
    """Values are rendered with CEL's JSON conversion (cel-go ConvertToNative + proto3 JSON)."""
    result = CliRunner().invoke(app, ["cel", "eval", expr, "--as", "value", "-o", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["value"] == value


def test_eval_device_with_json_surrogate_pairs(tmp_path: Path) -> None:
    """A device file written by Python's json (non-BMP characters as \\u surrogate pairs)."""
    dev = tmp_path / "dev.json"
    device = {
        "name": "d",
        "driver": "dra.net",
        "attributes": {"s": {"string": "\U0001f600xé"}, "t": {"string": "x"}},
    }
    text = json.dumps(device)
    assert "\\ud83d\\ude00" in text
    dev.write_text(text.replace('"x"', '"\\udc00x"'))  # and one lone low half
    run = CliRunner().invoke
    result = run(
        app, ["cel", "eval", 'device.attributes["dra.net"].s', "--device", str(dev), "--as", "value"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["value"] == "\U0001f600xé"
    result = run(app, ["cel", "eval", 'device.attributes["dra.net"].s.size()', "--device", str(dev)])
    assert json.loads(result.output)["value"] == 3
    result = run(
        app, ["cel", "eval", 'device.attributes["dra.net"].t', "--device", str(dev), "--as", "value"]
    )
    assert json.loads(result.output)["value"] == "\ufffdx"
