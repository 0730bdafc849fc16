"""The stable reason vocabulary shared by the allocator, the CLI, the web page and stored records.

Codes are an enum whose *values* never change once released (records store them); add new
codes at the end of their group.  Messages quote numbers ("needs 40Gi, 20Gi left") so that a
reader does not have to look anything up.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any


class Severity(StrEnum):
    """How a reader should treat a rejection (used to pick the headline reason).

    *waiting*: the situation may change by itself (devices in use, pool being updated);
    *never*: this device can never serve this request as written;
    *broken*: the input itself is wrong (invalid pool).
    """

    WAITING = "waiting"
    NEVER = "never"
    BROKEN = "broken"
    INFO = "info"


class ReasonCode(StrEnum):
    """Why a device was not chosen (or a pool not used).  Values are stable identifiers."""

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


_SEVERITY: dict[ReasonCode, Severity] = {
    ReasonCode.NODE_MISMATCH: Severity.NEVER,
    ReasonCode.POOL_INCOMPLETE: Severity.WAITING,
    ReasonCode.POOL_INVALID: Severity.BROKEN,
    ReasonCode.POOL_OBSOLETE: Severity.WAITING,
    ReasonCode.SLICE_FEATURE_DISABLED: Severity.NEVER,
    ReasonCode.DEVICE_IN_USE: Severity.WAITING,
    ReasonCode.ADMIN_SAME_CLAIM: Severity.NEVER,
    ReasonCode.BINDING_CONDITIONS_DISABLED: Severity.NEVER,
    ReasonCode.CLASS_SELECTOR_FALSE: Severity.NEVER,
    ReasonCode.REQUEST_SELECTOR_FALSE: Severity.NEVER,
    ReasonCode.CAPACITY_MISSING: Severity.NEVER,
    ReasonCode.CAPACITY_POLICY: Severity.NEVER,
    ReasonCode.CAPACITY_EXCEEDED: Severity.WAITING,
    ReasonCode.PARTITIONABLE_DISABLED: Severity.NEVER,
    ReasonCode.COUNTERS_EXHAUSTED: Severity.WAITING,
    ReasonCode.TAINT_NOT_TOLERATED: Severity.WAITING,
    ReasonCode.MISSING_ATTRIBUTE: Severity.NEVER,
    ReasonCode.CONSTRAINT_MISMATCH: Severity.WAITING,
    ReasonCode.BACKTRACKED: Severity.INFO,
    ReasonCode.NOT_NEEDED: Severity.INFO,
    ReasonCode.RESULT_LIMIT: Severity.NEVER,
    ReasonCode.ALL_MODE_BLOCKED: Severity.WAITING,
}

_HINTS: dict[ReasonCode, str] = {
    ReasonCode.CLASS_SELECTOR_FALSE: "check the DeviceClass selectors against the device attributes (kubectl get resourceslices -o yaml)",
    ReasonCode.REQUEST_SELECTOR_FALSE: "relax the request's selectors or pick a device class whose devices match",
    ReasonCode.TAINT_NOT_TOLERATED: "add a toleration for the taint to the request, or wait until the taint is removed",
    ReasonCode.POOL_INCOMPLETE: "the driver is publishing a new pool generation; retry once all slices are published",
    ReasonCode.POOL_INVALID: "the driver published an invalid pool; report it to the driver's maintainers",
    ReasonCode.BINDING_CONDITIONS_DISABLED: "enable DRADeviceBindingConditions and DRAResourceClaimDeviceStatus to use this device",
    ReasonCode.PARTITIONABLE_DISABLED: "enable DRAPartitionableDevices to use devices that consume shared counters",
    ReasonCode.SLICE_FEATURE_DISABLED: "enable DRAPartitionableDevices to use this slice",
    ReasonCode.MISSING_ATTRIBUTE: "the constraint's attribute must be set on every device it applies to",
}


@dataclass(frozen=True)
class Reason:
    """One rejection: what, for which claim/request, which device, with the numbers in ``detail``."""

    code: ReasonCode
    message: str
    claim: str = ""
    request: str = ""
    device: str = ""
    detail: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    hint: str = ""

    @property
    def severity(self) -> Severity:
        return _SEVERITY.get(self.code, Severity.INFO)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": self.code.value,
            "severity": self.severity.value,
            "message": self.message,
        }
        for key in ("claim", "request", "device", "hint"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.detail:
            out["detail"] = dict(self.detail)
        return out


def default_hint(code: ReasonCode) -> str:
    """The one place a hint is attached, so it is never repeated in messages."""
    return _HINTS.get(code, "")
