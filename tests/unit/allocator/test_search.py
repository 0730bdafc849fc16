"""Allocator behaviour on small hand-built inputs (table-driven), plus an "inputs untouched" check."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from drakit.allocator import Inventory, allocate
from drakit.allocator.trace import Trace
from drakit.features import Features
from drakit.outcomes import ReasonCode
from tests.unit.allocator.builders import (
    DRIVER,
    chosen,
    claim,
    device,
    device_class,
    exact,
    first_available,
    in_use,
    node,
    slice_,
    sub,
)

ALL_ON = Features.all_on()
DEFAULT = Features()


def run(
    slices: list[dict[str, Any]],
    claims: list[dict[str, Any]],
    features: Features = ALL_ON,
    classes: list[dict[str, Any]] | None = None,
    trace: Trace | None = None,
    **kw: Any,
) -> Any:
    inputs: dict[str, Any] = {"node": node(), "slices": slices, "classes": classes or [device_class()], "claims": claims}
    before = copy.deepcopy(inputs)
    out = allocate(**inputs, features=features, trace=trace, **kw)
    assert inputs == before, "inputs were modified"
    return out


EIGHT = [slice_("s", [device(f"gpu-{i}", attrs={"pcieRoot": f"root-{i // 4}"}) for i in range(8)])]


@pytest.mark.parametrize(
    ("slices", "claims", "features", "want_status", "want"),
    [
        pytest.param(
            EIGHT, [claim("c", exact("r"))], ALL_ON, "allocated", [[("r", "gpu-0")]], id="first-fit"
        ),
        pytest.param(
            EIGHT,
            [claim("c", exact("r", 4), constraints=[{"matchAttribute": f"{DRIVER}/pcieRoot"}])],
            ALL_ON,
            "allocated",
            [[("r", "gpu-0"), ("r", "gpu-1"), ("r", "gpu-2"), ("r", "gpu-3")]],
            id="match-attribute",
        ),
        pytest.param(
            [
                slice_(
                    "s",
                    [
                        device("a", attrs={"numa": 0}),
                        device("b", attrs={"numa": 1}),
                        device("c", attrs={"numa": 1}),
                    ],
                )
            ],
            [claim("c", exact("r", 2), constraints=[{"matchAttribute": f"{DRIVER}/numa"}])],
            ALL_ON,
            "allocated",
            [[("r", "b"), ("r", "c")]],
            id="backtrack-within-request",
        ),
        pytest.param(
            [slice_("s", [device("small", attrs={"big": False}), device("large", attrs={"big": True})])],
            [
                claim("c1", exact("any")),
                claim(
                    "c2",
                    exact("big", selectors=[{"cel": {"expression": f'device.attributes["{DRIVER}"].big'}}]),
                ),
            ],
            ALL_ON,
            "allocated",
            [[("any", "small")], [("big", "large")]],
            id="backtrack-across-claims",
        ),
        pytest.param(
            [slice_("s", [device("large", attrs={"big": True}), device("small", attrs={"big": False})])],
            [
                claim("c1", exact("any")),
                claim(
                    "c2",
                    exact("big", selectors=[{"cel": {"expression": f'device.attributes["{DRIVER}"].big'}}]),
                ),
            ],
            ALL_ON,
            "allocated",
            [[("any", "small")], [("big", "large")]],
            id="backtrack-moves-earlier-claim",
        ),
        pytest.param(EIGHT, [claim("c", exact("r", 9))], ALL_ON, "unsatisfiable", [], id="not-enough"),
        pytest.param(EIGHT, [claim("c", exact("r", 33))], ALL_ON, "error", [], id="over-32"),
        pytest.param(
            EIGHT,
            [claim("c", exact("r", allocationMode="All"))],
            ALL_ON,
            "allocated",
            [[("r", f"gpu-{i}") for i in range(8)]],
            id="all-mode",
        ),
        pytest.param(
            EIGHT,
            [in_use("u", "gpu-3"), claim("c", exact("r", allocationMode="All"))],
            ALL_ON,
            "unsatisfiable",
            [],
            id="all-mode-one-in-use",
        ),
        pytest.param(
            EIGHT,
            [claim("c", first_available("r", sub("eight", 9), sub("two", 2)))],
            ALL_ON,
            "allocated",
            [[("r/two", "gpu-0"), ("r/two", "gpu-1")]],
            id="first-available-falls-back",
        ),
        pytest.param(
            EIGHT,
            [claim("c", first_available("r", sub("a")))],
            DEFAULT.with_gates("DRAPrioritizedList=false"),
            "error",
            [],
            id="first-available-gate-off",
        ),
        pytest.param(
            EIGHT,
            [claim("c", exact("r", adminAccess=True))],
            DEFAULT.with_gates("DRAAdminAccess=false"),
            "error",
            [],
            id="admin-gate-off",
        ),
        pytest.param(
            EIGHT[:1] and [slice_("s", [device("only")])],
            [in_use("u", "only"), claim("c", exact("r", adminAccess=True))],
            ALL_ON,
            "allocated",
            [[("r", "only")]],
            id="admin-ignores-in-use",
        ),
        pytest.param(
            [slice_("s", [device("only")])],
            [claim("c", exact("r", 2, adminAccess=True))],
            ALL_ON,
            "unsatisfiable",
            [],
            id="admin-not-twice-in-same-claim",
        ),
    ],
)
def test_allocate_table(slices: Any, claims: Any, features: Features, want_status: str, want: Any) -> None:
    out = run(slices, claims, features)
    assert out.status == want_status, out.message
    if want_status == "allocated":
        assert chosen(out) == want


TAINTED = [
    slice_(
        "s",
        [
            device("t", taints=[{"key": "broken", "value": "yes", "effect": "NoSchedule"}]),
            device("n", taints=[{"key": "x", "effect": "None"}]),
        ],
    )
]


@pytest.mark.parametrize(
    ("gates", "tolerations", "want"),
    [
        pytest.param("DRADeviceTaints=true", None, "n", id="tainted-skipped"),
        pytest.param(
            "DRADeviceTaints=true",
            [{"key": "broken", "operator": "Exists", "effect": "NoSchedule"}],
            "t",
            id="tolerated",
        ),
        pytest.param(
            "DRADeviceTaints=true",
            [{"key": "broken", "operator": "Equal", "value": "no"}],
            "n",
            id="wrong-value",
        ),
        pytest.param("DRADeviceTaints=false", None, "t", id="gate-off-ignores-taints"),
    ],
)
def test_taints(gates: str, tolerations: Any, want: str) -> None:
    fields = {"tolerations": tolerations} if tolerations else {}
    out = run(TAINTED, [claim("c", exact("r", **fields))], DEFAULT.with_gates(gates))
    assert chosen(out) == [[("r", want)]]
    if tolerations and want == "t":
        assert out.results[0]["devices"]["results"][0]["tolerations"] == tolerations


def counters_pool(consume: list[str]) -> list[dict[str, Any]]:
    devices = [
        device(
            f"part-{i}",
            consumesCounters=[{"counterSet": "gpu-0-counters", "counters": {"memory": {"value": mem}}}],
        )
        for i, mem in enumerate(consume)
    ]
    return [
        slice_(
            "a-counters",
            [],
            count=2,
            sharedCounters=[{"name": "gpu-0-counters", "counters": {"memory": {"value": "40Gi"}}}],
        ),
        slice_("b-devices", devices, count=2),
    ]


def test_counters_exhausted_is_traced_with_numbers() -> None:
    trace = Trace()
    out = run(
        counters_pool(["20Gi", "20Gi", "40Gi"]),
        [in_use("u", "part-0"), claim("c", exact("r", 2))],
        trace=trace,
    )
    assert out.status == "unsatisfiable"
    msgs = [r.message for r in trace.reasons if r.code == ReasonCode.COUNTERS_EXHAUSTED]
    assert "counter memory of set gpu-0-counters: needs 40Gi, 0 left" in msgs or any(
        "needs 40Gi" in m for m in msgs
    )


@pytest.mark.parametrize(
    ("gates", "want_status"),
    [
        pytest.param("DRAPartitionableDevices=true", "allocated", id="on"),
        pytest.param("DRAPartitionableDevices=false", "unsatisfiable", id="off"),
    ],
)
def test_partitionable_gate(gates: str, want_status: str) -> None:
    out = run(counters_pool(["20Gi", "20Gi"]), [claim("c", exact("r", 2))], DEFAULT.with_gates(gates))
    assert out.status == want_status


def test_shared_device_gets_share_ids_and_capacity() -> None:
    s = [slice_("s", [device("nic", allowMultipleAllocations=True, capacity={"bandwidth": "10G"})])]
    c = claim(
        "c",
        exact("a", capacity={"requests": {"bandwidth": "4G"}}),
        exact("b", capacity={"requests": {"bandwidth": "4G"}}),
    )
    out = run(s, [c])
    results = out.results[0]["devices"]["results"]
    assert [r["consumedCapacity"] for r in results] == [{"bandwidth": "4G"}, {"bandwidth": "4G"}]
    assert len({r["shareID"] for r in results}) == 2
    trace = Trace()
    out = run(
        s, [claim("c", *(exact(n, capacity={"requests": {"bandwidth": "4G"}}) for n in "abc"))], trace=trace
    )
    assert out.status == "unsatisfiable"
    assert any(
        r.code == ReasonCode.CAPACITY_EXCEEDED and "needs 4G, 2G left" in r.message for r in trace.reasons
    )


@pytest.mark.parametrize(
    ("gates", "want_status"),
    [
        pytest.param(
            "DRADeviceBindingConditions=true,DRAResourceClaimDeviceStatus=true", "allocated", id="on"
        ),
        pytest.param(
            "DRADeviceBindingConditions=true,DRAResourceClaimDeviceStatus=false",
            "unsatisfiable",
            id="status-off",
        ),
    ],
)
def test_binding_conditions(gates: str, want_status: str) -> None:
    s = [
        slice_(
            "s",
            [device("d", bindingConditions=["Ready"], bindingFailureConditions=["Failed"], bindsToNode=True)],
            node_name=None,
            allNodes=True,
        )
    ]
    trace = Trace()
    out = run(s, [claim("c", exact("r"))], DEFAULT.with_gates(gates), trace=trace)
    assert out.status == want_status
    if want_status == "allocated":
        res = out.results[0]
        assert res["devices"]["results"][0]["bindingConditions"] == ["Ready"]
        assert res["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["node-1"]
    else:
        assert ReasonCode.BINDING_CONDITIONS_DISABLED in trace.codes()


def test_class_config_then_claim_config() -> None:
    cfg = {"opaque": {"driver": DRIVER, "parameters": {"a": 1}}}
    out = run(
        EIGHT,
        [claim("c", exact("x"), exact("y"), config=[{"requests": ["y"], **cfg}])],
        classes=[device_class(config=[cfg])],
    )
    assert out.results[0]["devices"]["config"] == [
        {"source": "FromClass", **cfg},  # names every request, so "requests" is cleared
        {"source": "FromClaim", "requests": ["y"], **cfg},
    ]


def test_errors_have_upstream_wording() -> None:
    out = run(EIGHT, [claim("c", exact("r", cls="missing"))])
    assert out.status == "error"
    assert (
        out.message
        == 'claim default/c, request r: could not retrieve device class missing: deviceclass.resource.k8s.io "missing" not found'
    )
    assert out.to_json() == {
        "status": "error",
        "claims": [claim("c", exact("r", cls="missing"))],
        "message": out.message,
    }


def test_timeout_reports_upstream_message() -> None:
    # 10 groups of 4 devices sharing a NUMA node; 5 matching devices cannot exist, and the search
    # needs hundreds of steps to prove it, far more than the deadline check interval.
    devices = [device(f"d{i}", attrs={"numa": i // 4}) for i in range(40)]
    c = claim("c", exact("r", 5), constraints=[{"matchAttribute": f"{DRIVER}/numa"}])
    assert run([slice_("s", devices)], [c]).status == "unsatisfiable"
    out = run([slice_("s", devices)], [c], timeout=1e-9)
    assert (out.status, out.message) == ("error", "timed out trying to allocate devices")


def test_inventory_reuse_and_commit() -> None:
    inv = Inventory(EIGHT, [device_class()])
    taken = []
    for i in range(9):
        out = allocate(
            node=node(),
            slices=(),
            classes=(),
            claims=[claim(f"c{i}", exact("r"))],
            features=ALL_ON,
            inventory=inv,
        )
        if out.status != "allocated":
            break
        inv.commit(out.claims[0])
        taken.append(out.results[0]["devices"]["results"][0]["device"])
    assert taken == [f"gpu-{i}" for i in range(8)]
    assert out.status == "unsatisfiable"
    inv.release(
        {
            "status": {
                "allocation": {
                    "devices": {"results": [{"driver": DRIVER, "pool": "pool-1", "device": "gpu-5"}]}
                }
            }
        }
    )
    out = allocate(
        node=node(),
        slices=(),
        classes=(),
        claims=[claim("again", exact("r"))],
        features=ALL_ON,
        inventory=inv,
    )
    assert chosen(out) == [[("r", "gpu-5")]]


def test_every_unchosen_device_has_a_reason() -> None:
    s = [*EIGHT, slice_("other", [device("far")], node_name="node-2", pool="pool-2")]
    trace = Trace()
    out = run(
        s,
        [
            in_use("u", "gpu-0"),
            claim(
                "c",
                exact(
                    "r",
                    2,
                    selectors=[
                        {"cel": {"expression": f'device.attributes["{DRIVER}"].pcieRoot == "root-1"'}}
                    ],
                ),
            ),
        ],
        trace=trace,
    )
    assert chosen(out) == [[("r", "gpu-4"), ("r", "gpu-5")]]
    by_device = {r.device: r.code for r in trace.reasons}
    assert by_device[f"{DRIVER}/pool-1/gpu-0"] == ReasonCode.DEVICE_IN_USE
    assert by_device[f"{DRIVER}/pool-1/gpu-1"] == ReasonCode.REQUEST_SELECTOR_FALSE
    assert by_device[f"{DRIVER}/pool-2/far"] == ReasonCode.NODE_MISMATCH
    assert by_device[f"{DRIVER}/pool-1/gpu-7"] == ReasonCode.NOT_NEEDED


BAD_SELECTOR = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]}]}


@pytest.mark.parametrize(
    ("claims", "want"),
    [
        pytest.param([claim("c", exact("r"))], "gather pool information: failed to perform node selection for slice bad", id="alone"),
        # upstream gathers pools before it looks at any claim: the pool error wins over a missing class
        pytest.param([claim("c", exact("r", cls="nope"))], "gather pool information:", id="before-claim-checks"),
    ],
)
def test_unparsable_slice_node_selector_is_an_error_first(claims: list[dict[str, Any]], want: str) -> None:
    slices = [slice_("s", [device("gpu-0")]), slice_("bad", [device("x")], node_name=None, pool="p2", nodeSelector=BAD_SELECTOR)]
    out = run(slices, claims)
    assert out.status == "error" and out.message.startswith(want), out.message
    assert "must have one element" in out.message
