"""``ClusterSnapshot``: one key spelling, namespaces defaulted once, lazy indexes, bundles round-trip."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from drakit.inventory.snapshot import ClusterSnapshot, ObjectKey, Provenance
from drakit.sources import load_bundle
from tests.unit.allocator.builders import claim, device, device_class, exact, node, slice_


def pod(name: str, *claims: tuple[str, str | None], namespace: str | None = None, generated: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "resourceClaims": [
                {"name": pc, **({"resourceClaimName": c} if c else {"resourceClaimTemplateName": "t"})} for pc, c in claims
            ],
            "containers": [{"name": "main", "image": "x"}],
        },
    }
    if generated:
        obj["status"] = {"resourceClaimStatuses": [{"name": k, "resourceClaimName": v} for k, v in generated.items()]}
    return obj


def event(kind: str, name: str, message: str, namespace: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{name}.1", "namespace": namespace},
        "involvedObject": {"kind": kind, "name": name, "namespace": namespace},
        "reason": "FailedScheduling",
        "message": message,
    }


@pytest.mark.parametrize(
    ("key", "text"),
    [
        pytest.param(ObjectKey("ResourceClaim", "ml", "c"), "ml/c", id="namespaced"),
        pytest.param(ObjectKey("ResourceClaim", "", "claim-0"), "claim-0", id="no-namespace-like-klog"),
        pytest.param(ObjectKey("Node", "", "node-1"), "node-1", id="cluster-scoped"),
    ],
)
def test_object_key_prints_like_klog_kobj(key: ObjectKey, text: str) -> None:
    assert str(key) == text


def test_object_key_kind_is_part_of_identity() -> None:
    assert ObjectKey("Pod", "ml", "x") != ObjectKey("ResourceClaim", "ml", "x")
    assert ObjectKey.of(claim("c", exact("r"), namespace="ml")) == ObjectKey("ResourceClaim", "ml", "c")


def test_namespaces_defaulted_once_and_inputs_untouched() -> None:
    objects = [node(), claim("c", exact("r")), pod("p", ("gpu", "c"))]
    del objects[1]["metadata"]["namespace"]
    before = copy.deepcopy(objects)
    snap = ClusterSnapshot.from_objects(objects)
    assert objects == before
    assert [ObjectKey.of(o) for o in snap.objects()] == [
        ObjectKey("Node", "", "node-1"),
        ObjectKey("ResourceClaim", "default", "c"),
        ObjectKey("Pod", "default", "p"),
    ]
    assert snap.find_claim("c", "default") is snap.claims[0]
    assert snap.find("Node", "node-1", "ignored") is snap.nodes[0]


def test_indexes() -> None:
    snap = ClusterSnapshot.from_objects(
        [
            slice_("a", [device("gpu-0")], pool="p1"),
            slice_("b", [device("gpu-1")], pool="p1", node_name="node-2"),
            slice_("c", [device("gpu-2")], pool="p2", node_name=None, allNodes=True),
            claim("shared", exact("r"), namespace="ml"),
            claim("other", exact("r"), namespace="ops"),
            pod("p1", ("gpu", "shared"), namespace="ml"),
            pod("p2", ("gpu", "shared"), ("own", None), namespace="ml", generated={"own": "p2-own-x"}),
            event("Pod", "p1", "(combined from similar events): 0/3 nodes are available", "ml"),
        ]
    )
    assert {k: [s["metadata"]["name"] for s in v] for k, v in snap.slices_by_node.items()} == {
        "node-1": ["a"], "node-2": ["b"], "": ["c"]
    }
    assert [s["metadata"]["name"] for s in snap.slices_by_pool[("gpu.example.com", "p1")]] == ["a", "b"]
    assert [c["metadata"]["name"] for c in snap.claims_by_namespace["ml"]] == ["shared"]
    assert [p["metadata"]["name"] for p in snap.pods_by_claim[ObjectKey("ResourceClaim", "ml", "shared")]] == ["p1", "p2"]
    assert [p["metadata"]["name"] for p in snap.pods_by_claim[ObjectKey("ResourceClaim", "ml", "p2-own-x")]] == ["p2"]
    assert [e["message"] for e in snap.events_for("Pod", "p1", "ml")] == ["0/3 nodes are available"]
    assert snap.events_for("Pod", "p1", "default") == []


def test_duplicates_keep_input_order_and_find_the_first() -> None:
    first, second = slice_("s", [device("gpu-0")]), slice_("s", [device("gpu-1")])
    snap = ClusterSnapshot.from_objects([first, second])
    assert snap.slices == (first, second)
    assert snap.find("ResourceSlice", "s") is first


def test_bundle_round_trip(tmp_path: Path) -> None:
    """A snapshot written as a List loads back into the same snapshot (the simulator's bundles rely on it)."""
    objects = [node(), slice_("s", [device("gpu-0")]), device_class(), claim("c", exact("r")), pod("p", ("gpu", "c"))]
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all(objects), encoding="utf-8")
    snap = ClusterSnapshot.from_bundle(load_bundle([str(f)]), provenance=Provenance(str(f), 1.0))
    out = tmp_path / "out.yaml"
    out.write_text(yaml.safe_dump(snap.to_list()), encoding="utf-8")
    again = ClusterSnapshot.from_bundle(load_bundle([str(out)]))
    assert list(again.objects()) == list(snap.objects())
    assert snap.provenance.to_json() == {"source": str(f), "readAt": 1.0, "resourceVersion": ""}


_names = st.text("abc-", min_size=1, max_size=4)


@settings(max_examples=50, derandomize=True, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["Pod", "ResourceClaim", "Node"]), st.sampled_from(["", "ml"]), _names), max_size=12))
def test_find_agrees_with_a_linear_scan(specs: list[tuple[str, str, str]]) -> None:
    objects = [{"kind": k, "metadata": {"name": n, **({"namespace": ns} if ns else {})}} for k, ns, n in specs]
    snap = ClusterSnapshot.from_objects(objects)
    for kind, ns, name in specs:
        effective = "" if kind == "Node" else (ns or "default")
        want = next(
            o for o in snap.of_kind(kind)
            if o["metadata"]["name"] == name and (o["metadata"].get("namespace") or "") == effective
        )
        assert snap.find(kind, name, ns) is want


EXPLAIN_BUNDLES = sorted((Path(__file__).resolve().parents[2] / "scenarios" / "explain").glob("*.yaml"))


@pytest.mark.parametrize(
    "path", [pytest.param(str(p), id=p.name) for p in EXPLAIN_BUNDLES if p.name != "cases.yaml"]
)
def test_from_bundle_equals_the_typed_objects_dumped(path: str) -> None:
    """The snapshot reuses the loader's dicts; they must be what the typed objects dump to."""
    from drakit.model import to_wire

    bundle = load_bundle([path])
    snap = ClusterSnapshot.from_bundle(bundle)
    dumped = ClusterSnapshot.from_objects([{"kind": e.kind, **to_wire(e.obj)} for e in bundle.entries])
    assert list(snap.objects()) == list(dumped.objects())


@settings(max_examples=50, derandomize=True, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["Pod", "ResourceClaim", "Node", "Event", "Service"]),
                          st.sampled_from(["", "ml"]), _names), max_size=12))
def test_defaulting_happens_once(specs: list[tuple[str, str, str]]) -> None:
    """A snapshot's objects make the same snapshot again: nothing is defaulted twice or reordered."""
    objects = [{"kind": k, "metadata": {"name": n, **({"namespace": ns} if ns else {})}} for k, ns, n in specs]
    snap = ClusterSnapshot.from_objects(objects)
    again = ClusterSnapshot.from_objects(list(snap.objects()))
    assert list(again.objects()) == list(snap.objects())
    assert all(o["kind"] != "Service" for o in snap.objects())
    assert all(bool(ObjectKey.of(o).namespace) == (o["kind"] != "Node") for o in snap.objects())
