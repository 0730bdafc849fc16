"""``describe`` and ``explain`` of a preparation failure on the real control plane.

The test plane has no kubelet, so the part a kubelet plays is played here, and only that part:
the real scheduler allocates the claim and binds the pod (or, for the pod-not-reserved class, a
second pod bypasses the scheduler with ``spec.nodeName``, as such pods do), then the test posts
the Event a v1.37.2 kubelet posts — reason ``FailedPrepareDynamicResources``, source ``kubelet``,
the message built as kuberuntime and the DRA manager build it.  Everything is then read back from
the API server into a bundle (``kubectl get -o yaml`` form) and ``drakit describe`` / ``explain``
/ ``get devices`` run on it as a user runs them, and once more on the live cluster
(``--kubeconfig``), which must give the same answers.  Each of the five classes must come out with its
code, verdict and owner, and the describe view must show the device the scheduler really chose,
joined to its slice, and the scheduler's and the kubelet's events in time order.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from drakit.inventory import templates as t
from tests.integration import explainbridge as eb
from tests.integration.kube import Cluster

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
NODE = "describe-h100-0"
SKU = t.NVIDIA_SKUS["h100"]
CLAIM = "train-gpus"
# v1.37.2's resourceclaim controller reserves an *allocated* claim for a pod whose nodeName was
# preset (controller.go syncPod), so the pod that stays unreserved is one that bypasses the
# scheduler with a claim nobody allocated.
SPARE = "spare-gpus"
EXIT_FOR_VERDICT = {"ok": 0, "waiting": 3, "never": 3, "broken": 1}

# kuberuntime_manager.go: "Failed to prepare dynamic resources: %v" around manager.go's
# "prepare dynamic resources: %w".
PREFIX = "Failed to prepare dynamic resources: prepare dynamic resources: "


@dataclass(frozen=True)
class Case:
    cls: str
    code: str
    verdict: str
    owner: str
    error: Callable[[dict[str, Any]], str]  # the DRA manager's error, from the objects' names and uids
    target: str = "train"  # the pod the kubelet fails on


def _pod_not_reserved(o: dict[str, Any]) -> str:
    return f"pod intruder ({o['intruder_uid']}) is not allowed to use ResourceClaim {SPARE} ({o['spare_uid']})"


CASES = [
    pytest.param(Case("driver-not-registered", "DriverNotRegistered", "broken", "driver",
                      lambda o: "DRA driver gpu.nvidia.com is not registered"), id="driver-not-registered"),
    pytest.param(Case("claim-missing", "PrepareClaimMissing", "broken", "application",
                      lambda o: f'fetch ResourceClaim {CLAIM}: resourceclaims.resource.k8s.io "{CLAIM}" not found'),
                 id="claim-missing"),
    pytest.param(Case("pod-not-reserved", "NotReservedForPod", "broken", "platform", _pod_not_reserved,
                      target="intruder"), id="pod-not-reserved"),
    pytest.param(Case("deadline-exceeded", "PrepareDeadlineExceeded", "waiting", "driver",
                      lambda o: "NodePrepareResources: rpc error: code = DeadlineExceeded desc = context deadline "
                      "exceeded"), id="deadline-exceeded"),
    pytest.param(Case("driver-error", "PrepareDriverError", "broken", "driver",
                      lambda o: f"NodePrepareResources failed for ResourceClaim {CLAIM}: error preparing devices for "
                      f"claim {o['ns']}/{CLAIM}:{o['claim_uid']}: prepare devices failed: unable to create CDI spec "
                      "file for claim: failed to get CDI device specs: nvml error: Unknown Error"), id="driver-error"),
]


@pytest.fixture(scope="module")
def kubeconfig(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The admin's kubeconfig, for the same commands read live (``--kubeconfig``, no ``-f``)."""
    return cluster.plane.write_kubeconfig(tmp_path_factory.mktemp("describe") / "admin.kubeconfig")


@pytest.fixture(scope="module")
def inventory(cluster: Cluster) -> Iterator[None]:
    """One H100 node of the NVIDIA driver's schema, its slice and the driver's device class."""
    cluster.add_node(NODE)
    objects = [t.nvidia_device_class(),
               t.resource_slice(t.NVIDIA_DRIVER, NODE, [t.nvidia_gpu(NODE, SKU, i, 2) for i in range(2)])]
    for o in objects:
        cluster.create(o)
    try:
        yield
    finally:
        for o in reversed(objects):
            cluster.delete(o)
        cluster.delete({"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}})


def _pod(name: str, node: str = "", claim: str = CLAIM) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "terminationGracePeriodSeconds": 0,
        "containers": [{"name": "main", "image": eb.POD_IMAGE, "resources": {"claims": [{"name": "gpus"}]}}],
        "resourceClaims": [{"name": "gpus", "resourceClaimName": claim}],
    }
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def _claim(name: str = CLAIM) -> dict[str, Any]:
    return {"apiVersion": eb.V1, "kind": "ResourceClaim", "metadata": {"name": name},
            "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {"deviceClassName": t.NVIDIA_DRIVER}}]}}}


def _kubelet_event(cluster: Cluster, pod: dict[str, Any], message: str) -> None:
    """The event as the kubelet's recorder writes it (core/v1, source kubelet on the pod's node)."""
    meta = pod["metadata"]
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    cluster.create({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": f"{meta['name']}.{time.time_ns():x}", "namespace": meta["namespace"]},
        "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "namespace": meta["namespace"],
                           "uid": meta["uid"]},
        "reason": "FailedPrepareDynamicResources", "message": message, "type": "Warning", "count": 1,
        "source": {"component": "kubelet", "host": NODE}, "reportingComponent": "kubelet",
        "reportingInstance": NODE, "firstTimestamp": now, "lastTimestamp": now,
    }, meta["namespace"])


@contextmanager
def _namespace(cluster: Cluster) -> Iterator[str]:
    with cluster.namespace("describe") as ns:
        try:
            yield ns
        finally:
            for pod in cluster.list_objects("v1", "Pod", ns):
                with suppress(ApiException):
                    cluster.core.delete_namespaced_pod(pod["metadata"]["name"], ns, grace_period_seconds=0)
            for claim in cluster.list_objects(eb.V1, "ResourceClaim", ns):
                cluster.delete(claim, ns)
            cluster.wait_for(f"the claims in {ns} deleted",
                             lambda: not cluster.list_objects(eb.V1, "ResourceClaim", ns) or None, timeout=120)


def _delete_claim_for_good(cluster: Cluster, ns: str) -> None:
    """The claim gone after scheduling: reservation cleared, finalizer released, object deleted."""
    resource = cluster.dynamic.resources.get(api_version=eb.V1, kind="ResourceClaim")
    resource.status.patch(name=CLAIM, namespace=ns, body={"status": {"reservedFor": None}},
                          content_type="application/merge-patch+json")
    cluster.delete({"apiVersion": eb.V1, "kind": "ResourceClaim", "metadata": {"name": CLAIM}}, ns)
    with suppress(ApiException):
        resource.patch(name=CLAIM, namespace=ns, body={"metadata": {"finalizers": None}},
                       content_type="application/merge-patch+json")
    cluster.wait_for(f"claim {ns}/{CLAIM} gone", lambda: cluster.get(eb.V1, "ResourceClaim", CLAIM, ns) is None or None,
                     timeout=60)


def _drakit(*args: str) -> tuple[int, dict[str, Any]]:
    proc = subprocess.run([sys.executable, "-m", "drakit.cli.main", *args, "-o", "json"], capture_output=True,
                          text=True, cwd=REPO, timeout=120, check=False)
    assert proc.stdout, f"drakit {' '.join(args)}: exit {proc.returncode}, stderr: {proc.stderr}"
    assert "Traceback" not in proc.stderr
    return proc.returncode, json.loads(proc.stdout)


@pytest.mark.parametrize("case", CASES)
def test_preparation_failure_is_described_and_explained(
    cluster: Cluster, inventory: None, kubeconfig: Path, case: Case, tmp_path: Path
) -> None:
    with _namespace(cluster) as ns:
        cluster.create(_claim(), ns)
        cluster.create(_pod("train"), ns)

        def scheduled() -> dict[str, Any] | None:
            pod = cluster.get("v1", "Pod", "train", ns) or {}
            claim = cluster.get(eb.V1, "ResourceClaim", CLAIM, ns) or {}
            done = pod.get("spec", {}).get("nodeName") and (claim.get("status") or {}).get("reservedFor")
            return claim if done else None

        claim = cluster.wait_for(f"the scheduler to allocate {ns}/{CLAIM} and bind train", scheduled, timeout=90)
        chosen = sorted(eb.allocated_devices(claim))
        assert len(chosen) == 1 and chosen[0][:2] == (t.NVIDIA_DRIVER, NODE)
        names = {"ns": ns, "claim_uid": claim["metadata"]["uid"]}
        if case.cls == "pod-not-reserved":
            names["spare_uid"] = cluster.create(_claim(SPARE), ns)["metadata"]["uid"]
            names["intruder_uid"] = cluster.create(_pod("intruder", node=NODE, claim=SPARE), ns)["metadata"]["uid"]
        if case.cls == "claim-missing":
            _delete_claim_for_good(cluster, ns)
        target = cluster.get("v1", "Pod", case.target, ns)
        assert target is not None
        message = PREFIX + case.error(names)
        _kubelet_event(cluster, target, message)
        bundle = eb.write_bundle(eb.snapshot(cluster, ns), tmp_path / f"{case.cls}.yaml")

        code, explained = _drakit("explain", f"pod/{case.target}", "-n", ns, "-f", str(bundle))
        code_d, described = _drakit("describe", f"pod/{case.target}", "-n", ns, "-f", str(bundle))
        _, devices = _drakit("get", "devices", "-f", str(bundle), "--node", NODE)
        claim_explained = None
        if case.cls not in ("claim-missing", "pod-not-reserved"):  # a claim view reaches the pod via reservedFor
            _, claim_explained = _drakit("explain", f"claim/{CLAIM}", "-n", ns, "-f", str(bundle))
        # the same commands on the live cluster: the same answers as on the bundle read back
        live = ["--kubeconfig", str(kubeconfig)]
        assert _drakit("explain", f"pod/{case.target}", "-n", ns, *live) == (code, explained)
        assert _drakit("describe", f"pod/{case.target}", "-n", ns, *live) == (code_d, described)
        assert _drakit("get", "devices", "--node", NODE, *live)[1] == devices
        if case.cls == "driver-not-registered":  # the class view, once
            cls_view = _drakit("describe", f"deviceclass/{t.NVIDIA_DRIVER}", "-f", str(bundle))
            assert _drakit("describe", f"deviceclass/{t.NVIDIA_DRIVER}", *live) == cls_view
            assert cls_view[1]["classes"][0]["matchingDevices"] == 2
            assert cls_view[1]["claimsUsingClass"] == [f"{ns}/{CLAIM}"]

    # explain: the class's code, verdict and owner, the kubelet's words quoted, exit by verdict
    got = (explained["code"], explained["verdict"], explained["owner"])
    assert got == (case.code, case.verdict, case.owner), explained["headline"]
    assert code == EXIT_FOR_VERDICT[case.verdict]
    head = next(f for f in explained["findings"] if f["code"] == case.code)
    assert head["detail"]["event"] == message and head["detail"]["prepare"] == case.cls
    assert NODE in explained["headline"]
    if claim_explained is not None:
        assert (claim_explained["code"], claim_explained["owner"]) == (case.code, case.owner)

    # describe: the same verdict, the real allocation joined to the slice, events in time order
    assert code_d == 0 and described["explain"]["code"] == case.code
    (view,) = described["claims"]
    if case.cls == "claim-missing":
        assert (view["state"], view["devices"]) == ("missing", [])
    elif case.cls == "pod-not-reserved":
        assert (view["claim"], view["state"], view["reservedFor"], view["devices"]) == (f"{ns}/{SPARE}", "pending", [], [])
    else:
        assert (view["state"], view["node"]) == ("allocated", NODE)
        assert view["reservedFor"] == [f"{ns}/train"]
        (device,) = view["devices"]
        assert (device["driver"], device["pool"], device["device"]) == chosen[0]
        assert (device["product"], device["memory"]) == (SKU.product_name, SKU.memory)
        assert device["attributes"]["uuid"].startswith("GPU-") and device["published"]
    reasons = [(e["reason"], e["from"]) for e in described["events"]]
    assert reasons[-1] == ("FailedPrepareDynamicResources", "kubelet")
    assert described["events"][-1]["message"] == message
    if case.target == "train":  # the scheduler's own event, before the kubelet's
        assert ("Scheduled", "default-scheduler") in reasons[:-1]
    times = [e["time"] for e in described["events"]]
    assert times == sorted(times)

    # get devices: the scheduler's device held by the claim and pod, the other one free
    held = {(i["driver"], i["pool"], i["device"]): i for i in devices["items"]}
    assert len(held) == 2
    if case.cls == "claim-missing":
        assert all(i["free"] for i in held.values())
    else:
        holders = held[chosen[0]]["holders"]
        assert [(h["claim"], h["pods"]) for h in holders] == [(f"{ns}/{CLAIM}", [f"{ns}/train"])]
        assert sum(i["free"] for i in held.values()) == 1


def test_claim_controller_failure_is_described(cluster: Cluster, inventory: None, tmp_path: Path) -> None:
    """The real resourceclaim controller's FailedResourceClaimCreation (admin access without the
    namespace label): the pod's claim is "not created", the controller's event is shown as it
    wrote it, and the fix names the label on this namespace."""
    template = {"apiVersion": eb.V1, "kind": "ResourceClaimTemplate", "metadata": {"name": "monitor"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
                    "deviceClassName": t.NVIDIA_DRIVER, "adminAccess": True}}]}}}}
    pod = _pod("dcgm")
    pod["spec"]["resourceClaims"] = [{"name": "gpus", "resourceClaimTemplateName": "monitor"}]
    with _namespace(cluster) as ns:
        eb.set_admin_label(cluster, ns, True)  # the template is checked at create too
        cluster.create(template, ns)
        eb.set_admin_label(cluster, ns, False)
        created = cluster.create(pod, ns)
        cluster.wait_for("the claim controller's event", lambda: [
            e for e in cluster.events_for(created) if e.get("reason") == "FailedResourceClaimCreation"] or None,
            timeout=60)
        bundle = eb.write_bundle(eb.snapshot(cluster, ns), tmp_path / "monitor.yaml")
        code, described = _drakit("describe", "pod/dcgm", "-n", ns, "-f", str(bundle))
    assert code == 0
    (view,) = described["claims"]
    assert (view["state"], view["source"], view["requests"][0]["adminAccess"]) == ("not created", "template monitor", True)
    event = next(e for e in described["events"] if e["reason"] == "FailedResourceClaimCreation")
    assert event["from"] == "resource_claim" and event["message"].startswith("PodResourceClaim gpus: create ResourceClaim : ")
    explained = described["explain"]
    assert (explained["code"], explained["owner"]) == ("ClaimCreationFailed", "platform")
    assert f"label namespace {ns} with resource.kubernetes.io/admin-access=true" in explained["fix"]
