"""apply-to merges the fragment by splicing text: every untouched byte stays identical."""

from __future__ import annotations

import difflib

import pytest
import yaml

from drakit.errors import InvalidInput
from drakit.profiles import compile_profile, drivers_for, parse_profiles
from drakit.profiles.apply import PolyaxonPatch, apply_fragment
from drakit.profiles.compile import PodFragment
from drakit.profiles.loader import example_texts
from drakit.profiles.polyaxon import pod_settings


def _fragment(name: str = "training-48g") -> PodFragment:
    rp = parse_profiles([], example_texts(), select=[name]).get(name)
    return compile_profile(rp, drivers_for(rp)[0]).fragment


def _label_mode(name: str = "training-48g") -> PolyaxonPatch:
    rp = parse_profiles([], example_texts(), select=[name]).get(name)
    return PolyaxonPatch(pod_settings(compile_profile(rp, drivers_for(rp)[0]), "label"))


JOB = """# a training job
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg   # untouched
data:
  a: "1"
---
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  backoffLimit: 2
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer      # main
          image: "registry.example.com/t:1"
          args: ["--epochs", "3"]
          resources:
            limits:
              cpu: "4"
        - name: sidecar
          image: busybox
      # trailing comment
"""

POD = """apiVersion: v1
kind: Pod
metadata:
  name: p
  labels: {app: p}
spec:
  tolerations:
  - key: a
    operator: Exists
  containers:
  - name: c
    image: x
    resources:
  priorityClassName: training
"""

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: app
        image: x
      - name: proxy
        image: envoy
"""

POLYAXON = """version: 1.1
kind: operation
name: train
hubRef: my-org/trainer
runPatch:
  kind: job
  container:
    resources:
      limits:
        cpu: 2
  environment:
    nodeSelector:
      pool: gpu
"""


def _only_insertions(before: str, after: str) -> list[str]:
    """The inserted lines; fails if any original line was changed or removed."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    added = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        assert op in ("equal", "insert"), f"{op}: {a[i1:i2]!r} -> {b[j1:j2]!r}"
        if op == "insert":
            added += b[j1:j2]
    return added


@pytest.mark.parametrize(
    ("text", "containers", "want_changed"),
    [
        pytest.param(JOB, (), ["Job/train"], id="job-first-container"),
        pytest.param(DEPLOYMENT, ("proxy",), ["Deployment/web"], id="deployment-named-container"),
        pytest.param(POLYAXON, (), ["operation/train"], id="polyaxon-operation"),
    ],
)
def test_untouched_bytes_are_identical(text: str, containers: tuple[str, ...], want_changed: list[str]) -> None:
    result = apply_fragment(text, _fragment(), containers=containers, polyaxon=_label_mode())
    assert result.changed == want_changed
    added = _only_insertions(text, result.text)
    assert added, "nothing was inserted"
    # Removing the inserted lines gives back the input byte for byte.
    remaining = list(result.text.splitlines(keepends=True))
    for line in added:
        remaining.remove(line)
    assert "".join(remaining) == text


def test_job_gets_claims_settings_and_queue_label() -> None:
    out = list(yaml.safe_load_all(apply_fragment(JOB, _fragment()).text))
    assert out[0] == yaml.safe_load(JOB.split("---")[0])
    job = out[1]
    assert job["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "training"}
    pod = job["spec"]["template"]["spec"]
    assert pod["resourceClaims"] == [{"name": "gpus", "resourceClaimTemplateName": "training-48g"}]
    assert pod["containers"][0]["resources"] == {"limits": {"cpu": "4"}, "claims": [{"name": "gpus"}]}
    assert "resources" not in pod["containers"][1]
    assert pod["priorityClassName"] == "training"
    assert pod["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]


def test_empty_and_flow_nodes_are_filled_in_place() -> None:
    result = apply_fragment(POD, _fragment())
    pod = yaml.safe_load(result.text)
    assert pod["metadata"]["labels"] == {"app": "p", "kueue.x-k8s.io/queue-name": "training"}
    assert pod["spec"]["containers"][0]["resources"] == {"claims": [{"name": "gpus"}]}
    assert [t["key"] for t in pod["spec"]["tolerations"]] == ["a", "nvidia.com/gpu"]
    # Only the flow mapping of labels was rewritten; the empty ``resources:`` got lines below it.
    changed = [POD.splitlines()[i1:i2] for op, i1, i2, _, _ in
               difflib.SequenceMatcher(a=POD.splitlines(), b=result.text.splitlines()).get_opcodes() if op == "replace"]
    assert changed == [["  labels: {app: p}"]]


def test_polyaxon_operation_gets_labels_not_claims() -> None:
    op = yaml.safe_load(apply_fragment(POLYAXON, _fragment(), polyaxon=_label_mode()).text)
    env = op["runPatch"]["environment"]
    assert env["nodeSelector"] == {"pool": "gpu"}
    assert "resourceClaims" not in env and "claims" not in op["runPatch"]["container"]["resources"]
    assert env["labels"] == {"drakit.dev/profile": "training-48g", "kueue.x-k8s.io/queue-name": "training"}
    assert env["annotations"]["drakit.dev/profile-digest"].startswith("sha256:")
    assert env["priorityClassName"] == "training"
    assert "queue" not in op  # the Kueue queue is a label; Polyaxon's queue is an agent queue


def test_applying_twice_changes_nothing_more() -> None:
    once = apply_fragment(JOB, _fragment()).text
    assert apply_fragment(once, _fragment()).text == once


@pytest.mark.parametrize(
    ("text", "match"),
    [
        pytest.param(POD.replace("priorityClassName: training", "priorityClassName: batch"), "priorityClassName is 'batch'",
                     id="priority-conflict"),
        pytest.param(POD.replace("spec:\n", "spec:\n  resourceClaims:\n  - name: gpus\n    resourceClaimName: other\n", 1),
                     'resourceClaims already has "gpus"', id="claim-name-taken"),
        pytest.param(DEPLOYMENT, "no container named nope", id="unknown-container"),
    ],
)
def test_conflicts_are_errors(text: str, match: str) -> None:
    with pytest.raises(InvalidInput, match=match):
        apply_fragment(text, _fragment(), containers=("nope",) if "Deployment" in text else ())


def test_legacy_gpu_limit_is_flagged() -> None:
    text = POD.replace("    resources:\n", "    resources:\n      limits:\n        nvidia.com/gpu: 1\n")
    result = apply_fragment(text, _fragment())
    assert any("nvidia.com/gpu" in n and "second allocation" in n for n in result.notes)
