"""Benchmark: explain one pending pod on a 5,000-node x 8-GPU inventory (issue 7: under 1 s).

Three situations, each on the same 40,000 H100s from the node templates:

* ``near-miss``: the request asks for >= 80Gi, every H100 publishes 81559Mi -> never, with
  the funnel and near misses over every device;
* ``in-use``: 4,999 nodes fully allocated, one node with 2 GPUs free, the pod wants 4
  -> waiting, with the holders listed;
* ``fits``: one node has 4 free GPUs -> the allocator is run on the candidate nodes.

Prints the time per diagnosis and its ratio to the 1 s budget (ratio < 1 = within budget).
Not a test: timings depend on the machine.  Run: ``python benchmarks/bench_explain.py [nodes]``.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from drakit.explain.diagnose import diagnose
from drakit.explain.inputs import ExplainInput
from drakit.features import Features
from drakit.inventory.templates import NVIDIA_DRIVER, expand, nvidia_device_class

BUDGET_S = 1.0
MEM_80GI = "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0"


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
        "spec": {"containers": [{"name": "main"}], "resourceClaims": [{"name": "gpus", "resourceClaimName": claim}]},
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


def scenario(name: str, nodes: int, base: list[dict[str, Any]]) -> ExplainInput:
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
    return ExplainInput.from_objects(objs)


def main() -> None:
    nodes = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    features = Features.for_version()
    t0 = time.perf_counter()
    base = inventory(nodes)
    print(f"inventory: {nodes} nodes x 8 GPUs built in {time.perf_counter() - t0:.2f}s")
    for name in ("near-miss", "in-use", "fits"):
        inp = scenario(name, nodes, base)
        t0, c0 = time.perf_counter(), time.process_time()
        d = diagnose(inp, "pod", "train", "ml", features=features)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        # CPU time is what the budget is about; wall time also counts other processes.
        print(
            f"{name:<10} {d.verdict.value:<8} {d.code.value:<18} cpu {cpu:6.3f}s wall {wall:6.3f}s"
            f"  cpu/budget {cpu / BUDGET_S:.2f}"
        )


if __name__ == "__main__":
    main()
