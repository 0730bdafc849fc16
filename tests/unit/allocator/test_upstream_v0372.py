"""Behaviours the differential run against the upstream oracle (DRA v0.37.2) pinned down.

Each test names the upstream decision it mirrors; the matching end-to-end scenario (with the
oracle's recorded answer) is under ``tests/differential/regressions/``.
"""

from __future__ import annotations

from typing import Any

import pytest

from drakit.allocator import allocate
from drakit.allocator.cel import NO_SUCH_KEY_HINT, runtime_error_message
from drakit.allocator.inventory import CapacityEntry
from drakit.allocator.search import _consumed_amount, _violates_policy
from drakit.allocator.state import quantity_of
from drakit.features import Features
from tests.unit.allocator.builders import DRIVER, claim, device, device_class, exact, in_use, node, slice_

GATES = Features().with_gates(
    "DRAConsumableCapacity=true,DRAPartitionableDevices=true,DRAAdminAccess=true,DRAPrioritizedList=true"
)


def run(slices: list[dict[str, Any]], claims: list[dict[str, Any]], **kw: Any) -> Any:
    classes = kw.pop("classes", None) or [device_class()]
    return allocate(
        node=kw.pop("node", None) or node(), slices=slices, classes=classes, claims=claims, features=GATES, **kw
    )


@pytest.mark.parametrize(
    ("message", "want"),
    [
        pytest.param("no such key: model", "no such key: model" + NO_SUCH_KEY_HINT, id="plain"),
        pytest.param("context: no such key: x", "context: no such key: x" + NO_SUCH_KEY_HINT, id="wrapped"),
        pytest.param("no such overload", "no such overload", id="other-errors-unchanged"),
        pytest.param(
            "no such key: z. consider using CEL optional chaining",
            "no such key: z. consider using CEL optional chaining" + NO_SUCH_KEY_HINT,
            id="hint-text-alone-is-not-the-hint",
        ),
    ],
)
def test_no_such_key_hint(message: str, want: str) -> None:
    assert runtime_error_message(RuntimeError(message)) == want


def test_allocator_reports_hint_once() -> None:
    cls = device_class("big", expr=f'device.attributes["{DRIVER}"].model == "h100"')
    out = run([slice_("s", [device("d0")])], [claim("c", exact("r", cls="big"))], classes=[cls])
    assert out.status == "error"
    assert out.message == (
        f"class big: selector #0 on device {DRIVER}/pool-1/d0: CEL runtime error: no such key: model" + NO_SUCH_KEY_HINT
    )


@pytest.mark.parametrize(
    ("requests", "want_status"),
    [
        pytest.param({"memory": "1Gi"}, "allocated", id="same-name"),
        pytest.param({f"{DRIVER}/memory": "1Gi"}, "unsatisfiable", id="qualified-is-another-name"),
        pytest.param({"memory": "0", f"{DRIVER}/memory": "2Gi"}, "unsatisfiable", id="both-spellings-no-error"),
    ],
)
def test_capacity_names_match_exactly(requests: dict[str, str], want_status: str) -> None:
    dev = device("d0", capacity={"memory": "80Gi"}, allowMultipleAllocations=True)
    out = run([slice_("s", [dev])], [claim("c", exact("r", capacity={"requests": requests}))])
    assert out.status == want_status, out.message


def test_counter_slice_needs_a_matching_node_selection() -> None:
    # Only the counter slice (for another node) exists: the pool is not gathered at all, so an
    # All request finds nothing instead of "pool ... is currently being updated".
    counters = slice_(
        "c", [], node_name="node-2", count=2, sharedCounters=[{"name": "set", "counters": {}}]
    )
    out = run([counters], [claim("c", exact("r", allocationMode="All"))])
    assert out.status == "unsatisfiable", out.message


def test_all_precheck_uses_static_capacity() -> None:
    # d1 has 4Gi of its 48Gi taken by a share; an exclusive allocation needs all 48Gi.  It stays in
    # "all devices" (static check) and then fails, so the claim fails rather than skipping d1.
    devices = [device("d0"), device("d1", capacity={"memory": "48Gi"})]
    share = in_use("u", "d1", shareID="00000000-0000-4000-8000-000000000000", consumedCapacity={"memory": "4Gi"})
    out = run([slice_("s", devices)], [share, claim("c", exact("r", allocationMode="All"))])
    assert out.status == "unsatisfiable"


def test_further_share_skips_counters_of_shared_device() -> None:
    dev = device(
        "d0",
        allowMultipleAllocations=True,
        consumesCounters=[{"counterSet": "set", "counters": {"memory": {"value": "40Gi"}}}],
    )
    counters = slice_("c", [], count=2, sharedCounters=[{"name": "set", "counters": {"memory": {"value": "40Gi"}}}])
    share = in_use("u", "d0", shareID="00000000-0000-4000-8000-000000000001")  # no consumedCapacity
    out = run([slice_("s", [dev], count=2), counters], [share, claim("c", exact("r"))])
    assert out.status == "allocated", out.message


def _entry(value: str, policy: dict[str, Any] | None) -> CapacityEntry:
    return CapacityEntry(status_name="memory", quantity=quantity_of(value), value_text=value, policy=policy)


@pytest.mark.parametrize(
    ("requested", "policy", "want"),
    [
        pytest.param(None, None, "20G", id="whole-capacity"),
        pytest.param(None, {"default": "1G"}, "1G", id="default"),
        pytest.param("1.5Gi", {"validRange": {"min": "500M", "step": "1.5G"}}, "2G", id="step-in-step-format"),
        pytest.param("1.5n", {"validRange": {"min": "1n"}}, "2n", id="parse-rounds-up-to-nano"),
        pytest.param("100M", {"validRange": {"min": "500M", "step": "1.5G"}}, "500M", id="below-min"),
        pytest.param("3Gi", {"validValues": ["2Gi", "4Gi"]}, "4Gi", id="valid-values-round-up"),
        pytest.param("5Gi", {"validValues": ["2Gi", "4Gi"]}, "5Gi", id="valid-values-above-all"),
        pytest.param("1500m", {"validRange": {"min": "1", "step": "1"}}, "2", id="integer-value-rounds-up"),
    ],
)
def test_consumed_amount(requested: str | None, policy: dict[str, Any] | None, want: str) -> None:
    got = _consumed_amount(None if requested is None else quantity_of(requested), _entry("20G", policy))
    assert str(got) == want


@pytest.mark.parametrize(
    ("amount", "policy", "violates"),
    [
        pytest.param("1Gi", {"default": "1Gi", "validRange": {"min": "2Gi", "step": "2Gi"}}, False, id="default"),
        pytest.param(
            "1024Mi",
            {"default": "1Gi", "validRange": {"min": "2Gi", "step": "2Gi"}},
            True,
            id="default-by-representation-not-value",
        ),
        pytest.param("3Gi", {"validRange": {"min": "1Gi", "step": "2Gi"}}, False, id="on-step"),
        pytest.param("2Gi", {"validRange": {"min": "1Gi", "step": "2Gi"}}, True, id="off-step"),
        pytest.param("17Gi", {"validRange": {"min": "1Gi", "max": "16Gi"}}, True, id="over-max"),
        pytest.param("4096Mi", {"validValues": ["4Gi", "8Gi"]}, False, id="valid-values-by-value"),
    ],
)
def test_violates_policy(amount: str, policy: dict[str, Any], violates: bool) -> None:
    assert _violates_policy(quantity_of(amount), policy) is violates
