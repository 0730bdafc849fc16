"""``allocate_snapshot``: the snapshot entry point decides exactly as the keyword form."""

from __future__ import annotations

from typing import Any

import pytest

from drakit.allocator import allocate, allocate_snapshot
from drakit.features import Features
from drakit.inventory.snapshot import ClusterSnapshot
from tests.unit.allocator.builders import claim, device, device_class, exact, in_use, node, slice_

BASE = [node(), slice_("s", [device("gpu-0"), device("gpu-1")]), device_class()]


@pytest.mark.parametrize(
    ("objects", "node_name", "status"),
    [
        pytest.param([claim("c", exact("r"))], "node-1", "allocated", id="allocated"),
        pytest.param([in_use("u", "gpu-0", "gpu-1"), claim("c", exact("r"))], "node-1", "unsatisfiable", id="in-use"),
        pytest.param([claim("c", exact("r", cls="nope"))], "node-1", "error", id="error"),
        pytest.param([claim("c", exact("r"))], "node-2", "unsatisfiable", id="node-not-in-snapshot"),
    ],
)
def test_same_outcome_as_the_keyword_form(objects: list[dict[str, Any]], node_name: str, status: str) -> None:
    features = Features.for_version()
    snap = ClusterSnapshot.from_objects([*BASE, *objects])
    got = allocate_snapshot(snap, node_name, features=features, timeout=None)
    want = allocate(
        node=snap.find("Node", node_name) or {"kind": "Node", "metadata": {"name": node_name}},
        slices=snap.slices,
        classes=snap.classes,
        claims=snap.claims,
        features=features,
        timeout=None,
    )
    assert (got.status, got.message, got.claims) == (want.status, want.message, want.claims)
    assert got.status == status
