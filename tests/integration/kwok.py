"""kwok v0.8.0 beside the test control plane: pods on fake nodes that run and finish without a kubelet.

The control plane has no kubelet, so a pod the scheduler binds stays Pending forever.  kwok
(``sigs.k8s.io/kwok``, built by ``cluster/addons.sh``) plays the kubelet's part for the nodes it
manages — here only nodes annotated ``kwok.x-k8s.io/node: fake``, so the other integration tests'
nodes are left alone — by applying *stages*: when an object matches a stage's selector, kwok
writes the stage's status.  Standalone kwok has no built-in stages (``kwokctl`` adds its own), so
the ones below are ours, written for what the executor's check needs:

- ``node-ready``: a managed node that is not Ready becomes Ready;
- ``pod-running``: a bound Pending pod starts its containers (``state.running.startedAt``, and
  an ``imageID`` with the digest :data:`IMAGE_DIGEST`, as a container runtime reports it);
- ``pod-complete`` / ``pod-fail``: a Job's running pod ends after :data:`RUN_MS` — exit 0, or
  exit 1 when its command is ``false`` (the configured failure);
- ``pod-delete``: a pod being deleted is removed (no kubelet would ever confirm it).

The delay before the end matters: the resourceclaim controller deletes a template's claim as
soon as its pod is done, and the executor must see the allocation first.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.integration.controlplane import ControlPlane, ControlPlaneError, _tail, cache_root

KWOK_VERSION = "v0.8.0"
NODE_ANNOTATION = ("kwok.x-k8s.io/node", "fake")
IMAGE_DIGEST = "sha256:" + "5e" * 32
RUN_MS = 3000
# What the session's Kueue charges the executor check's queued claims to (the DeviceClass of its
# profile ``kx-one-gpu``); the Kueue fixture starts the manager with it beside the agreement
# scenario's mappings.
EXECUTOR_RESOURCE = "drakit.dev/one-gpu"
EXECUTOR_MAPPINGS = ({"name": EXECUTOR_RESOURCE, "deviceClassNames": ["kx-one-gpu.gpu.nvidia.com"]},)


class KwokError(ControlPlaneError):
    """kwok could not be started; the message carries its log tail."""


def kwok_dir() -> Path:
    """Where ``cluster/addons.sh`` puts kwok (``bin/kwok``); ``DRAKIT_KWOK_DIR`` overrides it."""
    override = os.environ.get("DRAKIT_KWOK_DIR")
    if override:
        return Path(override)
    return cache_root() / f"kwok-{KWOK_VERSION}"


def missing_parts(directory: Path) -> list[str]:
    return [] if os.access(directory / "bin" / "kwok", os.X_OK) else ["bin/kwok"]


_NOT_DELETED = """\
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'"""

_END = """\
  delay:
    durationMilliseconds: {run_ms}
  next:
    statusTemplate: |
      {{{{ $now := Now }}}}
      containerStatuses:
      {{{{ range .status.containerStatuses }}}}
      - image: {{{{ .image | Quote }}}}
        imageID: {{{{ .imageID | Quote }}}}
        name: {{{{ .name | Quote }}}}
        ready: false
        restartCount: 0
        started: false
        state:
          terminated:
            exitCode: {exit_code}
            reason: {reason}
            startedAt: {{{{ .state.running.startedAt | Quote }}}}
            finishedAt: {{{{ $now | Quote }}}}
      {{{{ end }}}}
      phase: {phase}
"""


def _end_stage(name: str, operator: str, exit_code: int, reason: str, phase: str) -> str:
    return f"""\
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: {name}
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
{_NOT_DELETED}
    - key: '.status.phase'
      operator: 'In'
      values: ['Running']
    - key: '.metadata.ownerReferences.[].kind'
      operator: 'In'
      values: ['Job']
    - key: '.spec.containers.[0].command.[0]'
      operator: '{operator}'
      values: ['false']
""" + _END.format(run_ms=RUN_MS, exit_code=exit_code, reason=reason, phase=phase)


STAGES = f"""\
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: node-ready
spec:
  resourceRef:
    apiGroup: v1
    kind: Node
  selector:
    matchExpressions:
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: 'NotIn'
      values: ['True']
  next:
    statusTemplate: |
      {{{{ $now := Now }}}}
      conditions:
      - type: Ready
        status: "True"
        reason: KubeletReady
        message: kwok plays this node's kubelet
        lastHeartbeatTime: {{{{ $now | Quote }}}}
        lastTransitionTime: {{{{ $now | Quote }}}}
      phase: Running
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-running
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
{_NOT_DELETED}
    - key: '.status.phase'
      operator: 'In'
      values: ['Pending']
  next:
    statusTemplate: |
      {{{{ $now := Now }}}}
      conditions:
      - type: Initialized
        status: "True"
        lastTransitionTime: {{{{ $now | Quote }}}}
      - type: Ready
        status: "True"
        lastTransitionTime: {{{{ $now | Quote }}}}
      - type: ContainersReady
        status: "True"
        lastTransitionTime: {{{{ $now | Quote }}}}
      containerStatuses:
      {{{{ range .spec.containers }}}}
      - image: {{{{ .image | Quote }}}}
        imageID: {{{{ printf "%s@{IMAGE_DIGEST}" .image | Quote }}}}
        name: {{{{ .name | Quote }}}}
        ready: true
        restartCount: 0
        started: true
        state:
          running:
            startedAt: {{{{ $now | Quote }}}}
      {{{{ end }}}}
      phase: Running
      startTime: {{{{ $now | Quote }}}}
---
{_end_stage("pod-complete", "NotIn", 0, "Completed", "Succeeded")}---
{_end_stage("pod-fail", "In", 1, "Error", "Failed")}---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-delete
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'Exists'
  next:
    delete: true
"""


@dataclass
class Kwok:
    """The running kwok process and its files."""

    directory: Path
    plane: ControlPlane
    workdir: Path
    proc: subprocess.Popen[bytes] | None = None

    @property
    def log_file(self) -> Path:
        return self.workdir / "kwok.log"

    def log_tail(self, lines: int = 30) -> str:
        return _tail(self.log_file, lines)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, timeout: float = 60.0) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        config = self.workdir / "stages.yaml"
        config.write_text(STAGES, encoding="utf-8")
        kubeconfig = self.plane.write_kubeconfig(self.workdir / "kubeconfig")
        key, value = NODE_ANNOTATION
        with self.log_file.open("ab") as log:
            self.proc = subprocess.Popen(
                [str(self.directory / "bin" / "kwok"), f"--kubeconfig={kubeconfig}", f"--config={config}",
                 f"--manage-nodes-with-annotation-selector={key}={value}", "--node-lease-duration-seconds=0"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.workdir,
                start_new_session=True,
            )
        self._wait_started(time.monotonic() + timeout)

    def _wait_started(self, deadline: float) -> None:
        """kwok has no readiness endpoint here; it is ready once it logs that it watches the nodes it manages."""
        while time.monotonic() < deadline:
            if not self.alive():
                raise KwokError(f"kwok exited with {self.proc.returncode if self.proc else None}\n{self.log_tail()}")
            text = self.log_file.read_text(errors="replace")
            if '"msg":"Watch nodes"' in text:
                return
            time.sleep(0.3)
        raise KwokError(f"kwok did not start within its deadline\n{self.log_tail()}")

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.proc = None


def start_kwok(plane: ControlPlane, workdir: Path, directory: Path | None = None) -> Kwok:
    kwok = Kwok(directory=directory or kwok_dir(), plane=plane, workdir=workdir)
    kwok.start()
    return kwok
