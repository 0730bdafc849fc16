"""``drakit run --executor kubernetes`` on the real control plane, with kwok playing the kubelets.

The demo inventory's nodes are created as kwok-managed nodes and its ResourceSlices (the NVIDIA
driver's schema) are published for them; the real kube-scheduler allocates every claim.  An
observer beside the run polls the namespace's ResourceClaims, so the allocation the scheduler
chose is known independently of drakit's record, and the claim is gone (deleted with its
finished pod) when the record is read.

1. The record holds exactly the devices of the claim's ``status.allocation``, joined to the
   right slice attributes, with its timestamps in order; a failing command is still *finished*.
2. Through real Kueue v0.19.2 with a ClusterQueue whose quota fits one run's device: the second
   run's Job waits, and its record says *admitted* only once Kueue admitted its Workload.

Both runs go through the CLI as a user runs them, into a SQLite store.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import suppress
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from drakit.demo import cluster_objects
from drakit.records.run import RunRecord, RunState
from drakit.store.repo import open_store
from tests.integration import simbridge
from tests.integration.controlplane import ControlPlane
from tests.integration.gating import unavailable
from tests.integration.kube import Cluster
from tests.integration.kueue import KUEUE_API, KueueManager
from tests.integration.kwok import (
    EXECUTOR_RESOURCE,
    IMAGE_DIGEST,
    NODE_ANNOTATION,
    RUN_MS,
    Kwok,
    kwok_dir,
    missing_parts,
    start_kwok,
)

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
V1 = "resource.k8s.io/v1"
PROFILE = "evaluation"  # one GPU, 24 GB-class first (firstAvailable): the scheduler's choice is an L4
# Kueue v0.19.2 refuses firstAvailable requests ("FirstAvailable device selection is not
# supported"), so the queued runs ask for one device exactly.
QUEUED_PROFILE = """\
apiVersion: drakit.dev/v1alpha1
kind: Profile
metadata:
  name: kx-one-gpu
extends: nvidia-base
spec:
  count: 1
  memory:
    max: 32GB
"""


@pytest.fixture(scope="module")
def kwok(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kwok]:
    directory = kwok_dir()
    missing = missing_parts(directory)
    if missing:
        unavailable(f"kwok not built ({', '.join(missing)} missing in {directory}); run `make cluster`")
    manager = start_kwok(control_plane, tmp_path_factory.mktemp("kwok"), directory)
    try:
        yield manager
    finally:
        manager.stop()


@pytest.fixture(scope="module")
def fake_nodes(cluster: Cluster, kwok: Kwok) -> Iterator[list[dict[str, Any]]]:
    """The demo inventory on kwok nodes: its slices published, its DeviceClasses created."""
    key, value = NODE_ANNOTATION
    with simbridge.installed(cluster, cluster_objects(), {key: value}) as objects:
        yield objects


class ClaimObserver:
    """Every allocation the namespace's ResourceClaims showed, by claim name (polled, independent of drakit)."""

    def __init__(self, cluster: Cluster, namespace: str) -> None:
        self.cluster, self.namespace = cluster, namespace
        self.seen: dict[str, dict[str, Any]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self) -> ClaimObserver:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _poll(self) -> None:
        while not self._stop.is_set():
            with suppress(ApiException, OSError):
                for claim in self.cluster.list_objects(V1, "ResourceClaim", self.namespace):
                    if (claim.get("status") or {}).get("allocation"):
                        self.seen.setdefault(claim["metadata"]["name"], claim)
            self._stop.wait(0.2)


def _kubeconfig(plane: ControlPlane, tmp: Path) -> Path:
    return plane.write_kubeconfig(tmp / "kubeconfig")


def _drakit_run(kubeconfig: Path, store: str, namespace: str, run_id: str, *command: str,
                extra: tuple[str, ...] = (), profile: str = PROFILE) -> subprocess.Popen[str]:
    args = [sys.executable, "-m", "drakit.cli.main", "run", "--executor", "kubernetes", "-p", profile,
            "--image", "python:3.12-slim", "-n", namespace, "--run-id", run_id, "--kubeconfig", str(kubeconfig),
            "--store", store, "--wait", "120", *extra, "--", *command]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env)


def _finish(proc: subprocess.Popen[str], timeout: float = 180) -> tuple[int, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, out + err


def _slice_devices(cluster: Cluster) -> dict[tuple[str, str, str], tuple[dict[str, Any], dict[str, Any]]]:
    out = {}
    for s in cluster.list_objects(V1, "ResourceSlice"):
        for d in s["spec"].get("devices") or []:
            out[(s["spec"]["driver"], s["spec"]["pool"]["name"], d["name"])] = (s, d)
    return out


def _check_joined(record: RunRecord, allocation: dict[str, Any], slices: dict[Any, Any]) -> None:
    results = allocation["devices"]["results"]
    assert [(d.request, d.driver, d.pool, d.device) for d in record.devices] == \
        [(r["request"], r["driver"], r["pool"], r["device"]) for r in results]
    for d in record.devices:
        slice_, device = slices[(d.driver, d.pool, d.device)]
        attrs = device["attributes"]
        assert d.joined
        assert d.uuid == attrs["uuid"]["string"]
        assert d.product == attrs["productName"]["string"]
        assert d.driver_version == attrs["driverVersion"]["version"]
        assert d.slice_name == slice_["metadata"]["name"]
        assert d.pool == slice_["spec"]["pool"]["name"]
        assert d.pool_generation == slice_["spec"]["pool"]["generation"]


def _times(record: RunRecord) -> list[datetime]:
    return [t.at for t in record.run.transitions]


PAIR_PROFILE = """\
apiVersion: drakit.dev/v1alpha1
kind: Profile
metadata:
  name: kx-pair
extends: nvidia-base
spec:
  count: 2
  memory:
    min: 48Gi
  colocate: pcieRoot
"""


def test_the_record_holds_the_schedulers_devices_joined_to_their_slices(
    cluster: Cluster, control_plane: ControlPlane, fake_nodes: list[dict[str, Any]], tmp_path: Path
) -> None:
    store_url = f"sqlite:///{tmp_path / 'runs.db'}"
    kubeconfig = _kubeconfig(control_plane, tmp_path)
    with cluster.namespace("kx") as ns, ClaimObserver(cluster, ns) as observer:
        pair_profile = tmp_path / "kx-pair.yaml"
        pair_profile.write_text(PAIR_PROFILE, encoding="utf-8")
        ok = _finish(_drakit_run(kubeconfig, store_url, ns, "kx-ok", "python", "-c", "print('trained')"))
        failed = _finish(_drakit_run(kubeconfig, store_url, ns, "kx-fails", "false"))
        pair = _finish(_drakit_run(kubeconfig, store_url, ns, "kx-pair", "true", profile=str(pair_profile)))
        slices = _slice_devices(cluster)
        assert ok[0] == 0, ok[1]
        assert failed[0] == 1, failed[1]
        assert pair[0] == 0, pair[1]
        store = open_store(store_url)
        for run_id in ("kx-ok", "kx-fails", "kx-pair"):
            record = store.get(run_id)
            assert [t.state for t in record.run.transitions] == [
                RunState.SUBMITTED, RunState.ADMITTED, RunState.CLAIM_ALLOCATED, RunState.CONTAINER_STARTED,
                RunState.FINISHED]
            assert _times(record) == sorted(_times(record))
            assert record.claim is not None and record.claim.name in observer.seen, (record.claim, observer.seen.keys())
            claim = observer.seen[record.claim.name]
            assert record.claim.uid == claim["metadata"]["uid"]
            assert record.claim.template == record.run.profile and record.claim.pod_name.startswith(f"{run_id}-")
            assert record.claim.node == record.devices[0].pool  # the NVIDIA driver names each node's pool after it
            _check_joined(record, claim["status"]["allocation"], slices)
            assert cluster.get(V1, "ResourceClaim", record.claim.name, ns) is None, "deleted with its pod"
            assert record.env is not None and record.env.image_digest == IMAGE_DIGEST
            assert any("Scheduled" in v for v in record.env.frameworks.values()), record.env.frameworks
            assert record.result is not None and record.result.runtime_s is not None
            assert abs(record.result.runtime_s - RUN_MS / 1000) <= 1.0  # the kubelet's timestamps are whole seconds
        assert store.get("kx-ok").devices[0].product == "NVIDIA L4", "smallest-first: a 24 GB-class GPU"
        two = store.get("kx-pair").devices
        assert len(two) == 2 and {d.product for d in two} == {"NVIDIA H100 80GB HBM3"}
        assert two[0].pcie_root and two[0].pcie_root == two[1].pcie_root, "colocate: one PCIe root"
        assert store.get("kx-ok").result.exit_status == 0  # type: ignore[union-attr]
        assert store.get("kx-fails").result.exit_status == 1  # type: ignore[union-attr]


def _condition_time(obj: dict[str, Any], kind: str) -> datetime | None:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c["type"] == kind and c["status"] == "True":
            return datetime.fromisoformat(c["lastTransitionTime"].replace("Z", "+00:00"))
    return None


def _workload_of(cluster: Cluster, ns: str, job: str) -> dict[str, Any]:
    uid = cluster.get("batch/v1", "Job", job, ns)["metadata"]["uid"]  # type: ignore[index]
    return next(w for w in cluster.list_objects(KUEUE_API, "Workload", ns)
                if any(o.get("uid") == uid for o in w["metadata"].get("ownerReferences") or []))


def test_through_kueue_the_second_run_is_admitted_only_when_kueue_admits_it(
    cluster: Cluster, control_plane: ControlPlane, kueue: KueueManager, fake_nodes: list[dict[str, Any]],
    tmp_path: Path,
) -> None:
    store_url = f"sqlite:///{tmp_path / 'runs.db'}"
    kubeconfig = _kubeconfig(control_plane, tmp_path)
    flavor = {"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": {"name": "kx-default"}}
    queue = {"apiVersion": KUEUE_API, "kind": "ClusterQueue", "metadata": {"name": "kx-one-gpu"},
             "spec": {"namespaceSelector": {}, "resourceGroups": [{
                 "coveredResources": [EXECUTOR_RESOURCE],
                 "flavors": [{"name": "kx-default", "resources": [{"name": EXECUTOR_RESOURCE, "nominalQuota": 1}]}]}]}}
    made = [flavor, queue]
    for obj in made:
        cluster.apply(obj)
    try:
        with cluster.namespace("kxq") as ns:
            cluster.apply({"apiVersion": KUEUE_API, "kind": "LocalQueue", "metadata": {"name": "kx-lq", "namespace": ns},
                           "spec": {"clusterQueue": "kx-one-gpu"}})
            profile = tmp_path / "kx-one-gpu.yaml"
            profile.write_text(QUEUED_PROFILE, encoding="utf-8")
            runs: list[subprocess.Popen[str]] = []

            def submit(run_id: str) -> None:
                runs.append(_drakit_run(kubeconfig, store_url, ns, run_id, "python", "-c", "1",
                                        extra=("--queue", "kx-lq"), profile=str(profile)))

            store = open_store(store_url)

            def admitted() -> bool | None:
                with suppress(Exception):
                    return store.get("kxq-first").run.at(RunState.ADMITTED) is not None or None
                return None

            try:
                submit("kxq-first")
                cluster.wait_for("the first run admitted", admitted, timeout=120)
                submit("kxq-second")
                results = [_finish(p) for p in runs]
            finally:
                for p in runs:
                    if p.poll() is None:
                        p.kill()
            assert [r[0] for r in results] == [0, 0], results
            a, b = store.get("kxq-first"), store.get("kxq-second")
            assert a.run.queue == b.run.queue == "kx-lq"
            assert a.run.state is b.run.state is RunState.FINISHED
            wl_a, wl_b = _workload_of(cluster, ns, "kxq-first"), _workload_of(cluster, ns, "kxq-second")
            kueue_admitted_b, kueue_finished_a = _condition_time(wl_b, "Admitted"), _condition_time(wl_a, "Finished")
            assert kueue_admitted_b is not None and kueue_finished_a is not None
            assert kueue_admitted_b >= kueue_finished_a, "the quota holds one run: Kueue admitted the second after the first"
            recorded_b = b.run.at(RunState.ADMITTED)
            assert recorded_b is not None and recorded_b >= kueue_admitted_b
            started_a = a.run.at(RunState.CONTAINER_STARTED)
            assert started_a is not None and recorded_b > started_a, "recorded admitted while the first run still ran"
    finally:
        for obj in reversed(made):
            with suppress(ApiException):
                cluster.delete(obj)


def _token(cluster: Cluster, ns: str, sa: str) -> str:
    from kubernetes import client as k8s

    cluster.core.create_namespaced_service_account(ns, k8s.V1ServiceAccount(metadata=k8s.V1ObjectMeta(name=sa)))
    request = k8s.AuthenticationV1TokenRequest(spec=k8s.V1TokenRequestSpec(audiences=[], expiration_seconds=3600))
    return str(cluster.core.create_namespaced_service_account_token(sa, ns, request).status.token)  # type: ignore[union-attr]


UNFIT_PROFILE = """\
apiVersion: drakit.dev/v1alpha1
kind: Profile
metadata:
  name: kx-sixteen
extends: nvidia-base
spec:
  count: 16
"""


def test_the_runner_role_suffices_and_refusals_record_nothing(
    cluster: Cluster, control_plane: ControlPlane, fake_nodes: list[dict[str, Any]], tmp_path: Path
) -> None:
    """``drakit rbac runner`` is enough to run; a reader is refused (exit 6, one line), a missing
    namespace is exit 2, and neither records anything; a claim no node can hold is recorded
    *failed* with drakit's diagnosis (exit 3), not raised."""
    from drakit.live.rbac import Subject, manifests

    store_url = f"sqlite:///{tmp_path / 'runs.db'}"
    unfit = tmp_path / "kx-sixteen.yaml"
    unfit.write_text(UNFIT_PROFILE, encoding="utf-8")
    with cluster.namespace("kxr") as ns:
        objects = [*manifests("runner", namespace=ns, subject=Subject("ServiceAccount", "runner", ns)),
                   *manifests("reader-namespaced", namespace=ns, subject=Subject("ServiceAccount", "reader", ns))]
        objects = [o for o in objects if o["kind"] != "ServiceAccount"]
        runner = control_plane.write_kubeconfig(tmp_path / "runner", token=_token(cluster, ns, "runner"))
        reader = control_plane.write_kubeconfig(tmp_path / "reader", token=_token(cluster, ns, "reader"))
        cluster.apply_all(objects)
        try:
            code, text = _finish(_drakit_run(runner, store_url, ns, "kxr-ok", "true"))
            assert code == 0, text
            code, text = _finish(_drakit_run(reader, store_url, ns, "kxr-denied", "true"))
            assert code == 6 and text.startswith("error: forbidden: may not create jobs in namespace") \
                and len(text.splitlines()) == 1, text
            admin = _kubeconfig(control_plane, tmp_path)  # may create Jobs anywhere: RBAC would answer first
            code, text = _finish(_drakit_run(admin, store_url, "kx-no-such-namespace", "kxr-nowhere", "true"))
            assert code == 2 and len(text.splitlines()) == 1 and "not found" in text, text
            code, text = _finish(_drakit_run(runner, store_url, ns, "kxr-unfit", "true", profile=str(unfit)))
            assert code == 3, text
            store = open_store(store_url)
            assert [r.id for r in store.runs()] == ["kxr-ok", "kxr-unfit"]
            unfit_run = store.get("kxr-unfit").run
            assert unfit_run.state is RunState.FAILED and unfit_run.verdict is not None
            assert unfit_run.verdict.value == "never" and unfit_run.reason_code, unfit_run
            assert cluster.get("batch/v1", "Job", "kxr-unfit", ns) is None, "the failed run's Job is deleted"
        finally:
            for o in objects:
                cluster.delete(o, ns)
