"""Benchmark: explain one pending pod on a 5,000-node x 8-GPU inventory (issue 7: under 1 s).

Three situations, each on the same H100s from the node templates (8 per node):

* ``near-miss``: the request asks for >= 80Gi, every H100 publishes 81559Mi -> never, with
  the funnel and near misses over every device;
* ``in-use``: every node but one fully allocated, one node with 2 GPUs free, the pod wants 4
  -> waiting, with the holders listed;
* ``fits``: one node has 4 free GPUs -> the allocator is run on the candidate nodes.

Prints the CPU time per diagnosis, how much of it Python's cyclic garbage collector took, and
the ratio to the 1 s budget (ratio < 1 = within budget).  The collector is reported on its own
because a full collection rescans every object the process holds (here the generated bundle,
~0.15 s a pass at 5,000 nodes); like ``drakit explain``, the benchmark calls ``gc.freeze()``
once the bundle is built, so collections no longer rescan it.  Not a test: timings depend on
the machine.

Run: ``python benchmarks/bench_explain.py [--nodes N ...] [--repeat R]`` (``--help``).

``--all-pending 1000`` times ``explain pods --all-pending`` instead (issue 12: within 10x one
``explain`` of the same state, shared work rather than a diagnosis per pod).  One pod per
*shape* is diagnosed; shapes share the cluster index, selectors, reach and node partition, and
the funnel's walks over devices and nodes are memoised by candidate set (claims whose
selectors leave the same devices share them), so what a further shape costs is its own: its
selectors' compilation and the allocator runs on its candidate nodes.  Extra shapes differ by
the text of a selector that every GPU passes.  Shared 2-core machine, 5,000 nodes, 1,000
pending pods, CPU seconds::

    distinct shapes  one explain  all 1,000 pods: before -> after  ratio
    4                0.45         0.70 -> 0.56                    1.5x -> 1.2x
    100              0.44         8.74 -> 1.01                    19.0x -> 2.3x
    1,000            0.43         (not run) -> 2.19               5.1x

("before" is 3f5d40c; the 11.9x it once noted at 100 shapes counted 56 distinct diagnoses, the
extra selectors then repeating.)  Before, each shape walked every device per selector step,
funnel step and near-miss check, and every usable node for scores and node shapes: ~80 ms a
shape at 5,000 nodes; after, ~2 ms.

Measured on the 2-core development machine (shared: +-15 %), CPU seconds per diagnosis, one
run each, collector share in parentheses::

    nodes   situation  before (617e2bf)  after
    1,000   near-miss  0.17 (0.06)       0.05 (0.00)
    1,000   in-use     0.17 (0.08)       0.05 (0.00)
    1,000   fits       0.16 (0.08)       0.04 (0.00)
    5,000   near-miss  0.96 (0.40)       0.23 (0.00)
    5,000   in-use     1.08 (0.53)       0.26 (0.00)
    5,000   fits       1.24 (0.78)       0.24 (0.00)
    10,000  near-miss  1.96 (0.79)       0.47 (0.00)
    10,000  in-use     2.88 (1.58)       0.54 (0.00)
    10,000  fits       2.51 (1.48)       0.46 (0.00)

Before, a diagnosis built the allocator's full index (every device parsed for the search), a
projection memo and a holder list per device, and the allocator's state for every claim:
~100,000 objects that outlived young collections and set off one or two full collections.
After: one light record per device (no cycles), devices grouped by projection once and each
group evaluated once for the funnel and the near misses, holders counted per claim, and the
allocator's index and state built only over the pools of the nodes it is run on.  ("after" was
measured with the collector paused during the diagnosis; the final design freezes the loaded
bundle instead, at the edge: 0.25-0.27 s at 5,000 nodes, collector 0.03 s.)
"""

from __future__ import annotations

import argparse
import gc
import time
from typing import Any

from drakit.explain.diagnose import diagnose
from drakit.features import Features
from drakit.inventory.snapshot import ClusterSnapshot
from drakit.inventory.templates import NVIDIA_DRIVER, expand, nvidia_device_class

BUDGET_S = 1.0
MEM_80GI = "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0"
SITUATIONS = ("near-miss", "in-use", "fits")


def _claim(name: str, count: int, selectors: tuple[str, ...] = (), status: dict[str, Any] | None = None) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": NVIDIA_DRIVER, "count": count}
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    obj: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"devices": {"requests": [{"name": "gpus", "exactly": exactly}]}},
    }
    if status:
        obj["status"] = status
    return obj


def _pod(name: str, claim: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml", "uid": f"uid-{name}"},
        "spec": {"containers": [{"name": "main", "image": "trainer"}], "resourceClaims": [{"name": "gpus", "resourceClaimName": claim}]},
    }


def _busy(node: str, devices: list[str], name: str) -> dict[str, Any]:
    results = [{"request": "gpus", "driver": NVIDIA_DRIVER, "pool": node, "device": d} for d in devices]
    return _claim(name, len(devices), status={
        "allocation": {"devices": {"results": results}},
        "reservedFor": [{"resource": "pods", "name": name, "uid": f"uid-{name}"}],
    })


def inventory(nodes: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [nvidia_device_class()]
    for i in range(nodes):
        out += expand("h100-8x", f"node-{i:05d}")
    return out


def scenario(name: str, nodes: int, base: list[dict[str, Any]]) -> ClusterSnapshot:
    objs = list(base)
    if name == "near-miss":
        objs += [_claim("train", 1, (MEM_80GI,)), _pod("train", "train")]
    elif name == "in-use":
        for i in range(nodes):
            free = 2 if i == nodes - 1 else 0
            objs.append(_busy(f"node-{i:05d}", [f"gpu-{g}" for g in range(free, 8)], f"job-{i:05d}"))
        objs += [_claim("train", 4), _pod("train", "train")]
    else:  # fits
        for i in range(nodes):
            free = 4 if i == nodes // 2 else 0
            objs.append(_busy(f"node-{i:05d}", [f"gpu-{g}" for g in range(free, 8)], f"job-{i:05d}"))
        objs += [_claim("train", 4), _pod("train", "train")]
    return ClusterSnapshot.from_objects(objs)


class _CollectorClock:
    """Seconds spent in the cyclic garbage collector while installed (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.process_time()
        else:
            self.seconds += time.process_time() - self._started

    def __enter__(self) -> _CollectorClock:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


def run(nodes: int, repeat: int, features: Features) -> None:
    t0 = time.perf_counter()
    base = inventory(nodes)
    print(f"inventory: {nodes} nodes x 8 GPUs built in {time.perf_counter() - t0:.2f}s")
    for name in SITUATIONS:
        inp = scenario(name, nodes, base)
        gc.freeze()  # as `drakit explain` does once the bundle is loaded
        best: tuple[float, float, float] | None = None
        for _ in range(repeat):
            with _CollectorClock() as collector:
                t0, c0 = time.perf_counter(), time.process_time()
                d = diagnose(inp, "pod", "train", "ml", features=features)
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            if best is None or cpu < best[0]:
                best = (cpu, collector.seconds, wall)
        assert best is not None
        cpu, in_gc, wall = best
        # CPU time is what the budget is about; wall time also counts other processes.
        print(
            f"{name:<10} {d.verdict.value:<8} {d.code.value:<18} cpu {cpu:6.3f}s (gc {in_gc:5.3f}s)"
            f" wall {wall:6.3f}s  cpu/budget {cpu / BUDGET_S:.2f}"
        )


PCIE = "resource.kubernetes.io/pcieRoot"


def pending_scenario(nodes: int, pods: int, shapes: int, base: list[dict[str, Any]]) -> ClusterSnapshot:
    """Every node but the last fully busy; ``pods`` pending pods, their claims of ``shapes`` kinds.

    The kinds cycle through four realistic requests (1 GPU: fits on the last node; 4 GPUs on one
    PCIe root: waits; >= 80Gi: never; 8 GPUs: waits), each kind k with ``count`` k-dependent
    selectors so that ``shapes`` beyond four are really different claims.
    """
    objs = list(base)
    for i in range(nodes - 1):
        objs.append(_busy(f"node-{i:05d}", [f"gpu-{g}" for g in range(8)], f"job-{i:05d}"))
    for p in range(pods):
        kind = p % shapes
        selectors: tuple[str, ...] = ()
        count = 1
        if kind % 4 == 1:
            count = 4
        elif kind % 4 == 2:
            selectors = (MEM_80GI,)
        elif kind % 4 == 3:
            count = 8
        if kind >= 4:  # a distinct (by its text) but equivalent claim per extra shape
            selectors = (
                *selectors,
                f"device.attributes['gpu.nvidia.com'].cudaDriverVersion.major() >= {kind % 13} && {kind} > 0",
            )
        claim = _claim(f"pending-{p:05d}", count, selectors)
        if kind % 4 == 1:
            claim["spec"]["devices"]["constraints"] = [{"requests": ["gpus"], "matchAttribute": PCIE}]
        objs += [claim, _pod(f"pending-{p:05d}", f"pending-{p:05d}")]
    return ClusterSnapshot.from_objects(objs)


def run_pending(nodes: int, pods: int, shape_counts: list[int], features: Features) -> None:
    """``explain pods --all-pending`` against ``BUDGET_FACTOR`` x one ``explain`` of the same state."""
    from drakit.explain.pending import explain_pending, waiting_pods

    base = inventory(nodes)
    for shapes in shape_counts:
        inp = pending_scenario(nodes, pods, shapes, base)
        gc.freeze()
        c0 = time.process_time()
        one = diagnose(inp, "pod", "pending-00001", "ml", features=features)
        single = time.process_time() - c0
        c0 = time.process_time()
        report = explain_pending(inp, waiting_pods(inp, "ml"), features=features)
        every = time.process_time() - c0
        print(
            f"all-pending {nodes} nodes, {pods} pods, {shapes} shapes: one explain ({one.code.value}) cpu {single:.3f}s,"
            f" all {len(report.pods)} pods ({report.diagnosed} diagnosed) in {len(report.groups)} groups cpu {every:.3f}s"
            f" = {every / single:.1f}x one (budget {BUDGET_FACTOR}x)"
        )


BUDGET_FACTOR = 10


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Time `drakit explain` on one pending pod (near-miss, in-use, fits) against the 1 s budget.",
        epilog="Sizes: --nodes 1000 for a quick look, 5000 (the default) for the issue's check, "
        "10000 to see how it scales (8 GPUs per node; linear in devices).",
    )
    parser.add_argument("legacy_nodes", nargs="?", type=int, help=argparse.SUPPRESS)  # `bench_explain.py 5000`
    parser.add_argument("--nodes", type=int, nargs="+", default=None, metavar="N",
                        help="inventory sizes in nodes (default: 5000)")
    parser.add_argument("--repeat", type=int, default=1, metavar="R",
                        help="diagnoses per situation; the fastest is shown (default: 1)")
    parser.add_argument("--all-pending", type=int, default=0, metavar="PODS",
                        help="instead: `explain pods --all-pending` over PODS pending pods (issue 12: 1000)")
    parser.add_argument("--shapes", type=int, nargs="+", default=[4, 100, 1000], metavar="K",
                        help="with --all-pending: distinct claim kinds among the pods (default: 4 100 1000)")
    args = parser.parse_args(argv)
    sizes = args.nodes or ([args.legacy_nodes] if args.legacy_nodes else [5000])
    features = Features.for_version()
    for nodes in sizes:
        if args.all_pending:
            run_pending(nodes, args.all_pending, args.shapes, features)
        else:
            run(nodes, max(1, args.repeat), features)


if __name__ == "__main__":
    main()
