"""The published JSON schema, and the CLI verbs end to end (typer's CliRunner, no cluster)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from drakit.cli.main import app
from drakit.demo import demo_paths
from drakit.profiles.loader import example_texts
from drakit.profiles.model import profile_json_schema

ROOT = Path(__file__).resolve().parents[3]
runner = CliRunner()


def test_published_schema_is_current() -> None:
    published = json.loads((ROOT / "docs" / "profile.schema.json").read_text(encoding="utf-8"))
    assert published == json.loads(json.dumps(profile_json_schema(), sort_keys=True)), \
        "regenerate docs/profile.schema.json from drakit.profiles.model.profile_json_schema()"


@pytest.mark.parametrize("name", [n for _, n in example_texts()])
def test_examples_validate_against_the_schema(name: str) -> None:
    text = dict((n, t) for t, n in example_texts())[name]
    jsonschema.validate(yaml.safe_load(text), profile_json_schema())


def test_schema_rejects_unknown_fields() -> None:
    bad = {"apiVersion": "drakit.dev/v1alpha1", "kind": "Profile", "metadata": {"name": "a"}, "spec": {"memmory": {}}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, profile_json_schema())


def test_compile_yaml_and_json() -> None:
    res = runner.invoke(app, ["profile", "compile", "training-48g", "--driver", "gpu.nvidia.com", "-n", "ml"])
    assert res.exit_code == 0, res.output
    kinds = [d["kind"] for d in yaml.safe_load_all(res.stdout)]
    assert kinds == ["DeviceClass", "ResourceClaimTemplate", "PodTemplate"]
    res = runner.invoke(app, ["profile", "compile", "evaluation", "-o", "json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["kind"] == "List"


def test_compile_bad_profile_exits_1_with_file_line(tmp_path: Path) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text("apiVersion: drakit.dev/v1alpha1\nkind: Profile\nmetadata:\n  name: bad\nspec:\n  count: 0\n")
    import sys
    from io import StringIO

    from drakit.cli.console import run_guarded

    old_argv, old_err = sys.argv, sys.stderr
    sys.argv, sys.stderr = ["drakit", "profile", "compile", str(p)], StringIO()
    try:
        code = run_guarded(app)
        err = sys.stderr.getvalue()
    finally:
        sys.argv, sys.stderr = old_argv, old_err
    assert code == 1
    assert f"error: {p}:6: Profile \"bad\" is invalid: spec.count: Invalid value: 0: Input should be greater than or equal to 1" in err


def test_unknown_driver_is_a_usage_error() -> None:
    res = runner.invoke(app, ["profile", "compile", "training-48g", "--driver", "gpu.acme.com"])
    assert res.exit_code != 0


def test_eligible_text_and_json() -> None:
    cluster = [p for p in demo_paths() if p.endswith("cluster.yaml")]
    res = runner.invoke(app, ["profile", "eligible", "training-48g", "evaluation", "-f", cluster[0]])
    assert res.exit_code == 0, res.output
    assert "NVIDIA L4 on l4-node-1: 4 - memory 23034Mi < 48Gi" in res.stdout
    res = runner.invoke(app, ["profile", "eligible", "training-48g", "-f", cluster[0], "-o", "json"])
    data = json.loads(res.stdout)["profiles"][0]
    assert data["excluded"][0]["reason"] == "memory 23034Mi < 48Gi"


def test_apply_to_and_lint(tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p  # keep\nspec:\n  containers:\n  - name: c\n    image: x\n")
    res = runner.invoke(app, ["profile", "apply-to", str(pod), "--profile", "evaluation", "--include-objects"])
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p  # keep\n")
    docs = list(yaml.safe_load_all(res.stdout))
    assert [d["kind"] for d in docs] == ["Pod", "DeviceClass", "ResourceClaimTemplate"]
    out = tmp_path / "out.yaml"
    out.write_text(res.stdout)
    lint = runner.invoke(app, ["lint", "-f", str(out)])
    assert lint.exit_code == 0, lint.output
    # Valid for the API server (lint refuses invalid objects), yet GPUs are asked for twice.
    pod.write_text(
        pod.read_text()
        .replace("  containers:\n", "  resourceClaims: [{name: gpus, resourceClaimTemplateName: gpu}]\n  containers:\n")
        .replace("    image: x\n", "    image: x\n    resources:\n      limits: {nvidia.com/gpu: 1}\n      claims: [{name: gpus}]\n")
    )
    lint = runner.invoke(app, ["lint", "-f", str(pod)])
    assert lint.exit_code == 1 and "[DK001]" in lint.stdout
