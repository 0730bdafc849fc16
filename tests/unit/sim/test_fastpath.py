"""Fenwick trees of the fast scheduler path against a plain list of marks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drakit.sim.fastpath import Fenwick, union_kth, union_prefix


@st.composite
def marked(draw: st.DrawFn) -> tuple[int, list[list[int]]]:
    """A size and up to three disjoint sets of marked positions (as 0/1 lists)."""
    n = draw(st.integers(1, 70))
    owner = draw(st.lists(st.integers(-1, 2), min_size=n, max_size=n))
    return n, [[1 if o == t else 0 for o in owner] for t in range(3)]


def _tree(n: int, marks: list[int], *, from_ones: bool) -> Fenwick:
    if from_ones:
        tree = Fenwick(n, ones=True)
        for i, m in enumerate(marks):
            if not m:
                tree.add(i, -1)
    else:
        tree = Fenwick(n)
        for i, m in enumerate(marks):
            if m:
                tree.add(i, 1)
    return tree


@given(marked(), st.booleans())
def test_prefix_count_kth_first_in(case: tuple[int, list[list[int]]], from_ones: bool) -> None:
    n, sets = case
    marks = sets[0]
    tree = _tree(n, marks, from_ones=from_ones)
    assert tree.total == sum(marks)
    for end in range(n + 1):
        assert tree.prefix(end) == sum(marks[:end])
    positions = [i for i, m in enumerate(marks) if m]
    for k, pos in enumerate(positions, 1):
        assert tree.kth(k) == pos
    for lo in range(n + 1):
        for hi in range(lo, n + 1):
            assert tree.count(lo, hi) == sum(marks[lo:hi])
            want = next((i for i in range(lo, hi) if marks[i]), -1)
            assert tree.first_in(lo, hi) == want


@given(marked())
def test_union_of_disjoint_trees(case: tuple[int, list[list[int]]]) -> None:
    n, sets = case
    trees = [_tree(n, m, from_ones=False) for m in sets]
    union = [max(col) for col in zip(*sets, strict=True)]
    for end in range(n + 1):
        assert union_prefix(trees, end) == sum(union[:end])
    positions = [i for i, m in enumerate(union) if m]
    for k, pos in enumerate(positions, 1):
        assert union_kth(trees, k) == pos


@pytest.mark.parametrize("n", [pytest.param(1, id="one"), pytest.param(8, id="power-of-two"), pytest.param(13, id="odd")])
def test_all_ones_tree_matches_one_by_one(n: int) -> None:
    built = Fenwick(n, ones=True)
    added = Fenwick(n)
    for i in range(n):
        added.add(i, 1)
    assert built.tree == added.tree and built.total == added.total == n
