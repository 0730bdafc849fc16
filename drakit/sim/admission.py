"""The seam between the simulator and a queue admission engine (Kueue's role on a cluster).

With an :class:`Admitter`, a workload the admitter accepts is *suspended* on arrival, as Kueue
suspends a Job: no pod exists until it is admitted.  The runner reports each arrival and each
end to the admitter and, after every instant's events, asks which workloads it admits now;
their pods are then created and scheduled as usual.  So a pod's wait splits in two: queue wait
(arrival → admission) and scheduling wait (admission → bound).  The engine lives above the
simulator (``drakit.queues.sim`` implements this for Kueue's rules); the simulator only knows
this protocol.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from drakit.sim.result import QueueRecord, QuotaSample
from drakit.sim.scenario import Workload

__all__ = ["Admitter", "QueueRecord", "QuotaSample"]


class Admitter(Protocol):
    def observe_inventory(self, classes: Mapping[str, Mapping[str, Any]], slices: Sequence[Mapping[str, Any]]) -> None:
        """The run's DeviceClasses and ResourceSlices, once, before any arrival (counter quotas)."""
        ...

    def accepts(self, workload: Workload) -> bool:
        """Whether the workload goes through a queue (else it is created at once, as without Kueue)."""
        ...

    def arrive(self, unit: str, workload: Workload, now: float) -> None:
        """A unit (a Job, or one pod of a ``kind: Pod`` workload) arrived, suspended."""
        ...

    def finish(self, unit: str, now: float) -> None:
        """A unit ended: its quota is free again."""
        ...

    def settle(self, now: float) -> list[str]:
        """Units admitted now, in admission order."""
        ...

    def sample(self, now: float) -> QuotaSample:
        """Quota use per queue and resource at this instant."""
        ...

    def record(self, unit: str) -> QueueRecord:
        """Where the unit queued and when it was admitted (None: never)."""
        ...
