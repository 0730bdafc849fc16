"""The example scenarios through drakit's real allocator (needs the CEL selectors package)."""

from __future__ import annotations

import json
from pathlib import Path

from drakit.sim import run_scenario
from drakit.sources import load_scenario

EXAMPLES = Path(__file__).resolve().parents[3] / "drakit" / "sim" / "examples"


def test_mixed_example_places_multi_gpu_jobs_on_one_numa_node_and_leaves_tpu_pending() -> None:
    result = run_scenario(load_scenario(EXAMPLES / "mixed.yaml"))
    train = [p for p in result.pods if p.workload == "train"]
    placed = [p for p in train if p.node]
    assert placed and all(p.products == ("NVIDIA H100 80GB HBM3",) * 4 for p in placed)
    tpu = [p for p in result.pods if p.workload == "tpu"]
    assert all(p.phase == "Pending" and "device class tpu.google.com does not exist" in p.message for p in tpu)
    again = run_scenario(load_scenario(EXAMPLES / "mixed.yaml"))
    assert json.dumps(result.to_json()) == json.dumps(again.to_json())
