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

from drakit.records.run import MAX_PROBLEMS, MAX_TEXT, MetricPoint, ResultProblem

__all__ = ["ENV_VAR", "MAX_LINE", "Metrics", "append", "parse", "read", "rejected"]

ENV_VAR = "DRAKIT_METRICS"
MAX_LINE = 4096  # longer lines are refused: one line is one small object


@dataclass(frozen=True)
class Metrics:
    ready_at: float | None
    correctness: Mapping[str, float]
    series: tuple[MetricPoint, ...]
    problems: tuple[ResultProblem, ...]  # the first MAX_PROBLEMS lines that were not used, with why
    problem_count: int = 0  # every line that was not used

    def lines(self, source: str) -> tuple[str, ...]:
        """The problems as ``<source>:<line>: why`` lines, for a log."""
        return tuple(f"{source}:{p.line}: {p.reason}" if p.line else f"{source}: {p.reason}" for p in self.problems)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _name(value: Any) -> str | None:
    return value if isinstance(value, str) and 0 < len(value) <= MAX_TEXT and "\x00" not in value else None


def _item(line: str) -> dict[str, Any] | str:
    """The line's object, or why it is not one."""
    if len(line) > MAX_LINE:
        return f"line of {len(line)} characters, at most {MAX_LINE}"
    try:
        item = json.loads(line)
    except json.JSONDecodeError as e:
        return f"not JSON ({e.msg} at column {e.colno})"
    except RecursionError:
        return "nested too deeply"
    return item if isinstance(item, dict) else "not a JSON object"


def parse(data: str | bytes, *, truncated: bool = False) -> Metrics:
    """Everything usable in the channel; a bad line is kept as a problem with its number, never fatal.

    Lines end at ``\\n`` only (a JSON string may hold U+2028), and bytes are decoded line by line,
    so one line of bad UTF-8 spoils only itself.  ``truncated``: the reader stopped at its limit,
    so the last, cut line is a problem too.
    """
    ready: float | None = None
    correctness: dict[str, float] = {}
    points: dict[tuple[str, int], float] = {}
    problems: list[ResultProblem] = []
    count = 0

    def bad(number: int, why: str, raw: str) -> None:
        nonlocal count
        count += 1
        if len(problems) < MAX_PROBLEMS:
            problems.append(ResultProblem.of(number, why, raw))

    lines: list[str | bytes] = list(data.split(b"\n") if isinstance(data, bytes) else data.split("\n"))
    for number, chunk in enumerate(lines, 1):
        try:
            line = chunk.decode("utf-8") if isinstance(chunk, bytes) else chunk
        except UnicodeDecodeError as e:
            bad(number, f"not UTF-8 ({e.reason} at byte {e.start})", e.object.decode("utf-8", "replace"))
            continue
        if truncated and number == len(lines):
            bad(number, "the channel goes on past the reader's limit: this line and the rest were not read", line)
            continue
        if not line.strip():
            continue
        item = _item(line)
        if isinstance(item, str):
            bad(number, item, line)
            continue
        value = _number(item.get("value"))
        if "rejected" in item:  # a log-metric call that refused its arguments
            bad(number, f"drakit log-metric refused: {item['rejected']}", line)
        elif item.get("ready") is True:
            at = _number(item.get("at"))
            if at is None:
                bad(number, "ready without a finite 'at' time", line)
            elif ready is None:
                ready = at
        elif "metric" in item:
            name, step = _name(item["metric"]), item.get("step", 0)
            if name is None or value is None or isinstance(step, bool) or not isinstance(step, int) \
                    or not 0 <= step < 2**63:
                bad(number, "a metric needs a name, a finite value and a step 0 ≤ step < 2^63", line)
                continue
            points[(name, step)] = value
        elif "correctness" in item:
            name = _name(item["correctness"])
            if name is None or value is None:
                bad(number, "a correctness metric needs a name and a finite value", line)
                continue
            correctness[name] = value
        else:
            bad(number, "none of metric, correctness or ready", line)
    series = tuple(MetricPoint(n, s, v) for (n, s), v in sorted(points.items()))
    return Metrics(ready, correctness, series, tuple(problems), count)


def read(path: str, limit: int | None = None) -> Metrics:
    """The channel a run wrote, bounded: a runaway writer costs the lines past the limit, nothing before."""
    from drakit.sources.read import MAX_INPUT_BYTES, ReadError, read_head

    if not os.path.lexists(path):
        return parse("")
    try:
        data, more = read_head(path, MAX_INPUT_BYTES if limit is None else limit)
    except ReadError as e:
        return Metrics(None, {}, (), (ResultProblem.of(0, str(e)),), 1)
    return parse(data, truncated=more)


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


def rejected(path: str, why: str, call: list[str]) -> None:
    """Record in the channel that a ``log-metric`` call was refused, so that the run's record keeps it."""
    try:
        append(path, {"rejected": why[:MAX_TEXT], "call": [a[:200] for a in call[:8]]})
    except ValueError:  # escaped, the call did not fit one line: the reason alone does
        append(path, {"rejected": why[:200]})


def ready(path: str) -> None:
    """Mark the end of startup (the workload calls this once it is set up)."""
    append(path, {"ready": True, "at": time.time()})
