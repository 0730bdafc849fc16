"""A one-line progress note on stderr for loads that take more than about a second.

Shown only on a terminal, or when ``DRAKIT_PROGRESS=1`` asks for it (``0`` turns it off);
it never touches stdout, so ``-o json`` stays parseable, and it erases itself when done.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import TextIO

DELAY_S = 1.0


class Progress:
    """Rewrites one stderr line with what is being read; silent for the first ``delay`` seconds."""

    def __init__(self, stream: TextIO, delay: float = DELAY_S, clock: Callable[[], float] | None = None) -> None:
        self.stream = stream
        self.delay = delay
        self._now = clock or time.monotonic
        self._start = self._now()
        self._last = 0.0
        self._shown = False

    def _show(self, text: str) -> None:
        now = self._now()
        if now - self._start < self.delay or now - self._last < 0.1:
            return
        self._last = now
        self._shown = True
        self.stream.write(f"\r\x1b[Kloading {text}")
        self.stream.flush()

    def read(self, name: str, size: int) -> None:
        self._show(f"{name}: {size / (1024 * 1024):.1f} MiB read")

    def decode(self, name: str) -> None:
        self._show(f"{name}: parsing")

    def step(self, text: str) -> None:
        self._show(text)

    def done(self) -> None:
        if self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False


def auto_progress() -> Progress | None:
    """A :class:`Progress` on stderr when it is a terminal or ``DRAKIT_PROGRESS=1``."""
    wanted = os.environ.get("DRAKIT_PROGRESS", "")
    stream = sys.stderr
    if wanted == "0" or stream is None:
        return None
    if wanted == "1" or (hasattr(stream, "isatty") and stream.isatty()):
        return Progress(stream)
    return None
