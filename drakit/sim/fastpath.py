"""Per-shape node verdicts and Fenwick trees: the scheduler's Filter and Score without a node loop.

Why this exists: kube-scheduler filters nodes one by one from a round-robin start index until
it has ``numFeasibleNodesToFind`` of them (500 at 5,000 nodes) and then scores those.  Done
literally in Python that is 1-2 ms per pod however well each node's answer is cached.  But a
node's verdict for a pod depends only on the pod's *shape* -- cpu, memory, the specs of its
unallocated claims and the identity of the allocated claims it shares -- and on the node's
state, which changes only when a pod is bound to it or leaves, or when a claim on one of its
pools is allocated or released (:attr:`SimCluster.changes` logs exactly those nodes).  So per
shape we keep every node's verdict and a few Fenwick trees over node positions:

* ``stale``: nodes whose verdict is unknown (never computed, or the node changed since);
* ``feasible``: nodes known to pass every filter;
* ``dra_rejected``: nodes the DynamicResources filter rejected (the allocator found no devices,
  or it did but an allocated claim of the pod is not available there); for a shape with claims
  to allocate every one of them reached the allocator, so with ``feasible`` this gives the node
  loop's "cached answers" count;
* one tree per *score class* of feasible nodes: for one shape, a node's score is a function
  of its resource state (NodeResourcesFit, BalancedAllocation) plus its raw DynamicResources
  score, normalised over the examined nodes; nodes with the same (resource score, raw DRA
  score) are one class, so Score is computed once per class and the tie-break draw picks a
  position among the best classes' nodes in scan order.

"The first K feasible nodes from index s, and how many nodes were examined to find them" is
then a walk that alternates "count feasible nodes up to the next stale one" (O(log n)) and
"compute that stale node's verdict" (the same per-node code as the loop, so the allocator
sees exactly the same calls in the same order).  Stale nodes beyond the K-th feasible one are
left alone, as the node loop leaves them.

Hand-written rather than taken from a library: the standard library has no Fenwick tree, the
three operations needed (point update, prefix count, k-th set position, also over a union of
trees) are twenty lines, and the simulator has no dependency beyond the standard library.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Sequence

# Verdict codes (``ShapeIndex.code``).  NodeResourcesFit rejections are bit sets of the three
# reasons, plus UNRESOLVABLE when the request exceeds the node's allocatable cpu or memory (the
# node is then UnschedulableAndUnresolvable and preemption counts it as not helpful).
STALE = -1
FEASIBLE = 0
TOO_MANY_PODS = 1
INSUFFICIENT_CPU = 2
INSUFFICIENT_MEMORY = 4
NOT_AVAILABLE_CODE = 8
CANNOT_ALLOCATE_CODE = 16
UNRESOLVABLE = 32
NUM_CODES = 2 * UNRESOLVABLE
RESOURCE_BITS = TOO_MANY_PODS | INSUFFICIENT_CPU | INSUFFICIENT_MEMORY

MAX_CLASSES = 24
"""Above this many live score classes in one shape, scoring enumerates the window's feasible
nodes instead (still without calling Filter); per-class trees would cost more than they save."""

MAX_SHAPES = 32
"""Shape indexes kept (least recently used dropped first).  Each costs five lists of node
length plus one per live score class, so at most 32 x (5 + 24) x 8 bytes = 7.4 KiB per node,
inside the per-node allowance of the scenario memory estimate; typical runs use a few."""

INDEX_AFTER = 2
"""A shape gets an index the second time it is scheduled; one-off shapes (a pod's own shared
claim, a unique manifest) are cheaper through the plain node loop."""

_MAX_SEEN = 4096

ScoreClass = tuple[int, int]
"""(NodeResourcesFit + BalancedAllocation score for the shape's pod, raw DynamicResources score)."""


class Fenwick:
    """Counts of marked positions 0..n-1: point update, prefix count and k-th marked, O(log n)."""

    __slots__ = ("n", "top", "total", "tree")

    def __init__(self, n: int, *, ones: bool = False) -> None:
        self.n = n
        # tree[i] covers positions (i - lowbit(i), i]; all ones: tree[i] is lowbit(i).
        self.tree = [0] + [i & -i for i in range(1, n + 1)] if ones else [0] * (n + 1)
        self.total = n if ones else 0
        self.top = 1 << (n.bit_length() - 1) if n else 0

    def add(self, pos: int, delta: int) -> None:
        self.total += delta
        tree, n = self.tree, self.n
        i = pos + 1
        while i <= n:
            tree[i] += delta
            i += i & -i

    def prefix(self, end: int) -> int:
        """Marked positions in [0, end)."""
        tree = self.tree
        s = 0
        while end > 0:
            s += tree[end]
            end &= end - 1
        return s

    def count(self, lo: int, hi: int) -> int:
        """Marked positions in [lo, hi)."""
        return self.prefix(hi) - self.prefix(lo) if hi > lo else 0

    def kth(self, k: int) -> int:
        """Position of the k-th marked position (1-based k, ``1 <= k <= total``)."""
        tree, n = self.tree, self.n
        pos, step = 0, self.top
        while step:
            nxt = pos + step
            if nxt <= n and tree[nxt] < k:
                pos = nxt
                k -= tree[nxt]
            step >>= 1
        return pos

    def first_in(self, lo: int, hi: int) -> int:
        """The first marked position in [lo, hi), or -1."""
        if self.total == 0 or hi <= lo:
            return -1
        before = self.prefix(lo)
        if before >= self.total:
            return -1
        pos = self.kth(before + 1)
        return pos if pos < hi else -1


def union_prefix(trees: Sequence[Fenwick], end: int) -> int:
    return sum(t.prefix(end) for t in trees)


def union_kth(trees: Sequence[Fenwick], k: int) -> int:
    """Position of the k-th position marked in any of ``trees`` (their marks are disjoint)."""
    first = trees[0]
    n = first.n
    arrays = [t.tree for t in trees]
    pos, step = 0, first.top
    while step:
        nxt = pos + step
        if nxt <= n:
            here = 0
            for a in arrays:
                here += a[nxt]
            if here < k:
                pos = nxt
                k -= here
        step >>= 1
    return pos


class ShapeIndex:
    """Every node's verdict for one pod shape, with the trees described in the module docstring."""

    __slots__ = (
        "base_memo",
        "class_count",
        "class_ids",
        "class_key",
        "class_trees",
        "classes_on",
        "code",
        "dra_rejected",
        "epoch",
        "feasible",
        "klass",
        "log_pos",
        "n",
        "next_cid",
        "reasons",
        "stale",
    )

    def __init__(self, n: int, epoch: int, log_pos: int) -> None:
        self.n = n
        self.reset(epoch, log_pos)

    def reset(self, epoch: int, log_pos: int) -> None:
        """Forget every verdict (a shared pool changed, or the change log was trimmed past us)."""
        n = self.n
        self.epoch = epoch
        self.log_pos = log_pos
        self.code = [STALE] * n
        self.klass = [0] * n
        self.stale = Fenwick(n, ones=True)
        self.feasible = Fenwick(n)
        self.dra_rejected = Fenwick(n)
        # reasons[code] = nodes with that verdict code (for PostFilter's histogram)
        self.reasons = [0] * NUM_CODES
        # node resource state -> base score for this shape's pod (see scheduler.base_score)
        self.base_memo: dict[tuple[int, ...], int] = {}
        self.classes_on = True
        self.class_ids: dict[ScoreClass, int] = {}
        self.class_key: dict[int, ScoreClass] = {}
        self.class_trees: dict[int, Fenwick] = {}
        self.class_count: dict[int, int] = {}
        self.next_cid = 0

    def invalidate(self, pos: int) -> None:
        code = self.code[pos]
        if code == STALE:
            return
        self.code[pos] = STALE
        self.stale.add(pos, 1)
        self.reasons[code] -= 1
        if code == FEASIBLE:
            self.feasible.add(pos, -1)
            if self.classes_on:
                cid = self.klass[pos]
                self.class_trees[cid].add(pos, -1)
                left = self.class_count[cid] - 1
                if left:
                    self.class_count[cid] = left
                else:
                    # Drop empty classes so that the live ones stay few.
                    del self.class_count[cid], self.class_trees[cid]
                    del self.class_ids[self.class_key.pop(cid)]
        elif code in (CANNOT_ALLOCATE_CODE, NOT_AVAILABLE_CODE):
            self.dra_rejected.add(pos, -1)

    def set(self, pos: int, code: int, score: ScoreClass | None = None) -> None:
        """Record a freshly computed verdict for a stale node (``score`` for feasible ones)."""
        self.code[pos] = code
        self.stale.add(pos, -1)
        self.reasons[code] += 1
        if code != FEASIBLE:
            if code in (CANNOT_ALLOCATE_CODE, NOT_AVAILABLE_CODE):
                self.dra_rejected.add(pos, 1)
            return
        self.feasible.add(pos, 1)
        if not self.classes_on or score is None:
            return
        cid = self.class_ids.get(score)
        if cid is None:
            if len(self.class_ids) >= MAX_CLASSES:
                self._classes_off()
                return
            cid = self.next_cid
            self.next_cid += 1
            self.class_ids[score] = cid
            self.class_key[cid] = score
            self.class_trees[cid] = Fenwick(self.n)
            self.class_count[cid] = 0
        self.klass[pos] = cid
        self.class_trees[cid].add(pos, 1)
        self.class_count[cid] += 1

    def _classes_off(self) -> None:
        self.classes_on = False
        self.class_ids, self.class_key, self.class_trees, self.class_count = {}, {}, {}, {}


class ShapeIndexes:
    """The shape indexes of one run: least recently used kept, synced with the cluster's change log."""

    def __init__(self, num_nodes: int) -> None:
        self.n = num_nodes
        self.shapes: OrderedDict[Hashable, ShapeIndex] = OrderedDict()
        self.seen: dict[Hashable, int] = {}

    def get(self, shape: Hashable, changes: list[int], base: int, epoch: int) -> ShapeIndex | None:
        """The index for ``shape``, brought up to date; None while the shape is too new to index."""
        idx = self.shapes.get(shape)
        if idx is None:
            seen = self.seen.get(shape, 0) + 1
            if seen < INDEX_AFTER:
                if len(self.seen) >= _MAX_SEEN:
                    self.seen.clear()
                self.seen[shape] = seen
                return None
            self.seen.pop(shape, None)
            idx = ShapeIndex(self.n, epoch, base + len(changes))
            self.shapes[shape] = idx
            if len(self.shapes) > MAX_SHAPES:
                self.shapes.popitem(last=False)
            return idx
        self.shapes.move_to_end(shape)
        sync(idx, changes, base, epoch)
        return idx

    def compact(self, changes: list[int], base: int, epoch: int) -> int:
        """Bring every index up to date so that the change log can be emptied; returns the new base."""
        for idx in self.shapes.values():
            sync(idx, changes, base, epoch)
        return base + len(changes)


def sync(idx: ShapeIndex, changes: list[int], base: int, epoch: int) -> None:
    """Mark the nodes changed since ``idx`` last looked as stale."""
    if idx.epoch != epoch or idx.log_pos < base:
        idx.reset(epoch, base + len(changes))
        return
    start = idx.log_pos - base
    if start < len(changes):
        invalidate = idx.invalidate
        for pos in changes[start:]:
            invalidate(pos)
    idx.log_pos = base + len(changes)
