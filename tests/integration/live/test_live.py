"""drakit against a real API server: the client seam, the writing verbs, identities and errors.

Every check goes through the public CLI in-process (``drakit.cli.testing.run``) or the seam
(:class:`drakit.live.kube.KubeClient`), against the session's control plane or, where a check
needs a server configured otherwise, a second kube-apiserver on the same etcd.
"""

from __future__ import annotations

import base64
import json
import re
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from drakit.cli.testing import run
from drakit.live.client import ClusterError, ErrorCode
from drakit.live.config import ConnectOptions
from drakit.live.kube import KubeClient
from drakit.live.rbac import Subject, manifests
from drakit.live.watch import Reflector
from tests.integration.controlplane import ControlPlane
from tests.integration.kube import Cluster

pytestmark = pytest.mark.cluster
V1 = "resource.k8s.io/v1"
DRIVER = "gpu.live.example.com"


def device_class(name: str) -> dict[str, Any]:
    return {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}


def inventory(node: str, gpus: int) -> list[dict[str, Any]]:
    devices = [{"name": f"gpu-{i}", "attributes": {"model": {"string": "LG-1"}},
                "capacity": {"memory": {"value": "40Gi"}}} for i in range(gpus)]
    return [
        device_class("live-gpu"),
        {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": f"{node}-slice"},
         "spec": {"driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                  "devices": devices}},
    ]


def claim_pod(name: str, count: int) -> list[dict[str, Any]]:
    template = {"apiVersion": V1, "kind": "ResourceClaimTemplate", "metadata": {"name": f"{name}-gpus"},
                "spec": {"spec": {"devices": {"requests": [
                    {"name": "gpu", "exactly": {"deviceClassName": "live-gpu", "count": count}}]}}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": name}},
           "spec": {"containers": [{"name": "main", "image": "registry.example/x:1",
                                    "env": [{"name": "TOKEN", "value": "s3cret"}], "args": ["--password", "hunter2"],
                                    "resources": {"claims": [{"name": "gpus"}]}}],
                    "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": f"{name}-gpus"}]}}
    return [template, pod]


@pytest.fixture(scope="module")
def world(cluster: Cluster) -> Iterator[str]:
    """One node with 2 GPUs, a pod that fits (1 GPU) and one that never does (3 GPUs)."""
    cluster.add_node("live-n1")
    objects = inventory("live-n1", 2)
    cluster.apply_all(objects)
    with cluster.namespace("live") as ns:
        cluster.apply_all([*claim_pod("small", 1), *claim_pod("big", 3)], ns)

        def scheduled() -> bool | None:
            pods = {p["metadata"]["name"]: p for p in cluster.list_objects("v1", "Pod", ns)}
            small = pods["small"]["spec"].get("nodeName")
            big = [c for c in (pods["big"].get("status") or {}).get("conditions") or [] if c["type"] == "PodScheduled"]
            return bool(small and big) or None

        cluster.wait_for("the scheduler's verdict on both pods", scheduled, timeout=90)
        try:
            yield ns
        finally:
            for o in objects:
                cluster.delete(o)
    cluster.core.delete_node("live-n1")


def drakit(*args: str) -> tuple[int, str, str]:
    r = run(*args)
    return r.exit_code, r.stdout, r.stderr


# -- reading -------------------------------------------------------------------------------


def test_server_info_and_pages(admin_kubeconfig: Path, cluster: Cluster) -> None:
    client = KubeClient.connect(ConnectOptions(str(admin_kubeconfig)))
    try:
        info = client.server_info()
        assert info.git_version.startswith("v1.37") and info.resource_v1
        assert {"DeviceClass", "ResourceSlice", "ResourceClaim", "DeviceTaintRule"} <= info.served_kinds
        names = [f"live-page-{i}" for i in range(5)]
        for n in names:
            client.create(device_class(n))
        pages, token = [], ""
        while True:
            page = client.list("DeviceClass", limit=2, continue_token=token, label_selector="")
            pages.append([o["metadata"]["name"] for o in page.items])
            token = page.continue_token
            if not token:
                break
        assert len(pages) >= 3 and set(names) <= {n for p in pages for n in p}
        assert all(o["kind"] == "DeviceClass" and o["apiVersion"] == V1 for o in page.items)
        assert client.get("DeviceClass", "no-such-class") is None
    finally:
        for n in names:
            cluster.delete(device_class(n))
        client.close()


def test_snapshot_is_a_bundle_offline_explain_agrees_with_live(admin_kubeconfig: Path, world: str, tmp_path: Path) -> None:
    ns, k = world, str(admin_kubeconfig)
    code, out, err = drakit("snapshot", "-n", ns, "--kubeconfig", k)
    assert code == 0, err
    assert err.startswith("redacted 2 env value(s), 4 argument(s), "), err
    bundle = tmp_path / "snap.yaml"
    bundle.write_text(out)
    doc = yaml.safe_load(out)
    assert doc["kind"] == "List" and doc["metadata"]["resourceVersion"]
    pods = {o["metadata"]["name"]: o for o in doc["items"] if o["kind"] == "Pod"}
    assert pods["big"]["spec"]["containers"][0]["env"] == [{"name": "TOKEN", "value": "REDACTED"}]
    assert pods["big"]["spec"]["containers"][0]["args"] == ["REDACTED", "REDACTED"]
    assert "s3cret" not in out and "hunter2" not in out
    assert not any("managedFields" in o["metadata"] for o in doc["items"])
    for target in ("pod/big", "pod/small"):
        live = drakit("explain", target, "-n", ns, "--kubeconfig", k, "-o", "json")
        offline = drakit("explain", target, "-n", ns, "-f", str(bundle), "-o", "json")
        assert live[0] == offline[0], (live[2], offline[2])
        a, b = json.loads(live[1]), json.loads(offline[1])
        assert (a["verdict"], a["code"], a["codes"]) == (b["verdict"], b["code"], b["codes"])
    assert json.loads(drakit("explain", "pod/big", "-n", ns, "--kubeconfig", k, "-o", "json")[1])["code"] == (
        "NotEnoughDevices")
    code, out, _ = drakit("snapshot", "-n", ns, "--kubeconfig", k, "--no-redact", "-o", "json")
    assert code == 0 and "hunter2" in out


def test_read_verbs_without_f(admin_kubeconfig: Path, world: str) -> None:
    ns, k = world, str(admin_kubeconfig)
    code, out, err = drakit("explain", "pods", "--all-pending", "-n", ns, "--kubeconfig", k, "-o", "json")
    assert code == 3, err
    report = json.loads(out)
    codes = {pod: g["code"] for g in report["groups"] for pod in g["pods"]}
    assert codes[f"{ns}/big"] == "NotEnoughDevices" and set(codes) == {f"{ns}/big", f"{ns}/small"}, codes
    code, out, err = drakit("explain", "pods", "--all-pending", "-A", "-l", "app=small", "--kubeconfig", k, "-o", "json")
    assert code == 0 and [p["pod"] for p in json.loads(out)["pods"]] == [f"{ns}/small"], err
    code, out, err = drakit("match", "-s", 'device.attributes["gpu.live.example.com"].model == "LG-1"',
                            "--kubeconfig", k, "-o", "json")
    assert code == 0 and json.loads(out)["matched"] == 2, err
    code, out, err = drakit("allocate", "pod/big", "-n", ns, "--kubeconfig", k)
    assert code == 3, (out, err)
    code, out, err = drakit("lint", "--kubeconfig", k, "-o", "json")
    assert code in (0, 1) and "findings" in json.loads(out), err
    code, out, err = drakit("trial", "--kubeconfig", k, "-o", "json")
    assert code in (0, 1) and json.loads(out)["inventory"], err
    code, out, err = drakit("profile", "eligible", "evaluation", "--kubeconfig", k, "-o", "json")
    assert code in (0, 3) and json.loads(out)["profiles"], err


# -- profile apply ----------------------------------------------------------------------------


def test_profile_apply_is_idempotent_and_reports_conflicts(admin_kubeconfig: Path, cluster: Cluster) -> None:
    k = str(admin_kubeconfig)
    with cluster.namespace("apply") as ns:
        first = drakit("profile", "apply", "evaluation", "-n", ns, "--kubeconfig", k, "-o", "json")
        assert first[0] == 0, first[2]
        created = json.loads(first[1])["objects"]
        assert {o["action"] for o in created} == {"created"}
        rvs = {o["name"]: cluster.get(V1, o["kind"], o["name"], o["namespace"])["metadata"]["resourceVersion"]
               for o in created}
        code, out, err = drakit("profile", "apply", "evaluation", "-n", ns, "--kubeconfig", k, "--diff")
        assert code == 0, err
        assert all(line.endswith(" unchanged") for line in out.splitlines()), out
        assert rvs == {o["name"]: cluster.get(V1, o["kind"], o["name"], o["namespace"])["metadata"]["resourceVersion"]
                       for o in created}
        dc = next(o for o in created if o["kind"] == "DeviceClass")
        theirs = cluster.get(V1, "DeviceClass", dc["name"])
        theirs = {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": dc["name"]},
                  "spec": {"selectors": [{"cel": {"expression": "true"}}]}}
        cluster.apply(theirs)  # manager drakit-tests, forced: it now owns the selectors
        dry = drakit("profile", "apply", "evaluation", "-n", ns, "--kubeconfig", k, "--dry-run=server")
        assert dry[0] == 8, dry
        assert f"deviceclass.resource.k8s.io/{dc['name']}: conflict: field .spec.selectors is owned by manager " \
               "'drakit-tests'" in dry[1]
        assert cluster.get(V1, "DeviceClass", dc["name"])["spec"]["selectors"] == theirs["spec"]["selectors"]
        cluster.delete(theirs)


# -- identities and errors -------------------------------------------------------------------


def _token(cluster: Cluster, ns: str, sa: str) -> str:
    from kubernetes import client as k8s

    cluster.core.create_namespaced_service_account(ns, k8s.V1ServiceAccount(metadata=k8s.V1ObjectMeta(name=sa)))
    request = k8s.AuthenticationV1TokenRequest(spec=k8s.V1TokenRequestSpec(audiences=[], expiration_seconds=3600))
    return str(cluster.core.create_namespaced_service_account_token(sa, ns, request).status.token)


def test_namespaced_read_only_identity(control_plane: ControlPlane, cluster: Cluster, world: str, tmp_path: Path) -> None:
    ns = world
    objects = manifests("reader-namespaced", namespace=ns, subject=Subject("ServiceAccount", "reader", ns))
    token = _token(cluster, ns, "reader")
    cluster.apply_all(objects)
    try:
        k = str(control_plane.write_kubeconfig(tmp_path / "reader.kubeconfig", token=token))
        code, out, err = drakit("explain", "pod/big", "-n", ns, "--kubeconfig", k, "-o", "json")
        assert code == 3 and json.loads(out)["code"] == "NotEnoughDevices", err
        assert "may not list resourceclaims in every namespace: reading namespace" in err
        code, out, err = drakit("snapshot", "-n", ns, "--kubeconfig", k, "-o", "json")
        assert code == 0 and json.loads(out)["items"], err
        code, out, err = drakit("profile", "apply", "evaluation", "-n", ns, "--kubeconfig", k)
        assert code == 6, (out, err)
        assert err.startswith("error: forbidden: may not patch deviceclasses (") and len(err.splitlines()) == 1, err
        assert f'User "system:serviceaccount:{ns}:reader" cannot patch resource "deviceclasses"' in err
        code, _, err = drakit("explain", "pod/big", "-n", "default", "--kubeconfig", k)
        assert code == 6 and re.search(r"may not list (pods|events|resourceclaimtemplates) in namespace default", err), err
    finally:
        for o in objects:
            cluster.delete(o, ns)


def test_exec_credential_plugin_and_status_patch(control_plane: ControlPlane, cluster: Cluster, world: str,
                                                 tmp_path: Path) -> None:
    """A kubeconfig whose user is an exec plugin (as EKS, GKE and OIDC login tools write them)."""
    plugin = tmp_path / "plugin.sh"
    credential = {"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                  "status": {"token": control_plane.admin_token}}
    plugin.write_text(f"#!/bin/sh\necho '{json.dumps(credential)}'\n")
    plugin.chmod(0o755)
    config = json.loads(control_plane.write_kubeconfig(tmp_path / "exec.kubeconfig").read_text())
    config["users"][0]["user"] = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": str(plugin),
                                           "interactiveMode": "Never"}}
    (tmp_path / "exec.kubeconfig").write_text(json.dumps(config))
    code, out, err = drakit("explain", "pod/big", "-n", world, "--kubeconfig", str(tmp_path / "exec.kubeconfig"), "-o", "json")
    assert code == 3 and json.loads(out)["code"] == "NotEnoughDevices", err

    client = KubeClient.connect(ConnectOptions(str(tmp_path / "exec.kubeconfig")))
    try:
        patched = client.patch_status("Node", "live-n1", None, {"status": {"allocatable": {"example.com/widget": "3"}}})
        assert patched["status"]["allocatable"]["example.com/widget"] == "3"
        assert client.get("Node", "live-n1")["status"]["allocatable"]["example.com/widget"] == "3"
    finally:
        client.close()


def test_bad_credentials_tls_and_timeouts(control_plane: ControlPlane, tmp_path: Path) -> None:
    bad = control_plane.write_kubeconfig(tmp_path / "bad.kubeconfig", token="not-a-token")
    code, _, err = drakit("explain", "pod/x", "--kubeconfig", str(bad))
    assert code == 6 and "rejected the credentials" in err and "401 Unauthorized" in err, err

    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(tmp_path / "k"),
                    "-subj", "/CN=other-ca", "-days", "1", "-out", str(tmp_path / "other.crt")],
                   check=True, capture_output=True)
    wrong_ca = control_plane.write_kubeconfig(tmp_path / "ca.kubeconfig", ca_file=tmp_path / "other.crt")
    code, _, err = drakit("snapshot", "--kubeconfig", str(wrong_ca))
    assert code == 5 and "TLS with the API server at" in err and "certificate verify failed" in err, err
    assert len(err.splitlines()) == 1

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: accepted.append(silent.accept()[0]), daemon=True).start()
    port = silent.getsockname()[1]
    slow = control_plane.write_kubeconfig(tmp_path / "slow.kubeconfig", server=f"https://127.0.0.1:{port}")
    try:
        code, _, err = drakit("explain", "pod/x", "--kubeconfig", str(slow), "--request-timeout", "1")
    finally:
        silent.close()
    assert code == 5 and f"the API server at https://127.0.0.1:{port} did not answer within 1s" in err, err


def test_server_without_dra_v1_then_stopped(control_plane: ControlPlane, tmp_path: Path) -> None:
    url = control_plane.start_apiserver("kube-apiserver-no-dra", extra=("--runtime-config=resource.k8s.io/v1=false",))
    k = control_plane.write_kubeconfig(tmp_path / "nodra.kubeconfig", server=url)
    try:
        code, _, err = drakit("explain", "pod/x", "--kubeconfig", str(k))
        assert code == 7, err
        assert "the cluster runs Kubernetes v1.37.2, which does not serve resource.k8s.io/v1 (it is disabled there)" in err
    finally:
        control_plane.stop_apiserver("kube-apiserver-no-dra")
    code, _, err = drakit("explain", "pod/x", "--kubeconfig", str(k))
    assert code == 5 and err.strip().startswith(f"error: cannot reach the API server at {url}: connection refused"), err


# -- watch --------------------------------------------------------------------------------------


def _etcd(control_plane: ControlPlane, call: str, body: dict[str, Any]) -> dict[str, Any]:
    import urllib.request

    req = urllib.request.Request(f"http://127.0.0.1:{control_plane.ports['etcd']}/v3/{call}",
                                 data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        result: dict[str, Any] = json.loads(r.read())
    return result


def _claim(name: str) -> dict[str, Any]:
    return {"apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": name},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "live-gpu"}}]}}}


def test_watch_resumes_after_410_and_misses_no_object(control_plane: ControlPlane, cluster: Cluster, tmp_path: Path) -> None:
    """No watch cache for claims (size 0, the one meaningful size in 1.37), so a watch reads etcd's
    history; compacting etcd then makes an old resourceVersion gone for real."""
    url = control_plane.start_apiserver(
        "kube-apiserver-no-watch-cache",
        extra=("--watch-cache-sizes=resourceclaims.resource.k8s.io#0", "--etcd-compaction-interval=0"))
    client = KubeClient.connect(ConnectOptions(str(control_plane.write_kubeconfig(tmp_path / "w.kubeconfig", server=url))))
    try:
        with cluster.namespace("watch") as ns:
            cluster.create(_claim("a"), ns)
            r = Reflector(client, "ResourceClaim", namespace=ns, timeout_seconds=2)
            assert [e.object["metadata"]["name"] for e in r.step()] == ["a"]
            cluster.create(_claim("b"), ns)
            assert [(e.type, e.object["metadata"]["name"]) for e in r.step()] == [("ADDED", "b")]
            assert r.relists == 1
            behind = r.resource_version
            cluster.create(_claim("c"), ns)
            cluster.delete(_claim("a"), ns)
            head = _etcd(control_plane, "kv/range", {"key": base64.b64encode(b"/registry").decode()})
            _etcd(control_plane, "kv/compaction", {"revision": head["header"]["revision"], "physical": True})
            cluster.create(_claim("d"), ns)
            with pytest.raises(ClusterError) as gone:  # the raw watch says so ...
                for event in client.watch("ResourceClaim", namespace=ns, resource_version=behind, timeout_seconds=2):
                    if event.type == "ERROR":
                        raise ClusterError(ErrorCode.GONE, str(event.object.get("message")), status=410)
            assert gone.value.status == 410
            changes = r.step()  # ... and the reflector lists again
            assert r.relists == 2
            assert sorted((e.type, e.object["metadata"]["name"]) for e in changes) == [
                ("ADDED", "c"), ("ADDED", "d"), ("DELETED", "a")]
            assert sorted(n for _, n in r.objects) == sorted(
                o["metadata"]["name"] for o in cluster.list_objects(V1, "ResourceClaim", ns))
    finally:
        client.close()
        control_plane.stop_apiserver("kube-apiserver-no-watch-cache")


def test_watch_bookmarks_from_the_watch_cache(admin_kubeconfig: Path, cluster: Cluster) -> None:
    client = KubeClient.connect(ConnectOptions(str(admin_kubeconfig)))
    try:
        r = Reflector(client, "ResourceClaim", timeout_seconds=10)
        r.step()
        r.step()
        assert r.bookmarks >= 1 and r.relists == 1
    finally:
        client.close()
