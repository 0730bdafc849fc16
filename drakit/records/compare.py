"""Runs grouped by product, profile or driver version: how many, the median and the spread of a metric.

Quantiles interpolate linearly between the two nearest ranks, exactly PostgreSQL's
``percentile_cont``; the SQL store computes them there and this module everywhere else, and
the store suite checks that both give the same numbers.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from drakit.errors import InvalidArgument
from drakit.gostr import quote
from drakit.records.run import RunRecord

__all__ = ["By", "Group", "compare", "metric_of", "parse_by", "quantile", "summarise"]


class By(StrEnum):
    PRODUCT = "product"
    PROFILE = "profile"
    DRIVER_VERSION = "driverVersion"


# Metrics every finished run has; any other name is looked up among the correctness metrics.
BUILTIN_METRICS = {"runtime": "runtime_s", "startup": "startup_s"}


@dataclass(frozen=True)
class Group:
    key: str
    n: int
    median: float
    q1: float
    q3: float
    min: float
    max: float

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "n": self.n, "median": self.median, "q1": self.q1, "q3": self.q3,
                "iqr": self.iqr, "min": self.min, "max": self.max}


def quantile(ordered: Sequence[float], q: float) -> float:
    """``percentile_cont(q)`` over values already sorted ascending (at least one)."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summarise(key: str, values: Iterable[float]) -> Group:
    ordered = sorted(values)
    return Group(key, len(ordered), quantile(ordered, 0.5), quantile(ordered, 0.25), quantile(ordered, 0.75),
                 ordered[0], ordered[-1])


def metric_of(record: RunRecord, metric: str) -> float | None:
    """The metric's value for one run, or ``None`` when the run has none."""
    if record.result is None:
        return None
    if metric in BUILTIN_METRICS:
        value: float | None = getattr(record.result, BUILTIN_METRICS[metric])
        return value
    return record.result.correctness.get(metric)


def keys_of(record: RunRecord, by: By) -> set[str]:
    """The groups a run belongs to: one per distinct product (or driver version) among its devices."""
    if by is By.PROFILE:
        return {record.run.profile}
    return {d.product if by is By.PRODUCT else d.driver_version for d in record.devices}


def parse_by(by: By | str) -> By:
    try:
        return By(by)
    except ValueError:
        raise InvalidArgument(f"cannot group runs by {quote(by)}; choose one of {', '.join(b.value for b in By)}") from None


def compare(records: Iterable[RunRecord], by: By | str, metric: str = "runtime") -> tuple[Group, ...]:
    """Groups sorted by key; runs without the metric are left out, so ``n`` counts measured runs."""
    by = parse_by(by)
    values: dict[str, list[float]] = defaultdict(list)
    for record in records:
        value = metric_of(record, metric)
        if value is None:
            continue
        for key in keys_of(record, by):
            values[key].append(value)
    return tuple(summarise(key, values[key]) for key in sorted(values))
