"""The one outcome vocabulary: reason codes, verdicts, owners, stages and the record that carries them.

The allocator writes these values (per-device rejections), ``explain`` adds the situations the
allocator never sees, and ``-o json`` and stored records persist them.  That is why they live
at the bottom of the house, below the allocator, and why every *value* is frozen by
``tests/unit/test_outcomes.py``: add new members at the end of their group, never rename one.
Messages quote numbers ("needs 40Gi, 20Gi left") so that a reader need not look anything up.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

__all__ = [
    "Code",
    "ExplainCode",
    "Owner",
    "Reason",
    "ReasonCode",
    "Stage",
    "Verdict",
    "default_hint",
    "owner_of",
    "verdict_of",
]


class Verdict(StrEnum):
    """What the user should expect.

    *ok*: nothing blocks (the pod runs or would be placed now; a device the search simply did
    not need);
    *waiting*: the situation may change by itself (devices in use, a pool being republished);
    *never*: no device can serve the request as written;
    *broken*: an object is wrong (invalid pool, missing class, bad selector).
    """

    OK = "ok"
    WAITING = "waiting"
    NEVER = "never"
    BROKEN = "broken"


class Owner(StrEnum):
    """Which team has to act: the workload's authors, the cluster platform team, or the driver."""

    APPLICATION = "application"
    PLATFORM = "platform"
    DRIVER = "driver"


class Stage(StrEnum):
    """Control-plane stages in the order they block a pod (reference notes §5.4)."""

    CLAIMS = "claims"  # claim controller / PreEnqueue
    CLASSES = "classes"  # PreFilter
    SELECTORS = "selectors"  # compile / cost / runtime
    NODES = "nodes"  # node-level reasons outside DRA
    ALLOCATED = "allocated"  # allocated claims reachable from the pod's nodes
    DEVICES = "devices"  # the allocator (Filter)
    NODE_PREPARE = "node-prepare"  # kubelet / binding conditions
    DONE = "done"


class ReasonCode(StrEnum):
    """Why the allocator did not choose a device (or use a pool)."""

    # pool level (gathering)
    NODE_MISMATCH = "NodeMismatch"
    POOL_INCOMPLETE = "PoolIncomplete"
    POOL_INVALID = "PoolInvalid"
    POOL_OBSOLETE = "PoolObsolete"
    SLICE_FEATURE_DISABLED = "SliceFeatureDisabled"
    # per-device checks, in the order the search applies them
    DEVICE_IN_USE = "DeviceInUse"
    ADMIN_SAME_CLAIM = "AdminSameClaim"
    BINDING_CONDITIONS_DISABLED = "BindingConditionsDisabled"
    CLASS_SELECTOR_FALSE = "ClassSelectorFalse"
    REQUEST_SELECTOR_FALSE = "RequestSelectorFalse"
    CAPACITY_MISSING = "CapacityMissing"
    CAPACITY_POLICY = "CapacityPolicy"
    CAPACITY_EXCEEDED = "CapacityExceeded"
    PARTITIONABLE_DISABLED = "PartitionableDisabled"
    COUNTERS_EXHAUSTED = "CountersExhausted"
    TAINT_NOT_TOLERATED = "TaintNotTolerated"
    MISSING_ATTRIBUTE = "MissingAttribute"
    CONSTRAINT_MISMATCH = "ConstraintMismatch"
    # search level
    BACKTRACKED = "Backtracked"
    NOT_NEEDED = "NotNeeded"
    RESULT_LIMIT = "ResultLimit"
    ALL_MODE_BLOCKED = "AllModeBlocked"


class ExplainCode(StrEnum):
    """Situations a diagnosis reports besides the allocator's per-device reasons."""

    # claims (controller, PreEnqueue)
    CLAIM_NOT_CREATED = "ClaimNotCreated"
    TEMPLATE_MISSING = "TemplateMissing"
    CLAIM_CREATION_FAILED = "ClaimCreationFailed"
    CLAIM_MISSING = "ClaimMissing"
    CLAIM_BEING_DELETED = "ClaimBeingDeleted"
    CLAIM_NOT_OWNED = "ClaimNotOwned"
    POD_CLAIM_EMPTY = "PodClaimEmpty"
    # classes and selectors (PreFilter, allocator pre-checks)
    CLASS_MISSING = "DeviceClassMissing"
    FEATURE_DISABLED = "FeatureDisabled"
    SELECTOR_COMPILE_ERROR = "SelectorCompileError"
    SELECTOR_COST_LIMIT = "SelectorCostLimit"
    SELECTOR_RUNTIME_ERROR = "SelectorRuntimeError"
    # nodes (other scheduler plugins)
    NODE_SELECTOR_MISMATCH = "NodeSelectorMismatch"
    NODE_TAINTED = "NodeTaintNotTolerated"
    NODE_UNSCHEDULABLE = "NodeUnschedulable"
    NODE_INSUFFICIENT_RESOURCES = "NodeInsufficientResources"  # NodeResourcesFit: cpu, memory, pods
    NO_NODES = "NoNodes"
    # devices (the allocator's Filter, summarised per request)
    NO_MATCHING_DEVICES = "NoMatchingDevices"
    NOT_ENOUGH_DEVICES = "NotEnoughDevices"
    ALTERNATIVES_EXHAUSTED = "AlternativesExhausted"
    NEAR_MISS = "NearMiss"
    DEVICES_IN_USE = "DevicesInUse"
    CONSTRAINTS_UNSATISFIABLE = "ConstraintsUnsatisfiable"
    CLAIM_NOT_AVAILABLE_ON_NODE = "ClaimNotAvailableOnNode"
    ALLOCATION_TIMEOUT = "AllocationTimeout"
    ALLOCATION_ERROR = "AllocationError"
    FITS = "Fits"
    # after allocation (kubelet, binding conditions)
    PREPARE_FAILED = "PrepareFailed"
    DRIVER_NOT_REGISTERED = "DriverNotRegistered"
    NOT_RESERVED_FOR_POD = "NotReservedForPod"
    BINDING_CONDITIONS_PENDING = "BindingConditionsPending"
    BINDING_FAILED = "BindingFailed"
    RUNNING = "Running"
    ALLOCATED = "Allocated"
    PREPARE_CLAIM_MISSING = "PrepareClaimMissing"
    PREPARE_DEADLINE_EXCEEDED = "PrepareDeadlineExceeded"
    PREPARE_DRIVER_ERROR = "PrepareDriverError"
    # releasing a deleted pod's devices (kubelet NodeUnprepareResources): the devices stay on the node
    UNPREPARE_FAILED = "UnprepareFailed"
    DEVICES_NOT_RELEASED = "DevicesNotReleased"
    # what-ifs beside a blocker
    FITS_WITHOUT_CONSTRAINT = "FitsWithoutConstraint"


Code = ExplainCode | ReasonCode
"""Any stable code a :class:`Reason` may carry."""


# The one code -> (verdict, owner) table for the allocator's codes.  A diagnosis decides the
# verdict of its own codes from the situation (the same code can be "never" on an empty
# cluster and "waiting" on a busy one), so only allocator codes have a fixed verdict.
_REASONS: Mapping[ReasonCode, tuple[Verdict, Owner]] = MappingProxyType({
    ReasonCode.NODE_MISMATCH: (Verdict.NEVER, Owner.PLATFORM),
    ReasonCode.POOL_INCOMPLETE: (Verdict.WAITING, Owner.DRIVER),
    ReasonCode.POOL_INVALID: (Verdict.BROKEN, Owner.DRIVER),
    ReasonCode.POOL_OBSOLETE: (Verdict.WAITING, Owner.DRIVER),
    ReasonCode.SLICE_FEATURE_DISABLED: (Verdict.NEVER, Owner.PLATFORM),
    ReasonCode.DEVICE_IN_USE: (Verdict.WAITING, Owner.PLATFORM),
    ReasonCode.ADMIN_SAME_CLAIM: (Verdict.NEVER, Owner.APPLICATION),
    ReasonCode.BINDING_CONDITIONS_DISABLED: (Verdict.NEVER, Owner.PLATFORM),
    ReasonCode.CLASS_SELECTOR_FALSE: (Verdict.NEVER, Owner.APPLICATION),
    ReasonCode.REQUEST_SELECTOR_FALSE: (Verdict.NEVER, Owner.APPLICATION),
    ReasonCode.CAPACITY_MISSING: (Verdict.NEVER, Owner.APPLICATION),
    ReasonCode.CAPACITY_POLICY: (Verdict.NEVER, Owner.APPLICATION),
    ReasonCode.CAPACITY_EXCEEDED: (Verdict.WAITING, Owner.PLATFORM),
    ReasonCode.PARTITIONABLE_DISABLED: (Verdict.NEVER, Owner.PLATFORM),
    ReasonCode.COUNTERS_EXHAUSTED: (Verdict.WAITING, Owner.PLATFORM),
    ReasonCode.TAINT_NOT_TOLERATED: (Verdict.WAITING, Owner.PLATFORM),
    ReasonCode.MISSING_ATTRIBUTE: (Verdict.NEVER, Owner.APPLICATION),
    ReasonCode.CONSTRAINT_MISMATCH: (Verdict.WAITING, Owner.APPLICATION),
    # the search moved on: such a device blocks nothing by itself
    ReasonCode.BACKTRACKED: (Verdict.OK, Owner.PLATFORM),
    ReasonCode.NOT_NEEDED: (Verdict.OK, Owner.PLATFORM),
    ReasonCode.RESULT_LIMIT: (Verdict.NEVER, Owner.APPLICATION),
    ReasonCode.ALL_MODE_BLOCKED: (Verdict.WAITING, Owner.PLATFORM),
})

_HINTS: Mapping[Code, str] = MappingProxyType({
    ReasonCode.CLASS_SELECTOR_FALSE: "check the DeviceClass selectors against the device attributes (kubectl get resourceslices -o yaml)",
    ReasonCode.REQUEST_SELECTOR_FALSE: "relax the request's selectors or pick a device class whose devices match",
    ReasonCode.TAINT_NOT_TOLERATED: "add a toleration for the taint to the request, or wait until the taint is removed",
    ReasonCode.POOL_INCOMPLETE: "the driver is publishing a new pool generation; retry once all slices are published",
    ReasonCode.POOL_INVALID: "the driver published an invalid pool; report it to the driver's maintainers",
    ReasonCode.BINDING_CONDITIONS_DISABLED: "enable DRADeviceBindingConditions and DRAResourceClaimDeviceStatus to use this device",
    ReasonCode.PARTITIONABLE_DISABLED: "enable DRAPartitionableDevices to use devices that consume shared counters",
    ReasonCode.SLICE_FEATURE_DISABLED: "enable DRAPartitionableDevices to use this slice",
    ReasonCode.MISSING_ATTRIBUTE: "the constraint's attribute must be set on every device it applies to",
})


def verdict_of(code: ReasonCode) -> Verdict:
    """The fixed verdict of an allocator code (the one table; a diagnosis reuses it)."""
    return _REASONS[code][0]


def owner_of(code: ReasonCode) -> Owner:
    """Who has to act on an allocator code."""
    return _REASONS[code][1]


def default_hint(code: Code) -> str:
    """The one place a hint is attached, so it is never repeated in messages."""
    return _HINTS.get(code, "")


def _frozen(d: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    return MappingProxyType(dict(d or {}))


@dataclass(frozen=True)
class Reason:
    """One piece of evidence: a stable code, a message with the numbers, and who should act.

    The allocator's trace and a diagnosis's findings are both lists of these; ``detail``
    carries the numbers as fields so that tests and the web page never parse prose.
    """

    code: Code
    message: str
    verdict: Verdict
    owner: Owner
    stage: Stage = Stage.DEVICES
    claim: str = ""
    request: str = ""
    device: str = ""
    detail: Mapping[str, Any] = field(default_factory=_frozen)
    hint: str = ""
    blocking: bool = False  # a diagnosis finding that keeps the pod from running (else evidence)

    @classmethod
    def of(
        cls,
        code: ReasonCode,
        message: str,
        *,
        claim: str = "",
        request: str = "",
        device: str = "",
        detail: Mapping[str, Any] | None = None,
    ) -> Reason:
        """An allocator rejection, with verdict, owner and hint from the one table."""
        verdict, owner = _REASONS[code]
        return cls(
            code=code,
            message=message,
            verdict=verdict,
            owner=owner,
            claim=claim,
            request=request,
            device=device,
            detail=_frozen(detail),
            hint=default_hint(code),
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": self.code.value,
            "stage": self.stage.value,
            "verdict": self.verdict.value,
            "owner": self.owner.value,
            "message": self.message,
        }
        for key in ("claim", "request", "device", "hint"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.detail:
            out["detail"] = dict(self.detail)
        if self.blocking:
            out["blocking"] = True
        return out
