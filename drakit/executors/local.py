"""The ``local`` and ``sim`` executors: a placed run launched on this machine, or not launched at all.

``local`` runs the command as a child process with the allocated devices exposed by UUID, the
way CUDA selects devices on a machine without a container runtime: ``CUDA_VISIBLE_DEVICES`` lists
the GPU/MIG UUIDs, and ``NVIDIA_VISIBLE_DEVICES`` is ``void`` — what a DRA container gets from the
NVIDIA driver's CDI edits, so a workload sees the same variables locally as on the cluster.
``sim`` stops after placement: the record shows admission and the exact devices, with a declared
duration instead of a process.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from drakit.executors import metrics
from drakit.executors.base import Launched, RunRequest, tags_json
from drakit.executors.placement import Placement
from drakit.records.run import ResultProblem

__all__ = ["LocalLauncher", "SimLauncher", "launch_env"]


def launch_env(request: RunRequest, placement: Placement, metrics_path: str,
               base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The child's environment: the caller's, the devices by UUID, and where to report."""
    env = dict(os.environ if base is None else base)
    env.update(request.env)
    env.update({
        "CUDA_VISIBLE_DEVICES": ",".join(placement.uuids),
        "NVIDIA_VISIBLE_DEVICES": "void",
        "DRAKIT_RUN_ID": request.run_id,
        "DRAKIT_CLAIM_UID": placement.record.uid,
        "DRAKIT_CLAIM_DEVICES": ",".join(placement.uuids),
        metrics.ENV_VAR: metrics_path,
        "MLFLOW_RUN_CONTEXT": tags_json(request, placement),
    })
    return env


class LocalLauncher:
    """Runs the command here; startup ends at the workload's ``ready`` mark (else at spawn)."""

    runs_image = False  # the host's processes: an --image is recorded as requested, not used

    def __init__(self, workdir: str | None = None, base_env: Mapping[str, str] | None = None,
                 timeout_s: float | None = None) -> None:
        self.workdir = workdir
        self.base_env = base_env
        self.timeout_s = timeout_s

    def launch(self, request: RunRequest, placement: Placement, started: Callable[[], None]) -> Launched:
        with tempfile.TemporaryDirectory(prefix=f"drakit-{request.run_id[:40]}-", dir=self.workdir) as tmp:
            path = str(Path(tmp) / "metrics.jsonl")
            env = launch_env(request, placement, path, self.base_env)
            t0, wall0 = time.monotonic(), time.time()
            try:
                child = subprocess.Popen(list(request.command), env=env)
            except OSError as e:
                started()
                return Launched(exit_status=127, startup_s=time.monotonic() - t0, runtime_s=0.0,
                                problems=(ResultProblem.of(0, f"cannot start {request.command[0]!r}: {e.strerror}"),))
            spawned = time.monotonic()
            started()
            try:
                status = child.wait(timeout=self.timeout_s)
            except subprocess.TimeoutExpired:
                child.kill()
                status = child.wait()
            t1 = time.monotonic()
            got = metrics.read(path)
        # The ready mark is wall-clock (written by another process); place it on the monotonic line.
        ready = spawned if got.ready_at is None else min(max(t0 + (got.ready_at - wall0), t0), t1)
        return Launched(exit_status=status, startup_s=ready - t0, runtime_s=t1 - ready,
                        correctness=got.correctness, series=got.series, problems=got.problems,
                        problem_count=got.problem_count)


class SimLauncher:
    """No process: the placed run 'runs' for ``duration_s`` of simulated time, exit status 0."""

    runs_image = False

    def __init__(self, duration_s: float = 0.0) -> None:
        self.duration_s = duration_s

    def launch(self, request: RunRequest, placement: Placement, started: Callable[[], None]) -> Launched:
        started()
        return Launched(exit_status=0, startup_s=0.0, runtime_s=self.duration_s)

