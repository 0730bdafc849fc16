"""Simulator throughput on upstream's DRA benchmark shape and on a 5,000-node fill.

Shapes (issue 6):

* ``500x10``: 500 nodes x 10 devices (scheduler_perf "SchedulingWithResourceClaimTemplate"),
  2,500 pods fill the cluster, then 2,500 more are measured; one claim template per pod.
* ``5000x8``: 5,000 nodes x 8 H100s filled with 40,000 single-GPU pods.

Prints pods/s per phase and peak RSS; the lead adds the real kube-scheduler's figure for the
ratio.  ``--twin`` swaps in the in-memory allocator twin from the tests to show the
simulator's own overhead.  Not a test: nothing here asserts a time.

    .venv/bin/python benchmarks/bench_sim.py [--shape 500x10|5000x8|all] [--twin]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from drakit.sim import parse_scenario
from drakit.sim.runner import Run

TEMPLATE = """---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: one, namespace: default}}
spec:
  spec:
    devices:
      requests:
        - {{name: gpu, exactly: {{deviceClassName: {cls}}}}}
"""


def scenario(nodes: int, template: str, cls: str, fill: int, measure: int) -> str:
    workloads = f"    - {{name: fill, count: {fill}, resourceClaims: [{{name: gpu, resourceClaimTemplateName: one}}]}}\n"
    if measure:
        workloads += f"    - {{name: measure, start: 1, count: {measure}, resourceClaims: [{{name: gpu, resourceClaimTemplateName: one}}]}}\n"
    return (
        "apiVersion: drakit.dev/v1alpha1\nkind: Scenario\nmetadata: {name: bench}\nspec:\n"
        f"  deviceClasses: [{cls}]\n  nodes:\n    - {{count: {nodes}, template: {template}, namePrefix: node-}}\n"
        f"  workloads:\n{workloads}" + TEMPLATE.format(cls=cls)
    )


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench(name: str, text: str, fill: int, twin: bool) -> None:
    allocator = None
    if twin:
        from tests.unit.sim.fakes import FakeAllocator

        allocator = FakeAllocator
    sc = parse_scenario(text, f"{name}.yaml")
    t0 = time.perf_counter()
    run = Run(sc, 1, allocator)
    t1 = time.perf_counter()
    marks: list[tuple[int, float]] = []
    result = run.run(progress=lambda done, total: marks.append((done, time.perf_counter())))
    t2 = time.perf_counter()
    total = sum(1 for p in result.pods if p.scheduled is not None)
    print(f"{name}: setup {t1 - t0:.2f}s, {len(result.pods)} pods, {total} scheduled, allocator calls {result.allocator_calls}")
    fill_end = next((t for done, t in marks if done >= fill), t2)
    fill_done = next((done for done, _ in marks if done >= fill), total)
    print(f"  fill    {fill_done:>6} pods {fill_end - t1:8.2f}s {fill_done / max(fill_end - t1, 1e-9):10.1f} pods/s")
    if total > fill_done:
        n = total - fill_done
        print(f"  measure {n:>6} pods {t2 - fill_end:8.2f}s {n / max(t2 - fill_end, 1e-9):10.1f} pods/s")
    print(f"  peak RSS {peak_rss_mib():.0f} MiB")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", choices=["500x10", "5000x8", "all"], default="all")
    ap.add_argument("--twin", action="store_true", help="use the in-memory allocator twin (simulator overhead only)")
    args = ap.parse_args()
    if args.shape in ("500x10", "all"):
        bench("500x10", scenario(500, "example-10x", "gpu.example.com", 2500, 2500), 2500, args.twin)
    if args.shape in ("5000x8", "all"):
        bench("5000x8", scenario(5000, "h100-8x", "gpu.nvidia.com", 40000, 0), 40000, args.twin)


if __name__ == "__main__":
    main()
