"""The kubelet's and the claim controller's event texts (v1.37.2), rendered from upstream's formats.

Each case writes the message exactly as the Go code does: the format string as it stands in
upstream's source, filled with Go's verbs (``%s``, ``%q``, ``%d``, ``%v``/``%w``), wrapped in the
DRA manager's "prepare dynamic resources: " and kuberuntime's event prefix.  The formats are
repeated here on purpose instead of being read from ``events.py``'s table: a test that took them
from the module could not notice the module misquoting upstream.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drakit.explain.events import (
    PREPARE_TEXTS,
    UNPREPARE_TEXTS,
    PrepareClass,
    classify_claim_creation,
    classify_prepare,
    classify_unprepare,
    event_time,
    in_time_order,
    scheduler_message,
)
from drakit.gostr import quote
from drakit.outcomes import Owner, Verdict


def go(fmt: str, *args: object) -> str:
    """``fmt.Sprintf`` for the verbs these formats use."""
    it = iter(args)

    def verb(m: re.Match[str]) -> str:
        v = m.group(1)
        if v == "%":
            return "%"
        arg = next(it)
        return quote(str(arg)) if v == "q" else str(arg)

    out = re.sub(r"%([sqdvw%])", verb, fmt)
    assert next(it, None) is None, "unused arguments"
    return out


def event(inner: str) -> str:
    """kuberuntime_manager.go's event text around manager.go's PrepareResources error."""
    return go("Failed to prepare dynamic resources: %v", go("prepare dynamic resources: %w", inner))


UID = "7f3c2a9e-1b4d-4c8a-9e21-5d6f7a8b9c0d"
NOT_FOUND = go("%s %q not found", "resourceclaims.resource.k8s.io", "train-gpus-x7k2p")  # apiserver's NotFound
DEADLINE = "rpc error: code = DeadlineExceeded desc = context deadline exceeded"  # grpc status.String()
NVIDIA_CDI = ("error preparing devices for claim ml/train-gpus-x7k2p:" + UID + ": prepare devices failed: "
              "unable to create CDI spec file for claim: failed to get CDI device specs: error getting "
              "device specs for MIG device: nvml error: Unknown Error")

PREPARE = [
    pytest.param(go("DRA driver %s is not registered", "gpu.nvidia.com"),
                 PrepareClass.DRIVER_NOT_REGISTERED, "DriverNotRegistered", Verdict.BROKEN, Owner.DRIVER,
                 {"driver": "gpu.nvidia.com"}, id="driver-not-registered"),
    pytest.param(go("fetch ResourceClaim %s: %w", "train-gpus-x7k2p", NOT_FOUND),
                 PrepareClass.CLAIM_MISSING, "PrepareClaimMissing", Verdict.BROKEN, Owner.APPLICATION,
                 {"claim": "train-gpus-x7k2p"}, id="claim-deleted"),
    pytest.param(go('pod "%s/%s": %w', "ml", "train", "ResourceClaim not created yet"),
                 PrepareClass.CLAIM_MISSING, "PrepareClaimMissing", Verdict.WAITING, Owner.PLATFORM,
                 {"pod": "ml/train"}, id="claim-not-created-yet"),
    pytest.param(go("ResourceClaim %s/%s was not created for Pod %s/%s (Pod is not owner)",
                    "ml", "train-gpus", "ml", "train"),
                 PrepareClass.CLAIM_MISSING, "PrepareClaimMissing", Verdict.BROKEN, Owner.PLATFORM,
                 {"claim": "ml/train-gpus", "pod": "ml/train"}, id="claim-of-another-pod"),
    pytest.param(go("pod %s (%s) is not allowed to use ResourceClaim %s (%s)", "train", UID, "train-gpus", UID),
                 PrepareClass.POD_NOT_RESERVED, "NotReservedForPod", Verdict.BROKEN, Owner.PLATFORM,
                 {"pod": "train", "claim": "train-gpus"}, id="pod-not-reserved"),
    pytest.param(go("NodePrepareResources: %w", DEADLINE),
                 PrepareClass.DEADLINE_EXCEEDED, "PrepareDeadlineExceeded", Verdict.WAITING, Owner.DRIVER,
                 {"grpc": "DeadlineExceeded"}, id="deadline-exceeded"),
    pytest.param(go("NodePrepareResources: %w", "rpc error: code = Unavailable desc = connection error: desc = "
                    '"transport: Error while dialing: dial unix /var/lib/kubelet/plugins/gpu.nvidia.com/dra.sock: '
                    'connect: connection refused"'),
                 PrepareClass.DRIVER_ERROR, "PrepareDriverError", Verdict.BROKEN, Owner.DRIVER,
                 {"grpc": "Unavailable"}, id="driver-unavailable"),
    pytest.param(go("NodePrepareResources failed for ResourceClaim %s: %s", "train-gpus-x7k2p", NVIDIA_CDI),
                 PrepareClass.DRIVER_ERROR, "PrepareDriverError", Verdict.BROKEN, Owner.DRIVER,
                 {"claim": "train-gpus-x7k2p"}, id="driver-refused-claim"),
    pytest.param(go("NodePrepareResources skipped %d ResourceClaims", 2),
                 PrepareClass.DRIVER_ERROR, "PrepareDriverError", Verdict.BROKEN, Owner.DRIVER, {}, id="skipped"),
    pytest.param(go("NodePrepareResources returned result for unknown claim UID %s", UID),
                 PrepareClass.DRIVER_ERROR, "PrepareDriverError", Verdict.BROKEN, Owner.DRIVER, {}, id="unknown-uid"),
    pytest.param(go("fetch ResourceClaim %s: %w", "train-gpus", 'resourceclaims.resource.k8s.io "train-gpus" is '
                    "forbidden: User \"system:node:gpu-1\" cannot get resource \"resourceclaims\""),
                 PrepareClass.KUBELET_ERROR, "PrepareFailed", Verdict.WAITING, Owner.PLATFORM,
                 {"claim": "train-gpus"}, id="fetch-forbidden"),
    pytest.param(go("old ResourceClaim with same name %s and different UID %s still exists (previous pod "
                    "force-deleted?!)", "train-gpus", UID),
                 PrepareClass.KUBELET_ERROR, "PrepareFailed", Verdict.WAITING, Owner.PLATFORM,
                 {"claim": "train-gpus"}, id="stale-cache"),
    pytest.param(go("ResourceClaim %s is being unprepared", "train-gpus"),
                 PrepareClass.KUBELET_ERROR, "PrepareFailed", Verdict.WAITING, Owner.PLATFORM,
                 {"claim": "train-gpus"}, id="being-unprepared"),
    pytest.param(go("checkpoint ResourceClaim cache: %w", "open /var/lib/kubelet/dra_manager_state: no space left"),
                 PrepareClass.KUBELET_ERROR, "PrepareFailed", Verdict.BROKEN, Owner.PLATFORM, {}, id="checkpoint"),
]


@pytest.mark.parametrize(("inner", "cls", "code", "verdict", "owner", "names"), PREPARE)
def test_every_kubelet_text_lands_in_its_class(
    inner: str, cls: PrepareClass, code: str, verdict: Verdict, owner: Owner, names: dict[str, str]
) -> None:
    f = classify_prepare(event(inner), node="gpu-1")
    assert (f.cls, f.code.value, f.verdict, f.owner) == (cls, code, verdict, owner)
    assert dict(f.names) == names
    assert f.error == inner
    assert "?" not in f.next_step and "{" not in f.next_step, f.next_step
    assert f.to_json()["class"] == cls.value


def test_the_five_classes_of_the_issue_are_each_reached() -> None:
    reached = {p.values[1] for p in PREPARE}
    assert reached == set(PrepareClass)


@pytest.mark.parametrize("wrapping", [
    pytest.param(event, id="v1.37.2-event"),
    pytest.param(lambda inner: "Failed to prepare dynamic resources: " + inner, id="without-manager-prefix"),
    pytest.param(lambda inner: inner, id="bare-error"),
])
def test_either_prefix_may_be_missing(wrapping: object) -> None:
    """Older kubelets and hand-written bundles drop one prefix or both; the class stays."""
    msg = wrapping(go("DRA driver %s is not registered", "gpu.amd.com"))  # type: ignore[operator]
    f = classify_prepare(msg, node="mi300-0")
    assert f.cls == PrepareClass.DRIVER_NOT_REGISTERED and "gpu.amd.com" in f.next_step and "mi300-0" in f.next_step


def test_next_step_names_the_node_and_driver() -> None:
    f = classify_prepare(event(go("DRA driver %s is not registered", "gpu.intel.com")), node="gaudi-3")
    assert "gpu.intel.com" in f.next_step and "node gaudi-3" in f.next_step


def test_table_formats_are_upstream_shaped() -> None:
    """Every row names where upstream builds its text and offers a non-empty next step."""
    for t in PREPARE_TEXTS:
        assert t.source.startswith(("pkg/kubelet/", "k8s.io/dynamic-resource-allocation/")), t.go_format
        assert t.next_step and t.pattern.pattern.startswith("^"), t.go_format


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_message_gets_a_class_and_never_raises(message: str) -> None:
    f = classify_prepare(message)
    assert f.cls in set(PrepareClass) and f.next_step


CONTROLLER = [
    pytest.param(go("%s %q: %w", "resource claim template", "train-gpus",
                    go("%s %q not found", "resourceclaimtemplate.resource.k8s.io", "train-gpus")),
                 Owner.APPLICATION, "create ResourceClaimTemplate train-gpus in namespace ml", id="template-missing"),
    pytest.param("admin access is requested, but the feature is disabled", Owner.PLATFORM, "DRAAdminAccess",
                 id="admin-access-gate"),
    pytest.param("template includes a prioritized list of subrequests, but the feature is disabled",
                 Owner.PLATFORM, "DRAPrioritizedList", id="prioritized-list-gate"),
    pytest.param(go("create ResourceClaim %s: %w", "", 'ResourceClaim.resource.k8s.io "train-gpus-x7k2p" is invalid: '
                    "spec.devices.requests[0].adminAccess: Forbidden: admin access to devices requires the "
                    "`resource.kubernetes.io/admin-access: true` label on the containing namespace"),
                 Owner.PLATFORM, "label namespace ml", id="admin-access-label"),
    pytest.param(go("create ResourceClaim %s: %w", "", 'resourceclaims.resource.k8s.io "train-gpus-x7k2p" is '
                    "forbidden: exceeded quota: gpus, requested: count/resourceclaims.resource.k8s.io=1"),
                 Owner.PLATFORM, "quota", id="quota"),
    pytest.param("finding ResourceClaim for claim gpus in pod ml/train failed: boom", Owner.PLATFORM,
                 "kube-controller-manager", id="unknown"),
]


@pytest.mark.parametrize(("inner", "owner", "words"), CONTROLLER)
def test_claim_controller_texts(inner: str, owner: Owner, words: str) -> None:
    f = classify_claim_creation(go("PodResourceClaim %s: %v", "gpus", inner), template="train-gpus", namespace="ml")
    assert (f.pod_claim, f.error, f.owner) == ("gpus", inner, owner)
    assert words in f.next_step


def _event(reason: str, message: str, **times: str) -> dict[str, object]:
    return {"kind": "Event", "reason": reason, "message": message, **times}


def test_time_order_uses_last_then_event_then_first_timestamp() -> None:
    a = _event("A", "a", lastTimestamp="2026-12-01T10:00:05Z", firstTimestamp="2026-12-01T09:00:00Z")
    b = _event("B", "b", eventTime="2026-12-01T10:00:01.250000Z")
    c = _event("C", "c", firstTimestamp="2026-12-01T10:00:03Z")
    untimed = _event("D", "d")
    assert [e["reason"] for e in in_time_order([a, b, c, untimed])] == ["D", "B", "C", "A"]
    assert event_time(b) == datetime(2026, 12, 1, 10, 0, 1, 250000, tzinfo=UTC)
    assert event_time(_event("E", "e", lastTimestamp="yesterday")) is None


SCHEDULER_WORDS = "0/3 nodes are available: 3 cannot allocate all claims. still not schedulable, preemption: 0/3 " \
    "nodes are available: 3 Preemption is not helpful for scheduling."


@pytest.mark.parametrize(("pod", "events", "want"), [
    pytest.param({"status": {"conditions": [{"type": "PodScheduled", "status": "False", "message": SCHEDULER_WORDS}]}},
                 [], SCHEDULER_WORDS, id="condition"),
    pytest.param({}, [_event("FailedScheduling", "older", lastTimestamp="2026-12-01T10:00:00Z"),
                      _event("FailedScheduling", SCHEDULER_WORDS, lastTimestamp="2026-12-01T10:00:09Z"),
                      _event("Scheduled", "x", lastTimestamp="2026-12-01T10:00:10Z")],
                 SCHEDULER_WORDS, id="newest-event-without-status"),
    pytest.param({"spec": {"nodeName": "gpu-1"}}, [_event("FailedScheduling", "older")], "", id="bound-pod"),
])
def test_scheduler_message(pod: dict[str, object], events: list[dict[str, object]], want: str) -> None:
    assert scheduler_message(pod, events) == want


def test_within_one_second_the_pipeline_orders_events() -> None:
    """The kubelet's whole-second event and the scheduler's microsecond one in the same second."""
    kubelet = {**_event("FailedPrepareDynamicResources", "k", lastTimestamp="2026-12-01T10:00:05Z"),
               "source": {"component": "kubelet"}}
    scheduler = {**_event("Scheduled", "s", eventTime="2026-12-01T10:00:05.900000Z"), "reportingComponent": "default-scheduler"}
    controller = {**_event("FailedResourceClaimCreation", "c", lastTimestamp="2026-12-01T10:00:05Z"),
                  "source": {"component": "resource_claim"}}
    later = _event("Other", "o", lastTimestamp="2026-12-01T10:00:06Z")
    got = [e["reason"] for e in in_time_order([later, kubelet, scheduler, controller])]
    assert got == ["FailedResourceClaimCreation", "Scheduled", "FailedPrepareDynamicResources", "Other"]


# --- releasing the devices (unprepare) ----------------------------------------------------------


def unprepare(inner: str) -> str:
    """manager.go UnprepareResources' wrapping; v1.37.2 logs it (pod worker) and records no Event."""
    return go("unprepare dynamic resources: %w", inner)


UNPREPARE = [
    pytest.param(go("DRA driver %s is not registered", "gpu.nvidia.com"),
                 PrepareClass.DRIVER_NOT_REGISTERED, Verdict.BROKEN, Owner.DRIVER, {"driver": "gpu.nvidia.com"},
                 id="driver-not-registered"),
    pytest.param(go('pod "%s/%s": %w', "ml", "train", "ResourceClaim not created yet"),
                 PrepareClass.CLAIM_MISSING, Verdict.BROKEN, Owner.PLATFORM, {"pod": "ml/train"},
                 id="no-checkpoint-no-claim-name"),
    pytest.param(go("NodeUnprepareResources: %w", DEADLINE),
                 PrepareClass.DEADLINE_EXCEEDED, Verdict.WAITING, Owner.DRIVER, {"grpc": "DeadlineExceeded"},
                 id="deadline-exceeded"),
    pytest.param(go("NodeUnprepareResources: %w", "rpc error: code = Unavailable desc = error reading from server: EOF"),
                 PrepareClass.DRIVER_ERROR, Verdict.BROKEN, Owner.DRIVER, {"grpc": "Unavailable"},
                 id="driver-unavailable"),
    pytest.param(go("NodeUnprepareResources failed for ResourceClaim %s: %s", "train-gpus-x7k2p",
                    "error unpreparing devices for claim ml/train-gpus-x7k2p:" + UID + ": error acquiring "
                    "prep/unprep lock: timed out"),
                 PrepareClass.DRIVER_ERROR, Verdict.BROKEN, Owner.DRIVER, {"claim": "train-gpus-x7k2p"},
                 id="driver-refused-claim"),
    pytest.param(go("NodeUnprepareResources skipped %d ResourceClaims", 1),
                 PrepareClass.DRIVER_ERROR, Verdict.BROKEN, Owner.DRIVER, {}, id="skipped"),
    pytest.param(go("NodeUnprepareResources returned result for unknown claim UID %s", UID),
                 PrepareClass.DRIVER_ERROR, Verdict.BROKEN, Owner.DRIVER, {}, id="unknown-uid"),
    pytest.param(go("checkpoint ResourceClaim state: %w", "open /var/lib/kubelet/dra_manager_state: read-only file system"),
                 PrepareClass.KUBELET_ERROR, Verdict.BROKEN, Owner.PLATFORM, {}, id="checkpoint"),
]


@pytest.mark.parametrize(("inner", "cls", "verdict", "owner", "names"), UNPREPARE)
def test_every_unprepare_text_lands_in_its_class(
    inner: str, cls: PrepareClass, verdict: Verdict, owner: Owner, names: dict[str, str]
) -> None:
    f = classify_unprepare(unprepare(inner), node="gpu-1")
    assert (f.cls, f.code.value, f.verdict, f.owner) == (cls, "UnprepareFailed", verdict, owner)
    assert dict(f.names) == names and f.error == inner
    assert "keep their devices on node gpu-1" in f.next_step and "{" not in f.next_step, f.next_step
    assert "?" not in f.next_step, f.next_step


def test_unprepare_texts_are_not_read_as_prepare_ones() -> None:
    """The same driver error prepares nothing and releases nothing: each family answers its own code."""
    inner = go("NodeUnprepareResources: %w", DEADLINE)
    assert classify_prepare(event(inner)).code.value == "PrepareFailed"  # not NodePrepareResources
    assert classify_unprepare(unprepare(go("NodePrepareResources: %w", DEADLINE))).cls is PrepareClass.KUBELET_ERROR
    assert len(UNPREPARE_TEXTS) == len(UNPREPARE)
