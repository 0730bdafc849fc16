"""``drakit serve`` and ``drakit token``: the edges resolved as the command resolves them, and one real socket."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from drakit.cli.serve import build_app, loopback
from drakit.cli.testing import run as cli
from drakit.features import Features
from drakit.live import MemoryCluster
from drakit.web.app import create_app
from drakit.web.auth import Auth, MemoryTokenStore
from drakit.web.state import LiveSource
from tests.unit.web import world as w

ROOT = Path(__file__).resolve().parents[3]
LAB = str(resources.files("drakit.queues") / "examples" / "lab.yaml")


def _build(store: str, **options: Any) -> Any:
    defaults: dict[str, Any] = dict(files=[], demo=True, kubeconfig=None, context=None, timeout=5.0, host="127.0.0.1",
                                    store=store, queues=None, refresh=None, open_reads=None, cors_origins=[],
                                    sim_workers=0, feats=Features.for_version())
    return build_app(**{**defaults, **options})


def test_token_create_ls_revoke(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/s.db"
    made = cli("token", "create", "--team", "vision", "-n", "team-vision", "--store", store)
    assert made.exit_code == 0, made.stderr
    secret = made.stdout.strip()
    assert secret.startswith("drakit_") and "shown once" in made.stderr
    listed = cli("token", "ls", "--store", store, "-o", "json")
    tokens = json.loads(listed.stdout)["tokens"]
    assert [(t["team"], t["namespaces"], t["revokedAt"]) for t in tokens] == [("vision", ["team-vision"], None)]
    assert secret not in listed.stdout
    gone = cli("token", "revoke", tokens[0]["id"], "--store", store)
    assert gone.exit_code == 0 and "revoked" in gone.stdout
    assert json.loads(cli("token", "ls", "--store", store, "-o", "json").stdout)["tokens"][0]["revokedAt"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(("create", "--team", "Team A", "-n", "a"), "team 'Team A': want a DNS label", id="bad-team"),
        pytest.param(("create", "--team", "a"), "team a: name its namespaces", id="no-namespaces"),
        pytest.param(("create", "--team", "a", "-n", "NS"), "namespace 'NS': want a DNS label", id="bad-namespace"),
        pytest.param(("revoke", "nope"), "token nope not found in the store", id="unknown-id"),
    ],
)
def test_token_refusals_are_one_line(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    got = cli("token", *args, "--store", f"sqlite:///{tmp_path}/s.db")
    assert got.exit_code == 2
    assert len(got.stderr.strip().splitlines()) == 1 and got.stderr.startswith(f"error: {message}")


def test_a_cli_token_opens_its_team_on_the_served_app(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/s.db"
    secret = cli("token", "create", "--team", "vision", "-n", "ml", "--store", store).stdout.strip()
    c = TestClient(_build(store, queues=LAB), raise_server_exceptions=False)
    headers = {"Authorization": f"Bearer {secret}"}
    me = c.get("/api/v1/whoami", headers=headers).json()["principal"]
    assert me["namespaces"] == ["ml", "team-vision"]  # given, and the catalog's team vision
    assert [q["name"] for q in c.get("/api/v1/queues", headers=headers).json()["queues"]] == ["training", "batch"]
    assert c.get("/api/v1/pending").status_code == 401  # a token exists: namespaced data is closed
    assert c.get("/api/v1/namespaces/ml/pods/train-0/explanation", headers=headers).status_code == 200


def test_exposing_without_tokens_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    app = _build(f"sqlite:///{tmp_path}/s.db", host="0.0.0.0")
    assert "Warning: serving on 0.0.0.0 without any token" in capsys.readouterr().err
    assert TestClient(app).get("/api/v1/pending").status_code == 401  # not open when exposed
    assert TestClient(_build(f"sqlite:///{tmp_path}/t.db")).get("/api/v1/pending").status_code == 200


@pytest.mark.parametrize(("host", "want"), [("127.0.0.1", True), ("::1", True), ("localhost", True),
                                            ("0.0.0.0", False), ("10.0.0.1", False), ("example.org", False)])
def test_loopback(host: str, want: bool) -> None:
    assert loopback(host) is want


def test_a_live_source_reads_the_cluster_and_a_refresh_sees_changes() -> None:
    cluster = MemoryCluster.of([*w.snapshot().nodes, *w.snapshot().slices, *w.snapshot().classes])
    source = LiveSource(connect=lambda: cluster)
    c = TestClient(create_app(source, auth=Auth(MemoryTokenStore(), open_reads=True)))
    assert len(c.get("/api/v1/inventory").json()["items"]) == 24
    cluster.delete("ResourceSlice", "l4-node-1-gpu.nvidia.com")
    c.app.state.web.refresh()  # type: ignore[attr-defined]
    assert len(c.get("/api/v1/inventory").json()["items"]) == 20


def test_serve_answers_on_a_socket(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DRAKIT_STORE": f"sqlite:///{tmp_path}/s.db"}
    server = subprocess.Popen([sys.executable, "-m", "drakit.cli.main", "serve", "--demo", "--port", str(port),
                               "--sim-workers", "0"], env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert server.poll() is None and time.monotonic() < deadline, "drakit serve did not start"
            time.sleep(0.1)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/api/v1/inventory?limit=2")
        got = conn.getresponse()
        body = json.loads(got.read())
        assert got.status == 200 and len(body["items"]) == 2 and body["metadata"]["remainingItemCount"] == 22
        conn.request("GET", "/openapi.json")
        assert "/api/v1/inventory" in json.loads(conn.getresponse().read())["paths"]
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    assert f"drakit serve: demo at http://127.0.0.1:{port}/api/v1" in err
    assert "Traceback" not in err


def test_a_bundle_source_reads_manifests_through_the_front_door(tmp_path: Path) -> None:
    from drakit.demo import demo_paths
    from drakit.web.state import BundleSource

    c = TestClient(create_app(BundleSource(demo_paths()), auth=Auth(MemoryTokenStore(), open_reads=True)))
    assert c.get("/api/v1/whoami").json()["source"].endswith("recipes.yaml")
    assert len(c.get("/api/v1/inventory").json()["items"]) == 24


def test_serve_refuses_an_invalid_bundle_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: Bad_Name}\n", encoding="utf-8")
    got = cli("serve", "-f", str(bad), "--store", f"sqlite:///{tmp_path}/s.db")
    assert got.exit_code == 1, got.stderr
    assert len(got.stderr.strip().splitlines()) == 1 and "bad.yaml" in got.stderr and "metadata.name" in got.stderr
