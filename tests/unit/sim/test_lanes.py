"""The lane's range counter against a plain list (appends, range increments, reads)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from drakit.sim.lanes import RangeCounter

OPS = st.lists(
    st.one_of(st.just(("append", 0, 0)), st.tuples(st.just("add"), st.integers(0, 60), st.integers(0, 60))),
    max_size=200,
)


@settings(max_examples=200, deadline=None)
@given(OPS)
def test_range_counter_matches_a_list(ops: list[tuple[str, int, int]]) -> None:
    counter, plain = RangeCounter(), []
    tail = 0  # increments that reached the end apply to positions appended later, as in the counter
    for op, a, b in ops:
        if op == "append":
            assert counter.append() == len(plain)
            plain.append(tail)
            continue
        if not plain:
            continue
        start, stop = sorted((a % len(plain), b % (len(plain) + 1)))
        counter.add_range(start, stop)
        for i in range(start, stop):
            plain[i] += 1
        if stop == len(plain):
            tail += 1
    assert [counter.get(i) for i in range(len(plain))] == plain
