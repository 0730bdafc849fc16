"""Claims injected at admission on the real control plane, in both forms (issue 17).

* **policy**: ``drakit admission policy`` output (MutatingAdmissionPolicy + binding per profile and
  kind family, one ValidatingAdmissionPolicy for the denials) applied to kube-apiserver 1.37,
  which serves ``admissionregistration.k8s.io/v1`` MutatingAdmissionPolicy by default (GA in
  1.36; checked below, no extra flag needed);
* **webhook**: ``drakit webhook serve`` over TLS on loopback with a CA the test makes, registered by
  URL with ``drakit webhook manifests --url``.

Both run as a user runs them (``python -m drakit.cli.main``).  For each: a labelled Pod and a
labelled Job get the claims and kube-scheduler allocates devices ``drakit profile eligible``
lists for the profile; an unlabelled pod is stored exactly as without the injector; double
allocation, an unknown profile and a bare Pod behind Kueue are denied with the reason; a second
mutation pass changes nothing; the same golden inputs are stored the same way by both forms.
With the webhook down, ``failurePolicy`` decides (Fail: labelled pods refused, others admitted).
"""

from __future__ import annotations

import copy
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes.client.exceptions import ApiException

from tests.integration import simbridge
from tests.integration.kube import Cluster
from tests.integration.test_profiles_cluster import REPO, compiled, demo_inventory, drakit, eligible

pytestmark = pytest.mark.cluster
__all__ = ["demo_inventory"]  # the fixture, imported

V1 = simbridge.V1
FORMS = ("policy", "webhook")
PROFILES = ("evaluation", "training-48g")
IMAGE = "registry.example/job:1"


def _pod(name: str, labels: dict[str, str] | None = None, **container: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"terminationGracePeriodSeconds": 0, "containers": [{"name": "main", "image": IMAGE, **container}]}}


def _job(name: str, profile: str, queue: str | None = None) -> dict[str, Any]:
    labels = {"drakit.dev/profile": profile, **({"kueue.x-k8s.io/queue-name": queue} if queue else {})}
    containers = [{"name": "sidecar", "image": IMAGE}, {"name": "trainer", "image": IMAGE}]
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "labels": labels, "annotations": {"drakit.dev/container": "trainer"}},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 0,
                                           "containers": containers}}}}


# Golden inputs: the same manifests through both forms must be stored the same way.
GOLDEN: dict[str, dict[str, Any]] = {
    "bare": _pod("g-bare", {"drakit.dev/profile": "evaluation"}),
    "with-resources": _pod("g-res", {"drakit.dev/profile": "evaluation"}, resources={"limits": {"cpu": "1"}}),
    "polyaxon-env": _pod("g-env", {"drakit.dev/profile": "evaluation"},
                         env=[{"name": "A", "value": "1"}, {"name": "NVIDIA_VISIBLE_DEVICES", "value": "none"}]),
    "annotated": {**_pod("g-ann", {"drakit.dev/profile": "evaluation"}),
                  "metadata": {"name": "g-ann", "labels": {"drakit.dev/profile": "evaluation"}, "annotations": {"a/b": "c"}}},
    "job": _job("g-job", "training-48g", "training"),
}
VOLATILE = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation")


def _stored(obj: dict[str, Any]) -> dict[str, Any]:
    """The object without what differs on every create (a Job's generated selector and uid labels)."""
    out = copy.deepcopy(obj)
    for k in VOLATILE:
        out["metadata"].pop(k, None)
    out.pop("status", None)
    if out["kind"] == "Job":
        out["spec"].pop("selector", None)
        labels = out["spec"]["template"]["metadata"].get("labels") or {}
        for k in [k for k in labels if "controller-uid" in k or k.endswith("job-name")]:
            del labels[k]
    # The service-account token volume gets a random suffix on every create.
    return json.loads(re.sub(r'"kube-api-access-[a-z0-9]+"', '"kube-api-access"', json.dumps(out)))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _apply_text(cluster: Cluster, text: str) -> list[dict[str, Any]]:
    docs = [d for d in yaml.safe_load_all(text) if d]
    for d in docs:
        cluster.apply(d)
    return docs


class Forms:
    """Installs and removes each form; the webhook server runs for the whole module."""

    def __init__(self, cluster: Cluster, workdir: Path, profiles: tuple[str, ...] = PROFILES,
                 probes: tuple[str, str] = ("evaluation", "training-48g")) -> None:
        """``profiles`` are served (names or files); ``probes`` name the profiles of the Pod and
        the Job that show when the injector is on."""
        trustme = pytest.importorskip("trustme")
        self.cluster = cluster
        self.workdir = workdir
        self.profiles, self.probes = profiles, probes
        ca = trustme.CA()
        cert = ca.issue_cert("127.0.0.1")
        ca.cert_pem.write_to_path(str(workdir / "ca.pem"))
        cert.private_key_pem.write_to_path(str(workdir / "key.pem"))
        cert.cert_chain_pems[0].write_to_path(str(workdir / "cert.pem"))
        self.port = _free_port()
        self.server: subprocess.Popen[bytes] | None = None
        self.start_server()

    def start_server(self) -> None:
        log = (self.workdir / "webhook.log").open("ab")
        self.server = subprocess.Popen(
            [sys.executable, "-m", "drakit.cli.main", "webhook", "serve", *self.profiles, "--host", "127.0.0.1",
             "--port", str(self.port), "--tls-cert", str(self.workdir / "cert.pem"), "--tls-key", str(self.workdir / "key.pem")],
            cwd=REPO, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "PYTHONPATH": str(REPO)})
        log.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.server.poll() is None, (self.workdir / "webhook.log").read_text()
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.2)
        raise AssertionError("drakit webhook serve did not listen")

    def stop_server(self) -> None:
        if self.server is not None and self.server.poll() is None:
            os.killpg(self.server.pid, signal.SIGTERM)
            self.server.wait(15)
        self.server = None

    def documents(self, form: str, *extra: str) -> str:
        if form == "policy":
            return drakit("admission", "policy", *self.profiles, *extra)
        return drakit("webhook", "manifests", *self.profiles, "--url", f"https://127.0.0.1:{self.port}/mutate",
                      "--ca-file", str(self.workdir / "ca.pem"), *extra)

    @contextmanager
    def installed(self, form: str, ns: str, *extra: str) -> Iterator[list[dict[str, Any]]]:
        docs = _apply_text(self.cluster, self.documents(form, *extra))
        try:
            self.wait_effective(ns, True)
            yield docs
        finally:
            for d in reversed(docs):
                self.cluster.delete(d)
            self.wait_effective(ns, False)

    def wait_effective(self, ns: str, on: bool) -> None:
        """Policies and webhook configurations reach the admission chain through informers, each
        on its own: wait until a Pod and a Job are mutated and an unknown profile is refused."""
        pod = _pod("probe", {"drakit.dev/profile": self.probes[0]})
        job = _job("probe", self.probes[1])
        unknown = _pod("probe", {"drakit.dev/profile": "no-such-profile"})

        def mutated(obj: dict[str, Any], spec: Any) -> bool | None:
            try:
                got = self.cluster.create(obj, ns, dry_run=True)
            except ApiException:
                return None
            return bool(spec(got).get("resourceClaims"))

        def check() -> bool:
            p = mutated(pod, lambda o: o["spec"])
            j = mutated(job, lambda o: o["spec"]["template"]["spec"])
            refused = mutated(unknown, lambda o: o["spec"]) is None
            return (p, j, refused) == ((True, True, True) if on else (False, False, False))

        self.cluster.wait_for(f"the injector to be {'on' if on else 'off'}", check, timeout=60)


@pytest.fixture(scope="module")
def forms(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Forms]:
    f = Forms(cluster, tmp_path_factory.mktemp("admission"))
    try:
        yield f
    finally:
        f.stop_server()


@pytest.fixture(scope="module")
def ns(cluster: Cluster, demo_inventory: list[dict[str, Any]]) -> Iterator[str]:
    """A namespace holding the profiles' claim templates (pods find templates only in their own)."""
    with cluster.namespace("inject") as name:
        objs = [m for m in compiled(name, *PROFILES) if m["kind"] != "PodTemplate"]
        cluster.apply({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "training"},
                       "value": 1000})
        for m in objs:
            cluster.apply(m)
        try:
            yield name
        finally:
            for m in objs:
                if m["kind"] == "DeviceClass":
                    cluster.delete(m)


def test_the_api_server_serves_mutating_admission_policy(cluster: Cluster) -> None:
    for kind in ("MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding", "ValidatingAdmissionPolicy"):
        assert cluster.dynamic.resources.get(api_version="admissionregistration.k8s.io/v1", kind=kind).kind == kind


def _denied(cluster: Cluster, obj: dict[str, Any], ns: str) -> str:
    with pytest.raises(ApiException) as exc:
        cluster.create(obj, ns)
    assert exc.value.status in (400, 403, 422, 500), exc.value.body
    return str(json.loads(exc.value.body).get("message", exc.value.body))


def _allocated(cluster: Cluster, ns: str, pod_name: str) -> list[dict[str, Any]]:
    def probe() -> list[dict[str, Any]] | None:
        p = cluster.get("v1", "Pod", pod_name, ns) or {}
        if not p.get("spec", {}).get("nodeName"):
            return None
        out: list[dict[str, Any]] = []
        for _, claim in simbridge.pod_claim_names(p):
            c = cluster.get(V1, "ResourceClaim", str(claim), ns) or {}
            out += (((c.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
        return [dict(r, node=p["spec"]["nodeName"]) for r in out] or None

    return cluster.wait_for(f"pod {pod_name} to be scheduled with devices", probe, timeout=90)


def _qualifying(profile: str) -> set[tuple[str, str]]:
    report = eligible(profile)[profile]
    return {(row["node"], d) for row in report["qualifying"] for d in row["devices"]}


@pytest.mark.parametrize("form", FORMS)
def test_labelled_pod_and_job_get_claims_and_allowed_devices(cluster: Cluster, forms: Forms, ns: str, form: str) -> None:
    with forms.installed(form, ns):
        pod = cluster.create(_pod(f"pod-{form}", {"drakit.dev/profile": "evaluation"}), ns)
        assert pod["spec"]["resourceClaims"] == [{"name": "gpus", "resourceClaimTemplateName": "evaluation"}]
        assert pod["spec"]["containers"][0]["resources"]["claims"] == [{"name": "gpus"}]
        job = cluster.create(_job(f"job-{form}", "training-48g", "training"), ns)
        tmpl = job["spec"]["template"]["spec"]
        assert tmpl["resourceClaims"] == [{"name": "gpus", "resourceClaimTemplateName": "training-48g"}]
        assert "claims" not in (tmpl["containers"][0].get("resources") or {})  # the sidecar
        assert tmpl["containers"][1]["resources"]["claims"] == [{"name": "gpus"}]
        try:
            got = _allocated(cluster, ns, pod["metadata"]["name"])
            assert all(r["driver"] == "gpu.nvidia.com" for r in got)
            assert {(r["node"], r["device"]) for r in got} <= _qualifying("evaluation")
            job_pod = cluster.wait_for("the Job's pod", lambda: cluster.list_objects(
                "v1", "Pod", ns, label_selector=f"job-name=job-{form}"), timeout=60)[0]
            got = _allocated(cluster, ns, job_pod["metadata"]["name"])
            assert len(got) == 2 and {(r["node"], r["device"]) for r in got} <= _qualifying("training-48g")
        finally:
            cluster.delete(job, ns)
            cluster.delete(pod, ns)
            for p in cluster.list_objects("v1", "Pod", ns, label_selector=f"job-name=job-{form}"):
                cluster.delete(p, ns)


@pytest.mark.parametrize("form", FORMS)
def test_unlabelled_pod_is_stored_as_without_the_injector(cluster: Cluster, forms: Forms, ns: str, form: str) -> None:
    plain = _pod("plain", {"app": "x"}, env=[{"name": "NVIDIA_VISIBLE_DEVICES", "value": "none"}],
                 resources={"limits": {"nvidia.com/gpu": "1"}})
    before = _stored(cluster.create(plain, ns, dry_run=True))
    with forms.installed(form, ns):
        after = _stored(cluster.create(plain, ns, dry_run=True))
    assert json.dumps(after, sort_keys=True) == json.dumps(before, sort_keys=True)


@pytest.mark.parametrize("form", FORMS)
def test_denials_carry_the_reason(cluster: Cluster, forms: Forms, ns: str, form: str) -> None:
    with forms.installed(form, ns):
        if form == "policy":  # the API server type-checks every expression against every matched kind
            guard = cluster.get("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "drakit-profiles") or {}
            assert not ((guard.get("status") or {}).get("typeChecking") or {}).get("expressionWarnings")
        msg = _denied(cluster, _pod("dbl", {"drakit.dev/profile": "evaluation"}, resources={"limits": {"nvidia.com/gpu": "1"}}), ns)
        assert "drakit (double-allocation)" in msg and "nvidia.com/gpu" in msg
        msg = _denied(cluster, _pod("unk", {"drakit.dev/profile": "nope"}), ns)
        assert "drakit (unknown-profile)" in msg and "served: evaluation, training-48g" in msg
        msg = _denied(cluster, _pod("kq", {"drakit.dev/profile": "training-48g"}), ns)
        assert "drakit (bypasses-kueue)" in msg
        stale = _pod("stale", {"drakit.dev/profile": "evaluation"})
        stale["metadata"]["annotations"] = {"drakit.dev/profile-digest": "sha256:0000000000000000"}
        assert "drakit (digest-mismatch)" in _denied(cluster, stale, ns)
        taken = _pod("taken", {"drakit.dev/profile": "evaluation"})
        taken["spec"]["resourceClaims"] = [{"name": "gpus", "resourceClaimName": "mine"}]
        assert "drakit (claim-conflict)" in _denied(cluster, taken, ns)
        gone = _pod("gone", {"drakit.dev/profile": "evaluation"})
        gone["metadata"]["annotations"] = {"drakit.dev/container": "trainer"}
        msg = _denied(cluster, gone, ns)
        assert "drakit (no-container)" in msg and "trainer" in msg and "have main" in msg


REINVOKER = {
    # Changes every labelled pod after drakit's mutation, so the chain reinvokes drakit's (IfNeeded).
    "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy",
    "metadata": {"name": "zz-test-reinvoker"},
    "spec": {"failurePolicy": "Fail", "reinvocationPolicy": "IfNeeded",
             "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                                                     "resources": ["pods"]}],
                                  "objectSelector": {"matchExpressions": [{"key": "drakit.dev/profile", "operator": "Exists"}]}},
             "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {
                 "expression": "Object{metadata: Object.metadata{labels: {'touched': 'yes'}}}"}}]},
}


@pytest.mark.parametrize("form", FORMS)
def test_a_second_pass_changes_nothing(cluster: Cluster, forms: Forms, ns: str, form: str) -> None:
    binding = {"apiVersion": REINVOKER["apiVersion"], "kind": "MutatingAdmissionPolicyBinding",
               "metadata": {"name": "zz-test-reinvoker"}, "spec": {"policyName": "zz-test-reinvoker"}}
    extra: list[dict[str, Any]] = [REINVOKER, binding]
    with forms.installed(form, ns) as docs:
        if form == "webhook":  # the same webhook registered twice: the second call sees the first's result
            again = copy.deepcopy(next(d for d in docs if d["kind"] == "MutatingWebhookConfiguration"))
            again["metadata"]["name"] = "drakit-webhook-again"
            for w in again["webhooks"]:
                w["name"] = w["name"].replace("drakit.dev", "again.drakit.dev")
            extra.append(again)
        for d in extra:
            cluster.apply(d)
        try:
            def probe() -> dict[str, Any] | None:
                got = cluster.create(_pod("twice", {"drakit.dev/profile": "evaluation"}), ns, dry_run=True)
                return got if got["metadata"]["labels"].get("touched") == "yes" else None

            got = cluster.wait_for("the reinvoking policy", probe, timeout=60)
            assert got["spec"]["resourceClaims"] == [{"name": "gpus", "resourceClaimTemplateName": "evaluation"}]
            assert got["spec"]["containers"][0]["resources"] == {"claims": [{"name": "gpus"}]}
            assert [t for t in got["spec"]["tolerations"] if t["key"] == "nvidia.com/gpu"] == [
                {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
        finally:
            for d in extra:
                cluster.delete(d)


def test_both_forms_store_the_golden_inputs_the_same_way(cluster: Cluster, forms: Forms, ns: str) -> None:
    results: dict[str, dict[str, Any]] = {}
    for form in FORMS:
        with forms.installed(form, ns):
            results[form] = {k: _stored(cluster.create(v, ns, dry_run=True)) for k, v in GOLDEN.items()}
    for k in GOLDEN:
        policy, webhook = (json.dumps(results[f][k], sort_keys=True) for f in FORMS)
        assert policy == webhook, k
    env = results["policy"]["polyaxon-env"]["spec"]["containers"][0]["env"]
    assert env == [{"name": "A", "value": "1"}]


def test_webhook_down_follows_failure_policy(cluster: Cluster, forms: Forms, ns: str) -> None:
    """Fail (the default for CREATE): labelled workloads are refused while unlabelled ones are
    admitted (objectSelector); Ignore: labelled pods are admitted without claims."""
    labelled = _pod("down", {"drakit.dev/profile": "evaluation"})
    with forms.installed("webhook", ns):
        forms.stop_server()
        try:
            msg = _denied(cluster, labelled, ns)
            assert "failed calling webhook" in msg and "inject.drakit.dev" in msg
            assert cluster.create(_pod("up", {"app": "x"}), ns, dry_run=True)["metadata"]["name"] == "up"
        finally:
            forms.start_server()
    docs = _apply_text(cluster, forms.documents("webhook", "--failure-policy", "Ignore"))
    forms.stop_server()
    try:
        got = cluster.wait_for("failurePolicy Ignore", lambda: _try_create(cluster, labelled, ns), timeout=60)
        assert "resourceClaims" not in got["spec"]
    finally:
        for d in docs:
            cluster.delete(d)
        forms.start_server()


def _try_create(cluster: Cluster, obj: dict[str, Any], ns: str) -> dict[str, Any] | None:
    try:
        return cluster.create(obj, ns, dry_run=True)
    except ApiException:
        return None


@pytest.mark.parametrize("form", FORMS)
def test_update_keeps_the_injected_claims(cluster: Cluster, forms: Forms, ns: str, form: str) -> None:
    """A Deployment replaced with its original manifest (kubectl replace) keeps the claims."""
    original = {"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": f"serve-{form}", "labels": {"drakit.dev/profile": "evaluation"}},
                "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "serve"}},
                         "template": {"metadata": {"labels": {"app": "serve"}},
                                      "spec": {"containers": [{"name": "main", "image": IMAGE}]}}}}
    with forms.installed(form, ns):
        created = cluster.create(original, ns)
        try:
            assert created["spec"]["template"]["spec"]["resourceClaims"] == [
                {"name": "gpus", "resourceClaimTemplateName": "evaluation"}]
            replaced = _replace(cluster, original, ns, IMAGE + "-v2")
            spec = replaced["spec"]["template"]["spec"]
            assert spec["containers"][0]["image"] == IMAGE + "-v2"
            assert spec["resourceClaims"] == [{"name": "gpus", "resourceClaimTemplateName": "evaluation"}]
            assert spec["containers"][0]["resources"]["claims"] == [{"name": "gpus"}]
        finally:
            cluster.delete(original, ns)


def _replace(cluster: Cluster, original: dict[str, Any], ns: str, image: str) -> dict[str, Any]:
    """PUT the original manifest with a new image over the stored object (the Deployment
    controller writes status meanwhile, so retry on a stale resourceVersion)."""
    from kubernetes.dynamic.exceptions import ConflictError

    resource = cluster.dynamic.resources.get(api_version="apps/v1", kind="Deployment")
    for _ in range(10):
        body = copy.deepcopy(original)
        current = cluster.get("apps/v1", "Deployment", original["metadata"]["name"], ns) or {}
        body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        body["spec"]["template"]["spec"]["containers"][0]["image"] = image
        try:
            return dict(resource.replace(body=body, namespace=ns).to_dict())
        except ConflictError:
            time.sleep(0.2)
    raise AssertionError("the Deployment kept changing under the replace")


def test_extended_resource_mode_is_scheduled_by_the_real_scheduler(cluster: Cluster, ns: str) -> None:
    """What a Polyaxon preset in extended-resource mode produces: a pod asking for
    ``gpu.drakit.dev/nvidia-base: 1`` against the DeviceClass naming it (DRAExtendedResource)."""
    (cls,) = [d for d in yaml.safe_load_all(drakit("profile", "polyaxon", "nvidia-base", "--polyaxon-mode",
                                                   "extended-resource", "--objects")) if d]
    assert cls["spec"]["extendedResourceName"] == "gpu.drakit.dev/nvidia-base"
    cls["metadata"]["name"] = "nvidia-base-er.gpu.nvidia.com"
    cluster.apply(cls)
    pod = _pod("er", resources={"limits": {"gpu.drakit.dev/nvidia-base": "1"}})
    try:
        cluster.create(pod, ns)

        def probe() -> dict[str, Any] | None:
            p = cluster.get("v1", "Pod", "er", ns) or {}
            return p if p.get("spec", {}).get("nodeName") and (p.get("status") or {}).get("extendedResourceClaimStatus") else None

        got = cluster.wait_for("the extended-resource pod to be scheduled", probe, timeout=90)
        claim_name = got["status"]["extendedResourceClaimStatus"]["resourceClaimName"]
        claim = cluster.get(V1, "ResourceClaim", claim_name, ns) or {}
        results = claim["status"]["allocation"]["devices"]["results"]
        assert len(results) == 1 and results[0]["driver"] == "gpu.nvidia.com"
        assert (got["spec"]["nodeName"], results[0]["device"]) in _qualifying("nvidia-base")
    finally:
        cluster.delete(pod, ns)
        cluster.delete(cls)


def test_webhook_manifests_are_accepted_by_the_api_server(cluster: Cluster, forms: Forms) -> None:
    """The in-cluster install (Namespace, ServiceAccount, ConfigMap, Deployment, Service and the
    registration by Service) as the API server validates it: server-side dry run, strict fields."""
    docs = [d for d in yaml.safe_load_all(drakit("webhook", "manifests", *PROFILES, "--ca-file",
                                                 str(forms.workdir / "ca.pem"), "-n", "drakit-injector")) if d]
    assert docs[0]["kind"] == "Namespace"
    cluster.apply(docs[0])
    try:
        refusals = []
        for d in docs[1:]:
            rejection = cluster.dry_run_create(d)
            if rejection is not None:
                refusals.append(f"{d['kind']}: {rejection}")
        assert refusals == []
    finally:
        cluster.delete(docs[0])
