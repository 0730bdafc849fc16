"""What the kubelet, the claim controller and the scheduler write into Events, read back exactly.

On a live cluster the strongest evidence for *why* a pod waits is often not in any object's
status but in an Event: the kubelet's ``FailedPrepareDynamicResources`` after the scheduler has
allocated and bound, the resourceclaim controller's ``FailedResourceClaimCreation`` before the
scheduler sees the pod at all, and the scheduler's own ``FailedScheduling``.  Telling these apart
by their wording is only as good as the wording, so the tables below quote the format strings of
Kubernetes v1.37.2 verbatim, each with the file that builds it; a test renders every format with
Go's ``%s`` / ``%q`` rules and checks that it lands in its class.  Upstream rewords these texts
between releases (older kubelets wrote "resource claim" and "failed to fetch ..."), which is why
the patterns key on the stable words, and either wrapping prefix may be missing.

Pure: messages in, frozen values out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from drakit.outcomes import ExplainCode, Owner, Verdict

__all__ = [
    "CLAIM_CREATION_TEXTS",
    "KUBELET_RELEASE",
    "PREPARE_TEXTS",
    "UNPREPARE_TEXTS",
    "ClaimCreationFailure",
    "PrepareClass",
    "PrepareFailure",
    "classify_claim_creation",
    "classify_prepare",
    "classify_unprepare",
    "component_of",
    "event_time",
    "in_time_order",
    "scheduler_message",
]

KUBELET_RELEASE = "v1.37.2"
"""The release whose texts the tables quote."""

PREPARE_REASON = "FailedPrepareDynamicResources"  # pkg/kubelet/events/event.go
# Not a v1.37.2 kubelet reason (it records no event for unprepare failures, see UNPREPARE_TEXTS);
# read because tools that surface the kubelet's unprepare errors name their events so.
UNPREPARE_REASON = "FailedUnprepareDynamicResources"
CLAIM_CREATION_REASON = "FailedResourceClaimCreation"  # pkg/controller/resourceclaim/controller.go
SCHEDULING_REASON = "FailedScheduling"  # pkg/scheduler/schedule_one.go

# kuberuntime_manager.go SyncPod: Eventf(..., FailedPrepareDynamicResources,
# "Failed to prepare dynamic resources: %v", err), where err comes from the DRA manager's
# PrepareResources, which wraps every failure once more as "prepare dynamic resources: %w".
_EVENT_PREFIX = "Failed to prepare dynamic resources: "
_MANAGER_PREFIX = "prepare dynamic resources: "


class PrepareClass(StrEnum):
    """Why the kubelet could not prepare a pod's devices; stored, so values never change."""

    DRIVER_NOT_REGISTERED = "driver-not-registered"
    CLAIM_MISSING = "claim-missing"
    POD_NOT_RESERVED = "pod-not-reserved"
    DEADLINE_EXCEEDED = "deadline-exceeded"
    DRIVER_ERROR = "driver-error"
    KUBELET_ERROR = "kubelet-error"  # the kubelet's own bookkeeping (checkpoint, stale cache), or unknown words


_CODE = {
    PrepareClass.DRIVER_NOT_REGISTERED: ExplainCode.DRIVER_NOT_REGISTERED,
    PrepareClass.CLAIM_MISSING: ExplainCode.PREPARE_CLAIM_MISSING,
    PrepareClass.POD_NOT_RESERVED: ExplainCode.NOT_RESERVED_FOR_POD,
    PrepareClass.DEADLINE_EXCEEDED: ExplainCode.PREPARE_DEADLINE_EXCEEDED,
    PrepareClass.DRIVER_ERROR: ExplainCode.PREPARE_DRIVER_ERROR,
    PrepareClass.KUBELET_ERROR: ExplainCode.PREPARE_FAILED,
}


@dataclass(frozen=True)
class KubeletText:
    """One error text of the kubelet's DRA manager: upstream's format, where, and what it means."""

    go_format: str
    source: str
    pattern: re.Pattern[str]
    cls: PrepareClass
    verdict: Verdict
    owner: Owner
    next_step: str  # str.format with node, driver, claim, pod (what the pattern captured, else "?")


def _text(go_format: str, source: str, pattern: str, cls: PrepareClass, verdict: Verdict, owner: Owner,
          next_step: str) -> KubeletText:
    return KubeletText(go_format, source, re.compile(pattern, re.DOTALL), cls, verdict, owner, next_step)


_MANAGER = "pkg/kubelet/cm/dra/manager.go prepareResources"
_PLUGINS = "pkg/kubelet/cm/dra/plugin/dra_plugin_manager.go GetPlugin"
_HELPERS = "k8s.io/dynamic-resource-allocation/resourceclaim"
_NAME = r"(?P<claim>[^\s:]+)"
_GRPC = r"rpc error: code = (?P<grpc>\w+) desc = "  # google.golang.org/grpc/status (*Status).String

_PLUGIN_LOGS = "check the driver's kubelet plugin (its DaemonSet pod on node {node}: kubectl logs)"

# First match wins: the specific texts come before the catch-alls of the same family.
PREPARE_TEXTS: tuple[KubeletText, ...] = (
    _text("DRA driver %s is not registered", _PLUGINS,
          r"^DRA driver (?P<driver>\S+) is not registered$", PrepareClass.DRIVER_NOT_REGISTERED,
          Verdict.BROKEN, Owner.DRIVER,
          "the {driver} kubelet plugin is not registered on node {node}: check that its DaemonSet runs a "
          "pod on that node and that the plugin registered with the kubelet (plugins_registry socket)"),
    # The claim the scheduler allocated is gone from the API server (deleted after scheduling).
    _text("fetch ResourceClaim %s: %w", _MANAGER,
          rf"^fetch ResourceClaim {_NAME}: resourceclaims\.resource\.k8s\.io \S+ not found$",
          PrepareClass.CLAIM_MISSING, Verdict.BROKEN, Owner.APPLICATION,
          "ResourceClaim {claim} was deleted after the pod was scheduled: recreate it (or the pod, for a "
          "claim from a template)"),
    _text("fetch ResourceClaim %s: %w", _MANAGER, rf"^fetch ResourceClaim {_NAME}: ", PrepareClass.KUBELET_ERROR,
          Verdict.WAITING, Owner.PLATFORM,
          "the kubelet on node {node} cannot read ResourceClaim {claim} from the API server (its words above); "
          "it retries"),
    _text('pod "%s/%s": %w (ErrClaimNotFound: "ResourceClaim not created yet")', f"{_HELPERS} Name",
          r'^pod "(?P<pod>[^"]+)": ResourceClaim not created yet$', PrepareClass.CLAIM_MISSING,
          Verdict.WAITING, Owner.PLATFORM,
          "the resourceclaim controller has not recorded the generated claim in the pod's status yet; "
          "if it stays, check kube-controller-manager"),
    _text("ResourceClaim %s/%s was not created for Pod %s/%s (Pod is not owner)", f"{_HELPERS} IsForPod",
          r"^ResourceClaim (?P<claim>\S+) (?:was not created for Pod|is not in the same namespace as Pod) "
          r"(?P<pod>\S+)", PrepareClass.CLAIM_MISSING, Verdict.BROKEN, Owner.PLATFORM,
          "a stale ResourceClaim {claim} of another pod has the generated name: delete it so that the "
          "controller creates this pod's claim"),
    _text("pod %s (%s) is not allowed to use ResourceClaim %s (%s)", _MANAGER,
          rf"^pod (?P<pod>\S+) \([^)]*\) is not allowed to use ResourceClaim {_NAME} \(",
          PrepareClass.POD_NOT_RESERVED, Verdict.BROKEN, Owner.PLATFORM,
          "status.reservedFor of ResourceClaim {claim} does not list pod {pod}: a pod with spec.nodeName preset "
          "bypasses the scheduler, and the resourceclaim controller reserves only a claim that is already "
          "allocated (and has room in reservedFor); recreate the pod without nodeName"),
    # The kubelet's own 45 s deadline on the NodePrepareResources call (plugin/dra_plugin.go).
    _text("NodePrepareResources: %w (gRPC DeadlineExceeded)", _MANAGER,
          r"^NodePrepareResources: rpc error: code = (?P<grpc>DeadlineExceeded) desc = ",
          PrepareClass.DEADLINE_EXCEEDED, Verdict.WAITING, Owner.DRIVER,
          "the driver did not answer NodePrepareResources within the kubelet's 45 s: the kubelet retries; "
          + _PLUGIN_LOGS + " (IMEX/ComputeDomain setup and VFIO rebinding are the usual slow steps)"),
    _text("NodePrepareResources: %w", _MANAGER, rf"^NodePrepareResources: (?:{_GRPC})?",
          PrepareClass.DRIVER_ERROR, Verdict.BROKEN, Owner.DRIVER,
          "the call to the driver failed: " + _PLUGIN_LOGS),
    _text("NodePrepareResources failed for ResourceClaim %s: %s", _MANAGER,
          rf"^NodePrepareResources failed for ResourceClaim {_NAME}: ", PrepareClass.DRIVER_ERROR,
          Verdict.BROKEN, Owner.DRIVER,
          "the driver refused to prepare claim {claim} (its words above): " + _PLUGIN_LOGS),
    _text("NodePrepareResources skipped %d ResourceClaims", _MANAGER,
          r"^NodePrepareResources skipped \d+ ResourceClaims$", PrepareClass.DRIVER_ERROR,
          Verdict.BROKEN, Owner.DRIVER, "the driver answered for fewer claims than asked: " + _PLUGIN_LOGS),
    _text("NodePrepareResources returned result for unknown claim UID %s", _MANAGER,
          r"^NodePrepareResources returned result for unknown claim UID ", PrepareClass.DRIVER_ERROR,
          Verdict.BROKEN, Owner.DRIVER, "the driver answered for a claim it was not asked about: " + _PLUGIN_LOGS),
    _text("old ResourceClaim with same name %s and different UID %s still exists (previous pod force-deleted?!)",
          _MANAGER, r"^old ResourceClaim with same name (?P<claim>\S+) and different UID ",
          PrepareClass.KUBELET_ERROR, Verdict.WAITING, Owner.PLATFORM,
          "the kubelet still holds the devices of a deleted claim named {claim}: it unprepares them and retries"),
    _text("ResourceClaim %s is being unprepared", _MANAGER, rf"^ResourceClaim {_NAME} is being unprepared$",
          PrepareClass.KUBELET_ERROR, Verdict.WAITING, Owner.PLATFORM,
          "the kubelet is releasing claim {claim} for a pod that ended; it retries once that is done"),
)

# Releasing the devices of a pod that ended (manager.go UnprepareResources, called by
# SyncTerminatingPod once the containers stopped).  v1.37.2 records no Event for a failure: the
# pod worker logs "Error syncing pod, skipping" err="unprepare dynamic resources: <error>" and
# retries, and until it succeeds the Pod is not removed (PodMightNeedToUnprepareResources) and
# its claims stay reserved for it: the devices are stuck on the node.
_UNPREPARE = "pkg/kubelet/cm/dra/manager.go unprepareResources"
_UNPREPARE_PREFIX = "unprepare dynamic resources: "
_STUCK = "; until it succeeds the pod is not removed and its claims keep their devices on node {node}"

UNPREPARE_TEXTS: tuple[KubeletText, ...] = (
    _text("DRA driver %s is not registered", _PLUGINS,
          r"^DRA driver (?P<driver>\S+) is not registered$", PrepareClass.DRIVER_NOT_REGISTERED,
          Verdict.BROKEN, Owner.DRIVER,
          "the {driver} kubelet plugin is not registered on node {node}, so the kubelet cannot release the "
          "devices: bring its DaemonSet pod back on that node" + _STUCK),
    _text('pod "%s/%s": %w (ErrClaimNotFound: "ResourceClaim not created yet")', f"{_HELPERS} Name",
          r'^pod "(?P<pod>[^"]+)": ResourceClaim not created yet$', PrepareClass.CLAIM_MISSING,
          Verdict.BROKEN, Owner.PLATFORM,
          "the kubelet restarted without its claim checkpoint and the pod's status names no generated claim: "
          "it cannot tell which claims to release" + _STUCK),
    _text("NodeUnprepareResources: %w (gRPC DeadlineExceeded)", _UNPREPARE,
          r"^NodeUnprepareResources: rpc error: code = (?P<grpc>DeadlineExceeded) desc = ",
          PrepareClass.DEADLINE_EXCEEDED, Verdict.WAITING, Owner.DRIVER,
          "the driver did not answer NodeUnprepareResources within the kubelet's 45 s: the kubelet retries; "
          + _PLUGIN_LOGS + _STUCK),
    _text("NodeUnprepareResources: %w", _UNPREPARE, rf"^NodeUnprepareResources: (?:{_GRPC})?",
          PrepareClass.DRIVER_ERROR, Verdict.BROKEN, Owner.DRIVER,
          "the call to the driver failed: " + _PLUGIN_LOGS + _STUCK),
    _text("NodeUnprepareResources failed for ResourceClaim %s: %s", _UNPREPARE,
          rf"^NodeUnprepareResources failed for ResourceClaim {_NAME}: ", PrepareClass.DRIVER_ERROR,
          Verdict.BROKEN, Owner.DRIVER,
          "the driver refused to release claim {claim} (its words above): " + _PLUGIN_LOGS + _STUCK),
    _text("NodeUnprepareResources skipped %d ResourceClaims", _UNPREPARE,
          r"^NodeUnprepareResources skipped \d+ ResourceClaims$", PrepareClass.DRIVER_ERROR,
          Verdict.BROKEN, Owner.DRIVER, "the driver answered for fewer claims than asked: " + _PLUGIN_LOGS + _STUCK),
    _text("NodeUnprepareResources returned result for unknown claim UID %s", _UNPREPARE,
          r"^NodeUnprepareResources returned result for unknown claim UID ", PrepareClass.DRIVER_ERROR,
          Verdict.BROKEN, Owner.DRIVER,
          "the driver answered for a claim it was not asked about: " + _PLUGIN_LOGS + _STUCK),
    _text("checkpoint ResourceClaim state: %w", _UNPREPARE, r"^checkpoint ResourceClaim state: ",
          PrepareClass.KUBELET_ERROR, Verdict.BROKEN, Owner.PLATFORM,
          "the driver released the devices but the kubelet on node {node} cannot write its DRA checkpoint "
          "(dra_manager_state under /var/lib/kubelet: a full or read-only disk): check its log" + _STUCK),
)

_UNKNOWN = _text("%v", "(any other error)", r"", PrepareClass.KUBELET_ERROR, Verdict.BROKEN, Owner.PLATFORM,
                 "the kubelet on node {node} failed before calling the driver: check its log (journalctl -u kubelet)")
_UNPREPARE_UNKNOWN = _text("%v", "(any other error)", r"", PrepareClass.KUBELET_ERROR, Verdict.BROKEN,
                           Owner.PLATFORM, "the kubelet on node {node} cannot release the devices: check its log "
                           "(journalctl -u kubelet)" + _STUCK)


@dataclass(frozen=True)
class PrepareFailure:
    """A ``FailedPrepareDynamicResources`` message (or an unprepare error), classified."""

    cls: PrepareClass
    code: ExplainCode
    verdict: Verdict
    owner: Owner
    next_step: str
    error: str  # the DRA manager's error, without the two wrapping prefixes
    go_format: str  # the upstream format the message was matched to
    names: Mapping[str, str]  # what the pattern captured: driver, claim, pod, grpc

    def to_json(self) -> dict[str, Any]:
        return {"class": self.cls.value, "code": self.code.value, "verdict": self.verdict.value,
                "owner": self.owner.value, "nextStep": self.next_step, "error": self.error,
                "format": self.go_format, **dict(self.names)}


def unwrap_prepare(message: str) -> str:
    """The DRA manager's own error inside the kubelet's event message (either prefix may be absent)."""
    return message.removeprefix(_EVENT_PREFIX).removeprefix(_MANAGER_PREFIX).strip()


def classify_prepare(message: str, *, node: str = "") -> PrepareFailure:
    """Which of the kubelet's failure texts ``message`` is, with owner and next step."""
    return _classify(unwrap_prepare(message), PREPARE_TEXTS, _UNKNOWN, node, None)


def is_unprepare(message: str) -> bool:
    """Whether ``message`` carries the DRA manager's unprepare error (its own prefix)."""
    return message.lstrip().startswith(_UNPREPARE_PREFIX)


def classify_unprepare(message: str, *, node: str = "") -> PrepareFailure:
    """Which of the kubelet's unprepare texts ``message`` is (code ``UnprepareFailed`` whatever the class)."""
    error = message.strip().removeprefix(_UNPREPARE_PREFIX).strip()
    return _classify(error, UNPREPARE_TEXTS, _UNPREPARE_UNKNOWN, node, ExplainCode.UNPREPARE_FAILED)


def _classify(error: str, texts: Iterable[KubeletText], unknown: KubeletText, node: str,
              code: ExplainCode | None) -> PrepareFailure:
    text, match = unknown, None
    for t in texts:
        match = t.pattern.search(error)
        if match:
            text = t
            break
    names = {k: v for k, v in (match.groupdict() if match else {}).items() if v}
    fill = {"node": node or "?", "driver": "?", "claim": "?", "pod": "?", **names}
    return PrepareFailure(text.cls, code or _CODE[text.cls], text.verdict, text.owner, text.next_step.format(**fill),
                          error, text.go_format, names)


# --- the resourceclaim controller -------------------------------------------------------------

@dataclass(frozen=True)
class ControllerText:
    go_format: str
    pattern: re.Pattern[str]
    owner: Owner
    next_step: str  # str.format with template, namespace


def _ctext(go_format: str, pattern: str, owner: Owner, next_step: str) -> ControllerText:
    return ControllerText(go_format, re.compile(pattern, re.DOTALL), owner, next_step)


# The event is Event(pod, Warning, "FailedResourceClaimCreation", "PodResourceClaim %s: %v").
# ``create ResourceClaim %s`` names the claim before the API server generated its name, so
# v1.37.2 prints it empty: "create ResourceClaim : ResourceClaim.resource.k8s.io ... is invalid".
CLAIM_CREATION_TEXTS: tuple[ControllerText, ...] = (
    _ctext("admin access is requested, but the feature is disabled", r"admin access is requested, but the feature is disabled",
           Owner.PLATFORM, "enable the feature gate DRAAdminAccess on the control plane, or drop adminAccess from template {template}"),
    _ctext("template includes a prioritized list of subrequests, but the feature is disabled",
           r"prioritized list of subrequests, but the feature is disabled", Owner.PLATFORM,
           "enable the feature gate DRAPrioritizedList on the control plane, or use exactly instead of firstAvailable in template {template}"),
    _ctext("claim %s is a PodGroup claim but the %s feature is disabled", r"is a PodGroup claim but the \S+ feature is disabled",
           Owner.PLATFORM, "enable the feature gate DRAWorkloadResourceClaims on the control plane"),
    _ctext("resource claim template %q: %w (lister: resourceclaimtemplate.resource.k8s.io %q not found)",
           r'^resource claim template "[^"]*": \S+ "[^"]*" not found', Owner.APPLICATION,
           "create ResourceClaimTemplate {template} in namespace {namespace}, or fix the pod's template name"),
    _ctext("create ResourceClaim %s: %w (admission: admin access needs the namespace label)",
           r"admin access to devices requires the `resource\.kubernetes\.io/admin-access: true` label", Owner.PLATFORM,
           "label namespace {namespace} with resource.kubernetes.io/admin-access=true (cluster admins only), "
           "or drop adminAccess from template {template}"),
    _ctext("create ResourceClaim %s: %w", r"^create ResourceClaim \S*: ", Owner.PLATFORM,
           "the API server refused the claim made from template {template} (its words above: quota, "
           "admission webhook or validation)"),
)
_CONTROLLER_UNKNOWN = _ctext("%v", r"", Owner.PLATFORM,
                             "the claim controller cannot create the claim; its message above says why "
                             "(check kube-controller-manager)")


@dataclass(frozen=True)
class ClaimCreationFailure:
    pod_claim: str
    error: str
    owner: Owner
    next_step: str
    go_format: str


def classify_claim_creation(message: str, *, template: str, namespace: str) -> ClaimCreationFailure:
    """A ``FailedResourceClaimCreation`` message (``PodResourceClaim NAME: ERROR``), classified."""
    pod_claim, sep, error = message.partition(": ")
    if not (sep and pod_claim.startswith("PodResourceClaim ")):
        pod_claim, error = "", message
    text = next((t for t in CLAIM_CREATION_TEXTS if t.pattern.search(error)), _CONTROLLER_UNKNOWN)
    return ClaimCreationFailure(pod_claim.removeprefix("PodResourceClaim "), error, text.owner,
                                text.next_step.format(template=template, namespace=namespace), text.go_format)


# --- the scheduler and time order -------------------------------------------------------------


def event_time(event: Mapping[str, Any]) -> datetime | None:
    """When an event last happened: ``lastTimestamp``, ``eventTime`` (events.k8s.io) or ``firstTimestamp``."""
    series = event.get("series")
    last_observed = series.get("lastObservedTime") if isinstance(series, Mapping) else None
    for value in (event.get("lastTimestamp"), last_observed, event.get("eventTime"), event.get("firstTimestamp")):
        if isinstance(value, str) and value:
            try:
                parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                continue
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


_EPOCH = datetime.fromtimestamp(0, UTC)


# A pod's life passes the claim controller, then the scheduler, then the kubelet.  Core/v1
# events (the kubelet's recorder) carry whole seconds while events.k8s.io ones (the scheduler's)
# carry microseconds, so within one second the pipeline order, not the clock, is the truth.
_PIPELINE = {"resource_claim": 0, "resourceclaim-controller": 0, "default-scheduler": 1, "kubelet": 3}


def component_of(event: Mapping[str, Any]) -> str:
    """Who wrote an event: ``reportingComponent`` (events.k8s.io) or ``source.component`` (core/v1)."""
    source = event.get("source")
    return str(event.get("reportingComponent") or (source.get("component") if isinstance(source, Mapping) else "") or "")


def in_time_order(events: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Oldest first, by the second; within a second in pipeline order (controller, scheduler,
    kubelet).  Events without a time keep their input order, before the timed ones."""
    def key(e: Mapping[str, Any]) -> tuple[datetime, int, datetime]:
        when = event_time(e) or _EPOCH
        return when.replace(microsecond=0), _PIPELINE.get(component_of(e), 2), when

    return sorted(events, key=key)


def scheduler_message(pod: Mapping[str, Any], events: Iterable[Mapping[str, Any]]) -> str:
    """What kube-scheduler last said about an unbound pod, verbatim.

    The ``PodScheduled=False`` condition holds the newest attempt; a bundle written without
    status still has the ``FailedScheduling`` events, whose newest one says the same.
    """
    if (pod.get("spec") or {}).get("nodeName"):
        return ""
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False" and c.get("message"):
            return str(c["message"])
    failed = [e for e in events if e.get("reason") == SCHEDULING_REASON]
    return str(in_time_order(failed)[-1].get("message") or "") if failed else ""
