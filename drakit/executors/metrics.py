"""The metrics channel: a JSON-lines file the application appends to, read when the run ends.

``$DRAKIT_METRICS`` names the file; ``drakit log-metric`` or any code appends one object a line:

* ``{"metric": "loss", "step": 3, "value": 0.12}`` — a point of a user series;
* ``{"correctness": "max_abs_error", "value": 1e-9}`` — a correctness metric (last one wins);
* ``{"ready": true, "at": 1767225600.5}`` — the workload is set up (imports, data) and starts its
  real work: startup is measured up to here and runtime from here, so slow imports are not runtime.

A file, not a socket: it survives the recording process, needs nothing in the container, and
appends of one short line with ``O_APPEND`` do not interleave between writers.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from drakit.records.run import MAX_TEXT, MetricPoint

__all__ = ["ENV_VAR", "MAX_LINE", "Metrics", "append", "parse"]

ENV_VAR = "DRAKIT_METRICS"
MAX_LINE = 4096  # longer lines are refused: one line is one small object


@dataclass(frozen=True)
class Metrics:
    ready_at: float | None
    correctness: Mapping[str, float]
    series: tuple[MetricPoint, ...]
    problems: tuple[str, ...]  # "<file>:<line>: why", for lines that were not used


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _name(value: Any) -> str | None:
    return value if isinstance(value, str) and 0 < len(value) <= MAX_TEXT and "\x00" not in value else None


def parse(text: str, source: str = "metrics") -> Metrics:
    """Everything usable in the channel; a bad line is named with its number and skipped, never fatal."""
    ready: float | None = None
    correctness: dict[str, float] = {}
    points: dict[tuple[str, int], float] = {}
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        if len(line) > MAX_LINE:
            problems.append(f"{where}: line of {len(line)} characters, at most {MAX_LINE}")
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as e:
            problems.append(f"{where}: not JSON ({e.msg} at column {e.colno})")
            continue
        except RecursionError:
            problems.append(f"{where}: nested too deeply")
            continue
        if not isinstance(item, dict):
            problems.append(f"{where}: not a JSON object")
            continue
        value = _number(item.get("value"))
        if item.get("ready") is True:
            at = _number(item.get("at"))
            if at is None:
                problems.append(f"{where}: ready without a finite 'at' time")
            elif ready is None:
                ready = at
        elif "metric" in item:
            name, step = _name(item["metric"]), item.get("step", 0)
            if name is None or value is None or isinstance(step, bool) or not isinstance(step, int) \
                    or not 0 <= step < 2**63:
                problems.append(f"{where}: a metric needs a name, a finite value and a step 0 ≤ step < 2^63")
                continue
            points[(name, step)] = value
        elif "correctness" in item:
            name = _name(item["correctness"])
            if name is None or value is None:
                problems.append(f"{where}: a correctness metric needs a name and a finite value")
                continue
            correctness[name] = value
        else:
            problems.append(f"{where}: none of metric, correctness or ready")
    series = tuple(MetricPoint(n, s, v) for (n, s), v in sorted(points.items()))
    return Metrics(ready, correctness, series, tuple(problems))


def append(path: str, item: Mapping[str, Any]) -> None:
    """One line, one ``write`` with ``O_APPEND``: concurrent writers never interleave within a line."""
    line = json.dumps(dict(item), separators=(",", ":"), allow_nan=False) + "\n"
    if len(line) > MAX_LINE:
        raise ValueError(f"metric line of {len(line)} characters, at most {MAX_LINE}")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def ready(path: str) -> None:
    """Mark the end of startup (the workload calls this once it is set up)."""
    append(path, {"ready": True, "at": time.time()})
