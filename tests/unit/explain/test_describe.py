"""``describe``: per kind, the join of claims, devices, classes, events and the verdict."""

from __future__ import annotations

import json
from typing import Any

import pytest

from drakit.cli.testing import run
from drakit.errors import InvalidArgument, NotFound
from drakit.explain.describe import allocation_node, describe, render_description
from drakit.inventory import templates as t
from drakit.inventory.snapshot import ClusterSnapshot
from tests.unit.explain import fleetdata as f

DEADLINE = f.PREPARE_PREFIX + "NodePrepareResources: rpc error: code = DeadlineExceeded desc = context deadline exceeded"
SCHEDULED = "Successfully assigned ml/train to mi300-0"
WAITING = ("0/3 nodes are available: 1 cannot allocate all claims, 2 node(s) didn't match Pod's node "
           "affinity/selector. still not schedulable, preemption: 0/3 nodes are available: 3 Preemption is not "
           "helpful for scheduling.")


def _snapshot(*objects: dict[str, Any]) -> ClusterSnapshot:
    return ClusterSnapshot.from_objects([*f.nodes_and_slices(), *f.CLASSES, *objects])


def _amd_bound_pod() -> list[dict[str, Any]]:
    """A template pod the scheduler allocated on the AMD node, the kubelet's driver timing out."""
    return [
        f.template("mi300", "gpu.amd.com"),
        f.pod("train", template="mi300", node="mi300-0", generated="train-gpus-x7k2p"),
        f.allocated_claim("train-gpus-x7k2p", "gpu.amd.com", t.AMD_DRIVER, "mi300-0", ["gpu-1-129"], "train",
                          uid="uid-train"),
        # out of order on purpose: the view sorts by time
        f.event("Pod", "train", "FailedPrepareDynamicResources", DEADLINE, "2026-12-01T10:01:40Z", "kubelet", count=3),
        f.event("Pod", "train", "Scheduled", SCHEDULED, "2026-12-01T10:00:02Z", "default-scheduler", etype="Normal"),
    ]


def test_pod_joins_allocation_to_the_amd_slice_and_orders_events() -> None:
    d = describe(_snapshot(*_amd_bound_pod()), "pod", "train", f.NS)
    assert dict(d.fields)["Node"] == "mi300-0"
    (claim,) = d.claims
    assert (claim.key, claim.pod_claim, claim.source, claim.state, claim.node) == (
        "ml/train-gpus-x7k2p", "gpus", "template mi300", "allocated", "mi300-0")
    assert claim.reserved_for == ("ml/train",)
    (dev,) = claim.devices
    assert (dev.ident, dev.node, dev.product, dev.memory, dev.published) == (
        "gpu.amd.com/mi300-0/gpu-1-129", "mi300-0", f.AMD_PRODUCT, "196592Mi", True)
    assert dev.attributes["pciAddr"] == "0000:12:00.0" and dev.capacity["computeUnits"] == "304"
    assert [(e.reason, e.source) for e in d.events] == [
        ("Scheduled", "default-scheduler"), ("FailedPrepareDynamicResources", "kubelet")]
    assert d.events[1].count == 3
    assert [c.name for c in d.classes] == ["gpu.amd.com"] and d.classes[0].matching == 2
    assert d.diagnosis is not None
    assert (d.diagnosis.code.value, d.diagnosis.owner.value) == ("PrepareDeadlineExceeded", "driver")
    text = render_description(d)
    assert "gpu.amd.com/mi300-0/gpu-1-129" in text and "DeadlineExceeded" in text and "(x3)" in text
    assert text.index("Scheduled") < text.index("FailedPrepareDynamicResources")


def test_pod_waiting_quotes_the_schedulers_event_beside_the_verdict() -> None:
    """Without a status in the bundle, the newest FailedScheduling event is the scheduler's word."""
    objects = [
        f.template("max", "gpu.intel.com", count=3),
        f.pod("train", template="max", generated="train-gpus-abcde", status={"phase": "Pending"}),
        {**f.allocated_claim("train-gpus-abcde", "gpu.intel.com", t.INTEL_DRIVER, "max-0", [], "train", uid="uid-train"),
         "status": {}, "spec": f.claim_spec("gpu.intel.com", 3)},
        f.event("Pod", "train", "FailedScheduling", "older words", "2026-12-01T10:00:01Z", "default-scheduler"),
        f.event("Pod", "train", "FailedScheduling", WAITING, "2026-12-01T10:00:09Z", "default-scheduler"),
    ]
    d = describe(_snapshot(*objects), "pod", "train", f.NS)
    assert d.claims[0].state == "pending" and d.claims[0].devices == ()
    assert d.diagnosis is not None and d.diagnosis.scheduler == WAITING
    assert d.diagnosis.code.value == "NotEnoughDevices"
    assert f"scheduler: {WAITING[:40]}" in render_description(d)


def test_pod_claim_not_created_yet_shows_the_templates_requests() -> None:
    d = describe(_snapshot(f.template("h100x2", "gpu.nvidia.com", count=2), f.pod("train", template="h100x2")),
                 "pod", "train", f.NS)
    (claim,) = d.claims
    assert claim.state == "not created" and claim.key == "ml/train-gpus"
    assert [(r.name, r.device_class, r.count) for r in claim.requests] == [("gpus", "gpu.nvidia.com", 2)]


def test_pod_with_a_missing_claim() -> None:
    d = describe(_snapshot(f.pod("train", claim="gone")), "pod", "train", f.NS)
    assert (d.claims[0].state, d.claims[0].key) == ("missing", "ml/gone")
    assert d.diagnosis is not None and d.diagnosis.code.value == "ClaimMissing"


def test_claim_view_names_the_pods_preparation_failure() -> None:
    message = f.PREPARE_PREFIX + "DRA driver gpu.nvidia.com is not registered"
    objects = [
        f.allocated_claim("shared", "gpu.nvidia.com", t.NVIDIA_DRIVER, "h100-0", ["gpu-0", "gpu-1"], "train"),
        f.pod("train", claim="shared", node="h100-0"),
        f.event("Pod", "train", "FailedPrepareDynamicResources", message, "2026-12-01T10:00:05Z", "kubelet"),
        f.event("ResourceClaim", "shared", "Custom", "claim event", "2026-12-01T10:00:01Z", "someone", etype="Normal"),
    ]
    d = describe(_snapshot(*objects), "claim", "shared", f.NS)
    assert d.kind == "ResourceClaim"
    assert [dv.ident for dv in d.claims[0].devices] == ["gpu.nvidia.com/h100-0/gpu-0", "gpu.nvidia.com/h100-0/gpu-1"]
    assert d.claims[0].devices[0].product == f.H100.product_name
    # the claim's own events and its pod's (the kubelet reports preparation on the pod), in time order
    assert [(e.object, e.source) for e in d.events] == [("ResourceClaim/shared", "someone"), ("Pod/train", "kubelet")]
    assert d.diagnosis is not None and d.diagnosis.code.value == "DriverNotRegistered"


def test_deviceclass_counts_matching_devices_by_product_and_lists_users() -> None:
    objects = [f.allocated_claim("c1", "gpu.nvidia.com", t.NVIDIA_DRIVER, "h100-0", ["gpu-0"], "p1"),
               f.allocated_claim("c2", "gpu.intel.com", t.INTEL_DRIVER, "max-0", ["0000-3a-00-0-0x0bd5"], "p2")]
    d = describe(_snapshot(*objects), "deviceclass", "gpu.nvidia.com", "")
    (cv,) = d.classes
    assert (cv.matching, cv.nodes, dict(cv.products)) == (4, 1, {f.H100.product_name: 4})
    assert d.users == ("ml/c1",) and d.diagnosis is None
    assert d.to_json()["claimsUsingClass"] == ["ml/c1"]


def test_deviceclass_selector_errors_are_shown_not_raised() -> None:
    broken = f.device_class("typo", t.INTEL_DRIVER, "device.attributes['gpu.intel.com'].nosuch == 'x'")
    d = describe(_snapshot(broken), "deviceclass", "typo", "")
    assert d.classes[0].matching == 0
    assert "CEL runtime error" in d.classes[0].errors[0] and "gpu.intel.com/max-0/" in d.classes[0].errors[0]
    bad = f.device_class("bad", t.AMD_DRIVER, "device.attributes[")
    assert "compile error" in describe(_snapshot(bad), "deviceclass", "bad", "").classes[0].errors[0]


@pytest.mark.parametrize(("kind", "name", "error"), [
    pytest.param("pod", "nope", NotFound, id="pod"),
    pytest.param("claim", "nope", NotFound, id="claim"),
    pytest.param("deviceclass", "nope", NotFound, id="class"),
    pytest.param("node", "h100-0", InvalidArgument, id="kind"),
])
def test_absent_targets(kind: str, name: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        describe(_snapshot(), kind, name, f.NS)


@pytest.mark.parametrize(("selector", "want"), [
    pytest.param(None, "(any node)", id="none"),
    pytest.param({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]},
                 "n1", id="scheduler-form"),
    pytest.param({"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]},
                 "(node selector)", id="label"),
])
def test_allocation_node(selector: dict[str, Any] | None, want: str) -> None:
    assert allocation_node({"nodeSelector": selector} if selector else {}) == want


def test_json_shape_is_stable(tmp_path: Any) -> None:
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                "items": [*f.nodes_and_slices(), *f.CLASSES, *_amd_bound_pod()]}))
    r = run("describe", "pod/train", "-n", "ml", "-f", str(path), "-o", "json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert list(doc) == ["kind", "name", "namespace", "fields", "claims", "classes", "events", "explain"]
    assert list(doc["claims"][0]) == ["claim", "podClaim", "source", "state", "requests", "node", "reservedFor", "devices"]
    assert list(doc["events"][0]) == ["time", "type", "reason", "from", "object", "message", "count"]
    assert doc["explain"]["code"] == "PrepareDeadlineExceeded"
    assert doc["events"][0]["time"] == "2026-12-01T10:00:02Z"


@pytest.mark.parametrize(("args", "code", "words"), [
    pytest.param(["describe", "pod/nope", "--demo"], 2, 'pod "default/nope" not found', id="not-found"),
    pytest.param(["describe", "node/x", "--demo"], 2, "want pod/NAME", id="kind"),
    pytest.param(["describe", "pod", "a", "b", "--demo"], 2, "name one object", id="two-names"),
    pytest.param(["describe", "pod/x", "--kubeconfig", "/nonexistent/kubeconfig"], 1, "/nonexistent/kubeconfig",
                 id="no-cluster"),
    pytest.param(["describe", "pod/x", "--demo", "-f", "x.yaml"], 2, "give one source", id="two-sources"),
    pytest.param(["describe", "pod/x", "--demo", "-o", "wide"], 2, "no wide or name", id="wide"),
    pytest.param(["describe", "deviceclass", "gpu.nvidia.com", "--demo", "-o", "yaml"], 0, "matchingDevices",
                 id="class-two-words"),
])
def test_cli(args: list[str], code: int, words: str) -> None:
    r = run(*args)
    assert r.exit_code == code, r.stderr
    assert words in r.stdout + r.stderr
    assert "Traceback" not in r.stderr


FIVE_CLASSES = [
    pytest.param("DRA driver gpu.amd.com is not registered", "DriverNotRegistered", "broken", "driver",
                 id="driver-not-registered"),
    pytest.param('fetch ResourceClaim train-gpus-x7k2p: resourceclaims.resource.k8s.io "train-gpus-x7k2p" not found',
                 "PrepareClaimMissing", "broken", "application", id="claim-missing"),
    pytest.param("pod train (uid-train) is not allowed to use ResourceClaim train-gpus-x7k2p (uid-train-gpus-x7k2p)",
                 "NotReservedForPod", "broken", "platform", id="pod-not-reserved"),
    pytest.param("NodePrepareResources: rpc error: code = DeadlineExceeded desc = context deadline exceeded",
                 "PrepareDeadlineExceeded", "waiting", "driver", id="deadline-exceeded"),
    pytest.param("NodePrepareResources failed for ResourceClaim train-gpus-x7k2p: error preparing devices for claim "
                 "ml/train-gpus-x7k2p: amdgpu: partition profile cpx is not supported on this card",
                 "PrepareDriverError", "broken", "driver", id="driver-error"),
]


@pytest.mark.parametrize(("error", "code", "verdict", "owner"), FIVE_CLASSES)
def test_each_preparation_class_is_described_and_explained(error: str, code: str, verdict: str, owner: str) -> None:
    objects = _amd_bound_pod()
    objects[3] = f.event("Pod", "train", "FailedPrepareDynamicResources", f.PREPARE_PREFIX + error,
                         "2026-12-01T10:01:40Z", "kubelet")
    for kind, name in (("pod", "train"), ("claim", "train-gpus-x7k2p")):
        d = describe(_snapshot(*objects), kind, name, f.NS)
        assert d.diagnosis is not None
        assert (d.diagnosis.code.value, d.diagnosis.verdict.value, d.diagnosis.owner.value) == (code, verdict, owner)
        assert "mi300-0" in d.diagnosis.fix or "train-gpus-x7k2p" in d.diagnosis.fix
    head = next(x for x in d.diagnosis.findings if x.code.value == code)
    assert head.detail["prepare"] == next(p.id for p in FIVE_CLASSES if p.values[1] == code)


def test_a_claim_deleted_after_scheduling_is_the_kubelets_claim_missing() -> None:
    """The claim is gone from the API server; the kubelet's event says so, and wins over "missing"."""
    objects = [o for o in _amd_bound_pod() if o["kind"] != "ResourceClaim"]
    objects[2] = f.event("Pod", "train", "FailedPrepareDynamicResources", f.PREPARE_PREFIX + FIVE_CLASSES[1].values[0],
                         "2026-12-01T10:01:40Z", "kubelet")
    d = describe(_snapshot(*objects), "pod", "train", f.NS)
    assert d.claims[0].state == "missing"
    assert d.diagnosis is not None and d.diagnosis.code.value == "PrepareClaimMissing"


GOLDEN = [
    pytest.param("prepare-deadline-exceeded", "pod", "train", id="pod-prepare-failed"),
    pytest.param("devices-in-use", "pod", "train", id="pod-devices-busy"),
    pytest.param("prepare-driver-error", "claim", "train-gpus", id="claim"),
    pytest.param("constraint-pcie-root", "deviceclass", "gpu.nvidia.com", id="deviceclass"),
]


@pytest.mark.parametrize(("scenario", "kind", "name"), GOLDEN)
def test_golden_text(scenario: str, kind: str, name: str) -> None:
    """What a user sees; regenerate with DRAKIT_UPDATE_GOLDEN=1 and read the diff."""
    import os

    from tests.unit.explain.conftest import SCENARIOS, scenario_input

    text = render_description(describe(scenario_input(scenario), kind, name, "ml")) + "\n"
    path = SCENARIOS / "golden" / f"describe-{kind}-{scenario}.txt"
    if os.environ.get("DRAKIT_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    assert path.read_text(encoding="utf-8") == text


def test_a_live_snapshot_describes_as_the_files_do() -> None:
    """Through the live seam's in-memory twin, the same objects give the same description."""
    from drakit.live.memory import MemoryCluster
    from drakit.live.snapshot import Scope, read_snapshot

    objects = [*f.nodes_and_slices(), *f.CLASSES, *_amd_bound_pod()]
    live = read_snapshot(MemoryCluster.of(json.loads(json.dumps(objects))), Scope(f.NS))
    offline = ClusterSnapshot.from_objects(objects)
    for kind, name in (("pod", "train"), ("claim", "train-gpus-x7k2p"), ("deviceclass", "gpu.amd.com")):
        want, got = describe(offline, kind, name, f.NS).to_json(), describe(live, kind, name, f.NS).to_json()
        assert got == want, kind
