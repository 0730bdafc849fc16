"""Lanes: identical waiting pods that share one failed attempt (the backlog fast path).

A run retries every unschedulable pod whenever something is freed, in creation order, and
the scheduler already reuses a failed attempt for an identical pod while the cluster has not
changed (``Scheduler.valid_failure``).  With a backlog of N identical pods and a release per
finished pod, that is still N pops, N reuses and N pushes per release: quadratic.

A lane holds the waiting pods of one signature whose claims all come from templates (so
nothing but their own scheduling changes their claims), in creation order.  When the
scheduler's remembered failure for the signature is valid and every member already carries
its message, the members up to the next entry of the scheduling queue would each just count
one more attempt: the lane records that as one range increment (``RangeCounter``) instead
of visiting them.  Any other case -- the cluster changed, a member's message differs --
visits members one by one through the normal path.  Results are byte-identical to the
plain queue (``SimOptions(fast=False)``, held to it by ``tests/unit/sim/test_fast_equivalence.py``).
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Hashable

from drakit.sim.cluster import SimPod

COMPACT_SLACK = 32
"""A lane is rebuilt without its bound members once they outnumber twice the live ones plus this."""


class RangeCounter:
    """Counts per position, incremented over ranges: a growing Fenwick tree of differences."""

    __slots__ = ("_diff", "_tree")

    def __init__(self) -> None:
        self._diff: list[int] = []
        self._tree = [0] * 17

    def __len__(self) -> int:
        return len(self._diff)

    def append(self) -> int:
        """Add a position; returns it.  Its count starts at whatever ranges reaching the end added."""
        self._diff.append(0)
        if len(self._diff) >= len(self._tree):
            size = 2 * len(self._tree)
            tree = [0] * size
            for i, d in enumerate(self._diff, 1):  # the linear Fenwick build
                tree[i] += d
                j = i + (i & -i)
                if j < size:
                    tree[j] += tree[i]
            self._tree = tree
        return len(self._diff) - 1

    def add_range(self, start: int, stop: int) -> None:
        """+1 for positions ``start <= i < stop`` (and, for ``stop == len``, later ones)."""
        self._add(start, 1)
        if stop < len(self._diff):
            self._add(stop, -1)

    def _add(self, i: int, value: int) -> None:
        self._diff[i] += value
        tree = self._tree
        i += 1
        while i < len(tree):
            tree[i] += value
            i += i & -i

    def get(self, i: int) -> int:
        tree = self._tree
        total = 0
        i += 1
        while i > 0:
            total += tree[i]
            i -= i & -i
        return total


class Lane:
    """Waiting pods of one signature, in creation order; see the module docstring."""

    __slots__ = ("alive", "base", "cursor", "first", "gen", "hits", "messages", "pods", "seqs", "signature")

    def __init__(self, signature: Hashable) -> None:
        self.signature = signature
        self.pods: list[SimPod] = []
        self.seqs: list[int] = []
        self.hits = RangeCounter()
        self.base: list[int] = []  # each member's count when it joined
        self.first = 0  # no live member before this position
        self.cursor = 0  # next position to visit in the current pass
        self.gen = 0  # queue entries of older generations are stale
        self.messages: Counter[tuple[str, str]] = Counter()  # (message, reason) of live members
        self.alive = 0

    def accepts(self, pod: SimPod) -> bool:
        """Members stay in creation order: only a pod created after every member may join."""
        return not self.seqs or pod.seq > self.seqs[-1]

    def join(self, pod: SimPod) -> None:
        pos = self.hits.append()
        self.pods.append(pod)
        self.seqs.append(pod.seq)
        self.base.append(self.hits.get(pos))
        pod.lane, pod.lane_pos = self, pos
        self.messages[(pod.message, pod.reason)] += 1
        self.alive += 1

    def settle(self, pod: SimPod) -> None:
        """Fold the attempts counted for ``pod`` by ranges into ``pod.attempts``."""
        pos = pod.lane_pos
        pod.attempts += self.hits.get(pos) - self.base[pos]
        self.base[pos] = self.hits.get(pos)

    def leave(self, pod: SimPod) -> None:
        """``pod`` was bound: settle it and stop counting it."""
        self.settle(pod)
        self.messages[(pod.message, pod.reason)] -= 1
        if not self.messages[(pod.message, pod.reason)]:
            del self.messages[(pod.message, pod.reason)]
        self.alive -= 1
        pod.lane = None

    def relabel(self, old: tuple[str, str], new: tuple[str, str]) -> None:
        """A member's message changed after a visit."""
        if old == new:
            return
        self.messages[old] -= 1
        if not self.messages[old]:
            del self.messages[old]
        self.messages[new] += 1

    def uniform(self) -> tuple[str, str] | None:
        """The (message, reason) every live member carries, if they all carry the same."""
        if len(self.messages) != 1:
            return None
        return next(iter(self.messages))

    def rewind(self) -> int:
        """Start a pass at the first live member (compacting when dead members pile up); its seq."""
        pods = self.pods
        while self.first < len(pods) and pods[self.first].lane is not self:
            self.first += 1
        if len(pods) - self.first > 2 * self.alive + COMPACT_SLACK:
            self._compact()
        self.cursor = self.first
        self.gen += 1
        return self.seqs[self.first]

    def _compact(self) -> None:
        live = [p for p in self.pods[self.first :] if p.lane is self]
        for p in live:
            self.settle(p)
        self.pods, self.seqs, self.base, self.hits, self.first = [], [], [], RangeCounter(), 0
        for p in live:
            pos = self.hits.append()
            self.pods.append(p)
            self.seqs.append(p.seq)
            self.base.append(0)
            p.lane_pos = pos

    def skip_dead(self) -> int:
        """Move the cursor to the next live member; its position (``len`` when none is left)."""
        pods, i = self.pods, self.cursor
        while i < len(pods) and pods[i].lane is not self:
            i += 1
        self.cursor = i
        return i

    def count_until(self, seq: int) -> int:
        """One more attempt for every member from the cursor up to (not including) ``seq``; the new cursor."""
        stop = bisect_left(self.seqs, seq, self.cursor)
        if stop > self.cursor:
            self.hits.add_range(self.cursor, stop)
        self.cursor = stop
        return stop

    def settle_all(self) -> None:
        for p in self.pods[self.first :]:
            if p.lane is self:
                self.settle(p)
