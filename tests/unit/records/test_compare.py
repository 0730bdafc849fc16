"""Grouping and quantiles: the pure half of ``runs compare`` (the store suite checks SQL against it)."""

from __future__ import annotations

import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drakit.errors import InvalidArgument
from drakit.records import Run, RunDevice, RunRecord, RunResult, compare
from drakit.records.compare import quantile
from tests.unit.records.test_run import T0


@settings(max_examples=200, derandomize=True)
@given(st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=50))
def test_quantiles_are_postgres_percentile_cont(values: list[float]) -> None:
    ordered = sorted(values)
    q1, median, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    assert quantile(ordered, 0.25) == pytest.approx(q1, abs=1e-6)
    assert quantile(ordered, 0.5) == pytest.approx(median, abs=1e-6)
    assert quantile(ordered, 0.75) == pytest.approx(q3, abs=1e-6)


def _record(i: int, products: tuple[str, ...], runtime: float | None, profile: str = "train") -> RunRecord:
    run = Run.submit(T0, id=f"r{i}", recipe="mnist", profile=profile)
    devices = tuple(RunDevice("gpu", "gpu.nvidia.com", "p", f"gpu-{d}", product=p, driver_version="580")
                    for d, p in enumerate(products))
    return RunRecord(run, devices=devices, result=RunResult(0, 1.0, runtime) if runtime is not None else None)


def test_groups_count_each_run_once_per_distinct_key() -> None:
    records = [
        _record(0, ("H100", "H100"), 10.0),
        _record(1, ("H100", "L4"), 20.0),
        _record(2, ("L4",), 30.0, "eval"),
        _record(3, ("L4",), None),  # not measured: left out
    ]
    by_product = {g.key: g for g in compare(records, "product")}
    assert {k: (g.n, g.median, g.min, g.max) for k, g in by_product.items()} == {
        "H100": (2, 15.0, 10.0, 20.0),
        "L4": (2, 25.0, 20.0, 30.0),
    }
    assert by_product["H100"].iqr == pytest.approx(5.0)
    assert [(g.key, g.n) for g in compare(records, "profile")] == [("eval", 1), ("train", 2)]
    assert [(g.key, g.n) for g in compare(records, "driverVersion")] == [("580", 3)]
    assert compare(records, "product")[0].to_json()["iqr"] == pytest.approx(5.0)


def test_unknown_grouping_is_one_line() -> None:
    with pytest.raises(InvalidArgument, match=r'cannot group runs by "gpu"; choose one of product, profile, driverVersion'):
        compare([], "gpu")
