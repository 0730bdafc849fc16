"""``drakit profile compile`` refuses what the API server would refuse, and a file without profiles."""

from __future__ import annotations

import sys
from io import StringIO
from pathlib import Path

import pytest

from drakit.cli.console import run_guarded
from drakit.cli.main import app

TRAINING = """apiVersion: drakit.dev/v1alpha1
kind: Profile
metadata:
  name: {name}
spec:
  vendor: nvidia
  count: 4
  memory:
    min: 40Gi
  colocate: pcieRoot
  queue: {queue}
  pod:
    priorityClassName: {priority}
"""


def _compile(tmp_path: Path, text: str, *args: str) -> tuple[int, str, str]:
    path = tmp_path / "recipe.yaml"
    path.write_text(text, encoding="utf-8")
    old = sys.argv, sys.stdout, sys.stderr
    sys.argv, sys.stdout, sys.stderr = ["drakit", "profile", "compile", str(path), *args], StringIO(), StringIO()
    try:
        code = run_guarded(app)
        out, err = sys.stdout.getvalue(), sys.stderr.getvalue()  # type: ignore[attr-defined]
    finally:
        sys.argv, sys.stdout, sys.stderr = old
    return code, out, err


@pytest.mark.parametrize(
    ("fields", "args", "wants"),
    [
        pytest.param({}, ("-n", "ML_Team"), ["--namespace: compiles to", "metadata.namespace", "ML_Team"], id="namespace"),
        pytest.param({"queue": "'team a'"}, (), ["recipe.yaml:11", "spec.queue", "team a", "a valid label"], id="queue-label"),
        pytest.param(
            {"priority": "High_Priority"}, (), ["recipe.yaml:13", "spec.pod.priorityClassName", "High_Priority", "RFC 1123 subdomain"],
            id="priority-class",
        ),
    ],
)
def test_invalid_emitted_values_are_refused(
    tmp_path: Path, fields: dict[str, str], args: tuple[str, ...], wants: list[str]
) -> None:
    values = {"name": "train-h100", "queue": "training", "priority": "training"} | fields
    code, out, err = _compile(tmp_path, TRAINING.format(**values), "--driver", "gpu.nvidia.com", *args)
    assert code == 1 and out == "", (code, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for want in wants:
        assert want in err, err


def test_valid_profile_compiles(tmp_path: Path) -> None:
    code, out, err = _compile(
        tmp_path, TRAINING.format(name="train-h100", queue="training", priority="training"), "--driver", "gpu.nvidia.com", "-n", "ml"
    )
    assert code == 0, err
    assert "kind: PodTemplate" in out and "priorityClassName: training" in out


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n", id="other-kinds-only"),
        pytest.param("# nothing here\n", id="empty-file"),
    ],
)
def test_a_file_without_profiles_is_an_error(tmp_path: Path, text: str) -> None:
    code, out, err = _compile(tmp_path, text)
    assert (code, out) == (1, "")
    assert "recipe.yaml: no Profile documents" in err and len(err.strip().splitlines()) == 1, err
