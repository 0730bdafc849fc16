"""Simulator throughput on upstream's DRA benchmark shape and on a 5,000-node fill.

Shapes (issue 6):

* ``500x10``: 500 nodes x 10 devices (scheduler_perf "SchedulingWithResourceClaimTemplate"),
  2,500 pods fill the cluster, then 2,500 more are measured; one claim template per pod.
* ``5000x8``: 5,000 nodes x 8 H100s filled with 40,000 single-GPU pods.
* ``backlog``: 2,500 and 20,000 identical single-GPU pods queued at once on 16 H100s (issue
  12); prints both CPU times and their ratio, which should stay near the 8x of the pod counts.

Prints, per phase, pods/s of wall-clock time and pods per CPU-second of this process (the
second does not move when other processes share the machine), the allocator's share of the
time, and peak RSS.  ``--slow`` runs the reference node-by-node path (``SimOptions(fast=False)``,
the algorithm before the fast path) for before/after figures; ``--twin`` swaps in the
in-memory allocator twin from the tests to show the simulator's own overhead;
``--kube-scheduler PODS_PER_S`` prints the measure phase as a ratio to the real scheduler's
figure (``benchmarks/bench_scheduler.py`` measures it).  Not a test: nothing here asserts a time.

    .venv/bin/python benchmarks/bench_sim.py [--shape 500x10|5000x8|backlog|all] [--slow] [--twin]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from drakit.sim import SimOptions, parse_scenario
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


def _clocks() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _line(label: str, pods: int, wall: float, cpu: float) -> str:
    return (
        f"  {label:<8}{pods:>6} pods {wall:8.2f}s wall {wall and pods / wall:9.1f} pods/s"
        f"   {cpu:8.2f}s cpu {cpu and pods / cpu:9.1f} pods/cpu-s"
    )


def bench(name: str, text: str, fill: int, *, twin: bool, fast: bool, reference: float | None) -> None:
    allocator = None
    if twin:
        from tests.unit.sim.fakes import FakeAllocator

        allocator = FakeAllocator
    sc = parse_scenario(text, f"{name}.yaml")
    sc.check_memory()
    t0 = _clocks()
    run = Run(sc, 1, allocator, SimOptions(fast=fast))
    t1 = _clocks()
    # The clocks at the exact pod that completes the fill phase, and the allocator's time.
    fill_mark: list[tuple[float, float]] = []
    bind = run._bind

    def timed_bind(pod: Any, node: str) -> None:
        bind(pod, node)
        if run._bound == fill:
            fill_mark.append(_clocks())

    run._bind = timed_bind  # type: ignore[method-assign]
    fit_cpu = [0.0]
    fit = run.allocator.fit

    def timed_fit(node: Any, claims: Any) -> Any:
        c = time.process_time()
        try:
            return fit(node, claims)
        finally:
            fit_cpu[0] += time.process_time() - c

    run.allocator.fit = timed_fit  # type: ignore[method-assign]
    result = run.run()
    t2 = _clocks()
    bound = sum(1 for p in result.pods if p.scheduled is not None)
    path = "reference node loop" if not fast else "fast path"
    print(
        f"{name} ({path}{', allocator twin' if twin else ''}): setup {t1[0] - t0[0]:.2f}s, {len(result.pods)} pods, "
        f"{bound} scheduled, allocator calls {result.allocator_calls}, "
        f"allocator {fit_cpu[0]:.2f}s cpu of {t2[1] - t1[1]:.2f}s"
    )
    mid = fill_mark[0] if fill_mark else t2
    done = min(fill, bound)
    print(_line("fill", done, mid[0] - t1[0], mid[1] - t1[1]))
    if bound > done:
        n = bound - done
        wall = t2[0] - mid[0]
        print(_line("measure", n, wall, t2[1] - mid[1]))
        if reference:
            print(f"  measure phase / kube-scheduler ({reference:.1f} pods/s): {n / wall / reference:.1f}x wall")
    print(f"  peak RSS {peak_rss_mib():.0f} MiB (estimate {sc.estimated_bytes() / 2**20:.0f} MiB, limit {sc.memory_limit_mib} MiB)")


def backlog(pods: int, *, fast: bool) -> tuple[float, int]:
    """CPU seconds for ``pods`` identical one-GPU pods queued at once on 16 H100s (2 x h100-8x).

    Every release wakes the whole backlog; identical pods share the failed attempt of the
    first, so the run should grow with the pods, not with pods x releases.
    """
    text = (
        "apiVersion: drakit.dev/v1alpha1\nkind: Scenario\nmetadata: {name: backlog}\nspec:\n"
        "  deviceClasses: [gpu.nvidia.com]\n  nodes:\n    - {count: 2, template: h100-8x, namePrefix: node-}\n"
        f"  workloads:\n    - {{name: queue, count: {pods}, duration: 600, "
        "resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n" + TEMPLATE.format(cls="gpu.nvidia.com")
    )
    sc = parse_scenario(text, "backlog.yaml")
    c = time.process_time()
    result = Run(sc, 1, None, SimOptions(fast=fast)).run()
    return time.process_time() - c, result.attempts


def bench_backlog(*, fast: bool) -> None:
    small, large = 2500, 20000
    (t_small, a_small), (t_large, a_large) = backlog(small, fast=fast), backlog(large, fast=fast)
    print(f"backlog on 16 GPUs ({'fast path' if fast else 'reference node loop'}):")
    print(f"  {small:>6} pods {t_small:8.2f}s cpu  ({a_small} attempts)")
    print(f"  {large:>6} pods {t_large:8.2f}s cpu  ({a_large} attempts)")
    print(f"  ratio {t_large / t_small:.1f}x for {large // small}x the pods (target: at most about 8x)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", choices=["500x10", "5000x8", "backlog", "all"], default="all")
    ap.add_argument("--twin", action="store_true", help="use the in-memory allocator twin (simulator overhead only)")
    ap.add_argument("--slow", action="store_true", help="the reference node-by-node path (SimOptions(fast=False))")
    ap.add_argument("--kube-scheduler", type=float, default=None, metavar="PODS_PER_S",
                    help="the real scheduler's measure-phase pods/s, to print a ratio")
    args = ap.parse_args()
    opts = {"twin": args.twin, "fast": not args.slow}
    if args.shape in ("500x10", "all"):
        bench("500x10", scenario(500, "example-10x", "gpu.example.com", 2500, 2500), 2500, reference=args.kube_scheduler, **opts)
    if args.shape in ("5000x8", "all"):
        bench("5000x8", scenario(5000, "h100-8x", "gpu.nvidia.com", 40000, 0), 40000, reference=None, **opts)
    if args.shape in ("backlog", "all"):
        bench_backlog(fast=not args.slow)


if __name__ == "__main__":
    main()
