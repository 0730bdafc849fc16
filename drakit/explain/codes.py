"""Explain-level vocabulary: stable codes for situations the allocator never sees, verdicts, owners.

The allocator's :class:`~drakit.explain.reasons.ReasonCode` names per-device rejections.  A
diagnosis also has to name things that happen before (the claim controller, PreEnqueue,
PreFilter) and after (kubelet preparation) the allocator runs, and sort every situation into a
verdict and an owning team.  Values are stable identifiers (records and ``-o json`` store them);
add new codes at the end of their group.
"""

from __future__ import annotations

from enum import StrEnum

from drakit.explain.reasons import ReasonCode


class Verdict(StrEnum):
    """What the user should expect (style notes: waiting / never / broken, plus ``ok``).

    *ok*: nothing blocks (the pod runs, or would be placed now);
    *waiting*: something may change by itself (devices in use, a claim being created);
    *never*: no device in any pool can match the request as written;
    *broken*: an object is wrong (missing class, bad selector, driver not registered).
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
    FITS_WITHOUT_CONSTRAINT = "FitsWithoutConstraint"  # the what-if beside a constraint that fails
    # after allocation (kubelet, binding conditions)
    PREPARE_FAILED = "PrepareFailed"
    DRIVER_NOT_REGISTERED = "DriverNotRegistered"
    NOT_RESERVED_FOR_POD = "NotReservedForPod"
    BINDING_CONDITIONS_PENDING = "BindingConditionsPending"
    BINDING_FAILED = "BindingFailed"
    RUNNING = "Running"
    ALLOCATED = "Allocated"


Code = ExplainCode | ReasonCode
"""Any stable code a finding may carry."""
