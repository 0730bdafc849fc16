"""Loading manifests: multi-document YAML, JSON, Lists, stdin, and every bad-input case."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from drakit.cli.validate import register
from drakit.errors import InvalidInput
from drakit.model import ResourceClaim, ResourceSlice
from drakit.sources import MAX_INPUT_BYTES as MAX_FILE_BYTES
from drakit.sources import load_bundle
from drakit.sources import load_manifest_documents as load_documents
from tests.builders import ClaimBuilder, SliceBuilder

CLAIM_YAML = """\
# a comment
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: train
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu
"""


def write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return str(p)


def test_multi_document_yaml_keeps_order_index_and_line(tmp_path: Path) -> None:
    slice_yaml = json.dumps(SliceBuilder().wire())
    path = write(tmp_path, "a.yaml", CLAIM_YAML + "---\n" + slice_yaml + "\n")
    docs = load_documents([path])
    assert [(d.index, d.line) for d in docs] == [(0, 2), (1, 13)]
    bundle = load_bundle([path])
    assert isinstance(bundle.claims[0], ResourceClaim)
    assert isinstance(bundle.slices[0], ResourceSlice)
    assert bundle.find("ResourceClaim", "train") is bundle.claims[0]
    assert bundle.entries[0].namespace == "default"
    assert bundle.entries[1].namespace == ""


def test_list_is_expanded_and_directories_are_recursive_and_sorted(tmp_path: Path) -> None:
    lst = {"apiVersion": "v1", "kind": "List", "items": [SliceBuilder("s1").wire(), SliceBuilder("s2").wire()]}
    write(tmp_path, "d/b/list.json", json.dumps(lst))
    write(tmp_path, "d/a.yml", CLAIM_YAML)
    write(tmp_path, "d/ignored.txt", "not a manifest")
    docs = load_documents([str(tmp_path / "d")])
    assert [(Path(d.source).name, d.index, d.item) for d in docs] == [("a.yml", 0, None), ("list.json", 0, 0), ("list.json", 0, 1)]


def test_stdin() -> None:
    bundle = load_bundle(["-"], stdin=io.StringIO(CLAIM_YAML))
    assert bundle.claims[0].metadata.name == "train"
    assert bundle.entries[0].document.source == "-"


def test_yaml_timestamps_stay_strings(tmp_path: Path) -> None:
    text = CLAIM_YAML.replace("  name: train\n", "  name: train\n  creationTimestamp: 2025-01-01T00:00:00Z\n")
    bundle = load_bundle([write(tmp_path, "c.yaml", text)])
    assert bundle.claims[0].metadata.creation_timestamp == "2025-01-01T00:00:00Z"


BAD = [
    pytest.param("c.yaml", CLAIM_YAML.replace("deviceClassName: gpu", "deviceClassName: gpu\n        count: two"),
                 'c.yaml[0] (line 2): ResourceClaim "default/train" is invalid: spec.devices.requests[0].exactly.count: '
                 'Invalid value: "two": must be an integer', id="wrong-type"),
    pytest.param("c.yaml", CLAIM_YAML.replace("      exactly:", "      exactlyy: {}\n      exactly:"),
                 'c.yaml[0] (line 2): ResourceClaim "default/train" is invalid: unknown field "spec.devices.requests[0].exactlyy"',
                 id="unknown-field"),
    pytest.param("c.yaml", CLAIM_YAML.replace("deviceClassName: gpu", "deviceClassName: yes"),
                 'spec.devices.requests[0].exactly.deviceClassName: Invalid value: true: must be a string', id="yaml-1.1-bool"),
    pytest.param("c.yaml", CLAIM_YAML.replace("- name: gpu\n      exactly:", "- exactly:"),
                 "spec.devices.requests[0].name: Required value", id="missing-required"),
    pytest.param("c.yaml", "a: [1,\n", "c.yaml[0]: error parsing YAML at line 2, column 1", id="malformed-yaml"),
    pytest.param("c.json", '{"apiVersion": ', "c.json: error parsing JSON at line 1, column 16", id="malformed-json"),
    pytest.param("c.yaml", CLAIM_YAML.replace("kind: ResourceClaim", "kind: Gadget"),
                 'c.yaml[0] (line 2): no matches for kind "Gadget" in version "resource.k8s.io/v1"', id="unknown-kind"),
    pytest.param("c.yaml", CLAIM_YAML.replace("apiVersion: resource.k8s.io/v1", "apiVersion: resource.k8s.io/v1alpha3"),
                 'no matches for kind "ResourceClaim" in version "resource.k8s.io/v1alpha3"', id="wrong-api-version"),
    pytest.param("c.yaml", CLAIM_YAML.replace("apiVersion: resource.k8s.io/v1\n", ""),
                 "c.yaml[0] (line 2): apiVersion not set", id="missing-api-version"),
    pytest.param("c.yaml", CLAIM_YAML + "---\n" + CLAIM_YAML,
                 'c.yaml[1] (line 14): ResourceClaim "default/train" is invalid: metadata.name: Duplicate value: "train"',
                 id="duplicate-name"),
    pytest.param("c.yaml", "- 1\n- 2\n", "c.yaml[0] (line 1): document is not an object", id="not-an-object"),
]


@pytest.mark.parametrize(("name", "text", "want"), BAD)
def test_bad_input_is_one_clear_line(tmp_path: Path, name: str, text: str, want: str) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(InvalidInput) as info:
        load_bundle([path])
    lines = str(info.value).splitlines()
    assert any(want in line for line in lines), lines
    assert "Traceback" not in str(info.value)


def test_missing_file_and_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidInput) as info:
        load_bundle([str(tmp_path / "nope.yaml"), str(tmp_path / "empty")])
    text = str(info.value)
    assert "nope.yaml: no such file or directory" in text
    assert "directory contains no manifests" in text


def test_oversized_file_fails_fast_without_parsing(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with open(big, "wb") as fh:  # sparse: 100 MB on paper, nothing parsed
        fh.truncate(100 * 1000 * 1000)
    assert big.stat().st_size > MAX_FILE_BYTES
    with pytest.raises(InvalidInput, match="larger than the 64 MiB limit"):
        load_bundle([str(big)])


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def _group() -> None:
        """Forces sub-command mode in this one-verb test app."""

    register(app)
    return app


@pytest.mark.parametrize(
    ("text", "args", "want_code", "want"),
    [
        pytest.param(CLAIM_YAML, [], 0, "1 object(s) valid", id="valid"),
        pytest.param(CLAIM_YAML.replace("name: gpu", "name: GPU"), [], 1, "spec.devices.requests[0].name: Invalid value", id="invalid"),
        pytest.param(CLAIM_YAML.replace("count", "x").replace("deviceClassName: gpu", "deviceClassName: 1"), [], 1, "must be a string", id="load-error"),
        pytest.param(CLAIM_YAML, ["--feature-gates", "Nope=true"], 2, "unknown feature gate", id="usage"),
    ],
)
def test_cli_exit_codes_and_text(tmp_path: Path, text: str, args: list[str], want_code: int, want: str) -> None:
    path = write(tmp_path, "c.yaml", text)
    result = CliRunner().invoke(_app(), ["validate", "-f", path, *args])
    assert result.exit_code == want_code, result.output
    assert want in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_cli_json_output(tmp_path: Path) -> None:
    path = write(tmp_path, "c.yaml", json.dumps(ClaimBuilder().set("spec.devices.requests[0].name", "X").wire()))
    result = CliRunner().invoke(_app(), ["validate", "-f", path, "-o", "json"])
    assert result.exit_code == 1
    out = json.loads(result.stdout)
    assert out["valid"] is False
    err = out["errors"][0]
    assert err["object"] == 'ResourceClaim "default/claim-1"'
    assert (err["field"], err["type"], err["index"]) == ("spec.devices.requests[0].name", "Invalid value", 0)


def test_cli_subprocess_has_no_traceback(tmp_path: Path) -> None:
    path = write(tmp_path, "c.yaml", "a: [1,\n")
    code = (
        "import sys, typer\n"
        "from drakit.cli.validate import register\n"
        "from drakit.cli.console import run_guarded\n"
        "app = typer.Typer()\n"
        "app.callback()(lambda: None)\n"
        "register(app)\n"
        "sys.exit(run_guarded(app))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, "validate", "-f", path], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "error parsing YAML" in proc.stdout
