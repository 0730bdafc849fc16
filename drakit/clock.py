"""Time and identifiers as values passed in, so that a run can be replayed exactly.

The allocator reads a clock for its deadline and its statistics and mints a share ID for every
device share it allocates; run records that store an allocation, and replay tests of a queue,
need both to come from the caller (as kueue injects its clock).  Each protocol has the system
implementation and a deterministic twin.
"""

from __future__ import annotations

import random
import time
import uuid
from typing import Protocol

__all__ = ["SYSTEM_CLOCK", "Clock", "FixedClock", "IdSource", "RandomIds", "SeededIds", "SystemClock"]


class Clock(Protocol):
    def monotonic(self) -> float:
        """Seconds on a clock that never goes back (only differences mean anything)."""
        ...


class IdSource(Protocol):
    def new_id(self) -> str:
        """A fresh UID in the API server's form (a UUID in canonical text)."""
        ...


class SystemClock:
    """The process's monotonic clock."""

    def monotonic(self) -> float:
        return time.monotonic()


SYSTEM_CLOCK = SystemClock()


class FixedClock:
    """A clock that moves only when told to, or by ``step`` seconds on every reading."""

    def __init__(self, start: float = 0.0, step: float = 0.0) -> None:
        self.now = start
        self.step = step

    def monotonic(self) -> float:
        value = self.now
        self.now += self.step
        return value

    def advance(self, seconds: float) -> None:
        self.now += seconds


class RandomIds:
    """Version-4 UUIDs from the operating system's randomness, as the API server mints UIDs."""

    def new_id(self) -> str:
        return str(uuid.uuid4())


class SeededIds:
    """Version-4-shaped UUIDs from a seeded generator: the same seed gives the same sequence."""

    def __init__(self, seed: int | str = 0) -> None:
        self._rng = random.Random(f"drakit-ids/{seed}")

    def new_id(self) -> str:
        return str(uuid.UUID(int=self._rng.getrandbits(128), version=4))
