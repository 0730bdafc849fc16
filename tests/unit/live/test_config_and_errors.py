"""Choosing the cluster as kubectl does, and the one translator of the server's failures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drakit.cli.testing import run
from drakit.live.client import ClusterError, ErrorCode
from drakit.live.config import ConnectOptions, resolve
from drakit.live.kube import KubeClient


def kubeconfig(path: Path, server: str = "https://127.0.0.1:1", **user: object) -> Path:
    config = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
              "clusters": [{"name": "k", "cluster": {"server": server, "insecure-skip-tls-verify": True}}],
              "users": [{"name": "u", "user": user or {"token": "t"}}],
              "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}},
                           {"name": "other", "context": {"cluster": "k", "user": "u"}}]}
    path.write_text(json.dumps(config))
    return path


@pytest.mark.parametrize(
    ("flag", "env", "home_config", "want"),
    [
        pytest.param("flag", {"KUBECONFIG": "env"}, True, ("flag",), id="flag-wins"),
        pytest.param(None, {"KUBECONFIG": "a:missing:b"}, True, ("a", "b"), id="env-list-existing-only"),
        pytest.param(None, {}, True, ("home",), id="home-default"),
        pytest.param(None, {"KUBECONFIG": "missing"}, True, ("home",), id="env-all-missing-falls-back"),
        pytest.param(None, {"KUBERNETES_SERVICE_HOST": "10.0.0.1"}, False, (), id="in-cluster"),
    ],
)
def test_resolve_follows_kubectl(tmp_path: Path, flag: str | None, env: dict[str, str], home_config: bool,
                                 want: tuple[str, ...]) -> None:
    for name in ("flag", "env", "a", "b"):
        (tmp_path / name).write_text("{}")
    home = tmp_path / "home"
    if home_config:
        (home / ".kube").mkdir(parents=True)
        (home / ".kube" / "config").write_text("{}")
    paths = {"home": str(home / ".kube" / "config")}
    env = {k: ":".join(str(tmp_path / p) for p in v.split(":")) if k == "KUBECONFIG" else v for k, v in env.items()}
    target = resolve(ConnectOptions(str(tmp_path / flag) if flag else None), env, home)
    assert target.files == tuple(paths.get(w, str(tmp_path / w)) for w in want)
    assert target.in_cluster == (want == ())


def test_no_cluster_at_all_is_one_line_with_a_hint(tmp_path: Path) -> None:
    with pytest.raises(ClusterError) as e:
        resolve(ConnectOptions(), {}, tmp_path)
    assert e.value.code is ErrorCode.INVALID
    assert "no cluster to read: no -f given and no kubeconfig found" in str(e.value)
    assert "give -f FILE for manifests" in str(e.value)


@pytest.mark.parametrize(
    ("text", "context", "said"),
    [
        pytest.param("{not yaml: [", None, "", id="not-yaml"),
        pytest.param('{"apiVersion": "v1", "kind": "Config"}', None, "", id="no-contexts"),
        pytest.param(None, "nope", "nope", id="unknown-context"),
        pytest.param("[1, 2]", None, "", id="a-list"),
        pytest.param("", None, "", id="empty"),
    ],
)
def test_hostile_kubeconfigs_are_one_line_errors(tmp_path: Path, text: str | None, context: str | None, said: str) -> None:
    path = tmp_path / "config"
    if text is None:
        kubeconfig(path)
    else:
        path.write_text(text)
    args = ["explain", "pod/x", "--kubeconfig", str(path)] + (["--context", context] if context else [])
    r = run(*args)
    assert r.exit_code == 1, r
    assert r.stderr.startswith("error: ") and len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
    assert said in r.stderr


def test_exec_plugin_that_fails_is_one_line(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config", exec={"apiVersion": "client.authentication.k8s.io/v1", "command": "/no/such/plugin"})
    r = run("explain", "pod/x", "--kubeconfig", str(path))
    assert r.exit_code in (1, 5, 6) and len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize(
    ("status", "body", "what", "code", "words"),
    [
        pytest.param(401, {"message": "Unauthorized"}, ("list", "pods", "ml"), ErrorCode.UNAUTHORIZED,
                     "rejected the credentials of context 'c' of", id="401"),
        pytest.param(403, {"message": 'pods is forbidden: User "u" cannot list resource "pods" in API group "" in the '
                                      'namespace "ml"'}, ("list", "pods", "ml"), ErrorCode.FORBIDDEN,
                     'forbidden: may not list pods in namespace ml (pods is forbidden: User "u" cannot list', id="403-ns"),
        pytest.param(403, {"message": "x"}, ("list", "pods", None), ErrorCode.FORBIDDEN,
                     "may not list pods cluster-wide (x)", id="403-all-namespaces"),
        pytest.param(403, {"message": "x"}, ("patch", "deviceclasses", None), ErrorCode.FORBIDDEN,
                     "may not patch deviceclasses (x)", id="403-cluster-scoped"),
        pytest.param(409, {"message": "Apply failed with 1 conflict", "details": {"causes": [
            {"reason": "FieldManagerConflict", "field": ".spec.selectors",
             "message": 'conflict with "kubectl" using resource.k8s.io/v1'}]}},
            ("patch", "deviceclasses", None), ErrorCode.CONFLICT, "Apply failed", id="409"),
        pytest.param(410, {"message": "too old resource version: 5 (9)"}, ("watch", "pods", None), ErrorCode.GONE,
                     "too old resource version", id="410"),
        pytest.param(504, {"message": "Timeout: request did not complete"}, ("list", "pods", None), ErrorCode.TIMEOUT,
                     "the API server timed out", id="504"),
        pytest.param(500, b"<html>oops</html>", ("list", "pods", None), ErrorCode.SERVER, "HTTP 500: <html>oops</html>",
                     id="500-not-json"),
    ],
)
def test_status_translation(tmp_path: Path, status: int, body: object, what: tuple[str, str, str | None],
                            code: ErrorCode, words: str) -> None:
    client = KubeClient.connect(ConnectOptions(str(kubeconfig(tmp_path / "config"))))
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    error = client._status(status, data, "GET", what)
    assert error.code is code and error.status == status
    assert words in str(error) and "\n" not in str(error)
    if code is ErrorCode.CONFLICT:
        assert [(c.field, c.manager) for c in error.conflicts] == [(".spec.selectors", "kubectl")]
    client.close()


def test_refused_connection_is_unreachable(tmp_path: Path) -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    r = run("snapshot", "--kubeconfig", str(kubeconfig(tmp_path / "config", f"https://127.0.0.1:{port}")))
    assert r.exit_code == 5
    assert r.stderr.startswith(f"error: cannot reach the API server at https://127.0.0.1:{port}: connection refused")


def test_kubeconfigs_merge_first_wins_and_paths_are_made_absolute(tmp_path: Path) -> None:
    from drakit.live.config import load_kubeconfig

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = {"current-context": "one",
             "clusters": [{"name": "k", "cluster": {"server": "https://a", "certificate-authority": "ca.crt"}}],
             "users": [{"name": "u", "user": {"client-certificate": "/abs/c.crt", "client-key": "k.key"}}],
             "contexts": [{"name": "one", "context": {"cluster": "k", "user": "u"}}]}
    second = {"current-context": "two",
              "clusters": [{"name": "k", "cluster": {"server": "https://b"}},
                           {"name": "k2", "cluster": {"server": "https://c", "certificate-authority": "x/ca.crt"}}],
              "contexts": [{"name": "two", "context": {"cluster": "k2", "user": "u"}}]}
    (tmp_path / "a" / "config").write_text(json.dumps(first))
    (tmp_path / "b" / "config").write_text(json.dumps(second))
    merged = load_kubeconfig((str(tmp_path / "a" / "config"), str(tmp_path / "b" / "config")))
    assert merged["current-context"] == "one"
    assert [(c["name"], c["cluster"]["server"]) for c in merged["clusters"]] == [("k", "https://a"), ("k2", "https://c")]
    assert merged["clusters"][0]["cluster"]["certificate-authority"] == str(tmp_path / "a" / "ca.crt")
    assert merged["clusters"][1]["cluster"]["certificate-authority"] == str(tmp_path / "b" / "x" / "ca.crt")
    assert merged["users"][0]["user"] == {"client-certificate": "/abs/c.crt", "client-key": str(tmp_path / "a" / "k.key")}
    assert [c["name"] for c in merged["contexts"]] == ["one", "two"]


@pytest.mark.parametrize(("context", "server"), [pytest.param(None, "https://a:1", id="current-context"),
                                                 pytest.param("other", "https://b:2", id="--context")])
def test_context_picks_the_cluster(tmp_path: Path, context: str | None, server: str) -> None:
    config = json.loads(kubeconfig(tmp_path / "config", "https://a:1").read_text())
    config["clusters"].append({"name": "k2", "cluster": {"server": "https://b:2"}})
    config["contexts"][1]["context"]["cluster"] = "k2"
    (tmp_path / "config").write_text(json.dumps(config))
    client = KubeClient.connect(ConnectOptions(str(tmp_path / "config"), context))
    try:
        assert client.server == server
        assert client.target.describe().startswith(f"context {context or 'c'!r} of ")
    finally:
        client.close()
