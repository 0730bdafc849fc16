"""The seam between run records and where they are kept; the SQL store and the in-memory twin implement it."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Protocol

from drakit.outcomes import Reason
from drakit.records.compare import By, Group
from drakit.records.run import Run, RunClaim, RunDevice, RunEnv, RunRecord, RunResult, RunState

__all__ = ["RecordStore"]


class RecordStore(Protocol):
    def create(self, run: Run) -> None:
        """Record a new run (state *submitted*); refused with ``RunExists`` if its ID is taken."""
        ...

    def import_records(self, records: Iterable[RunRecord]) -> int:
        """Write whole records in one transaction (all or none); returns how many."""
        ...

    def advance(
        self,
        run_id: str,
        to: RunState,
        *,
        at: datetime | None = None,
        reason: Reason | None = None,
        claim: RunClaim | None = None,
        devices: tuple[RunDevice, ...] = (),
        result: RunResult | None = None,
    ) -> Run:
        """Move a run to ``to`` together with what that step carries, all or nothing.

        ``at`` defaults to the store's clock read while the run is locked, so concurrent writers
        never record time going backwards.
        """
        ...

    def record_env(self, run_id: str, env: RunEnv) -> None:
        """Record (or replace) the environment seen inside the run's container."""
        ...

    def get(self, run_id: str) -> RunRecord:
        """Everything recorded about one run; raises NotFound."""
        ...

    def runs(self, *, state: RunState | None = None, limit: int | None = None) -> tuple[Run, ...]:
        """Runs oldest first (by submission time, then ID)."""
        ...

    def records(self, *, state: RunState | None = None, limit: int | None = None) -> tuple[RunRecord, ...]:
        """The whole records of :meth:`runs`, in its order, read at once (``get`` per run is N round trips)."""
        ...

    def compare(self, by: By | str, metric: str = "runtime") -> tuple[Group, ...]:
        """``records.compare`` over every run in the store."""
        ...
