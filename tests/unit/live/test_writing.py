"""Redaction, profile apply on the twin, and the RBAC manifests (in the repository and printed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from drakit.cli.testing import run
from drakit.live import MemoryCluster
from drakit.live.apply import Action, apply_objects
from drakit.live.rbac import ROLES, Subject, manifests
from drakit.live.redact import REDACTED, redact

DEPLOY = Path(__file__).resolve().parents[3] / "deploy" / "rbac"
V1 = "resource.k8s.io/v1"


def pod(**container: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ml", "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{secret}"}},
            "spec": {"containers": [{"name": "c", "image": "x", **container}],
                     "initContainers": [{"name": "i", "image": "x", "env": [{"name": "A", "value": "1"}]}]}}


@pytest.mark.parametrize(
    ("obj", "counts", "kept"),
    [
        pytest.param(pod(env=[{"name": "TOKEN", "value": "s3cret"},
                              {"name": "REF", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
                         args=["--password", "hunter2"]),
                     (2, 2, 1, 0), "secretKeyRef", id="pod"),
        pytest.param({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
                      "spec": {"template": {"spec": {"containers": [{"name": "c", "args": ["hunter2"],
                                                                      "env": [{"name": "X", "value": "s3cret"}]}]}}}},
                     (1, 1, 0, 0), "batch/v1", id="job-template"),
        pytest.param({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "aHVudGVyMg=="}},
                     (0, 0, 0, 1), "", id="secret-dropped"),
        pytest.param({"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": "s"}, "spec": {"driver": "d"}},
                     (0, 0, 0, 0), "ResourceSlice", id="untouched"),
    ],
)
def test_redact(obj: dict[str, Any], counts: tuple[int, int, int, int], kept: str) -> None:
    before = yaml.safe_dump(obj)
    out, r = redact([obj])
    text = yaml.safe_dump(out)
    assert (r.env, r.args, r.annotations, r.secrets) == counts
    assert "s3cret" not in text and "hunter2" not in text and "{secret}" not in text and "aHVudGVy" not in text
    assert kept in text
    assert yaml.safe_dump(obj) == before  # the input is untouched
    if out and out[0]["kind"] == "Pod":
        c = out[0]["spec"]["containers"][0]
        assert c["env"][0] == {"name": "TOKEN", "value": REDACTED} and c["args"] == [REDACTED, REDACTED]


def device_class(expr: str) -> dict[str, Any]:
    return {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": expr}}]}}


def template(ns: str = "ml") -> dict[str, Any]:
    return {"apiVersion": V1, "kind": "ResourceClaimTemplate", "metadata": {"name": "t", "namespace": ns},
            "spec": {"spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu"}}]}}}}


def test_apply_creates_then_writes_nothing() -> None:
    cluster = MemoryCluster()
    first = apply_objects(cluster, [device_class("true"), template()])
    assert [a.action for a in first] == [Action.CREATED, Action.CREATED]
    assert first[0].line(False) == "deviceclass.resource.k8s.io/gpu created"
    writes = cluster.writes
    again = apply_objects(cluster, [device_class("true"), template()])
    assert [(a.action, a.diff) for a in again] == [(Action.UNCHANGED, ""), (Action.UNCHANGED, "")]
    assert cluster.writes == writes


def test_apply_dry_run_diffs_and_writes_nothing() -> None:
    cluster = MemoryCluster.of([device_class("true")])
    cluster.owners.clear()  # created, not applied: nobody owns its fields yet
    out = apply_objects(cluster, [device_class("false")], dry_run=True)
    assert out[0].action is Action.CONFIGURED and out[0].line(True).endswith("configured (server dry run)")
    assert out[0].diff.startswith("--- live/DeviceClass gpu\n+++ applied/DeviceClass gpu\n")
    assert out[0].diff.endswith("-      expression: 'true'\n+      expression: 'false'\n")
    assert cluster.objects[("DeviceClass", "", "gpu")]["spec"]["selectors"][0]["cel"]["expression"] == "true"


def test_apply_conflict_names_the_owner_and_writes_nothing() -> None:
    cluster = MemoryCluster()
    cluster.apply(device_class("true"), field_manager="platform-team")
    out = apply_objects(cluster, [device_class("false"), template()])
    assert out[0].action is Action.CONFLICT
    assert out[0].line(False) == ("deviceclass.resource.k8s.io/gpu: conflict: field .spec.selectors is owned by "
                                  "manager 'platform-team'")
    assert out[1].action is Action.CREATED  # one conflict does not stop the other objects


@pytest.mark.parametrize("role", ROLES)
def test_the_repository_holds_what_drakit_rbac_prints(role: str) -> None:
    r = run("rbac", role)
    assert r.exit_code == 0, r.stderr
    assert (DEPLOY / f"{role}.yaml").read_text(encoding="utf-8") == r.stdout


@pytest.mark.parametrize(
    ("role", "verbs"),
    [
        pytest.param("reader", {"get", "list", "watch"}, id="reader"),
        pytest.param("reader-namespaced", {"get", "list", "watch"}, id="reader-namespaced"),
        pytest.param("profile-applier", {"get", "create", "patch"}, id="applier"),
        pytest.param("queue-explainer", {"get", "list"}, id="queue-explainer"),
        pytest.param("runner", {"get", "list", "watch", "create", "patch", "delete"}, id="runner"),
    ],
)
def test_least_privilege(role: str, verbs: set[str]) -> None:
    objects = manifests(role, namespace="ml", subject=Subject("User", "ana"))
    rules = [rule for o in objects if o["kind"] in ("Role", "ClusterRole") for rule in o["rules"]]
    assert {v for rule in rules for v in rule["verbs"]} == verbs
    assert all("*" not in rule["resources"] and "secrets" not in rule["resources"] for rule in rules)
    assert all(o["kind"] != "ServiceAccount" for o in objects)
    bindings = [o for o in objects if o["kind"].endswith("Binding")]
    assert bindings and all(b["subjects"] == [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "ana"}]
                            for b in bindings)


def test_queue_explainer_reads_what_queue_explain_reads() -> None:
    """drakit.live.kueue's reads, each granted: the Job, Kueue's three kinds, the manager's ConfigMap by name."""
    objects = {(o["kind"], o["metadata"].get("namespace")): o for o in manifests("queue-explainer")}
    cluster = objects[("ClusterRole", None)]["rules"]
    assert {(g, r) for rule in cluster for g in rule["apiGroups"] for r in rule["resources"]} == {
        ("batch", "jobs"), ("kueue.x-k8s.io", "workloads"), ("kueue.x-k8s.io", "localqueues"),
        ("kueue.x-k8s.io", "clusterqueues"),
    }  # fmt: skip
    assert objects[("Role", "kueue-system")]["rules"] == [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"], "resourceNames": ["kueue-manager-config"]}
    ]
    assert objects[("RoleBinding", "kueue-system")]["subjects"] == [
        {"kind": "ServiceAccount", "name": "drakit", "namespace": "default"}
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["rbac", "admin"], "role 'admin': want reader, reader-namespaced, profile-applier, queue-explainer, runner", id="role"),
        pytest.param(["rbac", "--serviceaccount", "nocolon"], "want NAMESPACE:NAME", id="sa"),
        pytest.param(["rbac", "--user", "a", "--group", "b"], "exclude each other", id="two-subjects"),
        pytest.param(["profile", "apply", "evaluation", "--dry-run=client"], "only --dry-run=server", id="dry-run"),
        pytest.param(["explain", "pod/x", "-f", "x.yaml", "--context", "c"], "give one source", id="two-sources"),
        pytest.param(["allocate", "--as-given", "--demo", "--context", "c"], "give one source", id="three-sources"),
    ],
)
def test_usage_errors_are_one_line(args: list[str], message: str) -> None:
    r = run(*args)
    assert r.exit_code == 2 and message in r.stderr and len(r.stderr.splitlines()) == 1, r
