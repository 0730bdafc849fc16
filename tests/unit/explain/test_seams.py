"""The simulator seam (expected release times) and the CLI verb."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from drakit.cli.main import app
from drakit.cli.testing import run
from drakit.explain.diagnose import diagnose
from drakit.features import Features
from drakit.model.codec import KubeDumper
from tests.unit.explain.conftest import SCENARIOS, scenario_input


def test_expected_release_from_simulator_state() -> None:
    base = scenario_input("devices-in-use")
    inp = dataclasses.replace(
        base, expected_release=MappingProxyType({"ml/eval-2": 300.0, "ml/eval-1": 900.0}), now=120.0
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


@pytest.mark.parametrize(
    ("target", "message"),
    [
        pytest.param("pod/nope", 'error: pod "ml/nope" not found in the input\n', id="not-found"),
        pytest.param("pod/a\x1b[2Jb", 'error: pod "ml/a\\x1b[2Jb" not found in the input\n', id="escape-quoted"),
        pytest.param("service/x", "error: target 'service/x': want pod/NAME, claim/NAME, job/NAME, deployment/NAME "
                     "or NAME\n", id="kind"),
        pytest.param("job/x", 'error: job "ml/x" not found in the input\n', id="workload-not-found"),
    ],
)
def test_cli_unknown_target(target: str, message: str) -> None:
    """The user gets exit code 2 and one line (never a traceback, never a raw control character)."""
    result = run("explain", target, "-n", "ml", "-f", str(SCENARIOS / "fits.yaml"))
    assert (result.exit_code, result.stderr, result.stdout) == (2, message, "")


def _bundle_without(tmp_path: Path, name: str, edit: Callable[[dict[str, Any]], None]) -> str:
    docs = list(yaml.safe_load_all((SCENARIOS / f"{name}.yaml").read_text(encoding="utf-8")))
    for d in docs:
        edit(d)
    out = tmp_path / f"{name}.yaml"
    out.write_text(yaml.dump_all(Dumper=KubeDumper, documents=docs), encoding="utf-8")
    return str(out)


def test_pod_held_in_prebind_waits_for_binding_conditions(tmp_path: Path) -> None:
    """Found on the real control plane: the scheduler allocates and reserves the claims, only
    nominates the pod (no spec.nodeName) and waits in PreBind for the binding conditions."""

    def nominate(d: dict[str, Any]) -> None:
        if d["kind"] == "Pod":
            node = d["spec"].pop("nodeName")
            d["status"]["nominatedNodeName"] = node

    path = _bundle_without(tmp_path, "binding-conditions-pending", nominate)
    result = CliRunner().invoke(app, ["explain", "pod/train", "-n", "ml", "-o", "json", "-f", path])
    doc = json.loads(result.output)
    assert doc["verdict"] == "waiting" and doc["codes"][0] == "BindingConditionsPending", doc
    assert doc["owner"] == "driver"


@pytest.mark.parametrize(
    ("message", "want_owner", "want_fix"),
    [
        pytest.param(
            # v1.37.2's words: the API server's refusal inside the controller's "create ResourceClaim %s"
            'PodResourceClaim gpus: create ResourceClaim : ResourceClaim.resource.k8s.io "train-gpus-x7k2p" is '
            "invalid: spec.devices.requests[0].adminAccess: Forbidden: admin access to devices requires the "
            "`resource.kubernetes.io/admin-access: true` label on the containing namespace",
            "platform", "label namespace ml", id="namespace-label",
        ),
        pytest.param(
            'PodResourceClaim gpus: resource claim template "t": resourceclaimtemplate.resource.k8s.io "t" not found',
            "application", "create ResourceClaimTemplate", id="template-not-found",
        ),
        pytest.param(
            "PodResourceClaim gpus: admin access is requested, but the feature is disabled",
            "platform", "enable the feature gate", id="feature-disabled",
        ),
    ],
)
def test_claim_creation_failure_follows_the_controllers_words(
    tmp_path: Path, message: str, want_owner: str, want_fix: str
) -> None:
    def reword(d: dict[str, Any]) -> None:
        if d["kind"] == "Event":
            d["message"] = message

    path = _bundle_without(tmp_path, "claim-creation-failed", reword)
    result = CliRunner().invoke(app, ["explain", "pod/train", "-n", "ml", "-o", "json", "-f", path])
    doc = json.loads(result.output)
    assert doc["codes"][0] == "ClaimCreationFailed"
    assert doc["owner"] == want_owner
    assert want_fix in doc["fix"]


def test_aggregated_event_prefix_is_not_quoted(tmp_path: Path) -> None:
    words = "PodResourceClaim gpus: admin access is requested, but the feature is disabled"

    def aggregate(d: dict[str, Any]) -> None:
        if d["kind"] == "Event":
            d["message"] = "(combined from similar events): " + words

    path = _bundle_without(tmp_path, "claim-creation-failed", aggregate)
    result = CliRunner().invoke(app, ["explain", "pod/train", "-n", "ml", "-o", "json", "-f", path])
    assert "combined from similar events" not in result.output
    assert words in result.output


def test_fragmented_free_devices_name_their_holders() -> None:
    """Enough devices are free cluster-wide but spread thin: say which claims hold the rest."""
    result = CliRunner().invoke(
        app, ["explain", "pod/train", "-n", "ml", "-o", "json", "-f", str(SCENARIOS / "in-use-fragmented.yaml")]
    )
    doc = json.loads(result.output)
    assert doc["codes"][0] == "DevicesInUse"
    assert [(h["claim"], h["devices"]) for h in doc["holders"]] == [("ml/eval-1", 2), ("ml/eval-2", 2)]
