"""The structured device allocator: kube-scheduler's device choices, with every rejection recorded.

Public API::

    allocate(node=..., slices=..., classes=..., claims=..., features=...) -> AllocationOutcome
    Inventory(slices, classes)      # reusable index for many calls (simulator, benchmarks)

See ``README.md`` in this package for which upstream version each behaviour follows.
"""

from drakit.allocator.inventory import Inventory
from drakit.allocator.search import AllocationOutcome, SearchStats, allocate
from drakit.allocator.state import AllocatedState, has_allocation

__all__ = ["AllocatedState", "AllocationOutcome", "Inventory", "SearchStats", "allocate", "has_allocation"]
