"""Real manifest sets: workload kinds, kubectl dumps, events.k8s.io Events, v1beta1/v1beta2 conversion."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from drakit.demo import demo_paths
from drakit.errors import InvalidInput
from drakit.model import ExactDeviceRequest, Pod
from drakit.model.workloads import MAX_TEMPLATE_REPLICAS, triage
from drakit.sources import load_bundle
from tests.hostile.harness import run_in_process

POD_SPEC: dict[str, Any] = {
    "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "training-48g"}],
    "containers": [{"name": "main", "image": "trainer:1", "ports": [{"containerPort": 80}],
                    "env": [{"name": "A", "value": "b"}], "resources": {"claims": [{"name": "gpus"}]}}],
}
TEMPLATE = {"metadata": {"labels": {"app": "train"}}, "spec": POD_SPEC}


def _meta(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "namespace": "ml", **extra}


MIXED: list[dict[str, Any]] = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}},
    {"apiVersion": "v1", "kind": "Service", "metadata": _meta("web"), "spec": {"ports": [{"port": 80}]}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta("cfg"), "data": {"debug": "y"}},
    {"apiVersion": "v1", "kind": "Secret", "metadata": _meta("s"), "stringData": {"k": "v"}},
    {"apiVersion": "batch/v1", "kind": "Job", "metadata": _meta("train-job"),
     "spec": {"backoffLimit": 0, "template": TEMPLATE}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta("serve"),
     "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "train"}}, "template": TEMPLATE}},
    {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": _meta("nightly"),
     "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": TEMPLATE}}}},
    {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": _meta("js"),
     "spec": {"replicatedJobs": [{"name": "workers", "template": {"spec": {"template": TEMPLATE}}}]}},
    {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": _meta("unknown-crd"), "spec": {"x": 1}},
    # what `kubectl get pods,events -o yaml` prints
    {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": [
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": _meta("train-dump", uid="u1", resourceVersion="42", creationTimestamp="2026-01-01T00:00:00Z",
                           ownerReferences=[{"apiVersion": "batch/v1", "kind": "Job", "name": "train-job",
                                             "uid": "j1", "controller": True, "blockOwnerDeletion": True}],
                           managedFields=[{"manager": "kube-controller-manager", "operation": "Update",
                                           "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]),
         "spec": POD_SPEC,
         "status": {"phase": "Pending", "qosClass": "BestEffort", "conditions": [
             {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
              "message": "0/3 nodes are available", "lastTransitionTime": "2026-01-01T00:00:01Z"}]}},
    ]},
    {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": _meta("train-dump.1"),
     "regarding": {"kind": "Pod", "name": "train-dump", "namespace": "ml"}, "reason": "FailedScheduling",
     "note": "0/3 nodes are available", "type": "Warning", "reportingController": "default-scheduler",
     "eventTime": "2026-01-01T00:00:01.000000Z", "action": "Scheduling"},
]


@pytest.fixture
def mixed(tmp_path: Path) -> list[str]:
    p = tmp_path / "mixed.yaml"
    p.write_text(yaml.safe_dump_all(MIXED, sort_keys=False))
    return [*demo_paths(), str(p)]


def test_a_real_manifest_set_loads_with_one_note_per_skipped_kind(mixed: list[str]) -> None:
    bundle = load_bundle(mixed)
    assert [p.metadata.name for p in bundle.pods if p.metadata.name == "train-dump"] == ["train-dump"]
    event = bundle.events[0]
    assert (event.involved_object.name, event.message, event.reporting_component) == (
        "train-dump", "0/3 nodes are available", "default-scheduler")
    owners = sorted(e.owner for e in bundle.workload_pods)
    assert owners == ["CronJob/nightly", "Deployment/serve", "Deployment/serve", "Job/train-job", "JobSet/js"]
    assert [(e.name, e.replica) for e in bundle.workload_pods if e.owner == "Deployment/serve"] == [
        ("serve-0", 0), ("serve-1", 1)]  # replicas: 2
    assert sorted(e.owner for e in bundle.checked_pods) == sorted(set(owners))
    js = next(e for e in bundle.workload_pods if e.owner == "JobSet/js")
    assert js.name == "js-workers-0" and js.namespace == "ml"
    assert isinstance(js.obj, Pod) and js.obj.metadata.owner_references[0].kind == "JobSet"
    assert js.obj.spec.resource_claims[0].resource_claim_template_name == "training-48g"
    skipped = [n for n in bundle.notes if n.startswith("skipped")]
    assert len(skipped) == 9  # ConfigMap, CronJob, Deployment, Job, JobSet, Namespace, PyTorchJob, Secret, Service
    assert any(n.startswith("skipped 1 PyTorchJob") for n in skipped)


@pytest.mark.parametrize(("args", "codes"), [
    pytest.param(["validate"], {0}, id="validate"),
    pytest.param(["explain", "pod/train-dump", "-n", "ml"], {0, 3}, id="explain"),
    pytest.param(["trial"], {0, 1}, id="trial"),
])
def test_the_mixed_set_validates_explains_and_trials(mixed: list[str], args: list[str], codes: set[int]) -> None:
    files = [a for p in mixed for a in ("-f", p)]
    result = run_in_process([*args, *files])
    assert result.crash == ""
    assert result.code in codes, result.text
    assert "error:" not in result.err, result.err
    if args[0] == "validate":
        assert "Warning: skipped 1 Deployment object(s)" in result.err
    if args[0] == "trial":
        assert "Trial PASSED" in result.out


def _broken_template(tmp_path: Path, **spec: Any) -> str:
    p = tmp_path / "job.yaml"
    p.write_text(yaml.safe_dump({"apiVersion": "batch/v1", "kind": "Job", "metadata": _meta("j"), "spec": spec}))
    return str(p)


@pytest.mark.parametrize(("spec", "want"), [
    pytest.param({"template": {"spec": {**POD_SPEC, "priorityClassName": 7}}},
                 'Job "j" is invalid: spec.template.spec.priorityClassName: Invalid value: 7: must be a string',
                 id="priority-class-type"),
    pytest.param({"template": {"metadata": {"labels": {"a": 1}}, "spec": POD_SPEC}},
                 "spec.template.metadata.labels[a]: Invalid value: 1: must be a string", id="label-type"),
    pytest.param({"template": {"spec": {**POD_SPEC, "resourceClaims": [{"nam": "x"}]}}},
                 'unknown field "spec.template.spec.resourceClaims[0].nam"', id="claim-field"),
    pytest.param({"template": "pod"}, "spec.template: Invalid value: must be an object", id="template-type"),
    pytest.param({"template": {"spec": POD_SPEC, "extra": 1}}, "spec.template.extra: Invalid value: unknown field",
                 id="template-field"),
])
def test_workload_pod_templates_are_checked(tmp_path: Path, spec: dict[str, Any], want: str) -> None:
    with pytest.raises(InvalidInput) as info:
        load_bundle([_broken_template(tmp_path, **spec)])
    assert want in str(info.value)


def test_workload_template_semantics_are_validated(tmp_path: Path) -> None:
    bad = {**POD_SPEC, "containers": [{"name": "main", "resources": {"claims": [{"name": "nope"}]}}]}
    result = run_in_process(["validate", "-f", _broken_template(tmp_path, template={"spec": bad})])
    assert result.code == 1 and "nope" in result.out, result.text


V1BETA1_CLAIM = {
    "apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim", "metadata": {"name": "c"},
    "spec": {"devices": {"requests": [
        {"name": "gpu", "deviceClassName": "gpu.example.com", "count": 2, "allocationMode": "ExactCount"},
        {"name": "alt", "firstAvailable": [{"name": "a", "deviceClassName": "gpu.example.com"}]},
    ]}},
}
V1BETA1_SLICE = {
    "apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceSlice", "metadata": {"name": "s"},
    "spec": {"driver": "gpu.example.com", "nodeName": "n1", "allNodes": False,
             "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
             "devices": [{"name": "gpu-0", "basic": {"attributes": {"model": {"string": "a"}},
                                                     "capacity": {"memory": {"value": "1Gi"}}}}]},
}


def test_v1beta1_converts_as_the_api_server_does(tmp_path: Path) -> None:
    v1beta2 = {**V1BETA1_CLAIM, "apiVersion": "resource.k8s.io/v1beta2", "metadata": {"name": "c2"},
               "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "x"}}]}}}
    p = tmp_path / "old.yaml"
    p.write_text(yaml.safe_dump_all([V1BETA1_CLAIM, V1BETA1_SLICE, v1beta2]))
    bundle = load_bundle([str(p)])
    first, alt = bundle.claims[0].spec.devices.requests
    assert isinstance(first.exactly, ExactDeviceRequest) and first.exactly.count == 2
    assert alt.exactly is None and alt.first_available[0].name == "a"
    device = bundle.slices[0].spec.devices[0]
    assert device.attributes["model"] == {"string": "a"} and str(device.capacity["memory"].value) == "1Gi"
    assert bundle.slices[0].spec.all_nodes is None
    assert bundle.claims[1].metadata.name == "c2"
    assert "converted 1 resource.k8s.io/v1beta1 ResourceClaim object(s) to resource.k8s.io/v1" in bundle.notes
    assert bundle.entries[0].wire["apiVersion"] == "resource.k8s.io/v1"


def test_unconvertible_versions_and_unknown_core_kinds_are_refused(tmp_path: Path) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text(yaml.safe_dump_all([{**V1BETA1_CLAIM, "apiVersion": "resource.k8s.io/v1alpha3"},
                                     {"apiVersion": "v1", "kind": "Pdo", "metadata": {"name": "x"}}]))
    with pytest.raises(InvalidInput) as info:
        load_bundle([str(p)])
    text = str(info.value)
    assert 'no matches for kind "ResourceClaim" in version "resource.k8s.io/v1alpha3"' in text
    assert 'no matches for kind "Pdo" in version "v1"' in text


_POD_SPEC = {"containers": [{"name": "main", "image": "x"}]}
_TPL = {"metadata": {"labels": {"app": "a"}}, "spec": _POD_SPEC}


def _workload(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    api = {"Job": "batch/v1", "CronJob": "batch/v1", "JobSet": "jobset.x-k8s.io/v1alpha2"}.get(kind, "apps/v1")
    return {"apiVersion": api, "kind": kind, "metadata": {"name": "w", "namespace": "ml"}, "spec": spec}


@pytest.mark.parametrize(("kind", "spec", "names", "generated"), [
    pytest.param("StatefulSet", {"replicas": 3, "template": _TPL}, ["w-0", "w-1", "w-2"], False, id="statefulset"),
    pytest.param("StatefulSet", {"replicas": 2, "ordinals": {"start": 5}, "template": _TPL}, ["w-5", "w-6"], False,
                 id="statefulset-start-ordinal"),
    pytest.param("Deployment", {"template": _TPL}, ["w-0"], True, id="deployment-default-one"),
    pytest.param("Deployment", {"replicas": 0, "template": _TPL}, [], True, id="deployment-scaled-to-zero"),
    pytest.param("ReplicaSet", {"replicas": 2, "template": _TPL}, ["w-0", "w-1"], True, id="replicaset"),
    pytest.param("Job", {"parallelism": 4, "completions": 2, "template": _TPL}, ["w-0", "w-1"], True,
                 id="job-parallelism-capped-by-completions"),
    pytest.param("Job", {"parallelism": 3, "template": _TPL}, ["w-0", "w-1", "w-2"], True, id="job-parallelism"),
    pytest.param("CronJob", {"jobTemplate": {"spec": {"parallelism": 2, "template": _TPL}}}, ["w-0", "w-1"], True,
                 id="cronjob"),
    pytest.param("DaemonSet", {"template": _TPL}, ["w-0"], True, id="daemonset-one"),
    pytest.param("JobSet", {"replicatedJobs": [{"name": "workers", "replicas": 2, "template": {"spec": {
        "parallelism": 2, "template": _TPL}}}]}, ["w-workers-0", "w-workers-1", "w-workers-2", "w-workers-3"], True,
        id="jobset-replicas-times-parallelism"),
])
def test_template_pods_as_the_controller_makes_them(kind: str, spec: dict[str, Any], names: list[str],
                                                    generated: bool) -> None:
    t = triage(_workload(kind, spec))
    assert t.template_errors == () and [p.data["metadata"]["name"] for p in t.pods] == names
    assert all(p.generated is generated and p.replicas == len(names) for p in t.pods)
    assert [p.replica for p in t.pods] == list(range(len(names)))


@pytest.mark.parametrize(("spec", "error"), [
    pytest.param({"replicas": -1, "template": _TPL}, ("spec.replicas", "must be greater than or equal to 0"), id="negative"),
    pytest.param({"replicas": "3", "template": _TPL}, ("spec.replicas", "must be an integer"), id="string"),
])
def test_bad_replica_counts_are_template_errors(spec: dict[str, Any], error: tuple[str, str]) -> None:
    assert triage(_workload("Deployment", spec)).template_errors == (error,)


def test_huge_replica_counts_are_bounded() -> None:
    t = triage(_workload("Deployment", {"replicas": 10**9, "template": _TPL}))
    assert len(t.pods) == MAX_TEMPLATE_REPLICAS and t.pods[0].replicas == 10**9
    assert t.notes == (f"Deployment w (spec.template): 1000000000 pods; the first {MAX_TEMPLATE_REPLICAS} are offered",)


def test_an_invalid_template_is_reported_once_not_per_replica(tmp_path: Path) -> None:
    bad = {**_TPL, "spec": {**_POD_SPEC, "priorityClassName": 7}}
    p = tmp_path / "w.yaml"
    p.write_text(yaml.safe_dump(_workload("Deployment", {"replicas": 50, "template": bad})))
    with pytest.raises(InvalidInput) as e:
        load_bundle([str(p)])
    assert len(e.value.problems) == 1 and str(e.value).count("priorityClassName") == 1
