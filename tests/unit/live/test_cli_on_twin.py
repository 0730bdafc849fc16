"""The live verbs end to end on the in-memory twin (the real client is swapped at the one edge)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from drakit.cli.door import Source, release
from drakit.cli.testing import run
from drakit.demo import demo_paths
from drakit.features import NEWEST_VERSION
from drakit.live import MemoryCluster
from drakit.sources import load_documents


@pytest.fixture
def twin(monkeypatch: pytest.MonkeyPatch) -> Iterator[MemoryCluster]:
    objects = [d.data for d in load_documents(demo_paths()).documents if d.data.get("kind") in (
        "Node", "DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "Pod")]
    cluster = MemoryCluster.of(objects, git_version="v1.35.4")
    monkeypatch.setattr("drakit.cli.door.live_client", lambda source: cluster)
    yield cluster


def _pod(cluster: MemoryCluster) -> dict[str, Any]:
    return next(o for k, o in cluster.objects.items() if k[0] == "Pod")


def test_explain_reads_the_cluster_with_its_own_releases_defaults(twin: MemoryCluster) -> None:
    pod = _pod(twin)
    ns, name = pod["metadata"].get("namespace", "default"), pod["metadata"]["name"]
    offline = run("explain", f"pod/{name}", "-n", ns, "--demo", "-o", "json")
    live = run("explain", f"pod/{name}", "-n", ns, "-o", "json")
    assert live.exit_code == offline.exit_code, live.stderr
    assert json.loads(live.stdout)["code"] == json.loads(offline.stdout)["code"]
    assert "Warning" not in live.stderr  # no flag: the cluster's 1.35 answers
    same = run("explain", f"pod/{name}", "-n", ns, "--kubernetes-version", "1.35", "-o", "json")
    assert "Warning" not in same.stderr
    other = run("explain", f"pod/{name}", "-n", ns, "--kubernetes-version", "1.37", "-o", "json")
    assert ("Warning: the cluster runs Kubernetes v1.35.4; --kubernetes-version chose other feature-gate "
            "defaults than 1.35's (leave it out, or give 1.35, to match the cluster)") in other.stderr
    # 1.34's defaults are 1.35's: naming it changes nothing, so nothing is said.
    assert "Warning" not in run("explain", f"pod/{name}", "-n", ns, "--kubernetes-version", "1.34").stderr
    # Gates set by hand are the user's choice, left unremarked.
    gates = run("explain", f"pod/{name}", "-n", ns, "--kubernetes-version", "1.37",
                "--feature-gates", "DRAListTypeAttributes=true")
    assert "Warning" not in gates.stderr


@pytest.mark.parametrize(
    ("git_version", "given", "files", "want"),
    [
        pytest.param("v1.35.4", None, (), "1.35", id="live-takes-the-cluster-release"),
        pytest.param("v1.36.0-eks.3", None, (), "1.36", id="vendor-suffix"),
        pytest.param("v1.35.4", "1.37", (), "1.37", id="the-flag-wins"),
        pytest.param("v1.35.4", None, ("demo.yaml",), NEWEST_VERSION, id="manifests-never-ask-the-cluster"),
        pytest.param("v1.38.1", None, (), NEWEST_VERSION, id="newer-than-drakit-knows"),
        pytest.param("v1.33.2", None, (), NEWEST_VERSION, id="older-refused-when-read"),
        pytest.param("", None, (), NEWEST_VERSION, id="no-version"),
    ],
)
def test_release_of_a_verb(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], git_version: str,
                           given: str | None, files: tuple[str, ...], want: str) -> None:
    cluster = MemoryCluster.of([], git_version=git_version)
    asked: list[object] = []
    monkeypatch.setattr("drakit.cli.door.live_client", lambda source: asked.append(source) or cluster)
    assert release(Source(files), given) == want
    assert bool(asked) == (given is None and not files)  # the flag or manifests: no request
    newer = capsys.readouterr().err
    assert ("the newest drakit knows" in newer) == git_version.startswith("v1.38"), newer


def test_snapshot_on_the_twin_is_a_bundle_the_offline_verbs_read(twin: MemoryCluster, tmp_path: Any) -> None:
    r = run("snapshot", "-A", "-o", "json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["kind"] == "List" and doc["metadata"]["resourceVersion"] == str(twin.revision)
    assert len(doc["items"]) == len(twin.objects)
    path = tmp_path / "snap.json"
    path.write_text(r.stdout)
    assert run("validate", "-f", str(path)).exit_code == 0


def test_profile_apply_on_the_twin(twin: MemoryCluster) -> None:
    first = run("profile", "apply", "evaluation", "-n", "ml")
    assert first.exit_code == 0 and first.stdout.count(" created") == 2, first
    writes = twin.writes
    again = run("profile", "apply", "evaluation", "-n", "ml", "--diff")
    assert again.exit_code == 0 and again.stdout.count(" unchanged") == 2 and "---" not in again.stdout, again
    assert twin.writes == writes


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--feature-gates", "Nope=true"], 'unknown feature gate "Nope"', id="gate"),
        pytest.param(["--kubernetes-version", "1.20"], 'unsupported Kubernetes version "1.20"', id="version"),
    ],
)
def test_a_bad_flag_is_refused_before_the_cluster_is_asked(monkeypatch: pytest.MonkeyPatch, args: list[str],
                                                           message: str) -> None:
    def unreachable(source: object) -> MemoryCluster:
        raise AssertionError("the cluster was asked")

    monkeypatch.setattr("drakit.cli.door.live_client", unreachable)
    r = run("match", "-s", "true", *args)
    assert r.exit_code == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_a_live_verb_asks_the_server_once(twin: MemoryCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    """The release read for the defaults is the one the snapshot's DRA check uses."""
    calls: list[str] = []
    real = twin.server_info

    def counted() -> Any:
        calls.append("server_info")
        return real()

    monkeypatch.setattr(twin, "server_info", counted)
    r = run("match", "-s", "true")
    assert r.exit_code in (0, 3), r.stderr
    assert calls == ["server_info"]
