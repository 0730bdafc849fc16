"""The structured device allocator: kube-scheduler's device choices, with every rejection recorded.

Public API::

    allocate(node=..., slices=..., classes=..., claims=..., features=...) -> AllocationOutcome
    allocate_snapshot(snapshot, node, features=...)  # the same, on a ClusterSnapshot
    Inventory(slices, classes)      # reusable index for many calls (simulator, benchmarks)

See ``README.md`` in this package for which upstream version each behaviour follows.
"""

from drakit.allocator.inventory import Inventory
from drakit.allocator.search import AllocationOutcome, SearchStats, allocate, allocate_snapshot
from drakit.allocator.state import AllocatedState, has_allocation

__all__ = [
    "AllocatedState",
    "AllocationOutcome",
    "Inventory",
    "SearchStats",
    "allocate",
    "allocate_snapshot",
    "has_allocation",
]
