"""The trial follows kubectl's convention: without -f it reads the configured cluster, and falls back
to the embedded demo only where no cluster is configured at all (with a warning)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


def _trial(tmp_path: Path, *args: str, kubeconfig: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")}
    env["HOME"] = str(tmp_path)  # no ~/.kube/config unless the case writes one
    if kubeconfig:
        (tmp_path / ".kube").mkdir()
        (tmp_path / ".kube" / "config").write_text(KUBECONFIG)
    return subprocess.run([sys.executable, "-m", "drakit.cli.main", "trial", "-o", "json", "--request-timeout", "2",
                           *args], capture_output=True, text=True, check=False, env=env, timeout=120)


@pytest.mark.parametrize(
    ("args", "kubeconfig", "code", "stderr"),
    [
        pytest.param((), False, {0, 1}, "running on the embedded demo cluster", id="no-cluster-demo"),
        pytest.param(("--demo",), True, {0, 1}, "", id="explicit-demo"),
        pytest.param((), True, {5}, "cannot reach the API server", id="configured-cluster-read"),
        pytest.param(("--execute",), True, {2}, "never over a live cluster", id="execute-refused-live"),
    ],
)  # fmt: skip
def test_trial_source(tmp_path: Path, args: tuple[str, ...], kubeconfig: bool, code: set[int], stderr: str) -> None:
    done = _trial(tmp_path, *args, kubeconfig=kubeconfig)
    assert done.returncode in code, done.stderr
    assert stderr in done.stderr
    if not stderr:
        assert "embedded demo" not in done.stderr


def test_the_cluster_chosen_is_the_cluster_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One resolution of the kubeconfig decides cluster-vs-demo and is the one the client connects with."""
    from drakit.cli.testing import run
    from drakit.live import config

    (tmp_path / ".kube").mkdir()
    (tmp_path / ".kube" / "config").write_text(KUBECONFIG)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    real = config.resolve
    calls: list[config.ConnectOptions] = []

    def counted(options: config.ConnectOptions, *args: object, **kwargs: object) -> config.Target:
        calls.append(options)
        return real(options)

    for module in ("drakit.live.config", "drakit.live.kube"):
        monkeypatch.setattr(f"{module}.resolve", counted)
    done = run("trial", "-o", "json", "--request-timeout", "2")
    assert done.exit_code == 5 and "cannot reach the API server" in done.stderr, done.stderr
    assert calls == [config.ConnectOptions(None, None, 2.0)]
