"""The allocator and the simulator take their clock and their IDs from the caller."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from drakit.allocator import allocate
from drakit.clock import FixedClock, RandomIds, SeededIds
from drakit.features import Features
from tests.unit.allocator.builders import claim, device, device_class, exact, node, slice_

ALL_ON = Features.all_on()
SHARED = [slice_("s", [device("nic", allowMultipleAllocations=True, capacity={"bandwidth": "10G"})])]
SHARING = claim("c", *(exact(n, capacity={"requests": {"bandwidth": "1G"}}) for n in "ab"))
# Eight devices, one claim for one and one for all eight: the search tries every subset for the
# second claim after each choice for the first, 1,041 steps (16 deadline intervals) in all.
DEVICES = [slice_("s", [device(f"d{i}") for i in range(8)])]
TOO_MANY = [claim("one", exact("r")), claim("all", exact("r", 8))]


def _allocate(slices: list[dict[str, Any]], claims: list[dict[str, Any]], **kw: Any) -> Any:
    return allocate(node=node(), slices=slices, classes=[device_class()], claims=claims, features=ALL_ON, **kw)


def _share_ids(out: Any) -> list[str]:
    return [r["shareID"] for r in out.results[0]["devices"]["results"]]


def test_share_ids_come_from_the_id_source() -> None:
    first = _share_ids(_allocate(SHARED, [SHARING], ids=SeededIds(7)))
    again = _share_ids(_allocate(SHARED, [SHARING], ids=SeededIds(7)))
    other = _share_ids(_allocate(SHARED, [SHARING], ids=SeededIds(8)))
    assert first == again and first != other and len(set(first)) == 2
    for text in (*first, *_share_ids(_allocate(SHARED, [SHARING]))):
        assert uuid.UUID(text).version == 4


@pytest.mark.parametrize(
    ("step", "status", "elapsed"),
    [
        pytest.param(0.0, "unsatisfiable", 0.0, id="frozen-clock-never-times-out"),
        pytest.param(1.0, "error", None, id="each-reading-one-second-times-out"),
    ],
)
def test_deadline_and_stats_read_the_given_clock(step: float, status: str, elapsed: float | None) -> None:
    clock = FixedClock(step=step)
    out = _allocate(DEVICES, TOO_MANY, timeout=5.0, clock=clock)
    assert out.status == status
    if status == "error":
        assert out.message == "timed out trying to allocate devices"
        assert out.stats.elapsed_s > 5.0  # the reading that crossed the deadline, then one more
    else:
        assert out.stats.elapsed_s == elapsed
        assert out.stats.steps == 1041


def test_twins() -> None:
    clock = FixedClock(10.0)
    clock.advance(2.5)
    assert clock.monotonic() == clock.monotonic() == 12.5
    assert [SeededIds("x").new_id() for _ in range(2)] == [SeededIds("x").new_id()] * 2
    assert RandomIds().new_id() != RandomIds().new_id()
