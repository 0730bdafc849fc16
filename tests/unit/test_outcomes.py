"""The outcome vocabulary is persisted (``-o json``, run records): its string values never change.

A value here may only be *added*; renaming or removing one breaks every stored record, so this
test must be edited by hand, deliberately, for any change.
"""

from __future__ import annotations

from enum import StrEnum

import pytest

from drakit.outcomes import ExplainCode, Owner, Reason, ReasonCode, Stage, Verdict, default_hint, verdict_of

PINNED: dict[type[StrEnum], list[str]] = {
    Verdict: ["ok", "waiting", "never", "broken"],
    Owner: ["application", "platform", "driver"],
    Stage: ["claims", "classes", "selectors", "nodes", "allocated", "devices", "node-prepare", "done"],
    ReasonCode: [
        "NodeMismatch", "PoolIncomplete", "PoolInvalid", "PoolObsolete", "SliceFeatureDisabled",
        "DeviceInUse", "AdminSameClaim", "BindingConditionsDisabled", "ClassSelectorFalse",
        "RequestSelectorFalse", "CapacityMissing", "CapacityPolicy", "CapacityExceeded",
        "PartitionableDisabled", "CountersExhausted", "TaintNotTolerated", "MissingAttribute",
        "ConstraintMismatch", "Backtracked", "NotNeeded", "ResultLimit", "AllModeBlocked",
    ],
    ExplainCode: [
        "ClaimNotCreated", "TemplateMissing", "ClaimCreationFailed", "ClaimMissing", "ClaimBeingDeleted",
        "ClaimNotOwned", "PodClaimEmpty", "DeviceClassMissing", "FeatureDisabled", "SelectorCompileError",
        "SelectorCostLimit", "SelectorRuntimeError", "NodeSelectorMismatch", "NodeTaintNotTolerated",
        "NodeUnschedulable", "NodeInsufficientResources", "NoNodes", "NoMatchingDevices", "NotEnoughDevices", "AlternativesExhausted",
        "NearMiss", "DevicesInUse", "ConstraintsUnsatisfiable", "ClaimNotAvailableOnNode",
        "AllocationTimeout", "AllocationError", "Fits", "PrepareFailed", "DriverNotRegistered",
        "NotReservedForPod", "BindingConditionsPending", "BindingFailed", "Running", "Allocated",
        "PrepareClaimMissing", "PrepareDeadlineExceeded", "PrepareDriverError", "UnprepareFailed",
        "DevicesNotReleased", "FitsWithoutConstraint",
    ],
}  # fmt: skip


@pytest.mark.parametrize("enum", list(PINNED), ids=lambda e: e.__name__)
def test_values_are_pinned(enum: type[StrEnum]) -> None:
    assert [m.value for m in enum] == PINNED[enum]


def test_codes_are_unique_across_both_enums() -> None:
    """A stored code must say unambiguously which situation it was."""
    assert not {c.value for c in ReasonCode} & {c.value for c in ExplainCode}


def test_every_allocator_code_has_a_verdict() -> None:
    assert {c: verdict_of(c) for c in ReasonCode}.keys() == set(ReasonCode)


@pytest.mark.parametrize(
    ("code", "verdict"),
    [
        pytest.param(ReasonCode.DEVICE_IN_USE, Verdict.WAITING, id="in-use-waits"),
        pytest.param(ReasonCode.REQUEST_SELECTOR_FALSE, Verdict.NEVER, id="selector-never"),
        pytest.param(ReasonCode.POOL_INVALID, Verdict.BROKEN, id="invalid-pool-broken"),
        pytest.param(ReasonCode.NOT_NEEDED, Verdict.OK, id="not-needed-blocks-nothing"),
    ],
)
def test_allocator_reason_takes_its_verdict_from_the_table(code: ReasonCode, verdict: Verdict) -> None:
    r = Reason.of(code, "m", claim="ns/c", detail={"n": 1})
    assert (r.verdict, r.stage, r.hint) == (verdict, Stage.DEVICES, default_hint(code))
    assert r.to_json()["verdict"] == verdict.value


def test_to_json_shape() -> None:
    r = Reason.of(ReasonCode.TAINT_NOT_TOLERATED, "taint gpu=bad:NoSchedule", device="d/p/x", detail={"key": "gpu"})
    assert r.to_json() == {
        "code": "TaintNotTolerated",
        "stage": "devices",
        "verdict": "waiting",
        "owner": "platform",
        "message": "taint gpu=bad:NoSchedule",
        "device": "d/p/x",
        "hint": default_hint(ReasonCode.TAINT_NOT_TOLERATED),
        "detail": {"key": "gpu"},
    }
