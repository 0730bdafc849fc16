"""Kueue's quota tree: nominal quota, lending and borrowing limits, usage bubbling up cohorts.

Each ClusterQueue and each cohort is a node.  A node's *subtree quota* is its own nominal quota
plus what its children lend up (their subtree quota less what their lending limit keeps at home);
a child's usage beyond what it keeps at home is charged to its parent.  ``available`` walks up
from a ClusterQueue, capping what each parent offers by the child's borrowing limit.  This is
Kueue v0.19.2's ``resource_node.go`` arithmetic on plain integers (quantities in their canonical
unit: millicores for cpu, bytes for memory, devices or counter units for DRA resources).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = ["FlavorResource", "QuotaTree", "ResourceQuota"]

FlavorResource = tuple[str, str]  # (flavor, resource)


@dataclass(frozen=True)
class ResourceQuota:
    nominal: int
    borrowing_limit: int | None = None
    lending_limit: int | None = None


@dataclass
class _Node:
    name: str
    parent: str | None
    quotas: Mapping[FlavorResource, ResourceQuota]
    is_queue: bool
    subtree: dict[FlavorResource, int] = field(default_factory=dict)
    usage: dict[FlavorResource, int] = field(default_factory=dict)
    children: list[str] = field(default_factory=list)


class QuotaTree:
    """Quotas and usage of ClusterQueues (``cq/NAME``) and cohorts (``cohort/NAME``); cheap to copy."""

    def __init__(self, queues: Iterable[tuple[str, str | None, Mapping[FlavorResource, ResourceQuota]]],
                 cohorts: Iterable[tuple[str, str | None, Mapping[FlavorResource, ResourceQuota]]] = ()) -> None:
        self._nodes: dict[str, _Node] = {}
        for name, parent, quotas in cohorts:
            self._nodes[_c(name)] = _Node(_c(name), _c(parent) if parent else None, quotas, False)
        for name, parent, quotas in queues:
            self._nodes[_q(name)] = _Node(_q(name), _c(parent) if parent else None, quotas, True)
        for node in list(self._nodes.values()):
            if node.parent and node.parent not in self._nodes:  # a cohort named only by its members
                self._nodes[node.parent] = _Node(node.parent, None, {}, False)
        for node in self._nodes.values():
            if node.parent:
                self._nodes[node.parent].children.append(node.name)
        for root in [n for n in self._nodes.values() if n.parent is None]:
            self._accumulate(root)

    def _accumulate(self, node: _Node) -> None:
        node.subtree = {fr: q.nominal for fr, q in node.quotas.items()}
        for child_name in node.children:
            child = self._nodes[child_name]
            self._accumulate(child)
            for fr, q in child.subtree.items():
                node.subtree[fr] = node.subtree.get(fr, 0) + q - self._local(child, fr)

    def copy(self) -> QuotaTree:
        twin = QuotaTree.__new__(QuotaTree)
        twin._nodes = {k: _Node(n.name, n.parent, n.quotas, n.is_queue, n.subtree, dict(n.usage), n.children)
                       for k, n in self._nodes.items()}
        return twin

    # -- reads -----------------------------------------------------------------------------

    def _local(self, node: _Node, fr: FlavorResource) -> int:
        """What the node keeps for its own subtree (never lent): subtree quota less the lending limit."""
        q = node.quotas.get(fr)
        if q is not None and q.lending_limit is not None:
            return max(0, node.subtree.get(fr, 0) - q.lending_limit)
        return 0

    def _local_available(self, node: _Node, fr: FlavorResource) -> int:
        return max(0, self._local(node, fr) - node.usage.get(fr, 0))

    def _available(self, node: _Node, fr: FlavorResource) -> int:
        if node.parent is None:
            return node.subtree.get(fr, 0) - node.usage.get(fr, 0)
        from_parent = self._available(self._nodes[node.parent], fr)
        q = node.quotas.get(fr)
        if q is not None and q.borrowing_limit is not None:
            local = self._local(node, fr)
            stored = node.subtree.get(fr, 0) - local
            used = max(0, node.usage.get(fr, 0) - local)
            from_parent = min(stored - used + q.borrowing_limit, from_parent)
        return self._local_available(node, fr) + from_parent

    def _potential(self, node: _Node, fr: FlavorResource) -> int:
        if node.parent is None:
            return node.subtree.get(fr, 0)
        avail = self._local(node, fr) + self._potential(self._nodes[node.parent], fr)
        q = node.quotas.get(fr)
        if q is not None and q.borrowing_limit is not None:
            avail = min(node.subtree.get(fr, 0) + q.borrowing_limit, avail)
        return avail

    def available(self, queue: str, fr: FlavorResource) -> int:
        """Unused quota the ClusterQueue may take now, borrowing included (never negative)."""
        return max(0, self._available(self._nodes[_q(queue)], fr))

    def potential(self, queue: str, fr: FlavorResource) -> int:
        """The most the ClusterQueue could ever hold of ``fr`` (an empty cluster, limits respected)."""
        return self._potential(self._nodes[_q(queue)], fr)

    def usage(self, queue: str, fr: FlavorResource) -> int:
        return self._nodes[_q(queue)].usage.get(fr, 0)

    def nominal(self, queue: str, fr: FlavorResource) -> int:
        q = self._nodes[_q(queue)].quotas.get(fr)
        return q.nominal if q else 0

    def quota(self, queue: str, fr: FlavorResource) -> ResourceQuota | None:
        return self._nodes[_q(queue)].quotas.get(fr)

    def has_parent(self, queue: str) -> bool:
        return self._nodes[_q(queue)].parent is not None

    def borrowing_with(self, queue: str, fr: FlavorResource, val: int) -> bool:
        return self.nominal(queue, fr) < self.usage(queue, fr) + val

    def borrow_height(self, queue: str, fr: FlavorResource, val: int) -> tuple[int, bool]:
        """Height of the lowest cohort subtree that fits ``val`` more, and whether it is below the root.

        Kueue's ``FindHeightOfLowestSubtreeThatFits``: 0 when the queue's own nominal quota
        suffices; entries that borrow less are admitted first within a cycle.
        """
        node = self._nodes[_q(queue)]
        if not self.borrowing_with(queue, fr, val) or node.parent is None:
            return 0, node.parent is not None
        remaining = val - self._local_available(node, fr)
        tracking = self._nodes[node.parent]
        while True:
            if tracking.subtree.get(fr, 0) >= tracking.usage.get(fr, 0) + remaining:
                return self._height(tracking), tracking.parent is not None
            remaining -= self._local_available(tracking, fr)
            if tracking.parent is None:
                return self._height(tracking), False
            tracking = self._nodes[tracking.parent]

    def _height(self, cohort: _Node) -> int:
        height = min(len(cohort.children), 1)
        for child in cohort.children:
            node = self._nodes[child]
            if not node.is_queue:
                height = max(height, self._height(node) + 1)
        return height

    def root_of(self, queue: str) -> str:
        """The top of the queue's cohort tree (``cohort/NAME``), or the queue itself (``cq/NAME``)."""
        node = self._nodes[_q(queue)]
        while node.parent is not None:
            node = self._nodes[node.parent]
        return node.name

    def queues_under(self, root: str) -> list[str]:
        """The ClusterQueue names in the tree whose top is ``root``."""
        out: list[str] = []
        stack = [root]
        while stack:
            node = self._nodes[stack.pop()]
            if node.is_queue:
                out.append(node.name[3:])
            stack.extend(node.children)
        return sorted(out)

    def borrowed(self, queue: str, fr: FlavorResource) -> int:
        """Usage beyond nominal quota (what the queue holds of other queues' quota)."""
        return max(0, self.usage(queue, fr) - self.nominal(queue, fr))

    def fits(self, queue: str, usage: Mapping[FlavorResource, int]) -> bool:
        return all(self.available(queue, fr) >= v for fr, v in usage.items())

    # -- writes ----------------------------------------------------------------------------

    def add(self, queue: str, usage: Mapping[FlavorResource, int]) -> None:
        for fr, val in usage.items():
            self._add(self._nodes[_q(queue)], fr, val)

    def _add(self, node: _Node, fr: FlavorResource, val: int) -> None:
        local = self._local_available(node, fr)
        node.usage[fr] = node.usage.get(fr, 0) + val
        if node.parent is not None and val > local:
            self._add(self._nodes[node.parent], fr, val - local)

    def remove(self, queue: str, usage: Mapping[FlavorResource, int]) -> None:
        for fr, val in usage.items():
            self._remove(self._nodes[_q(queue)], fr, val)

    def _remove(self, node: _Node, fr: FlavorResource, val: int) -> None:
        stored_in_parent = node.usage.get(fr, 0) - self._local(node, fr)
        node.usage[fr] = node.usage.get(fr, 0) - val
        if stored_in_parent <= 0 or node.parent is None:
            return
        self._remove(self._nodes[node.parent], fr, min(val, stored_in_parent))


def _q(name: str) -> str:
    return f"cq/{name}"


def _c(name: str) -> str:
    return f"cohort/{name}"
