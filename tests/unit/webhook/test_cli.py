"""The new verbs at the command line: one-line refusals with documented exits, and real output."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from drakit.cli.testing import run

TRAIN_OP = """version: 1.1
kind: operation
name: train
hubRef: org/trainer
queue: training
runPatch:
  kind: job
  environment:
    labels: {kueue.x-k8s.io/queue-name: training}
  container:
    resources:
      claims: [{name: gpus}]
"""


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    op = tmp_path / "op.yaml"
    op.write_text(TRAIN_OP)
    dag = tmp_path / "dag.yaml"
    dag.write_text("version: 1.1\nkind: operation\nname: d\nrunPatch:\n  kind: dag\n")
    return {"garbage": str(garbage), "op": str(op), "dag": str(dag), "missing": str(tmp_path / "nope.pem")}


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        pytest.param(["webhook", "serve"], 2, ["--tls-cert FILE and --tls-key FILE"], id="serve-without-tls"),
        pytest.param(["webhook", "serve", "--tls-cert", "{missing}", "--tls-key", "{missing}"], 1, ["no such file"],
                     id="serve-missing-cert"),
        pytest.param(["webhook", "serve", "--tls-cert", "{garbage}", "--tls-key", "{garbage}"], 1,
                     ["not a usable certificate and key"], id="serve-garbage-cert"),
        pytest.param(["webhook", "serve", "--tls-cert", "{garbage}", "--tls-key", "{garbage}", "--legacy", "maybe"], 2,
                     ["--legacy 'maybe'"], id="serve-bad-legacy"),
        pytest.param(["webhook", "serve", "--tls-cert", "{garbage}", "--tls-key", "{garbage}", "--workers", "0"], 2,
                     ["--workers 0: want 1-64"], id="serve-no-workers"),
        pytest.param(["webhook", "serve", "--tls-cert", "{garbage}", "--tls-key", "{garbage}", "--port", "70000"], 2,
                     ["--port 70000: want 1-65535"], id="serve-bad-port"),
        pytest.param(["webhook", "manifests"], 2, ["--ca-file FILE"], id="manifests-without-ca"),
        pytest.param(["webhook", "manifests", "--ca-file", "{garbage}"], 1, ["not a PEM certificate"], id="manifests-garbage-ca"),
        pytest.param(["webhook", "manifests", "--ca-file", "{missing}"], 1, ["nope.pem"], id="manifests-missing-ca"),
        pytest.param(["webhook", "manifests", "--ca-file", "{garbage}", "--url", "http://x/mutate"], 2, ["https://"],
                     id="manifests-plain-http"),
        pytest.param(["webhook", "manifests", "--ca-file", "{garbage}", "--failure-policy", "Maybe"], 2, ["Fail or Ignore"],
                     id="manifests-bad-failure-policy"),
        pytest.param(["admission", "policy", "no-such-profile"], 1, ["no-such-profile"], id="policy-unknown-profile"),
        pytest.param(["profile", "polyaxon", "evaluation", "--polyaxon-mode", "extended-resource"], 1,
                     ["alternatives", "use mode label"], id="polyaxon-refused-mode"),
        pytest.param(["profile", "polyaxon", "evaluation", "--kind", "dag"], 1, ["dag", "no pod of its own"], id="polyaxon-dag"),
        pytest.param(["profile", "polyaxon", "evaluation", "--kind", "tfjob", "--replica", "boss"], 1,
                     ["no replica boss"], id="polyaxon-bad-replica"),
        pytest.param(["profile", "polyaxon", "evaluation", "--polyaxon-mode", "both"], 2, ["label or extended-resource"],
                     id="polyaxon-bad-mode"),
        pytest.param(["profile", "apply-to", "{dag}", "-p", "evaluation"], 1, ["dag"], id="apply-to-dag"),
    ],
)
def test_refusals_are_one_line(files: dict[str, str], args: list[str], code: int, words: list[str]) -> None:
    r = run(*(a.format(**files) for a in args))
    assert r.exit_code == code, r.stderr
    lines = r.stderr.strip().splitlines()
    assert lines and all(line.startswith("error:") for line in lines) and "Traceback" not in r.stderr
    for w in words:
        assert w in r.stderr


def test_apply_to_warns_about_what_polyaxon_drops(files: dict[str, str]) -> None:
    r = run("profile", "apply-to", files["op"], "-p", "training-48g")
    assert r.exit_code == 0, r.stderr
    assert "drops container resources.claims" in r.stderr and "is the Kueue queue" in r.stderr
    assert yaml.safe_load(r.stdout)["runPatch"]["environment"]["labels"]["drakit.dev/profile"] == "training-48g"


def test_lint_flags_the_old_polyaxon_output(files: dict[str, str]) -> None:
    r = run("lint", "-f", files["op"])
    assert r.exit_code == 1
    assert "[DK008]" in r.stdout and "[DK009]" in r.stdout and "Traceback" not in r.stderr


def test_admission_policy_output_is_manifests() -> None:
    r = run("admission", "policy", "evaluation", "-o", "json")
    assert r.exit_code == 0, r.stderr
    import json

    kinds = [d["kind"] for d in json.loads(r.stdout)["items"]]
    assert kinds[:2] == ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]
    assert kinds.count("MutatingAdmissionPolicy") == 3


def test_polyaxon_preset_round_trips_as_yaml() -> None:
    r = run("profile", "polyaxon", "training-48g", "--kind", "mpijob")
    assert r.exit_code == 0, r.stderr
    doc = yaml.safe_load(r.stdout)
    assert doc["isPreset"] is True and "queue" not in doc
    assert list(doc["runPatch"]) == ["kind", "worker"]  # not the launcher
    assert doc["runPatch"]["worker"]["environment"]["labels"]["kueue.x-k8s.io/queue-name"] == "training"
