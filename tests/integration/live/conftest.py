"""Fixtures for the live-cluster tests: kubeconfigs onto the session's control plane."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.controlplane import ControlPlane
from tests.integration.gating import require


@pytest.fixture(scope="session")
def admin_kubeconfig(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Path:
    require("drakit.live.kube", "KubeClient")
    return control_plane.write_kubeconfig(tmp_path_factory.mktemp("live") / "admin.kubeconfig")
