"""Simulations submitted over the API: checked at once, run in a bounded worker pool, polled, fetched.

A scenario is parsed in the request (so a broken one is a 422 naming its field path at once),
then its text is handed to a pool of ``workers`` processes: a simulation is seconds of pure
Python, which in a thread would hold the GIL and stall every other request of the server.
At most ``max_queued`` simulations wait; one more is refused (503 with Retry-After), never
queued without bound.  Each belongs to the team that submitted it; another team's is "not found".
Results are kept in memory (the newest ``keep``), not in the store: a simulation is a what-if,
reproducible from its scenario and seed.
"""

from __future__ import annotations

import multiprocessing
import secrets
import threading
from collections import OrderedDict
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from enum import StrEnum
from functools import partial
from typing import Any

from drakit.errors import DrakitError, InvalidInput, NotFound
from drakit.web.auth import Principal

__all__ = ["Busy", "SimState", "Simulation", "Simulations"]

MAX_MEMORY_MIB = 1024
"""A submitted scenario's estimated memory may not exceed 1 GiB, whatever its ``memoryLimitMiB``
says: the server shares its machine with every other request."""


class Busy(DrakitError):
    """Every worker is busy and the waiting line is full (503, retry later)."""


class SimState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


@dataclass(frozen=True)
class Simulation:
    id: str
    team: str
    name: str
    seed: int | None
    state: SimState
    submitted_at: datetime
    started_at: datetime | None = None
    ended_at: datetime | None = None
    error: str = ""
    report: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The status document (without the report, which is fetched on its own)."""
        def when(at: datetime | None) -> str | None:
            return at.isoformat() if at else None

        return {"id": self.id, "team": self.team, "scenario": self.name, "seed": self.seed, "state": self.state.value,
                "submittedAt": when(self.submitted_at), "startedAt": when(self.started_at),
                "endedAt": when(self.ended_at), "error": self.error or None,
                "report": f"/api/v1/simulations/{self.id}/report" if self.state == SimState.SUCCEEDED else None}


def _parse(text: str, source: str) -> Any:
    from drakit.sim.scenario import parse_scenario

    scenario = parse_scenario(text, source)
    scenario.check_memory()
    need = scenario.estimated_bytes() // (1024 * 1024)
    if need > MAX_MEMORY_MIB:
        raise InvalidInput(f"{source}: scenario needs an estimated {need} MiB, above this server's limit of "
                           f"{MAX_MEMORY_MIB} MiB for a submitted simulation: shrink it or run drakit simulate locally")
    return scenario


def run_text(text: str, source: str, seed: int | None) -> dict[str, Any]:
    """Parse and run one scenario; the report is ``drakit simulate -o json``'s document.  (Runs in a worker.)"""
    from drakit.sim import run_scenario

    scenario = _parse(text, source)
    return run_scenario(scenario, scenario.seed if seed is None else seed).to_json()


def _utc_now() -> datetime:
    return datetime.now(UTC)


class Simulations:
    """The bounded pool and the table of submitted simulations (thread-safe)."""

    def __init__(self, *, workers: int = 1, max_queued: int = 8, keep: int = 100, processes: bool = True) -> None:
        self.max_queued = max_queued
        self.keep = keep
        self._executor: Executor = (
            ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) if processes
            else ThreadPoolExecutor(workers, thread_name_prefix="drakit-sim")
        )
        self._lock = threading.Lock()
        self._sims: OrderedDict[str, Simulation] = OrderedDict()
        self._futures: dict[str, Future[dict[str, Any]]] = {}

    def submit(self, text: str, who: Principal, *, source: str = "scenario", seed: int | None = None) -> Simulation:
        """Check the scenario now (InvalidInput with its field paths), then queue it (Busy when full)."""
        scenario = _parse(text, source)
        with self._lock:
            waiting = sum(1 for s in self._sims.values() if s.state in (SimState.QUEUED, SimState.RUNNING))
            if waiting >= self.max_queued:
                raise Busy(f"{waiting} simulations are queued or running (at most {self.max_queued}); retry later")
            sim = Simulation(id=secrets.token_hex(8), team=who.team or "admin", name=scenario.name, seed=seed,
                             state=SimState.QUEUED, submitted_at=_utc_now())
            self._sims[sim.id] = sim
            while len(self._sims) > self.keep:
                oldest = next(iter(self._sims))
                if self._sims[oldest].state in (SimState.QUEUED, SimState.RUNNING):
                    break
                self._sims.popitem(last=False)
        future = self._executor.submit(run_text, text, source, seed)
        with self._lock:
            self._futures[sim.id] = future
        future.add_done_callback(partial(self._done, sim.id))
        return self.get(sim.id, who)

    def _set(self, sim_id: str, **changes: Any) -> None:
        with self._lock:
            if sim_id in self._sims:
                self._sims[sim_id] = replace(self._sims[sim_id], **changes)

    def _done(self, sim_id: str, future: Future[dict[str, Any]]) -> None:
        with self._lock:
            self._futures.pop(sim_id, None)
        if future.cancelled():
            self._set(sim_id, state=SimState.FAILED, ended_at=_utc_now(), error="cancelled: the server stopped")
            return
        error = future.exception()
        if error is None:
            self._set(sim_id, state=SimState.SUCCEEDED, ended_at=_utc_now(), report=future.result())
        else:
            first = str(error).splitlines()[0] if str(error) else type(error).__name__
            self._set(sim_id, state=SimState.FAILED, ended_at=_utc_now(), error=first)

    def _owned(self, sim: Simulation, who: Principal) -> bool:
        return who.admin or (not who.anonymous and sim.team == who.team)

    def _current(self, sim: Simulation) -> Simulation:
        """A queued simulation whose worker has picked it up reads as running (caller holds the lock)."""
        future = self._futures.get(sim.id)
        if sim.state == SimState.QUEUED and future is not None and future.running():
            sim = self._sims[sim.id] = replace(sim, state=SimState.RUNNING, started_at=_utc_now())
        return sim

    def get(self, sim_id: str, who: Principal) -> Simulation:
        with self._lock:
            sim = self._sims.get(sim_id)
            sim = self._current(sim) if sim is not None else None
        if sim is None or not self._owned(sim, who):
            raise NotFound(f"simulation {sim_id} not found")
        return sim

    def list(self, who: Principal) -> tuple[Simulation, ...]:
        with self._lock:
            return tuple(self._current(s) for s in list(self._sims.values()) if self._owned(s, who))

    def report(self, sim_id: str, who: Principal) -> dict[str, Any]:
        sim = self.get(sim_id, who)
        if sim.report is None:
            raise NotFound(f"simulation {sim_id} has no report ({sim.state.value}"
                           + (f": {sim.error})" if sim.error else ")"))
        return sim.report

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
