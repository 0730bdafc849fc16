"""The allocator's and the device view's fast paths decide exactly what the plain paths decide.

Each fast path has a reference it must agree with:

* ``env.device_vars_both`` (one pass, memoised version parsing) against ``env.device_vars``
  called once per list mode, on rich random devices including broken ones;
* the search's per-run memos (``selectable`` per request and device, capacity computed once)
  are skipped when a trace is recorded, so a traced run is the reference for an untraced one;
* the per-device memos kept in an ``Inventory`` (typed attributes, "bare" consumption,
  selector outcomes) must not change a second call on the same inventory;
* ``_copy_claim`` against ``copy.deepcopy``.

Scenarios come from the differential generator (``tests/differential``), which covers every
feature the oracle comparison covers.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drakit.allocator import Inventory, allocate
from drakit.allocator.search import _copy_claim
from drakit.allocator.trace import Trace
from drakit.features import Features
from drakit.quantity import Quantity
from drakit.selectors import compile_selector, device_view
from drakit.selectors.env import device_vars, device_vars_both
from drakit.selectors.interpreter import StructValue
from drakit.selectors.types import EvalError
from drakit.semver import Semver
from tests.differential.generator import Scenario, random_scenario
from tests.unit.allocator import builders as b

DRIVER = "gpu.example.com"

# --- the device view --------------------------------------------------------------------------


def _canon(v: Any) -> Any:
    """A comparable rendering that keeps container types, version text and quantity form."""
    if isinstance(v, EvalError):
        return ("error", type(v).__name__, v.message)
    if isinstance(v, StructValue):
        return ("struct", v.type_name, _canon(dict(v)))
    if isinstance(v, dict):
        return (type(v).__name__, sorted((k, _canon(x)) for k, x in v.items()))
    if isinstance(v, list):
        return ("list", [_canon(x) for x in v])
    if isinstance(v, tuple):  # the (lists, scalar-only) pair
        return ("pair", [_canon(x) for x in v])
    if isinstance(v, Semver):
        return ("semver", str(v))
    if isinstance(v, Quantity):
        return ("quantity", v._kind, v._u, v._s, str(v.format), str(v))
    return (type(v).__name__, v)


def _outcome(fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return _canon(fn(*args, **kwargs))
    except Exception as e:  # the reference raises for malformed input: so must the fast path
        return ("raised", type(e).__name__, str(e))


def _reference(driver: str, device: dict[str, Any]) -> Any:
    """What ``device_view`` built before the one-pass builder existed."""
    all_ = device_vars(driver, device, lists=True)
    has_lists = any(
        isinstance(a, dict) and any(a.get(k) is not None for k in ("ints", "bools", "strings", "versions"))
        for a in (device.get("attributes") or {}).values()
    )
    scalar = device_vars(driver, device, lists=False) if has_lists else all_
    return all_, scalar


_names = st.sampled_from(
    [
        "model",
        "index",
        "v",
        "uuid",
        f"{DRIVER}/model",
        "other.example.com/x",
        "resource.kubernetes.io/pcieRoot",
        "",
    ]
)
_versions = st.sampled_from(
    ["1.2.3", "1.2.3-rc.1+build.5", "01.2.3", "1.2", "v1.0.0", "", "9.0.0", "1.0.0-01"]
)
_scalar_attr = st.one_of(
    st.builds(lambda x: {"int": x}, st.integers(-5, 5)),
    st.builds(lambda x: {"bool": x}, st.booleans()),
    st.builds(lambda x: {"string": x}, st.text("ab", max_size=3)),
    st.builds(lambda x: {"version": x}, _versions),
)
_list_attr = st.one_of(
    st.builds(lambda x: {"ints": x}, st.lists(st.integers(0, 3), max_size=3)),
    st.builds(lambda x: {"bools": x}, st.lists(st.booleans(), max_size=2)),
    st.builds(lambda x: {"strings": x}, st.lists(st.text("ab", max_size=2), max_size=3)),
    st.builds(lambda x: {"versions": x}, st.lists(_versions, max_size=3)),
)
_odd_attr = st.one_of(
    st.just({}),
    st.just({"int": None}),
    st.just({"float": 1.5}),
    st.builds(lambda a, c: {**a, **c}, _scalar_attr, _list_attr),  # two keys: precedence matters
    st.builds(lambda a, c: {**a, **c}, _scalar_attr, _scalar_attr),
)
_attr = st.one_of(_scalar_attr, _scalar_attr, _list_attr, _odd_attr)
_capacity = st.dictionaries(
    st.sampled_from(["memory", f"{DRIVER}/memory", "x.example.com/cores"]),
    st.builds(lambda v: {"value": v}, st.sampled_from(["80Gi", "1.5", "0", "12m", "bad", "1e3", "81559Mi"])),
    max_size=2,
)
_devices = st.fixed_dictionaries(
    {},
    optional={
        "attributes": st.dictionaries(_names, _attr, max_size=5),
        "capacity": _capacity,
        "allowMultipleAllocations": st.booleans(),
    },
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(device=_devices, driver=st.sampled_from([DRIVER, "other.example.com"]))
def test_one_pass_view_equals_reference(device: dict[str, Any], driver: str) -> None:
    assert _outcome(device_vars_both, driver, device) == _outcome(_reference, driver, device)


def test_memoised_version_errors_name_each_attribute() -> None:
    # The parse outcome is cached by the version text; the attribute name must not be.
    first = device_vars_both(DRIVER, {"attributes": {"a": {"version": "1.x.0"}}})[0]
    second = device_vars_both(DRIVER, {"attributes": {"b": {"version": "1.x.0"}}})[0]
    assert isinstance(first, EvalError) and first.message.startswith("attribute a: parse semantic version")
    assert isinstance(second, EvalError) and second.message.startswith("attribute b: parse semantic version")


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        pytest.param(
            'device.attributes["gpu.example.com"].v.isGreaterThan(semver("1.0.0"))', True, id="version"
        ),
        pytest.param('device.attributes["gpu.example.com"].tags.exists(t, t == "b")', True, id="list-stored"),
        pytest.param(
            "device.capacity['gpu.example.com'].memory.isGreaterThan(quantity('1Gi'))", True, id="capacity"
        ),
    ],
)
def test_views_evaluate_like_before(expression: str, expected: bool) -> None:
    dev = {
        "attributes": {"v": {"version": "1.2.3"}, "tags": {"strings": ["a", "b"]}},
        "capacity": {"memory": {"value": "80Gi"}},
    }
    compiled = compile_selector(expression, environment="stored", features=Features.all_on())
    assert compiled.evaluate(device_view(DRIVER, dev)) is expected
    assert compiled.evaluate(device_view(DRIVER, copy.deepcopy(dev))) is expected


# --- the allocator -----------------------------------------------------------------------------

_SHARE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _inputs(sc: Scenario) -> dict[str, Any]:
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for obj in sc.objects:
        by_kind.setdefault(obj["kind"], []).append(copy.deepcopy(obj))
    node = next(n for n in by_kind.get("Node", []) if n["metadata"]["name"] == sc.node)
    return {
        "node": node,
        "slices": by_kind.get("ResourceSlice", []),
        "classes": by_kind.get("DeviceClass", []),
        "claims": by_kind.get("ResourceClaim", []),
        "features": Features().with_gates(sc.gates),
    }


def _answer(**kwargs: Any) -> Any:
    out = allocate(timeout=None, **kwargs)
    return out.status, out.message, _SHARE.sub("<share>", repr(out.to_json()["claims"]))


SEEDS = [f"fast-paths:{i}" for i in range(250)]


@pytest.mark.parametrize("seed", [pytest.param(s, id=s) for s in SEEDS[:: len(SEEDS) // 10]] + ["all"])
def test_memos_change_no_decision(seed: str) -> None:
    """Untraced (memoised) == traced (no per-run memo) == a second call on a reused Inventory."""
    statuses: set[str] = set()
    for s in SEEDS if seed == "all" else [seed]:
        args = _inputs(random_scenario(s))
        plain = _answer(**args)
        statuses.add(plain[0])
        assert _answer(**args, trace=Trace()) == plain, s
        inv = Inventory(args["slices"], args["classes"])
        assert _answer(**args, inventory=inv) == plain, s
        assert _answer(**args, inventory=inv) == plain, s
        assert _answer(**args, inventory=inv, trace=Trace()) == plain, s
    if seed == "all":
        assert statuses == {"allocated", "unsatisfiable", "error"}  # the sample covers every outcome


def test_unsupported_attribute_fails_every_time() -> None:
    # A memoised "no value" must raise again on the next call, with the same text.
    no_selectors = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu"},
        "spec": {},
    }
    inv = Inventory(
        [b.slice_("s", [b.device("d0", attributes={"model": {}}), b.device("d1", attributes={"model": {}})])],
        [no_selectors],  # a selector would fail first, on building the device's CEL view
    )
    claim = b.claim("c", b.exact("r", count=2), constraints=[{"matchAttribute": f"{b.DRIVER}/model"}])
    first = allocate(
        node=b.node(), slices=(), classes=(), claims=[claim], features=Features.all_on(), inventory=inv
    )
    second = allocate(
        node=b.node(), slices=(), classes=(), claims=[claim], features=Features.all_on(), inventory=inv
    )
    assert first.status == second.status == "error"
    assert first.message == second.message
    assert first.message.endswith(f"attribute {b.DRIVER}/model: unsupported attribute value")


@pytest.mark.parametrize(
    "claim",
    [
        pytest.param(
            {"metadata": {"name": "c"}, "spec": {"devices": {"requests": [{"name": "r"}]}}}, id="plain"
        ),
        pytest.param(
            {"metadata": {"name": "c", "labels": {"a": "1"}}, "spec": {"x": [[1, 2.5], {"y": None}, True]}},
            id="nested",
        ),
        pytest.param({"metadata": {"name": "c"}, "spec": {"t": (1, [2])}}, id="tuple-falls-back"),
    ],
)
def test_claim_copy_is_deep_and_equal(claim: dict[str, Any]) -> None:
    copied = _copy_claim(claim)
    assert copied == copy.deepcopy(claim)
    copied["metadata"]["name"] = "changed"
    assert claim["metadata"]["name"] == "c"
