"""``drakit explain`` against the real control plane: the scheduler's own words are the ground truth.

For every explain scenario (``tests/scenarios/explain``) that a kubelet-less control plane can
reproduce, the scenario's objects are created for real (fresh namespace, holders scheduled by the
real scheduler, generated claims named by the real controller; see ``explainbridge``), the
scheduler's attempt is awaited, and

1. the pod's ``PodScheduled`` condition and its ``FailedScheduling`` /
   ``FailedResourceClaimCreation`` / ``Scheduled`` events are recorded verbatim (after replacing
   the random namespace and generated names) in ``fixtures/explain/<scenario>.json``
   (``DRAKIT_RECORD=1`` rewrites them) and compared on later runs;
2. ``drakit explain pod/NAME -n NS -f BUNDLE -o json`` is run as a subprocess on everything read
   back from the API server, and its verdict must be consistent with the scheduler's words
   according to ``FACTS``, the reviewed table below.  Each scenario also states its expected pair
   (scheduler facts, drakit headline code).

Scenarios the control plane cannot hold are listed in ``NOT_REPRODUCIBLE`` with the reason; two
of them (selectors the API server refuses) are checked against the API server's refusal instead.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes.client.exceptions import ApiException

from tests.integration import explainbridge as eb
from tests.integration import simbridge
from tests.integration.controlplane import ControlPlane, k8s_version
from tests.integration.gating import require
from tests.integration.kube import Cluster

pytestmark = pytest.mark.cluster

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures" / "explain"
REPO = HERE.parents[1]
CASES: list[dict[str, Any]] = yaml.safe_load((eb.SCENARIOS / "cases.yaml").read_text(encoding="utf-8"))
CASE = {c["name"]: c for c in CASES}
SENTINEL = "sentinel"

# --------------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Fact:
    """Something the scheduler (or the claim controller) said, and what drakit may say about it.

    ``pattern`` is searched in the condition message and the recorded event messages (or, for the
    two facts about the absence of any attempt, tested by ``_facts``).  ``verdicts``: drakit's
    verdict must be one of these.  ``codes``: drakit's headline code (``where="headline"``) or
    any of its codes (``where="any"``: node-level reasons drakit reports briefly, next to the DRA
    headline) must be one of these.
    """

    key: str
    pattern: str
    verdicts: frozenset[str]
    codes: frozenset[str]
    where: str = "headline"


def _fact(key: str, pattern: str, verdicts: str, codes: str, where: str = "headline") -> Fact:
    return Fact(key, pattern, frozenset(verdicts.split()), frozenset(codes.split()), where)


FUNNEL_CODES = "NoMatchingDevices NotEnoughDevices AlternativesExhausted"
IN_USE_CODES = (
    "DevicesInUse ConstraintsUnsatisfiable CountersExhausted CapacityExceeded TaintNotTolerated PoolIncomplete"
)
CLAIM_CREATION_CODES = "ClaimCreationFailed TemplateMissing"

# Reviewed by hand: a row is the claim "when the scheduler says X, drakit saying Y is consistent".
FACTS: tuple[Fact, ...] = (
    # Bound: the scheduler found a node and allocated every claim; nothing may block in drakit.
    _fact("bound", r"^Successfully assigned \S+ to \S+$", "ok", "Allocated Fits Running"),
    # Filter said no on every node because the allocator found no assignment: either no device
    # could ever match (funnel family, never) or matching devices are taken or cannot be combined
    # (in-use family, waiting; never for constraints that fail even on free devices).
    _fact("cannot-allocate", r"\d+ cannot allocate all claims", "never waiting", f"{FUNNEL_CODES} {IN_USE_CODES}"),
    # PreFilter: a request names a class that does not exist.
    _fact("class-missing", r"device class \S+ does not exist", "broken", "DeviceClassMissing"),
    # Filter aborted: a selector failed at runtime on one device (a SchedulerError, not Unschedulable).
    _fact("cel-runtime-error", r"CEL runtime error", "broken", "SelectorRuntimeError"),
    # The claim controller could not create the pod's claim.
    _fact("claim-creation-failed", r"^PodResourceClaim \S+: ", "broken", CLAIM_CREATION_CODES),
    # PreEnqueue kept the pod out of scheduling (claim missing, being deleted, not created):
    # no condition, no FailedScheduling event.  Only claim-stage codes explain that silence.
    _fact(
        "gated",
        "",
        "waiting broken",
        f"ClaimMissing ClaimBeingDeleted ClaimNotCreated ClaimNotOwned PodClaimEmpty {CLAIM_CREATION_CODES}",
    ),
    # Node-level reasons outside DRA, which drakit reports next to (or instead of) the DRA ones.
    _fact("node-selector", r"didn't match Pod's node affinity/selector", "never waiting",
          "NodeSelectorMismatch", where="any"),
    _fact("node-taint", r"had untolerated taint", "waiting never", "NodeTaintNotTolerated", where="any"),
    # Filter: the claim is already allocated, to nodes this pod may not use.
    _fact("claim-not-on-node", r"\d+ resourceclaim not available on the node", "waiting",
          "ClaimNotAvailableOnNode"),
    # PreBind: devices are allocated and reserved, the pod is only nominated; the scheduler waits
    # for the driver's binding conditions before it binds.
    _fact("binding-pending", r"^waiting for binding conditions", "waiting", "BindingConditionsPending"),
)
FACT = {f.key: f for f in FACTS}


# --------------------------------------------------------------------------------- scenarios


@dataclass(frozen=True)
class Repro:
    """One reproducible scenario: what the scheduler must say, and drakit's headline on the cluster."""

    name: str
    facts: frozenset[str]
    code: str
    target: str = "train"  # the pod whose scheduling is observed
    claim_target: str = ""  # also explain this claim (scenarios whose target is a claim)
    extra_pods: tuple[dict[str, Any], ...] = ()  # pods the bundle lacks (claim-target scenarios)
    drop_admin_label: bool = False  # remove the namespace's admin-access label before the pods
    differs: str = ""  # why drakit's headline on the cluster differs from cases.yaml (if it does)
    devices_carry_binding_conditions: bool = False  # see _binding_conditions_on_devices
    names_holders: bool = False  # drakit must name the holder claims the real scheduler allocated


def _repro(name: str, facts: str, code: str, **kw: Any) -> Any:
    return pytest.param(Repro(name, frozenset(facts.split()), code, **kw), id=name)


BOUND = "every claim is allocated and the pod is bound: drakit reports Allocated, not Fits"
REPRODUCED = [
    _repro("fits", "bound", "Allocated", differs=BOUND),
    _repro("first-available-fallback", "bound", "Allocated", differs=BOUND),
    _repro("admin-access-monitoring", "bound", "Allocated", differs=BOUND),
    _repro("device-taint-tolerated", "bound", "Allocated", differs=BOUND),
    _repro("partitionable-fits-half", "bound", "Allocated", differs=BOUND),
    _repro("consumable-capacity-fits", "bound", "Allocated", differs=BOUND),
    _repro(
        "template-missing", "claim-creation-failed gated", "ClaimCreationFailed",
        differs="the controller's FailedResourceClaimCreation event (absent from the bundle) is the "
        "stronger evidence for the same missing template",
    ),
    # The bundle's cause (DRAAdminAccess off) needs another control plane; the same controller
    # failure is produced by the API server refusing adminAccess in a namespace without the label.
    _repro(
        "claim-creation-failed", "claim-creation-failed gated", "ClaimCreationFailed", drop_admin_label=True,
    ),
    _repro("claim-missing", "gated", "ClaimMissing"),
    _repro("claim-being-deleted", "gated", "ClaimBeingDeleted"),
    _repro("class-missing", "class-missing", "DeviceClassMissing"),
    _repro("selector-runtime-error", "cel-runtime-error", "SelectorRuntimeError"),
    _repro("memory-80gi-near-miss", "cannot-allocate", "NoMatchingDevices"),
    _repro("product-name-case", "cannot-allocate", "NoMatchingDevices"),
    _repro("two-condition-selector", "cannot-allocate", "NoMatchingDevices"),
    _repro("consumable-capacity-missing", "cannot-allocate", "NoMatchingDevices"),
    _repro(
        "claim-target-near-miss", "cannot-allocate", "NoMatchingDevices", claim_target="big-gpu",
        extra_pods=(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "train"},
                "spec": {
                    "containers": [{"name": "main", "image": eb.POD_IMAGE, "resources": {"claims": [{"name": "gpus"}]}}],
                    "resourceClaims": [{"name": "gpus", "resourceClaimName": "big-gpu"}],
                },
            },
        ),
    ),
    _repro("not-enough-per-node", "cannot-allocate", "NotEnoughDevices"),
    _repro("too-many-devices", "cannot-allocate", "NotEnoughDevices"),
    _repro("first-available-exhausted", "cannot-allocate", "AlternativesExhausted"),
    _repro("constraint-pcie-root", "cannot-allocate", "ConstraintsUnsatisfiable"),
    _repro("constraint-numa-in-use", "cannot-allocate", "ConstraintsUnsatisfiable"),
    _repro("devices-in-use", "cannot-allocate", "DevicesInUse", names_holders=True),
    _repro("in-use-fragmented", "cannot-allocate", "DevicesInUse"),
    _repro("admin-access-in-use-without-admin", "cannot-allocate", "DevicesInUse", names_holders=True),
    _repro("device-taint", "cannot-allocate", "TaintNotTolerated"),
    _repro("partitionable-counters", "cannot-allocate", "CountersExhausted"),
    _repro("consumable-capacity-exceeded", "cannot-allocate", "CapacityExceeded"),
    _repro("pool-incomplete", "cannot-allocate", "PoolIncomplete"),
    _repro("node-selector-excludes", "node-selector", "NodeSelectorMismatch"),
    _repro("node-taint", "node-taint", "NodeTaintNotTolerated"),
    _repro("claim-allocated-elsewhere", "node-selector claim-not-on-node", "ClaimNotAvailableOnNode"),
    # Last: a pod waiting in PreBind keeps its devices in the scheduler's memory until it is deleted.
    _repro("binding-conditions-pending", "binding-pending", "BindingConditionsPending",
           devices_carry_binding_conditions=True),
]

REFUSED_BY_API_SERVER = {
    # scenario -> (field the API server names, its words, drakit's code on the bundle)
    "selector-compile-error": (
        "spec.spec.devices.requests[0].exactly.selectors[0].cel.expression",
        "compilation failed",
        "SelectorCompileError",
    ),
    "selector-cost-limit": (
        "spec.spec.devices.requests[0].exactly.selectors[0].cel.expression",
        "too complex, exceeds cost limit",
        "SelectorCostLimit",
    ),
}

NOT_REPRODUCIBLE = {
    "selector-compile-error": "the API server refuses the template at create (checked below)",
    "selector-cost-limit": "the API server refuses the template at create (checked below)",
    "admin-access-disabled": "the control plane runs with DRAAdminAccess on for the whole session "
    "(and with the gate off the API server drops adminAccess on create)",
    "claim-not-created": "the claim controller creates the claim within milliseconds; the window in "
    "which the scheduler's PreEnqueue waits for it leaves no trace in status or events",
    # test_describe_cluster.py posts the kubelet's events on claims the real scheduler allocated
    "prepare-driver-not-registered": "FailedPrepareDynamicResources comes from a kubelet",
    "prepare-not-reserved": "FailedPrepareDynamicResources comes from a kubelet",
    "prepare-deadline-exceeded": "FailedPrepareDynamicResources comes from a kubelet",
    "prepare-driver-error": "FailedPrepareDynamicResources comes from a kubelet",
    "prepare-claim-missing": "FailedPrepareDynamicResources comes from a kubelet",
    "running": "phase Running is written by a kubelet",
}


def test_every_scenario_is_classified() -> None:
    """A new scenario must be replayed here or say why it cannot be."""
    replayed = {p.values[0].name for p in REPRODUCED}
    assert not replayed & set(NOT_REPRODUCIBLE)
    assert replayed | set(NOT_REPRODUCIBLE) == set(CASE)
    assert set(REFUSED_BY_API_SERVER) <= set(NOT_REPRODUCIBLE)


def test_table_is_well_formed() -> None:
    verdicts = {"ok", "waiting", "never", "broken"}
    outcomes = require("drakit.outcomes", "ExplainCode")
    known = {c.value for c in outcomes.ExplainCode} | {c.value for c in outcomes.ReasonCode}
    for f in FACTS:
        assert f.verdicts <= verdicts, f.key
        assert f.codes <= known, (f.key, sorted(f.codes - known))
        assert f.where in ("headline", "any")
    for p in REPRODUCED:
        r: Repro = p.values[0]
        assert r.facts <= set(FACT), r.name
        # The pair must be consistent by the table itself, or the scenario contradicts it.
        for key in r.facts:
            fact = FACT[key]
            if fact.where == "headline":
                assert r.code in fact.codes, (r.name, key)


# --------------------------------------------------------------------------------- observation


def _normalize(text: str, ns: str, generated: Sequence[str]) -> str:
    text = text.replace(ns, "<namespace>")
    for name in generated:
        text = re.sub(rf"\b{re.escape(name)}-[a-z0-9]{{5}}\b", f"{name}-<random>", text)
    text = text.removeprefix("(combined from similar events): ")
    # Equal nodes tie: which one the scheduler picks is random.
    text = re.sub(r"^(Successfully assigned \S+ to )\S+$", r"\1<node>", text)
    return re.sub(r"^(waiting for binding conditions for device on node )\S+$", r"\1<node>", text)


RECORDED_REASONS = ("FailedScheduling", "FailedResourceClaimCreation", "Scheduled", "BindingConditionsPending")


@dataclass(frozen=True)
class Observation:
    bound: bool
    condition: dict[str, Any] | None
    events: tuple[dict[str, Any], ...]  # distinct, normalized

    def messages(self) -> list[str]:
        out = [str(e["message"]) for e in self.events]
        if self.condition and self.condition.get("message"):
            out.append(str(self.condition["message"]))
        return out


def _observe(cluster: Cluster, ns: str, pod_name: str, nodes: int, generated: Sequence[str]) -> Observation:
    pod = cluster.get("v1", "Pod", pod_name, ns) or {}
    cond = simbridge.pod_scheduled_condition(pod)
    prefix = "0/"
    considered_all = f"0/{nodes} nodes are available"
    bound = bool((pod.get("spec") or {}).get("nodeName"))
    events: set[str] = set()
    for e in cluster.events_for(pod):
        if e.get("reason") not in RECORDED_REASONS:
            continue
        message = str(e.get("message") or "")
        if message.startswith(prefix) and not message.startswith(considered_all):
            continue  # an attempt made before the scheduler saw every node
        if bound and e.get("reason") == "FailedScheduling":
            # The scheduler fails a pod only before it binds it: an attempt made before its
            # informers held the fresh slices and claims (seen under load), not the verdict.
            continue
        events.add(json.dumps({
            "type": e.get("type"),
            "reason": e.get("reason"),
            "action": e.get("action"),
            "reportingComponent": e.get("reportingComponent"),
            "message": _normalize(message, ns, generated),
        }, sort_keys=True))
    condition = None
    if cond is not None:
        condition = {k: cond.get(k) for k in ("status", "reason", "message")}
        if condition["message"]:
            condition["message"] = _normalize(str(condition["message"]), ns, generated)
    return Observation(
        bound=bound,
        condition=condition,
        events=tuple(json.loads(e) for e in sorted(events)),
    )


def _wait_for_scheduler(cluster: Cluster, ns: str, r: Repro, nodes: int) -> None:
    """Until the scheduler (or, for gated pods, the claim controller) has had its say."""
    considered_all = f"0/{nodes} nodes are available"

    def settled() -> bool | None:
        pod = cluster.get("v1", "Pod", r.target, ns) or {}
        if "bound" in r.facts:
            events = cluster.events_for(pod)
            return (bool(pod["spec"].get("nodeName")) and any(e.get("reason") == "Scheduled" for e in events)) or None
        if "binding-pending" in r.facts:
            return any(e.get("reason") == "BindingConditionsPending" for e in cluster.events_for(pod)) or None
        if "gated" in r.facts:
            if "claim-creation-failed" in r.facts and not any(
                e.get("reason") == "FailedResourceClaimCreation" for e in cluster.events_for(pod)
            ):
                return None
            # The sentinel was created after the target: once it is bound, the scheduler's queue
            # has run PreEnqueue on the target (informer events arrive in order).
            return bool((cluster.get("v1", "Pod", SENTINEL, ns) or {}).get("spec", {}).get("nodeName")) or None
        cond = simbridge.pod_scheduled_condition(pod)
        if not cond or cond.get("status") != "False":
            return None
        message = str(cond.get("message") or "")
        if cond.get("reason") == "Unschedulable" and not message.startswith(considered_all):
            return None
        return any(
            e.get("reason") == "FailedScheduling" and str(e.get("message") or "") == message
            for e in cluster.events_for(pod)
        ) or None

    cluster.wait_for(f"the scheduler's verdict on {ns}/{r.target} ({r.name})", settled, timeout=90)


def _facts(obs: Observation) -> set[str]:
    found: set[str] = set()
    for f in FACTS:
        if f.key == "gated":
            continue
        if any(re.search(f.pattern, m) for m in obs.messages()):
            found.add(f.key)
    scheduled_at_all = obs.bound or obs.condition is not None or any(
        e["reportingComponent"] == "default-scheduler" for e in obs.events
    )
    if not scheduled_at_all:
        found.add("gated")
    return found


def _record_or_compare(path: Path, observed: dict[str, Any]) -> None:
    if os.environ.get("DRAKIT_RECORD") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(observed, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(f"{path.name} missing: run with DRAKIT_RECORD=1 to record it", pytrace=False)
    assert observed == json.loads(path.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------------- drakit


def _gate_args(plane: ControlPlane) -> list[str]:
    """The control plane's gates, as far as drakit knows them, and its minor version."""
    features_mod = require("drakit.features", "GATES")
    on = [g for g in plane.gates if g in features_mod.GATES]
    minor = ".".join(k8s_version().split(".")[:2])
    return ["--kubernetes-version", minor, "--feature-gates", ",".join(f"{g}=true" for g in on)]


EXIT_FOR_VERDICT = {"ok": 0, "waiting": 3, "never": 3, "broken": 1}


def drakit_explain(target: str, ns: str, bundle: Path, gate_args: Sequence[str]) -> dict[str, Any]:
    """The public CLI, as a user runs it; its exit code must follow the verdict."""
    require("drakit.cli.explain", "register")
    proc = subprocess.run(
        [sys.executable, "-m", "drakit.cli.main", "explain", target, "-n", ns, "-f", str(bundle),
         "-o", "json", *gate_args],
        capture_output=True, text=True, cwd=REPO, timeout=120, check=False,
    )
    assert proc.stdout, f"drakit explain {target}: exit {proc.returncode}, stderr: {proc.stderr}"
    result: dict[str, Any] = json.loads(proc.stdout)
    assert proc.returncode == EXIT_FOR_VERDICT[result["verdict"]], proc.stderr
    return result


def assert_consistent(facts: set[str], diagnosis: Mapping[str, Any]) -> None:
    for key in sorted(facts):
        f = FACT[key]
        verdict, code, codes = diagnosis["verdict"], diagnosis["code"], set(diagnosis["codes"])
        assert verdict in f.verdicts, (
            f"scheduler fact {key!r}: drakit verdict {verdict} ({code}) is not one of {sorted(f.verdicts)}"
        )
        have = {code} if f.where == "headline" else codes
        assert have & f.codes, (
            f"scheduler fact {key!r}: drakit {f.where} code(s) {sorted(have)} not among {sorted(f.codes)}"
        )


# --------------------------------------------------------------------------------- the tests


@pytest.fixture(scope="module")
def gate_args(cluster: Cluster) -> list[str]:
    return _gate_args(cluster.plane)


@contextmanager
def scenario_namespace(cluster: Cluster, *, admin: bool) -> Iterator[str]:
    """A fresh namespace whose claims are *gone* afterwards (the namespace itself goes later).

    Waiting matters: the next scenario reuses node and pool names, and the scheduler counts a
    device as in use for as long as a claim allocated to it exists, also in a namespace that is
    still terminating.  Pods and claims are deleted directly because the namespace controller
    takes seconds longer to get to them.
    """
    labels = {eb.ADMIN_LABEL: "true"} if admin else None
    with cluster.namespace("explain", labels) as ns:
        try:
            yield ns
        finally:
            for pod in cluster.list_objects("v1", "Pod", ns):
                with suppress(ApiException):
                    cluster.core.delete_namespaced_pod(pod["metadata"]["name"], ns, grace_period_seconds=0)
            for claim in cluster.list_objects(eb.V1, "ResourceClaim", ns):
                cluster.delete(claim, ns)
            cluster.wait_for(
                f"the claims in namespace {ns} deleted",
                lambda: not cluster.list_objects(eb.V1, "ResourceClaim", ns) or None,
                timeout=120,
            )


def _sentinel() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": SENTINEL},
        "spec": {"terminationGracePeriodSeconds": 0, "containers": [{"name": "main", "image": eb.POD_IMAGE}]},
    }


def _generated_prefixes(pods: Sequence[Mapping[str, Any]]) -> list[str]:
    """``<pod>-<pod claim>``: how the claim controller names the claims it generates."""
    return [
        f"{p['metadata']['name']}-{rc['name']}"
        for p in pods
        for rc in (p.get("spec") or {}).get("resourceClaims") or []
        if rc.get("resourceClaimTemplateName")
    ]


def _words(pattern: str, messages: Sequence[str]) -> re.Match[str]:
    for m in messages:
        found = re.search(pattern, m)
        if found:
            return found
    raise AssertionError(f"{pattern!r} not in {messages}")


def _binding_conditions_on_devices(objects: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The bundle after the scheduler's PreBind instead of its snapshot after binding.

    The bundle shows the pod bound and the binding conditions in the claim's allocation; the real
    scheduler copies them there from the devices in the ResourceSlice and waits *before* binding.
    So: the conditions go onto every device of the slices (``bindsToNode`` as a node-local
    driver's would), the pod loses ``nodeName`` and its pre-generated claim is left to the
    controller.
    """
    out = [dict(copy.deepcopy(dict(o))) for o in objects]
    conditions: dict[str, Any] = {}
    for o in out:
        if o["kind"] == "ResourceClaim":
            for result in o["status"]["allocation"]["devices"]["results"]:
                conditions = {k: result[k] for k in ("bindingConditions", "bindingFailureConditions")}
    assert conditions, "the scenario's claim carries no binding conditions"
    for o in out:
        if o["kind"] == "ResourceSlice":
            for device in o["spec"]["devices"]:
                device.update(copy.deepcopy(conditions), bindsToNode=True)
        if o["kind"] == "Pod":
            o["spec"].pop("nodeName", None)
            o.pop("status", None)
    return [o for o in out if o["kind"] != "ResourceClaim"]


@pytest.mark.parametrize("repro", REPRODUCED)
def test_explain_agrees_with_scheduler(
    cluster: Cluster, gate_args: list[str], repro: Repro, tmp_path: Path
) -> None:
    r = repro
    objects = eb.load(r.name)
    if r.devices_carry_binding_conditions:
        objects = _binding_conditions_on_devices(objects)
    p = eb.plan(objects, [r.target])
    simbridge.wait_for_only_nodes(cluster, set())  # other modules' (and scenarios') nodes are gone
    eb.create_inventory(cluster, p)
    try:
        with scenario_namespace(cluster, admin=p.admin_access) as ns:
            try:
                eb.create_holders(cluster, p, ns)
                eb.create_workload(cluster, p, ns, drop_admin_label_before_pods=r.drop_admin_label)
                for pod in r.extra_pods:
                    cluster.create(pod, ns)
                if "gated" in r.facts:
                    cluster.create(_sentinel(), ns)
                _wait_for_scheduler(cluster, ns, r, len(p.nodes))
                obs = _observe(cluster, ns, r.target, len(p.nodes), _generated_prefixes(p.pods))
                bundle = eb.write_bundle(eb.snapshot(cluster, ns), tmp_path / f"{r.name}.yaml")
                diagnosis = drakit_explain(f"pod/{r.target}", ns, bundle, gate_args)
                claim_diagnosis = (
                    drakit_explain(f"claim/{r.claim_target}", ns, bundle, gate_args) if r.claim_target else None
                )
            finally:
                eb.release_finalizers(cluster, p, ns)
    finally:
        eb.delete_inventory(cluster, p)

    # 1. The scheduler's words, verbatim (random names replaced).
    observed = {
        "scenario": r.name,
        "kubernetes": k8s_version(),
        "nodes": len(p.nodes),
        "bound": obs.bound,
        "podScheduled": obs.condition,
        "events": list(obs.events),
    }
    _record_or_compare(FIXTURES / f"{r.name}.json", observed)

    # 2. The pair: which facts the scheduler stated, and drakit's headline on the same objects.
    facts = _facts(obs)
    assert facts == set(r.facts), f"scheduler said {obs.messages()}"
    assert_consistent(facts, diagnosis)
    assert diagnosis["code"] == r.code, diagnosis["headline"]

    # 3. Against the scenario's reviewed expectations for the bundle form.
    case = CASE[r.name]
    assert diagnosis["verdict"] == case["verdict"]
    if not r.differs:
        assert diagnosis["code"] == case["codes"][0]
        assert diagnosis["owner"] == case["owner"]
    if claim_diagnosis is not None:
        assert claim_diagnosis["verdict"] == case["verdict"]
        assert claim_diagnosis["code"] == case["codes"][0]

    # 4. Where the scheduler names an object, drakit names the same one.
    messages = obs.messages()
    if "class-missing" in facts:
        named = _words(r"device class (\S+) does not exist", messages).group(1)
        assert named in {f.get("detail", {}).get("deviceClass") for f in diagnosis["findings"]}
    if "cel-runtime-error" in facts:
        found = _words(r"selector #(\d+) on device (\S+): CEL runtime error: no such key: (\w+)", messages)
        head = diagnosis["findings"][0]
        assert head["device"] == found.group(2)
        assert head.get("detail", {}).get("attribute") == found.group(3)
    if r.names_holders:
        # The holders drakit names are the claims the real scheduler allocated for the holder pods.
        got = {(h["claim"], tuple(sorted(h["pods"])), h["devices"]) for h in diagnosis["holders"]}
        want = {
            (f"{ns}/{h.claim['metadata']['name']}", tuple(sorted(f"{ns}/{q['metadata']['name']}" for q in h.pods)),
             len(h.devices))
            for h in p.holders
        }
        assert got == want
    if "claim-creation-failed" in facts:
        event = _words(r"^PodResourceClaim .*", [e["message"] for e in obs.events]).group(0)
        # drakit quotes the controller's event (whose random names the fixture normalizes).
        assert any(
            _normalize(str(f.get("detail", {}).get("event", "")), ns, _generated_prefixes(p.pods)) == event
            for f in diagnosis["findings"]
        )


@pytest.mark.parametrize("name", sorted(REFUSED_BY_API_SERVER))
def test_refused_selectors(cluster: Cluster, gate_args: list[str], name: str) -> None:
    """Selectors drakit calls broken before scheduling are refused by the API server at create."""
    field, words, code = REFUSED_BY_API_SERVER[name]
    objects = eb.load(name)
    template = next(o for o in objects if o["kind"] == "ResourceClaimTemplate")
    with cluster.namespace("explain") as ns:
        rejection = cluster.dry_run_create(eb.plan(objects, ["train"]).templates[0], ns)
    assert rejection is not None, f"{name}: the API server accepted {template['metadata']['name']}"
    observed = {
        "scenario": name,
        "kubernetes": k8s_version(),
        "apiServer": {
            "code": rejection.code,
            "reason": rejection.reason,
            "causes": [{"field": f, "reason": rs, "message": m} for f, rs, m in rejection.causes],
        },
    }
    _record_or_compare(FIXTURES / f"{name}.json", observed)
    assert rejection.fields == {field}
    assert words in rejection.message
    # `drakit explain` refuses the same template at its door, with validate's words (exit 1) ...
    proc = subprocess.run(
        [sys.executable, "-m", "drakit.cli.main", "explain", "pod/train", "-n", "ml",
         "-f", str(eb.SCENARIOS / f"{name}.yaml"), "-o", "json", *gate_args],
        capture_output=True, text=True, cwd=REPO, timeout=120, check=False,
    )
    assert (proc.returncode, proc.stdout) == (1, ""), proc.stderr
    assert f'ResourceClaimTemplate "ml/{template["metadata"]["name"]}" is invalid: {field}: ' in proc.stderr
    assert words in proc.stderr
    # ... and the core, given the objects anyway (as stored in an older cluster), calls them broken.
    diagnose_mod = require("drakit.explain.diagnose", "diagnose")
    snapshot_mod = require("drakit.inventory.snapshot", "ClusterSnapshot")
    d = diagnose_mod.diagnose(snapshot_mod.ClusterSnapshot.from_objects(objects), "pod", "train", "ml")
    assert (d.verdict.value, d.code.value) == ("broken", code)
    assert d.verdict.value == CASE[name]["verdict"] and d.code.value == CASE[name]["codes"][0]


def test_creation_failure_fix_follows_the_controllers_words() -> None:
    """The recorded controller event, put into the scenario bundle in place of its own event.

    The controller's words name the namespace label (which the platform team sets), so the fix
    must too; a fix that says to create the (existing) template would send the user astray.
    """
    recorded = json.loads((FIXTURES / "claim-creation-failed.json").read_text(encoding="utf-8"))
    message = next(e["message"] for e in recorded["events"] if e["reason"] == "FailedResourceClaimCreation")
    diagnose_mod = require("drakit.explain.diagnose", "diagnose")
    inputs_mod = require("drakit.explain.inputs", "ExplainInput")
    objects = eb.load("claim-creation-failed")
    for o in objects:
        if o["kind"] == "Event":
            o["message"] = message
    d = diagnose_mod.diagnose(inputs_mod.ExplainInput.from_objects(objects), "pod", "train", "ml")
    assert d.code.value == "ClaimCreationFailed"
    assert eb.ADMIN_LABEL in d.fix and d.owner.value == "platform", (d.owner.value, d.fix)
