"""The one seam between the simulator and the allocator: "does this pod's claims fit on this node".

The simulator never allocates devices itself.  :class:`DrakitAllocator` hands every question
to :func:`drakit.allocator.allocate` with one :class:`~drakit.allocator.inventory.Inventory`
built per run and updated incrementally (``commit`` when the scheduler reserves a claim,
``release`` when a claim is deallocated), so no call rescans every slice.  Tests may pass
any object with the same three methods (an in-memory twin).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from drakit.clock import SYSTEM_CLOCK, Clock, IdSource, SeededIds
from drakit.features import Features


@dataclass(frozen=True)
class NodeFit:
    """The allocator's answer for one node: upstream's (results, error) pair as a value."""

    status: str  # "allocated" | "unsatisfiable" | "error"
    results: tuple[Mapping[str, Any], ...] = ()
    message: str = ""


class Allocator(Protocol):
    def fit(self, node: Mapping[str, Any], claims: Sequence[Mapping[str, Any]]) -> NodeFit:
        """Allocate ``claims`` together on ``node`` against the committed state; changes nothing."""
        ...

    def commit(self, claim: Mapping[str, Any]) -> None:
        """Mark the devices of an allocated claim (``status.allocation``) as in use."""
        ...

    def release(self, claim: Mapping[str, Any]) -> None:
        """Undo :meth:`commit`."""
        ...


class DrakitAllocator:
    """:class:`Allocator` backed by drakit's structured allocator and its reusable Inventory."""

    def __init__(
        self,
        slices: Sequence[Mapping[str, Any]],
        classes: Sequence[Mapping[str, Any]],
        features: Features,
        timeout: float | None = 10.0,
        *,
        clock: Clock = SYSTEM_CLOCK,
        ids: IdSource | None = None,
    ) -> None:
        from drakit.allocator import Inventory, allocate

        self._allocate = allocate
        self.slices = list(slices)
        self.classes = list(classes)
        self.features = features
        self.timeout = timeout
        self.clock = clock
        self.ids = ids if ids is not None else SeededIds()  # share IDs repeat from run to run
        self.inventory = Inventory(self.slices, self.classes)

    def fit(self, node: Mapping[str, Any], claims: Sequence[Mapping[str, Any]]) -> NodeFit:
        out = self._allocate(
            node=node,
            slices=self.slices,
            classes=self.classes,
            claims=list(claims),
            features=self.features,
            timeout=self.timeout,
            inventory=self.inventory,
            clock=self.clock,
            ids=self.ids,
        )
        return NodeFit(out.status, tuple(out.results), out.message)

    def commit(self, claim: Mapping[str, Any]) -> None:
        self.inventory.commit(claim, self.features)

    def release(self, claim: Mapping[str, Any]) -> None:
        self.inventory.release(claim, self.features)
