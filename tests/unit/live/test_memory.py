"""The seam's behaviour on the in-memory twin: pages, snapshots, watch resumption, SSA."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drakit.live import ClusterError, ErrorCode, MemoryCluster, Scope, read_snapshot
from drakit.live.snapshot import list_all
from drakit.live.watch import Reflector

V1 = "resource.k8s.io/v1"


def node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


def claim(name: str, ns: str = "default", **labels: str) -> dict[str, Any]:
    return {"apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}


def pod(name: str, ns: str = "default", **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {"containers": [{"name": "c", "image": "x"}]}}


@settings(max_examples=30, derandomize=True, deadline=None)
@given(n=st.integers(0, 40), limit=st.integers(1, 7))
def test_list_all_follows_continue_and_misses_nothing(n: int, limit: int) -> None:
    cluster = MemoryCluster.of(node(f"n{i:02d}") for i in range(n))
    items, version = list_all(cluster, "Node", limit=limit)
    assert [o["metadata"]["name"] for o in items] == [f"n{i:02d}" for i in range(n)]
    assert version == str(cluster.revision)


@pytest.mark.parametrize(
    ("scope", "claims", "pods"),
    [
        # claims are read everywhere: an allocated claim in any namespace holds its devices
        pytest.param(Scope("default"), ["default/a", "ml/b"], ["default/p"], id="one-namespace"),
        pytest.param(Scope(None), ["default/a", "ml/b"], ["default/p", "ml/q"], id="all-namespaces"),
        pytest.param(Scope(None, "team=ml"), ["default/a", "ml/b"], ["ml/q"], id="selector-narrows-pods-only"),
    ],
)
def test_snapshot_scope(scope: Scope, claims: list[str], pods: list[str]) -> None:
    cluster = MemoryCluster.of([node("n1"), claim("a"), claim("b", "ml"), pod("p"), pod("q", "ml", team="ml")])
    snap = read_snapshot(cluster, scope)
    key = lambda o: f"{o['metadata']['namespace']}/{o['metadata']['name']}"  # noqa: E731
    assert sorted(map(key, snap.claims)) == claims
    assert sorted(map(key, snap.pods)) == pods
    assert [n["metadata"]["name"] for n in snap.nodes] == ["n1"]
    assert snap.find_claim("a", "default") is not None
    assert snap.provenance.resource_version == str(cluster.revision)


@pytest.mark.parametrize(
    ("version", "said"),
    [
        pytest.param("v1.33.4", "v1.33.4, which does not serve resource.k8s.io/v1 (older than 1.34)", id="old"),
        pytest.param("v1.37.2", "v1.37.2, which does not serve resource.k8s.io/v1 (it is disabled there)", id="disabled"),
    ],
)
def test_snapshot_without_dra_v1_names_the_version(version: str, said: str) -> None:
    cluster = MemoryCluster(git_version=version, resource_v1=False)
    with pytest.raises(ClusterError) as e:
        read_snapshot(cluster)
    assert e.value.code is ErrorCode.UNSUPPORTED and e.value.exit_code == 7
    assert said in str(e.value)


def test_namespaced_identity_reads_its_claims_with_a_warning() -> None:
    class NamespacedOnly(MemoryCluster):
        def list(self, kind: str, *, namespace: str | None = None, **kw: Any) -> Any:
            if kind == "ResourceClaim" and namespace is None:
                raise ClusterError(ErrorCode.FORBIDDEN, "forbidden", status=403)
            return super().list(kind, namespace=namespace, **kw)

    cluster = NamespacedOnly.of([claim("a"), claim("b", "ml")])
    warnings: list[str] = []
    snap = read_snapshot(cluster, Scope("ml"), warn=warnings.append)
    assert [c["metadata"]["name"] for c in snap.claims] == ["b"]
    assert warnings == ["may not list resourceclaims in every namespace: reading namespace ml only, "
                        "so devices that claims elsewhere hold look free"]


def test_scope_kinds_read_only_what_a_verb_needs() -> None:
    cluster = MemoryCluster.of([node("n1"), claim("a"), pod("p")])
    snap = read_snapshot(cluster, Scope(None, kinds=frozenset({"ResourceSlice", "DeviceClass"})))
    assert (snap.nodes, snap.claims, snap.pods) == ((), (), ())


def test_injected_failure_reaches_the_caller() -> None:
    denied = ClusterError(ErrorCode.FORBIDDEN, "forbidden: may not list resourceclaims in namespace ml", status=403)
    cluster = MemoryCluster(failures={("list", "ResourceClaim"): denied})
    with pytest.raises(ClusterError, match="may not list resourceclaims in namespace ml"):
        read_snapshot(cluster, Scope("ml"))


# -- watch ----------------------------------------------------------------------------------


def test_reflector_follows_events_and_bookmarks() -> None:
    cluster = MemoryCluster.of([claim("a")])
    r = Reflector(cluster, "ResourceClaim")
    assert [e.type for e in r.step()] == ["ADDED"]
    cluster.create(claim("b"))
    cluster.delete("ResourceClaim", "a", "default")
    assert [(e.type, e.object["metadata"]["name"]) for e in r.step()] == [("ADDED", "b"), ("DELETED", "a")]
    assert r.bookmarks == 1 and r.resource_version == str(cluster.revision)
    assert r.step() == [] and r.relists == 1


def test_reflector_relists_on_410_and_misses_no_object() -> None:
    cluster = MemoryCluster.of([claim("a"), claim("b")], history=2)
    r = Reflector(cluster, "ResourceClaim")
    r.step()
    for i in range(5):  # more changes than the watch window keeps
        cluster.create(claim(f"new{i}"))
    cluster.delete("ResourceClaim", "a", "default")
    changes = r.step()
    assert r.relists == 2
    assert sorted((e.type, e.object["metadata"]["name"]) for e in changes) == [
        ("ADDED", f"new{i}") for i in range(5)] + [("DELETED", "a")]
    assert sorted(n for _, n in r.objects) == ["b", *(f"new{i}" for i in range(5))]


@settings(max_examples=25, derandomize=True, deadline=None)
@given(ops=st.lists(st.tuples(st.sampled_from(["create", "delete", "label", "compact", "watch"]), st.integers(0, 5)),
                    max_size=30))
def test_reflector_always_ends_equal_to_the_server(ops: list[tuple[str, int]]) -> None:
    cluster = MemoryCluster(history=3)
    r = Reflector(cluster, "ResourceClaim")
    r.step()
    for op, i in ops:
        name = f"c{i}"
        present = ("ResourceClaim", "default", name) in cluster.objects
        if op == "create" and not present:
            cluster.create(claim(name))
        elif op == "delete" and present:
            cluster.delete("ResourceClaim", name, "default")
        elif op == "label" and present:
            cluster.apply(claim(name, flip=str(cluster.revision)), field_manager="t")
        elif op == "compact":
            cluster.compact()
        elif op == "watch":
            r.step()
    r.step()
    assert {n: o["metadata"]["resourceVersion"] for (_, n), o in r.objects.items()} == {
        k[2]: o["metadata"]["resourceVersion"] for k, o in cluster.objects.items()}


# -- server-side apply ------------------------------------------------------------------------


def device_class(selector: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": "gpu", "labels": labels},
            "spec": {"selectors": [{"cel": {"expression": selector}}]}}


def test_apply_twice_writes_once() -> None:
    cluster = MemoryCluster()
    first = cluster.apply(device_class("true"))
    writes = cluster.writes
    second = cluster.apply(device_class("true"))
    assert cluster.writes == writes and first == second


def test_apply_conflict_names_the_owner_and_force_takes_over() -> None:
    cluster = MemoryCluster()
    cluster.apply(device_class("true"), field_manager="kubectl")
    with pytest.raises(ClusterError) as e:
        cluster.apply(device_class("false"))
    assert e.value.code is ErrorCode.CONFLICT and e.value.exit_code == 8
    assert [(c.field, c.manager) for c in e.value.conflicts] == [(".spec.selectors", "kubectl")]
    cluster.apply(device_class("false"), force=True)
    assert cluster.objects[("DeviceClass", "", "gpu")]["spec"]["selectors"][0]["cel"]["expression"] == "false"


def test_apply_removes_only_fields_no_other_manager_keeps() -> None:
    cluster = MemoryCluster()
    cluster.apply(device_class("true", team="ml", tier="a"))
    cluster.apply({"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": "gpu", "labels": {"tier": "a"}}},
                  field_manager="other")
    cluster.apply(device_class("true"))
    assert cluster.objects[("DeviceClass", "", "gpu")]["metadata"]["labels"] == {"tier": "a"}


def test_dry_run_writes_nothing() -> None:
    cluster = MemoryCluster()
    out = cluster.apply(device_class("true"), dry_run=True)
    assert out["spec"]["selectors"] and cluster.objects == {} and cluster.writes == 0
