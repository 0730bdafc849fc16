"""The two registrations: admission policies and the webhook's manifests, field by field, and the
HTTPS server answering over a real TLS socket."""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from drakit.profiles import parse_profiles
from drakit.profiles.loader import example_texts
from drakit.webhook.install import manifests, webhook_configuration
from drakit.webhook.mutate import Injector
from drakit.webhook.policy import GUARD_NAME, admission_policies
from tests.unit.webhook.test_mutate import INJECTOR, pod, review

CA = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def _by_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def test_policy_per_profile_and_kind_family_with_bindings() -> None:
    docs = admission_policies(INJECTOR)
    policies = _by_kind(docs, "MutatingAdmissionPolicy")
    bindings = {b["spec"]["policyName"] for b in _by_kind(docs, "MutatingAdmissionPolicyBinding")}
    assert {p["metadata"]["name"] for p in policies} == bindings
    # training-48g routes to Kueue: no policy injects into its bare Pods (the guard refuses them).
    assert "drakit-training-48g-pods" not in bindings and "drakit-training-48g-templates" in bindings
    assert "drakit-evaluation-pods" in bindings
    for p in policies:
        spec = p["spec"]
        assert p["apiVersion"] == "admissionregistration.k8s.io/v1"
        assert spec["reinvocationPolicy"] == "IfNeeded" and spec["failurePolicy"] == "Fail"
        assert spec["matchConstraints"]["objectSelector"] == {"matchLabels": {"drakit.dev/profile": p["metadata"]["labels"]["drakit.dev/profile"]}}
        assert "kube-system" in spec["matchConstraints"]["namespaceSelector"]["matchExpressions"][0]["values"]
        assert spec["mutations"][-1]["patchType"] in ("ApplyConfiguration", "JSONPatch")
        assert any(m["patchType"] == "ApplyConfiguration" for m in spec["mutations"])
    guard = _by_kind(docs, "ValidatingAdmissionPolicy")
    assert [g["metadata"]["name"] for g in guard] == [GUARD_NAME]
    assert _by_kind(docs, "ValidatingAdmissionPolicyBinding")[0]["spec"]["validationActions"] == ["Deny"]


def test_kueue_pod_integration_adds_the_pod_policy_and_drops_the_pod_guard() -> None:
    docs = admission_policies(Injector(INJECTOR.rules, kueue_pods=True))
    assert "drakit-training-48g-pods" in {p["metadata"]["name"] for p in _by_kind(docs, "MutatingAdmissionPolicy")}
    guard = _by_kind(docs, "ValidatingAdmissionPolicy")[0]
    assert not any("bypasses-kueue" in v["messageExpression"] for v in guard["spec"]["validations"])


def test_apply_configuration_text_for_a_job() -> None:
    docs = admission_policies(INJECTOR)
    jobs = next(p for p in docs if p["metadata"]["name"] == "drakit-evaluation-templates")
    expr = next(m for m in jobs["spec"]["mutations"] if m["patchType"] == "ApplyConfiguration")["applyConfiguration"]["expression"]
    assert expr.startswith("Object{metadata: Object.metadata{annotations: {'drakit.dev/injected': 'evaluation'}}, "
                           "spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{")
    assert "resourceClaims: [Object.spec.template.spec.resourceClaims{name: 'gpus', resourceClaimTemplateName: 'evaluation'}]" in expr
    assert "claims: [Object.spec.template.spec.containers.resources.claims{name: 'gpus'}]" in expr


def test_webhook_configuration_conventions() -> None:
    cfg = webhook_configuration(ca_bundle=CA, namespace="drakit-system")
    inject, keep = cfg["webhooks"]
    assert base64.b64decode(inject["clientConfig"]["caBundle"]) == CA
    assert inject["clientConfig"]["service"] == {"name": "drakit-webhook", "namespace": "drakit-system", "path": "/mutate", "port": 443}
    for w in (inject, keep):
        assert w["sideEffects"] == "None" and w["timeoutSeconds"] == 5 and w["matchPolicy"] == "Equivalent"
        assert w["reinvocationPolicy"] == "IfNeeded" and w["admissionReviewVersions"] == ["v1"]
        assert w["objectSelector"] == {"matchExpressions": [{"key": "drakit.dev/profile", "operator": "Exists"}]}
        assert "drakit-system" in w["namespaceSelector"]["matchExpressions"][0]["values"]
    assert {op for r in inject["rules"] for op in r["operations"]} == {"CREATE"} and inject["failurePolicy"] == "Fail"
    assert {op for r in keep["rules"] for op in r["operations"]} == {"UPDATE"} and keep["failurePolicy"] == "Ignore"
    by_url = webhook_configuration(ca_bundle=CA, namespace="x", url="https://127.0.0.1:9443/mutate", failure_policy="Ignore")
    assert by_url["webhooks"][0]["clientConfig"]["url"] == "https://127.0.0.1:9443/mutate"
    assert by_url["webhooks"][0]["failurePolicy"] == "Ignore"


def test_manifests_least_privilege() -> None:
    resolved = parse_profiles([], example_texts(), select=["evaluation"]).selected()
    docs = manifests(resolved, ca_bundle=CA, namespace="drakit-system", image="img:1")
    kinds = [d["kind"] for d in docs]
    assert kinds == ["Namespace", "ServiceAccount", "ConfigMap", "Deployment", "Service", "MutatingWebhookConfiguration"]
    assert not {"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"} & set(kinds)
    pod_spec = docs[3]["spec"]["template"]["spec"]
    assert pod_spec["automountServiceAccountToken"] is False
    c = pod_spec["containers"][0]
    assert c["securityContext"]["readOnlyRootFilesystem"] and c["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert "/etc/drakit/profiles/evaluation.yaml" in c["args"]
    assert "extends" not in docs[2]["data"]["evaluation.yaml"]
    assert manifests(resolved, ca_bundle=CA, namespace="n", image="i", url="https://h/mutate")[0]["kind"] == "MutatingWebhookConfiguration"


# --- the server over TLS ----------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ssl.SSLContext]:
    """cert.pem and key.pem for 127.0.0.1, and a client context trusting their CA."""
    trustme = pytest.importorskip("trustme")
    d: Path = tmp_path_factory.mktemp("tls")
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    cert.private_key_pem.write_to_path(str(d / "key.pem"))
    cert.cert_chain_pems[0].write_to_path(str(d / "cert.pem"))
    ctx = ssl.create_default_context()
    ca.configure_trust(ctx)
    return d, ctx


@pytest.fixture(scope="module")
def https(tls: tuple[Path, ssl.SSLContext]) -> Iterator[tuple[str, ssl.SSLContext]]:
    uvicorn = pytest.importorskip("uvicorn")
    from drakit.webhook.server import create_app, uvicorn_config

    d, ctx = tls
    port = _free_port()
    server = uvicorn.Server(uvicorn_config(create_app(INJECTOR), host="127.0.0.1", port=port,
                                           cert=str(d / "cert.pem"), key=str(d / "key.pem")))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield f"https://127.0.0.1:{port}", ctx
    finally:
        server.should_exit = True
        thread.join(10)


def _post(url: str, ctx: ssl.SSLContext, body: bytes | None, method: str = "POST") -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"}, method=method)
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_server_answers_admission_reviews_over_tls(https: tuple[str, ssl.SSLContext]) -> None:
    url, ctx = https
    status, body = _post(url + "/mutate", ctx, json.dumps(review(pod())).encode())
    assert status == 200 and body["response"]["uid"] == "u-1" and body["response"]["allowed"] is True
    patch = json.loads(base64.b64decode(body["response"]["patch"]))
    assert {"op": "add", "path": "/spec/resourceClaims",
            "value": [{"name": "gpus", "resourceClaimTemplateName": "evaluation"}]} in patch
    status, body = _post(url + "/mutate", ctx, json.dumps(review(pod("nope"))).encode())
    assert status == 200 and body["response"]["allowed"] is False
    assert body["response"]["status"]["message"].startswith("drakit (unknown-profile)")


@pytest.mark.parametrize("body", [b"{", b"[]", b'{"kind": "AdmissionReview"}', b"\xff\xfe"])
def test_server_refuses_what_is_not_a_review(https: tuple[str, ssl.SSLContext], body: bytes) -> None:
    url, ctx = https
    status, answer = _post(url + "/mutate", ctx, body)
    assert status == 400 and answer["error"].startswith("not an AdmissionReview v1")


def test_health_lists_the_profiles(https: tuple[str, ssl.SSLContext]) -> None:
    url, ctx = https
    with urllib.request.urlopen(url + "/healthz", context=ctx, timeout=10) as r:
        assert json.loads(r.read())["profiles"] == sorted(INJECTOR.rules)


@pytest.mark.parametrize(
    ("method", "path", "status", "words"),
    [
        pytest.param("GET", "/mutate", 405, ["GET /mutate: method not allowed"], id="get-mutate"),
        pytest.param("POST", "/healthz", 405, ["POST /healthz"], id="post-health"),
        pytest.param("POST", "/validate", 404, ["/validate: no such endpoint", "POST /mutate"], id="unknown-path"),
    ],
)
def test_server_answers_other_requests_with_json_errors(https: tuple[str, ssl.SSLContext], method: str, path: str,
                                                        status: int, words: list[str]) -> None:
    url, ctx = https
    got, answer = _post(url + path, ctx, b"{}" if method == "POST" else None, method)
    assert got == status and all(w in answer["error"] for w in words)


def test_server_refuses_a_body_past_its_limit(https: tuple[str, ssl.SSLContext], monkeypatch: pytest.MonkeyPatch) -> None:
    from drakit.webhook import server

    monkeypatch.setattr(server, "MAX_BODY", 64 * 1024)  # read at each request: the server runs in this process
    url, ctx = https
    body = json.dumps(review(pod(containers=[{"name": "main", "image": "i" * 200_000}]))).encode()
    status, answer = _post(url + "/mutate", ctx, body)
    assert status == 413 and str(64 * 1024) in answer["error"]


def test_served_by_several_workers_from_the_command_line(tls: tuple[Path, ssl.SSLContext]) -> None:
    """``--workers 2``: uvicorn's supervisor hands the injector to spawned workers by pickling."""
    pytest.importorskip("uvicorn")
    d, ctx = tls
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "drakit.cli.main", "webhook", "serve", "evaluation", "--workers", "2",
                             "--host", "127.0.0.1", "--port", str(port), "--tls-cert", str(d / "cert.pem"),
                             "--tls-key", str(d / "key.pem")], stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        status, body = 0, {}
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                status, body = _post(f"https://127.0.0.1:{port}/mutate", ctx, json.dumps(review(pod())).encode())
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.2)
        assert status == 200 and body["response"]["patchType"] == "JSONPatch", proc.stderr.read() if proc.poll() else ""
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "(2 workers)" in err, err


class _Recorder:
    """A transport that keeps what it is given (the real one is exercised by the TLS tests above)."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        assert not self.closed
        self.writes.append(data)

    def close(self) -> None:
        self.closed = True

    def get_write_buffer_size(self) -> int:
        return 0


def test_writes_of_one_loop_iteration_leave_as_one() -> None:
    pytest.importorskip("uvicorn")
    import asyncio

    from drakit.webhook.server import _JoinedWrites

    async def go() -> tuple[_Recorder, list[list[bytes]]]:
        raw = _Recorder()
        t = _JoinedWrites(raw)
        seen = []
        t.write(b"HTTP/1.1 200 OK\r\n\r\n")
        t.write(b"{}")
        seen.append(list(raw.writes))  # nothing sent yet within the iteration
        await asyncio.sleep(0)
        seen.append(list(raw.writes))
        t.write(b"tail")
        t.close()  # flushes before closing
        assert t.get_write_buffer_size() == 0  # everything else is the transport's
        return raw, seen

    raw, seen = asyncio.run(go())
    assert seen == [[], [b"HTTP/1.1 200 OK\r\n\r\n{}"]]
    assert raw.writes == [b"HTTP/1.1 200 OK\r\n\r\n{}", b"tail"] and raw.closed
