from __future__ import annotations

from typing import Any

import pytest

from drakit.sim.scheduler import fit_error, num_feasible_nodes_to_find


@pytest.mark.parametrize(
    ("nodes", "want"),
    [
        pytest.param(1, 1, id="tiny"),
        pytest.param(99, 99, id="below-minimum-all"),
        pytest.param(100, 100, id="minimum"),
        pytest.param(200, 100, id="48pct-is-96-raised-to-100"),
        pytest.param(500, 230, id="scheduler-perf-500"),
        pytest.param(1000, 420, id="1000"),
        pytest.param(5000, 500, id="5000-floor-5pct"),
        pytest.param(20000, 1000, id="20000"),
    ],
)
def test_num_feasible_nodes_to_find(nodes: int, want: int) -> None:
    assert num_feasible_nodes_to_find(nodes) == want


@pytest.mark.parametrize(
    ("args", "want"),
    [
        pytest.param(
            (4, "", {"cannot allocate all claims": 2, "timed out trying to allocate devices": 1, "Too many pods": 1},
             "still not schedulable, preemption: 0/4 nodes are available: 1 No preemption victims found for incoming pod, "
             "3 Preemption is not helpful for scheduling."),
            "0/4 nodes are available: 1 Too many pods, 1 timed out trying to allocate devices, 2 cannot allocate all claims. "
            "still not schedulable, preemption: 0/4 nodes are available: 1 No preemption victims found for incoming pod, "
            "3 Preemption is not helpful for scheduling.",
            id="histogram-sorted-as-strings",
        ),
        pytest.param(
            (3, "request gpu: device class x does not exist", {"ignored": 3}, ""),
            "0/3 nodes are available: request gpu: device class x does not exist.",
            id="prefilter-hides-histogram",
        ),
    ],
)
def test_fit_error(args: tuple[Any, ...], want: str) -> None:
    assert fit_error(*args) == want
