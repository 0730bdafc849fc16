"""apply-to on the workload kinds platform teams run: CronJob, JobSet, Kubeflow jobs, KubeRay; and its errors."""

from __future__ import annotations

import os
import stat
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
import yaml

from drakit.cli.console import run_guarded
from drakit.cli.main import app
from drakit.profiles import compile_profile, drivers_for, parse_profiles
from drakit.profiles.apply import apply_fragment
from drakit.profiles.compile import PodFragment
from drakit.profiles.loader import example_texts


def _fragment(name: str = "training-48g") -> PodFragment:
    rp = parse_profiles([], example_texts(), select=[name]).get(name)
    return compile_profile(rp, drivers_for(rp)[0]).fragment


CRONJOB = """apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly-eval   # keep
  namespace: research
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: eval
            image: registry.example.com/eval:1.4
"""

JOBSET = """apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: llama-sft
  namespace: training
spec:
  replicatedJobs:
  - name: driver
    replicas: 1
    template:
      spec:
        template:
          spec:
            containers:
            - name: torchrun
              image: nvcr.io/nvidia/pytorch:25.01-py3
  - name: workers
    replicas: 4
    template:
      spec:
        parallelism: 2
        template:
          spec:
            containers:
            - name: torchrun
              image: nvcr.io/nvidia/pytorch:25.01-py3
"""

PYTORCHJOB = """apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: resnet
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: pytorch
            image: pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime
    Worker:
      replicas: 3
      template:
        spec:
          containers:
          - name: pytorch
            image: pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime
"""

MPIJOB = """apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: nccl-tests
spec:
  slotsPerWorker: 4
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: launcher
            image: ghcr.io/coreweave/nccl-tests:12.4
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: worker
            image: ghcr.io/coreweave/nccl-tests:12.4
"""

TFJOB = """apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: mnist
spec:
  tfReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: tensorflow
            image: tensorflow/tensorflow:2.17.0-gpu
"""

RAYJOB = """apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: tune
spec:
  entrypoint: python tune.py
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-head
            image: rayproject/ray:2.40.0
    workerGroupSpecs:
    - groupName: gpu-workers
      replicas: 2
      template:
        spec:
          containers:
          - name: ray-worker
            image: rayproject/ray:2.40.0-gpu
"""

RAYCLUSTER = """apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: serve
spec:
  headGroupSpec:
    template:
      spec:
        containers:
        - name: ray-head
          image: rayproject/ray:2.40.0
  workerGroupSpecs:
  - groupName: small
    template:
      spec:
        containers:
        - name: ray-worker
          image: rayproject/ray:2.40.0-gpu
  - groupName: large
    template:
      spec:
        containers:
        - name: ray-worker
          image: rayproject/ray:2.40.0-gpu
"""


def _claims(spec: dict[str, Any]) -> tuple[list[str], list[str]]:
    return [c["name"] for c in spec.get("resourceClaims") or []], [
        c["name"] for c in (spec["containers"][0].get("resources") or {}).get("claims") or []
    ]


def _get(obj: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        obj = obj[p]
    return obj


@pytest.mark.parametrize(
    ("text", "with_claim", "without_claim", "label_owner"),
    [
        pytest.param(CRONJOB, [("spec", "jobTemplate", "spec", "template", "spec")], [], ("spec", "jobTemplate"), id="CronJob"),
        pytest.param(
            JOBSET,
            [("spec", "replicatedJobs", i, "template", "spec", "template", "spec") for i in (0, 1)],
            [],
            (),
            id="JobSet",
        ),
        pytest.param(
            PYTORCHJOB,
            [("spec", "pytorchReplicaSpecs", role, "template", "spec") for role in ("Master", "Worker")],
            [],
            (),
            id="PyTorchJob",
        ),
        pytest.param(
            MPIJOB,
            [("spec", "mpiReplicaSpecs", "Worker", "template", "spec")],
            [("spec", "mpiReplicaSpecs", "Launcher", "template", "spec")],
            (),
            id="MPIJob-launcher-gets-none",
        ),
        pytest.param(TFJOB, [("spec", "tfReplicaSpecs", "Worker", "template", "spec")], [], (), id="TFJob"),
        pytest.param(
            RAYJOB,
            [("spec", "rayClusterSpec", "workerGroupSpecs", 0, "template", "spec")],
            [("spec", "rayClusterSpec", "headGroupSpec", "template", "spec")],
            (),
            id="RayJob-head-gets-none",
        ),
        pytest.param(
            RAYCLUSTER,
            [("spec", "workerGroupSpecs", i, "template", "spec") for i in (0, 1)],
            [("spec", "headGroupSpec", "template", "spec")],
            (),
            id="RayCluster",
        ),
    ],
)
def test_workload_kinds(
    text: str,
    with_claim: list[tuple[Any, ...]],
    without_claim: list[tuple[Any, ...]],
    label_owner: tuple[Any, ...],
) -> None:
    fragment = _fragment()
    result = apply_fragment(text, fragment, source="w.yaml")
    assert len(result.changed) == 1
    out = yaml.safe_load(result.text)
    for path in with_claim:
        assert _claims(_get(out, path)) == ([fragment.claim_name], [fragment.claim_name]), path
        assert _get(out, path)["priorityClassName"] == "training"
    for path in without_claim:
        assert _claims(_get(out, path)) == ([], []), path
    assert _get(out, label_owner)["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "training"}
    # Byte-preserving: every original line is still there, in order.
    kept = [line for line in result.text.splitlines() if line in text.splitlines()]
    assert kept == text.splitlines()


def _cli(tmp_path: Path, *args: str, stdin: str = "") -> tuple[int, str, str]:
    old = sys.argv, sys.stdin, sys.stdout, sys.stderr
    sys.argv, sys.stdin, sys.stdout, sys.stderr = ["drakit", *args], StringIO(stdin), StringIO(), StringIO()
    try:
        code = run_guarded(app)
        out, err = sys.stdout.getvalue(), sys.stderr.getvalue()  # type: ignore[attr-defined]
    finally:
        sys.argv, sys.stdin, sys.stdout, sys.stderr = old
    return code, out, err


def test_include_objects_puts_the_template_in_the_workloads_namespace(tmp_path: Path) -> None:
    path = tmp_path / "cron.yaml"
    path.write_text(CRONJOB + "---\n" + JOBSET, encoding="utf-8")
    code, out, err = _cli(tmp_path, "profile", "apply-to", str(path), "-p", "training-48g", "--include-objects")
    assert code == 0, err
    docs = list(yaml.safe_load_all(out))
    templates = [d for d in docs if d and d["kind"] == "ResourceClaimTemplate"]
    assert sorted(t["metadata"]["namespace"] for t in templates) == ["research", "training"]
    assert all(t["metadata"]["name"] == "training-48g" for t in templates)


def test_namespace_option_contradicting_the_workload_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "cron.yaml"
    path.write_text(CRONJOB, encoding="utf-8")
    code, out, err = _cli(tmp_path, "profile", "apply-to", str(path), "-p", "training-48g", "--include-objects", "-n", "ml")
    assert (code, out) == (1, "")
    assert "namespace \"research\" but the requested namespace is \"ml\"" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: base\ndata: &env\n  A: '1'\n---\n"
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  template:\n    spec:\n      containers:\n"
            "      - name: c\n        image: x\n        env: *env\n",
            "w.yaml:18:14: found undefined alias 'env' (anchors do not reach across '---'",
            id="alias-across-documents",
        ),
        pytest.param("kind: Job\nmetadata: {name: [x\n", "w.yaml:3:1:", id="unclosed-flow"),
        pytest.param("kind: Job\n  spec: 1\n bad: 2\n", "w.yaml:2:7: mapping values are not allowed here", id="bad-indent"),
    ],
)
def test_yaml_errors_are_one_line(tmp_path: Path, text: str, want: str) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(text, encoding="utf-8")
    code, out, err = _cli(tmp_path, "profile", "apply-to", str(path), "-p", "training-48g")
    assert (code, out) == (1, ""), err
    assert want in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only files")
def test_read_only_in_place_target(tmp_path: Path) -> None:
    path = tmp_path / "cron.yaml"
    path.write_text(CRONJOB, encoding="utf-8")
    path.chmod(stat.S_IRUSR)
    code, _, err = _cli(tmp_path, "profile", "apply-to", str(path), "-p", "training-48g", "-i")
    assert code == 1 and "cannot rewrite in place: Permission denied" in err and len(err.strip().splitlines()) == 1


def test_in_place_into_a_directory_is_one_line(tmp_path: Path) -> None:
    # A target that cannot be written whoever runs the test: stdin text, "-i" on a directory name.
    target = tmp_path / "dir.yaml"
    target.mkdir()
    code, _, err = _cli(tmp_path, "profile", "apply-to", str(target), "-p", "training-48g", "-i")
    assert code == 1 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
