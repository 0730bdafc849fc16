"""The injector's decision: golden JSONPatches, denials with their codes, idempotence."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import jsonpatch
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drakit.profiles import compile_profile, drivers_for, parse_profiles
from drakit.profiles.compile import CompiledProfile
from drakit.profiles.loader import example_texts
from drakit.webhook import mutate as m
from drakit.webhook.mutate import Injector, MalformedReview, mutate

_COMPILED = {rp.name: compile_profile(rp, drivers_for(rp)[0]) for rp in parse_profiles([], example_texts()).selected()}
INJECTOR = Injector.of(list(_COMPILED.values()))
EVAL_CLAIM = {"name": "gpus", "resourceClaimTemplateName": "evaluation"}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def compiled(name: str) -> CompiledProfile:
    return _COMPILED[name]


def review(obj: dict[str, Any], kind: str = "Pod", operation: str = "CREATE", old: dict[str, Any] | None = None,
           group: str = "") -> dict[str, Any]:
    req: dict[str, Any] = {"uid": "u-1", "kind": {"group": group, "version": "v1", "kind": kind},
                           "operation": operation, "namespace": "team-a", "object": obj}
    if old is not None:
        req["oldObject"] = old
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req}


def pod(profile: str | None = "evaluation", containers: list[dict[str, Any]] | None = None, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"generateName": "p-"}
    if profile is not None:
        meta["labels"] = {"drakit.dev/profile": profile}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": containers if containers is not None else [{"name": "main", "image": "i"}], **spec}}


def patched(obj: dict[str, Any], decision: m.Decision) -> dict[str, Any]:
    return jsonpatch.apply_patch(obj, list(decision.patch))  # type: ignore[no-any-return]


# --- golden patches ---------------------------------------------------------------------------

GOLDEN = [
    pytest.param(
        pod(),
        [
            {"op": "add", "path": "/metadata/annotations", "value": {"drakit.dev/injected": "evaluation"}},
            {"op": "add", "path": "/spec/resourceClaims", "value": [EVAL_CLAIM]},
            {"op": "add", "path": "/spec/tolerations", "value": [GPU_TOLERATION]},
            {"op": "add", "path": "/spec/containers/0/resources", "value": {"claims": [{"name": "gpus"}]}},
        ],
        id="absent-arrays-and-container-without-resources",
    ),
    pytest.param(
        {**pod(), "metadata": {"generateName": "p-", "labels": {"drakit.dev/profile": "evaluation"},
                               "annotations": {"team": "a"}}},
        [
            {"op": "add", "path": "/metadata/annotations/drakit.dev~1injected", "value": "evaluation"},
            {"op": "add", "path": "/spec/resourceClaims", "value": [EVAL_CLAIM]},
            {"op": "add", "path": "/spec/tolerations", "value": [GPU_TOLERATION]},
            {"op": "add", "path": "/spec/containers/0/resources", "value": {"claims": [{"name": "gpus"}]}},
        ],
        id="slash-in-key-escaped-as-tilde-1",
    ),
    pytest.param(
        pod(containers=[{"name": "main", "image": "i", "resources": {"limits": {"cpu": "1"}}}],
            resourceClaims=[{"name": "scratch", "resourceClaimName": "s"}],
            tolerations=[{"key": "a", "operator": "Exists"}]),
        [
            {"op": "add", "path": "/metadata/annotations", "value": {"drakit.dev/injected": "evaluation"}},
            {"op": "add", "path": "/spec/resourceClaims/1", "value": EVAL_CLAIM},
            {"op": "add", "path": "/spec/tolerations/1", "value": GPU_TOLERATION},
            {"op": "add", "path": "/spec/containers/0/resources/claims", "value": [{"name": "gpus"}]},
        ],
        id="existing-arrays-appended-resources-kept",
    ),
    pytest.param(
        pod(containers=[{"name": "main", "image": "i", "env": [{"name": "A", "value": "1"},
                                                               {"name": "NVIDIA_VISIBLE_DEVICES", "value": "none"}]}]),
        [
            {"op": "add", "path": "/metadata/annotations", "value": {"drakit.dev/injected": "evaluation"}},
            {"op": "add", "path": "/spec/resourceClaims", "value": [EVAL_CLAIM]},
            {"op": "add", "path": "/spec/tolerations", "value": [GPU_TOLERATION]},
            {"op": "remove", "path": "/spec/containers/0/env/1"},
            {"op": "add", "path": "/spec/containers/0/resources", "value": {"claims": [{"name": "gpus"}]}},
        ],
        id="polyaxon-hidden-gpus-env-removed",
    ),
]


@pytest.mark.parametrize(("obj", "want"), GOLDEN)
def test_golden_patch(obj: dict[str, Any], want: list[dict[str, Any]]) -> None:
    before = copy.deepcopy(obj)
    d = mutate(review(obj), INJECTOR)
    assert d.allowed and sorted(map(json.dumps, d.patch)) == sorted(map(json.dumps, want))
    assert obj == before, "the request object must not be changed in place"
    # The wire answer: base64 of the same JSON array.
    resp = d.response()["response"]
    assert resp["patchType"] == "JSONPatch"
    assert json.loads(base64.b64decode(resp["patch"])) == list(d.patch)


@pytest.mark.parametrize(("obj", "_want"), GOLDEN)
def test_reinvocation_is_idempotent(obj: dict[str, Any], _want: Any) -> None:
    once = patched(obj, mutate(review(obj), INJECTOR))
    again = mutate(review(once), INJECTOR)
    assert again.allowed and again.patch == ()
    assert "patch" not in again.response()["response"]


def test_the_named_container_gets_the_claim_and_sidecars_do_not() -> None:
    obj = pod(containers=[{"name": "proxy", "image": "e"}, {"name": "trainer", "image": "t"}])
    obj["metadata"]["annotations"] = {"drakit.dev/container": "trainer"}
    out = patched(obj, mutate(review(obj), INJECTOR))
    assert "resources" not in out["spec"]["containers"][0]
    assert out["spec"]["containers"][1]["resources"] == {"claims": [{"name": "gpus"}]}


@pytest.mark.parametrize(
    ("kind", "group", "obj", "pointer"),
    [
        pytest.param("Job", "batch", {"spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}},
                     "/spec/template/spec", id="job-template"),
        pytest.param("CronJob", "batch",
                     {"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}}}},
                     "/spec/jobTemplate/spec/template/spec", id="cronjob-template"),
        pytest.param("Deployment", "apps", {"spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}},
                     "/spec/template/spec", id="deployment-template"),
        pytest.param("PyTorchJob", "kubeflow.org",
                     {"spec": {"pytorchReplicaSpecs": {"Master": {"template": {"spec": {"containers": [{"name": "c"}]}}},
                                                       "Worker": {"template": {"spec": {"containers": [{"name": "c"}]}}}}}},
                     "/spec/pytorchReplicaSpecs/Worker/template/spec", id="pytorchjob-every-replica"),
    ],
)
def test_workloads_get_it_in_the_pod_template(kind: str, group: str, obj: dict[str, Any], pointer: str) -> None:
    obj = {"metadata": {"name": "w", "labels": {"drakit.dev/profile": "evaluation"}}, **obj}
    out = patched(obj, mutate(review(obj, kind=kind, group=group), INJECTOR))
    spec = jsonpatch.JsonPointer(pointer).resolve(out)
    assert spec["resourceClaims"] == [EVAL_CLAIM]
    assert spec["containers"][0]["resources"]["claims"] == [{"name": "gpus"}]


def test_mpijob_launcher_gets_no_devices() -> None:
    tmpl = {"template": {"spec": {"containers": [{"name": "c"}]}}}
    obj = {"metadata": {"name": "w", "labels": {"drakit.dev/profile": "evaluation"}},
           "spec": {"mpiReplicaSpecs": {"Launcher": copy.deepcopy(tmpl), "Worker": copy.deepcopy(tmpl)}}}
    out = patched(obj, mutate(review(obj, kind="MPIJob", group="kubeflow.org"), INJECTOR))
    assert "resourceClaims" not in out["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]
    assert out["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["resourceClaims"] == [EVAL_CLAIM]


# --- no change --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rv",
    [
        pytest.param(review(pod(profile=None)), id="unlabelled-pod"),
        pytest.param(review(pod(), operation="DELETE"), id="delete"),
        pytest.param(review(pod(), kind="ConfigMap"), id="a-kind-without-pods"),
        pytest.param(review(pod(), operation="UPDATE", old=pod()), id="update-of-a-pod-never-injected"),
    ],
)
def test_left_alone(rv: dict[str, Any]) -> None:
    d = mutate(rv, INJECTOR)
    assert d.allowed and d.patch == () and d.warnings == ()
    assert d.response() == {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                            "response": {"uid": "u-1", "allowed": True}}


def test_update_puts_back_what_create_injected() -> None:
    created = patched(pod(), mutate(review(pod()), INJECTOR))
    reapplied = pod()  # the original manifest, applied again
    d = mutate(review(reapplied, operation="UPDATE", old=created), INJECTOR)
    out = patched(reapplied, d)
    assert out["spec"]["resourceClaims"] == created["spec"]["resourceClaims"]
    assert out["spec"]["containers"][0]["resources"] == created["spec"]["containers"][0]["resources"]


# --- denials ----------------------------------------------------------------------------------


def _legacy(resource: str, part: str = "limits") -> dict[str, Any]:
    return pod(containers=[{"name": "main", "image": "i", "resources": {part: {resource: "1"}}}])


@pytest.mark.parametrize(
    ("rv", "injector", "code", "words"),
    [
        pytest.param(review(pod("nope")), INJECTOR, m.UNKNOWN_PROFILE,
                     ["nope", "evaluation, hopper-or-ampere, inference-small, nvidia-base, training-48g"], id="unknown-profile"),
        pytest.param(review(_legacy("nvidia.com/gpu")), INJECTOR, m.DOUBLE_ALLOCATION,
                     ["nvidia.com/gpu", "twice", "container main"], id="legacy-limit"),
        pytest.param(review(_legacy("nvidia.com/gpu", "requests")), INJECTOR, m.DOUBLE_ALLOCATION,
                     ["nvidia.com/gpu"], id="legacy-request"),
        pytest.param(review(pod(resourceClaims=[{"name": "gpus", "resourceClaimName": "mine"}])), INJECTOR,
                     m.CLAIM_CONFLICT, ["claim mine", "template evaluation"], id="claim-name-taken"),
        pytest.param(review({**pod(), "metadata": {"labels": {"drakit.dev/profile": "evaluation"},
                                                   "annotations": {"drakit.dev/profile-digest": "sha256:0"}}}),
                     INJECTOR, m.DIGEST_MISMATCH, ["sha256:0", compiled("evaluation").digest()], id="stale-digest"),
        pytest.param(review(pod("training-48g")), INJECTOR, m.BYPASSES_KUEUE,
                     ["queue training", "pod integration"], id="bare-pod-behind-kueue"),
        pytest.param(review({**pod(), "metadata": {"labels": {"drakit.dev/profile": "evaluation"},
                                                   "annotations": {"drakit.dev/container": "gone"}}}),
                     INJECTOR, m.NO_CONTAINER, ["gone", "have main"], id="named-container-missing"),
        pytest.param(review(pod(containers=[])), INJECTOR, m.NO_CONTAINER, ["no containers"], id="no-containers"),
        pytest.param(review({"metadata": {"labels": {"drakit.dev/profile": "evaluation"}}, "spec": {}}, kind="Job",
                            group="batch"), INJECTOR, m.NO_POD_SPEC, ["spec.template.spec"], id="job-without-template"),
    ],
)
def test_denied_with_code_and_reason(rv: dict[str, Any], injector: Injector, code: str, words: list[str]) -> None:
    d = mutate(rv, injector)
    assert not d.allowed and d.denial is not None and d.denial.code == code
    status = d.response()["response"]["status"]
    assert status["code"] == 403 and status["message"].startswith(f"drakit ({code}): ")
    for w in words:
        assert w in status["message"]
    assert "\n" not in status["message"]


def test_other_vendor_legacy_resource_is_not_double_allocation() -> None:
    assert mutate(review(_legacy("amd.com/gpu")), INJECTOR).allowed


def test_convert_policy_drops_the_legacy_request() -> None:
    obj = pod(containers=[{"name": "main", "image": "i", "resources": {"limits": {"nvidia.com/gpu": "2", "cpu": "1"}}}])
    d = mutate(review(obj), Injector(INJECTOR.rules, legacy="convert"))
    out = patched(obj, d)
    assert out["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "1"}, "claims": [{"name": "gpus"}]}
    assert any("replaced" in w for w in d.warnings)


def test_kueue_pod_integration_allows_bare_pods() -> None:
    assert mutate(review(pod("training-48g")), Injector(INJECTOR.rules, kueue_pods=True)).patch


def test_workload_behind_kueue_without_queue_label_is_warned() -> None:
    obj = {"metadata": {"labels": {"drakit.dev/profile": "training-48g"}},
           "spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}}
    d = mutate(review(obj, kind="Job", group="batch"), INJECTOR)
    assert d.allowed and any("kueue.x-k8s.io/queue-name" in w for w in d.warnings)


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param([], id="not-an-object"),
        pytest.param({"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1beta1", "request": {"uid": "x"}},
                     id="v1beta1"),
        pytest.param({"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1"}, id="no-request"),
        pytest.param({"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": {"uid": 7}}, id="uid-not-a-string"),
    ],
)
def test_malformed_reviews_are_not_answered(bad: Any) -> None:
    with pytest.raises(MalformedReview):
        mutate(bad, INJECTOR)


# --- properties -------------------------------------------------------------------------------

_names = st.sampled_from(["main", "side", "init", "x"])
_container = st.fixed_dictionaries(
    {"name": _names, "image": st.just("i")},
    optional={"resources": st.fixed_dictionaries({}, optional={
        "limits": st.dictionaries(st.sampled_from(["cpu", "memory", "example.com/foo"]), st.just("1"), max_size=2),
        "claims": st.lists(st.fixed_dictionaries({"name": st.sampled_from(["gpus", "other"])}), max_size=2)}),
        "env": st.lists(st.fixed_dictionaries({"name": st.sampled_from(["A", "NVIDIA_VISIBLE_DEVICES"]),
                                               "value": st.sampled_from(["none", "1"])}), max_size=2)},
)


@given(containers=st.lists(_container, min_size=1, max_size=3, unique_by=lambda c: c["name"]),
       claims=st.lists(st.fixed_dictionaries({"name": st.sampled_from(["a", "b"]), "resourceClaimName": st.just("c")}),
                       max_size=2, unique_by=lambda c: c["name"]))
def test_any_pod_ends_with_both_halves_and_a_second_pass_is_a_no_op(containers: list[dict[str, Any]],
                                                                   claims: list[dict[str, Any]]) -> None:
    obj = pod(containers=containers, **({"resourceClaims": claims} if claims else {}))
    d = mutate(review(obj), INJECTOR)
    assert d.allowed
    out = patched(obj, d)
    assert EVAL_CLAIM in out["spec"]["resourceClaims"]
    assert [c for c in out["spec"]["resourceClaims"] if c["name"] != "gpus"] == claims
    first = out["spec"]["containers"][0]
    assert {"name": "gpus"} in first["resources"]["claims"]
    assert {"name": "NVIDIA_VISIBLE_DEVICES", "value": "none"} not in first.get("env", [])
    assert [c["name"] for c in out["spec"]["containers"]] == [c["name"] for c in containers]
    assert out["spec"]["containers"][1:] == containers[1:]
    assert mutate(review(out), INJECTOR).patch == ()


_quantities = st.dictionaries(st.sampled_from(["cpu", "nvidia.com/gpu", "amd.com/gpu"]), st.sampled_from(["1", "0"]),
                              min_size=1, max_size=2)
_resources = st.one_of(st.none(), st.just("x"), *[st.fixed_dictionaries({}, optional={
    "limits": _quantities | st.none(), "requests": _quantities,
    "claims": st.lists(st.fixed_dictionaries({"name": st.just("gpus")}), max_size=1)})] * 4)
_any_container = st.fixed_dictionaries({"name": _names}, optional={
    "resources": _resources,
    "env": st.lists(st.fixed_dictionaries({"name": st.just("NVIDIA_VISIBLE_DEVICES"), "value": st.just("none")}), max_size=1)})
_spec = st.fixed_dictionaries({"containers": st.lists(_any_container, max_size=3, unique_by=lambda c: c["name"])}, optional={
    "tolerations": st.lists(st.just(GPU_TOLERATION), max_size=1)})
_workload = st.one_of(
    st.tuples(st.just("Pod"), st.just(""), _spec.map(lambda s: {"spec": s})),
    st.tuples(st.just("Job"), st.just("batch"), _spec.map(lambda s: {"spec": {"template": {"spec": s}}})),
    st.tuples(st.just("MPIJob"), st.just("kubeflow.org"), st.tuples(_spec, _spec).map(lambda t: {"spec": {"mpiReplicaSpecs": {
        "Launcher": {"template": {"spec": t[0]}}, "Worker": {"template": {"spec": t[1]}}}}})),
)


@settings(max_examples=200)
@given(workload=_workload, annotations=st.one_of(st.none(), st.just({"a/b": "c"}), st.just({"drakit.dev/container": "side"})),
       legacy=st.sampled_from(["deny", "convert"]))
def test_the_partial_copy_decides_as_a_full_copy_and_never_edits_the_request(
        workload: tuple[str, str, dict[str, Any]], annotations: dict[str, str] | None, legacy: str) -> None:
    """The injector copies only what it edits (``_writable``): the request stays as it came, and the
    answer is the one a deep copy of the whole object gives."""
    from unittest.mock import patch

    kind, group, body = workload
    obj = {"metadata": {"name": "w", "labels": {"drakit.dev/profile": "evaluation"},
                        **({"annotations": annotations} if annotations is not None else {})}, **body}
    before = copy.deepcopy(obj)
    injector = Injector(INJECTOR.rules, legacy="convert" if legacy == "convert" else "deny")
    d = mutate(review(obj, kind=kind, group=group), injector)
    assert obj == before
    with patch.object(m, "_writable", lambda o, path: copy.deepcopy(o)):
        assert mutate(review(obj, kind=kind, group=group), injector) == d
