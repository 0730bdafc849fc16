"""The durable QueueLedger: reservations in the store's database, checked and written in one transaction.

Concurrent submitters (threads, processes, machines sharing a PostgreSQL) must never exceed a
quota or a concurrency limit together, so the check and the insert happen under one lock per
cohort tree (borrowing makes every queue of a tree share quota): on SQLite the engine's
``BEGIN IMMEDIATE`` takes the database's write lock before the first read; on PostgreSQL
``SELECT … FOR UPDATE`` on the tree's row in ``queue_locks`` serialises reservations of that
tree and lets other trees proceed.  The decision itself is :func:`drakit.queues.ledger.decide`,
the same one the in-memory twin makes.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from sqlalchemy import Engine, Row, delete, insert, select
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from drakit.queues.admission import Setup
from drakit.queues.ledger import RefusalCode, Refused, Reserved, decide
from drakit.queues.quota import QuotaTree
from drakit.store.engine import StoreError, first_line, make_engine, shown, upgrade
from drakit.store.tables import QueueLockRow, ReservationRow

__all__ = ["SqlQueueLedger", "open_ledger"]

_COLUMNS = select(ReservationRow.run_id, ReservationRow.queue, ReservationRow.demand, ReservationRow.reserved_at)


def open_ledger(setup: Setup, url: str | None = None) -> SqlQueueLedger:
    """The ledger in the store at ``url`` (or ``$DRAKIT_STORE``), migrated to the newest schema."""
    engine = make_engine(url)
    upgrade(engine)
    return SqlQueueLedger(engine, setup)


def _utc(at: datetime) -> datetime:
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


class SqlQueueLedger:
    def __init__(self, engine: Engine, setup: Setup) -> None:
        self.engine = engine
        self.setup = setup
        tree = QuotaTree(((cq.name, cq.cohort, cq.quotas) for cq in setup.cluster_queues),
                         ((c.name, c.parent, c.quotas) for c in setup.cohorts))
        self._root = {cq.name: tree.root_of(cq.name) for cq in setup.cluster_queues}
        self._members = {root: tree.queues_under(root) for root in set(self._root.values())}
        self._ensure_locks()

    def _ensure_locks(self) -> None:
        try:
            with self.engine.begin() as c:
                have = set(c.scalars(select(QueueLockRow.name)))
                missing = sorted(set(self._members) - have)
                if missing:
                    c.execute(insert(QueueLockRow), [{"name": n} for n in missing])
        except IntegrityError:
            pass  # another process created them first
        except SQLAlchemyError as e:
            raise StoreError(f"store {shown(self.engine.url)}: {first_line(e)}") from None

    def reserve(self, queue: str, run_id: str, demand: Mapping[str, int], now: datetime) -> Reserved | Refused:
        root = self._root.get(queue)
        if root is None:
            refused = decide(self.setup, (), queue, run_id, demand)  # the unknown-queue refusal
            assert isinstance(refused, Refused)
            return refused
        try:
            with self.engine.begin() as c:
                if self.engine.dialect.name == "postgresql":
                    c.execute(select(QueueLockRow.name).where(QueueLockRow.name == root).with_for_update())
                existing = c.execute(_COLUMNS.where(ReservationRow.run_id == run_id)).one_or_none()
                if existing is not None:
                    return self._existing(existing, queue, run_id)
                rows = c.execute(_COLUMNS.where(ReservationRow.queue.in_(self._members[root]))).all()
                held = [Reserved(r.run_id, r.queue, r.demand, _utc(r.reserved_at)) for r in rows]
                outcome = decide(self.setup, held, queue, run_id, demand)
                if isinstance(outcome, Refused):
                    return outcome
                at = _utc(now)
                c.execute(insert(ReservationRow).values(run_id=run_id, queue=queue, demand=outcome, reserved_at=at))
                return Reserved(run_id, queue, outcome, at)
        except IntegrityError:
            # The same run reserved at the same moment in another cohort tree: the first one won.
            with self.engine.connect() as c:
                row = c.execute(_COLUMNS.where(ReservationRow.run_id == run_id)).one()
            return self._existing(row, queue, run_id)
        except SQLAlchemyError as e:
            raise StoreError(f"store {shown(self.engine.url)}: {first_line(e)}") from None

    def _existing(self, row: Row[str, str, dict[str, int], datetime], queue: str, run_id: str) -> Reserved | Refused:
        if row.queue != queue:
            return Refused(run_id, queue, RefusalCode.DUPLICATE,
                           f"run {run_id} already holds a reservation in queue {row.queue}", retry=False)
        return Reserved(run_id, row.queue, row.demand, _utc(row.reserved_at))

    def release(self, run_id: str) -> bool:
        try:
            with self.engine.begin() as c:
                return c.execute(delete(ReservationRow).where(ReservationRow.run_id == run_id)).rowcount > 0
        except SQLAlchemyError as e:
            raise StoreError(f"store {shown(self.engine.url)}: {first_line(e)}") from None

    def held(self, queue: str | None = None) -> tuple[Reserved, ...]:
        stmt = _COLUMNS.order_by(ReservationRow.reserved_at, ReservationRow.run_id)
        if queue is not None:
            stmt = stmt.where(ReservationRow.queue == queue)
        try:
            with self.engine.connect() as c:
                rows = c.execute(stmt).all()
        except SQLAlchemyError as e:
            raise StoreError(f"store {shown(self.engine.url)}: {first_line(e)}") from None
        return tuple(Reserved(r.run_id, r.queue, r.demand, _utc(r.reserved_at)) for r in rows)
