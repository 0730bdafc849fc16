"""A real manifest folder: a Job's pod template waits for GPUs another pod holds.

The folder mixes what a platform team keeps next to its claims (Namespace, Service, ConfigMap,
a ``kubectl get -o yaml`` List, ``events.k8s.io`` Events, a Deployment and a CronJob): the Job
has no pod yet, yet ``explain`` must answer for the pod its template makes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from drakit.cli.main import app

MANIFESTS = """\
apiVersion: v1
kind: Namespace
metadata: {name: ml}
---
apiVersion: v1
kind: Service
metadata: {name: train, namespace: ml}
spec:
  selector: {app: train}
  ports: [{port: 80}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: train-config, namespace: ml}
data: {epochs: "3"}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: "device.driver == 'gpu.example.com'"}
---
apiVersion: v1
kind: Node
metadata:
  name: node-a
  labels: {kubernetes.io/hostname: node-a}
status:
  allocatable: {cpu: "8", memory: 64Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-a-gpu}
spec:
  driver: gpu.example.com
  nodeName: node-a
  pool: {name: node-a, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
  - name: gpu-1
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com}
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: dumped, namespace: ml}
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata: {name: busy, namespace: ml, uid: c-busy}
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com, allocationMode: All}
  status:
    allocation:
      devices:
        results:
        - {request: gpu, driver: gpu.example.com, pool: node-a, device: gpu-0}
        - {request: gpu, driver: gpu.example.com, pool: node-a, device: gpu-1}
    reservedFor: [{resource: pods, name: holder, uid: p-holder}]
- apiVersion: v1
  kind: Pod
  metadata: {name: holder, namespace: ml, uid: p-holder}
  spec:
    nodeName: node-a
    containers: [{name: c, image: busybox}]
    resourceClaims: [{name: gpu, resourceClaimName: busy}]
  status: {phase: Running}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    metadata:
      labels: {app: train}
    spec:
      restartPolicy: Never
      containers: [{name: train, image: trainer}]
      resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ml}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers: [{name: web, image: nginx}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: ml}
spec:
  schedule: "0 1 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: nightly, image: busybox}]
---
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: holder.1, namespace: ml}
regarding: {kind: Pod, name: holder, namespace: ml}
reason: Started
note: Started container c
type: Normal
eventTime: "2026-01-01T00:00:00.000000Z"
reportingController: kubelet
reportingInstance: node-a
action: Started
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "cluster.yaml").write_text(MANIFESTS, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    "target",
    [
        pytest.param(["pod/train-0"], id="template-pod"),
        pytest.param(["job/train"], id="job"),
        pytest.param(["jobs", "train"], id="kind-then-name"),
    ],
)
def test_job_template_pod_waits_for_held_gpus(folder: Path, target: list[str]) -> None:
    result = CliRunner().invoke(app, ["explain", *target, "-n", "ml", "-f", str(folder), "-o", "json"])
    assert result.exit_code != 2, result.output
    d = json.loads(result.stdout)
    assert (d["target"], d["verdict"], d["origin"]) == ("pod/ml/train-0", "waiting", "pod template of Job ml/train; the controller generates the pod's name")
    assert [h["claim"] for h in d["holders"]] == ["ml/busy"]
    assert d["holders"][0]["pods"] == ["ml/holder"]


def test_text_names_the_template(folder: Path) -> None:
    result = CliRunner().invoke(app, ["explain", "job/train", "-n", "ml", "-f", str(folder)])
    assert "pod/ml/train-0: WAITING" in result.stdout
    assert "  from: pod template of Job ml/train" in result.stdout
    assert "ml/busy: 2 device(s) (pod ml/holder)" in result.stdout


def test_all_pending_lists_the_template_pod(folder: Path) -> None:
    result = CliRunner().invoke(app, ["explain", "pods", "--all-pending", "-A", "-f", str(folder), "-o", "json"])
    d = json.loads(result.stdout)
    # the Deployment's and CronJob's pods request no devices: not listed
    assert [(p["pod"], p["origin"]) for p in d["pods"]] == [("ml/train-0", "pod template of Job ml/train")]
    assert d["groups"][0]["verdict"] == "waiting"
    text = CliRunner().invoke(app, ["explain", "pods", "--all-pending", "-n", "ml", "-f", str(folder)]).stdout
    assert "WAITING (DevicesInUse): 1 pod(s)" in text
    assert "  - ml/train-0 (pod template of Job ml/train)" in text


@pytest.mark.parametrize(
    ("target", "found"),
    [
        pytest.param("deployment/web", "pod/ml/web-0", id="deployment"),
        pytest.param("cronjob/nightly", "pod/ml/nightly-0", id="cronjob"),
    ],
)
def test_other_workloads_resolve(folder: Path, target: str, found: str) -> None:
    result = CliRunner().invoke(app, ["explain", target, "-n", "ml", "-f", str(folder), "-o", "json"])
    d = json.loads(result.stdout)
    assert d["target"] == found
    assert d["origin"].startswith("pod template of ")
