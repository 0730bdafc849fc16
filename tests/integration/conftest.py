"""Session fixture: a real control plane (etcd, kube-apiserver, kube-scheduler,
kube-controller-manager) on loopback, built by ``make cluster``.

Outside CI, tests skip with the reason when the binaries are not built. With ``CI`` set, a
control plane that cannot start is a failure, never a skip: CI builds the binaries first, so
a missing binary there is a broken pipeline. When a cluster test fails, the last lines of each
component's log are attached to the failure report.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.controlplane import (
    ControlPlane,
    ControlPlaneError,
    bin_dir,
    missing_binaries,
    start_control_plane,
)
from tests.integration.gating import unavailable
from tests.integration.kube import Cluster
from tests.integration.kueue import (
    INJECTION_MAPPINGS,
    KueueError,
    KueueManager,
    kueue_dir,
    missing_parts,
    start_kueue,
    stop_kueue,
)
from tests.integration.kueue_scenario import DEVICE_CLASS_MAPPINGS
from tests.integration.kwok import EXECUTOR_MAPPINGS

_RUNNING: list[ControlPlane] = []
_KUEUE: list[KueueManager] = []


@pytest.fixture(scope="session")
def control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    directory = bin_dir()
    missing = missing_binaries(directory)
    if missing:
        unavailable(
            f"control-plane binaries not built ({', '.join(missing)} missing in {directory}); run `make cluster`"
        )
    if shutil.which("openssl") is None:
        unavailable("openssl is needed to create the control plane's keys and certificates")
    workdir = tmp_path_factory.mktemp("control-plane")
    try:
        plane = start_control_plane(workdir, binaries=directory)
    except ControlPlaneError as exc:
        failure = str(exc)
    else:
        failure = ""
    if failure:
        # Binaries exist but the control plane does not come up: a real failure everywhere.
        pytest.fail(failure, pytrace=False)
    _RUNNING.append(plane)
    try:
        yield plane
    finally:
        _RUNNING.remove(plane)
        plane.stop()


@pytest.fixture(scope="session")
def cluster(control_plane: ControlPlane) -> Iterator[Cluster]:
    client = Cluster(control_plane)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="session")
def kueue(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KueueManager]:
    """Kueue v0.19.2 (``cluster/addons.sh``) running against the session's control plane, with the
    agreement scenario's deviceClassMappings, the kubernetes executor check's and the injection
    check's (the manager reads them only at start)."""
    directory = kueue_dir()
    missing = missing_parts(directory)
    if missing:
        unavailable(f"Kueue not built ({', '.join(missing)} missing in {directory}); run `make cluster`")
    try:
        manager = start_kueue(
            cluster,
            tmp_path_factory.mktemp("kueue"),
            device_class_mappings=DEVICE_CLASS_MAPPINGS + EXECUTOR_MAPPINGS + INJECTION_MAPPINGS,
        )
    except KueueError as exc:
        pytest.fail(str(exc), pytrace=False)
    _KUEUE.append(manager)
    try:
        yield manager
    finally:
        _KUEUE.remove(manager)
        stop_kueue(cluster, manager)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.failed and _RUNNING and "control_plane" in getattr(item, "fixturenames", ()):
        plane = _RUNNING[-1]
        header = f"logs in {plane.workdir / 'logs'}"
        report.sections.append(("control-plane log tails", f"{header}\n{plane.log_tails()}"))
    if report.failed and _KUEUE and "kueue" in getattr(item, "fixturenames", ()):
        manager = _KUEUE[-1]
        report.sections.append(("kueue log tail", f"{manager.log_file}\n{manager.log_tail()}"))
