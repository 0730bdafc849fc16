"""The in-memory twin of the SQL store: same contract, one lock, no database."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import UTC, datetime

from drakit.errors import NotFound
from drakit.outcomes import Reason
from drakit.records.compare import By, Group, compare
from drakit.records.run import (
    RecordCode,
    RecordRejected,
    Refusal,
    Run,
    RunClaim,
    RunDevice,
    RunEnv,
    RunRecord,
    RunResult,
    RunState,
    check_step,
)

__all__ = ["MemoryRecordStore", "run_exists", "run_not_found", "utc_now"]


def utc_now() -> datetime:
    return datetime.now(UTC)


def run_exists(run_id: str) -> RecordRejected:
    return RecordRejected(Refusal(RecordCode.RUN_EXISTS, "id", f"run {run_id} is already recorded", "use a new ID"))


def run_not_found(run_id: str) -> NotFound:
    return NotFound(f"run {run_id} not found in the store")


class MemoryRecordStore:
    def __init__(self, now: Callable[[], datetime] = utc_now) -> None:
        self._now = now
        self._lock = threading.Lock()
        self._records: dict[str, RunRecord] = {}

    def create(self, run: Run) -> None:
        run.check()
        with self._lock:
            if run.id in self._records:
                raise run_exists(run.id)
            self._records[run.id] = RunRecord(run)

    def import_records(self, records: Iterable[RunRecord]) -> int:
        batch = list(records)
        for record in batch:
            record.check()
        with self._lock:
            taken = [r.run.id for r in batch if r.run.id in self._records]
            if taken or len({r.run.id for r in batch}) < len(batch):
                raise run_exists((taken or [r.run.id for r in batch])[0])
            self._records.update((r.run.id, r) for r in batch)
        return len(batch)

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
        check_step(to, claim, devices, result)
        with self._lock:
            record = self._get(run_id)
            run = record.run.advance(to, at or self._now(), reason=reason)
            record = replace(record, run=run)
            if claim is not None or devices:
                record = replace(record, claim=claim, devices=devices)
            if result is not None:
                record = replace(record, result=result)
            self._records[run_id] = record
            return run

    def record_env(self, run_id: str, env: RunEnv) -> None:
        env.check()
        with self._lock:
            self._records[run_id] = replace(self._get(run_id), env=env)

    def get(self, run_id: str) -> RunRecord:
        with self._lock:
            return self._get(run_id)

    def _get(self, run_id: str) -> RunRecord:
        try:
            return self._records[run_id]
        except KeyError:
            raise run_not_found(run_id) from None

    def runs(self, *, state: RunState | None = None, limit: int | None = None) -> tuple[Run, ...]:
        return tuple(r.run for r in self.records(state=state, limit=limit))

    def records(self, *, state: RunState | None = None, limit: int | None = None) -> tuple[RunRecord, ...]:
        with self._lock:
            records = sorted(self._records.values(), key=lambda r: (r.run.transitions[0].at, r.run.id))
        chosen = [r for r in records if state is None or r.run.state is state]
        return tuple(chosen if limit is None else chosen[:limit])

    def compare(self, by: By | str, metric: str = "runtime") -> tuple[Group, ...]:
        with self._lock:
            records = list(self._records.values())
        return compare(records, by, metric)
