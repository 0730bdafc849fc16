"""The diagnosis's own index: it must answer exactly as the allocator's structures it replaced.

The funnel no longer builds the allocator's :class:`Inventory` over every slice, nor an
:class:`AllocatedState` up front; these tests pin the equivalences that make that safe.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drakit.allocator import AllocatedState, Inventory, allocate
from drakit.explain.diagnose import _slices_for
from drakit.explain.funnel import ClusterIndex, Selectors, device_product
from drakit.explain.probe import project, projection, projector
from drakit.features import Features
from tests.unit.explain.conftest import scenario_input

DRIVER = "gpu.nvidia.com"
EXPRESSIONS = [
    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
    "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0",
    "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA') && device.attributes['x.io'].numa == 0",
]

_scalar = st.one_of(
    st.text(max_size=3), st.integers(-2, 2), st.booleans(), st.none(), st.sampled_from(["80Gi", "81559Mi"])
)
_value = st.one_of(
    st.fixed_dictionaries({}, optional={"string": _scalar, "int": _scalar, "version": _scalar}),
    st.fixed_dictionaries({"value": _scalar}),
    st.lists(_scalar, max_size=2),
    _scalar,
)
_names = st.sampled_from(["type", "productName", "memory", "numa", f"{DRIVER}/type", f"{DRIVER}/memory", "x.io/numa"])
_device = st.fixed_dictionaries(
    {"name": st.just("d")},
    optional={
        "attributes": st.dictionaries(_names, _value, max_size=4),
        "capacity": st.dictionaries(_names, _value, max_size=3),
        "allowMultipleAllocations": st.booleans(),
    },
)


@given(device=_device, driver=st.sampled_from([DRIVER, "other.io"]), which=st.sampled_from(EXPRESSIONS))
def test_projector_equals_project(device: dict[str, Any], driver: str, which: str) -> None:
    refs = projection(which)
    assert refs is not None
    assert projector(refs)(driver, device) == project(refs, driver, device)


@pytest.mark.parametrize(
    "name",
    ["devices-in-use", "constraint-pcie-root", "partitionable-counters", "consumable-capacity-fits", "pool-incomplete"],
)
def test_in_use_and_holders_match_allocated_state(name: str) -> None:
    inp = scenario_input(name)
    features = Features.for_version()
    allocated = [c for c in inp.claims if (c.get("status") or {}).get("allocation")]
    index = ClusterIndex(inp.slices, features, allocated, inp.taint_rules)
    state = AllocatedState()
    for c in allocated:
        state.add_claim(c, consumable=features.consumable_capacity)
    assert index.in_use == set(state.devices)
    assert set(index.state.devices) == set(state.devices)
    held = {k for c in allocated for k in _result_keys(c)}
    assert {d.key for d in index.devices if index.holders(d.key)} == held & {d.key for d in index.devices}


def _result_keys(claim: Mapping[str, Any]) -> set[tuple[str, str, str]]:
    results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
    return {(r.get("driver", ""), r.get("pool", ""), r.get("device", "")) for r in results if not r.get("adminAccess")}


@pytest.mark.parametrize(
    "name", ["fits", "constraint-pcie-root", "partitionable-fits-half", "consumable-capacity-fits", "in-use-fragmented"]
)
def test_allocator_on_the_nodes_pools_answers_as_on_all_slices(name: str) -> None:
    """An index over the pools a node can see (and a state over their claims) changes nothing."""
    inp = scenario_input(name)
    features = Features.for_version()
    pending = [c for c in inp.claims if not (c.get("status") or {}).get("allocation")]
    allocated = [c for c in inp.claims if (c.get("status") or {}).get("allocation")]
    index = ClusterIndex(inp.slices, features, allocated)
    assert inp.nodes
    for node in inp.nodes:
        name_ = str(node["metadata"]["name"])
        full = Inventory(inp.slices, inp.classes)
        full.state = index.state
        part = Inventory(_slices_for(inp, [name_]), inp.classes)
        part.state = index.allocated_state({(s.driver, s.pool) for s in part.slices})
        want = allocate(node=node, slices=(), classes=(), claims=pending, features=features, inventory=full)
        got = allocate(node=node, slices=(), classes=(), claims=pending, features=features, inventory=part)
        assert (got.status, got.message, _no_share_ids(got.results)) == (
            want.status, want.message, _no_share_ids(want.results)
        ), name_


def _no_share_ids(results: Any) -> Any:
    """Results without ``shareID`` (a fresh random UID per allocation)."""
    if isinstance(results, dict):
        return {k: _no_share_ids(v) for k, v in results.items() if k != "shareID"}
    if isinstance(results, list | tuple):
        return [_no_share_ids(v) for v in results]
    return results


def test_selector_groups_share_one_evaluation() -> None:
    inp = scenario_input("memory-80gi-near-miss")
    features = Features.for_version()
    index = ClusterIndex(inp.slices, features, [])
    sel = Selectors(features)
    sel.scope(EXPRESSIONS[:2])
    gids, reps = sel.groups(index.devices)
    assert len(gids) == len(index.devices)
    assert len(reps) < len(index.devices)  # identical GPUs fall into one group
    for d, g in zip(index.devices, gids, strict=True):
        for expr in EXPRESSIONS[:2]:
            assert sel.outcome(expr, d) == sel.outcome(expr, reps[g])
    assert device_product(index.devices[0]) == "NVIDIA H100 80GB HBM3"
