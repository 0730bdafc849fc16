"""The live verbs end to end on the in-memory twin (the real client is swapped at the one edge)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from drakit.cli.testing import run
from drakit.demo import demo_paths
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


def test_explain_reads_the_cluster_and_says_which_release_answers(twin: MemoryCluster) -> None:
    pod = _pod(twin)
    ns, name = pod["metadata"].get("namespace", "default"), pod["metadata"]["name"]
    offline = run("explain", f"pod/{name}", "-n", ns, "--demo", "-o", "json")
    live = run("explain", f"pod/{name}", "-n", ns, "-o", "json")
    assert live.exit_code == offline.exit_code, live.stderr
    assert json.loads(live.stdout)["code"] == json.loads(offline.stdout)["code"]
    assert ("Warning: the cluster runs Kubernetes v1.35.4; answering with 1.37's feature-gate defaults "
            "(give --kubernetes-version 1.35 to match the cluster)") in live.stderr
    given = run("explain", f"pod/{name}", "-n", ns, "--kubernetes-version", "1.35", "-o", "json")
    assert "Warning" not in given.stderr


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
