"""Allocator timings for the four reference scenarios (drakit alone; the Go oracle side is added later).

(a) 1 GPU from an 8-GPU node; (b) 4 GPUs with matchAttribute on pcieRoot; (c) 5,000 nodes x 8 GPUs
filled by 40,000 single-GPU claims one at a time, first fit over nodes; (d) an infeasible 5-device
matchAttribute over 16 devices.  Prints wall time per scenario and per call; no assertions.

Run: ``.venv/bin/python benchmarks/bench_allocator.py [--nodes 5000] [--repeat 200]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from drakit.allocator import Inventory, allocate, cel
from drakit.features import Features

DRIVER = "gpu.example.com"
FEATURES = Features.for_version("1.35")


def _node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
    }


def _slice(node: str, n: int = 8, roots: int = 2) -> dict[str, Any]:
    devices = [
        {
            "name": f"gpu-{i}",
            "attributes": {"pcieRoot": {"string": f"root-{i * roots // n}"}, "model": {"string": "H100"}},
            "capacity": {"memory": {"value": "80Gi"}},
        }
        for i in range(n)
    ]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-gpus"},
        "spec": {
            "driver": DRIVER,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "nodeName": node,
            "devices": devices,
        },
    }


CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu"},
    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
}


def _claim(name: str, count: int = 1, match: bool = False) -> dict[str, Any]:
    devices: dict[str, Any] = {
        "requests": [
            {
                "name": "gpus",
                "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": count},
            }
        ]
    }
    if match:
        devices["constraints"] = [{"matchAttribute": f"{DRIVER}/pcieRoot"}]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "bench"},
        "spec": {"devices": devices},
    }


def _time(label: str, fn: Any, repeat: int) -> float:
    fn()  # warm caches (compiled selectors, pools)
    t0 = time.perf_counter()
    for _ in range(repeat):
        fn()
    per_call = (time.perf_counter() - t0) / repeat
    print(f"{label:<58} {per_call * 1e6:10.1f} us/call")
    return per_call


def scenario_a(repeat: int) -> float:
    inv = Inventory([_slice("node-0")], [CLASS])
    claims = [_claim("a")]
    return _time(
        "(a) 1 of 8 GPUs",
        lambda: allocate(
            node=_node("node-0"), slices=(), classes=(), claims=claims, features=FEATURES, inventory=inv
        ),
        repeat,
    )


def scenario_b(repeat: int) -> float:
    inv = Inventory([_slice("node-0")], [CLASS])
    claims = [_claim("b", 4, match=True)]
    return _time(
        "(b) 4 of 8 GPUs, matchAttribute pcieRoot",
        lambda: allocate(
            node=_node("node-0"), slices=(), classes=(), claims=claims, features=FEATURES, inventory=inv
        ),
        repeat,
    )


def scenario_d(repeat: int) -> float:
    inv = Inventory([_slice("node-0", n=16, roots=4)], [CLASS])
    claims = [_claim("d", 5, match=True)]

    def run() -> None:
        out = allocate(
            node=_node("node-0"), slices=(), classes=(), claims=claims, features=FEATURES, inventory=inv
        )
        assert out.status == "unsatisfiable", out.message

    return _time("(d) infeasible 5 of 16, matchAttribute (4 roots x 4)", run, max(1, repeat // 10))


def scenario_c(nodes: int, claims_per_node: int = 8) -> float:
    names = [f"node-{i}" for i in range(nodes)]
    node_objs = {n: _node(n) for n in names}
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    inv = Inventory([_slice(n) for n in names], [CLASS])
    for n in names:  # index every node's pools up front, as a long-running simulator would
        inv.pools_for(node_objs[n], FEATURES)
    build = time.perf_counter() - t0
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    total = nodes * claims_per_node
    first_free = 0  # first-fit: nodes before this index are known to be full
    t1 = time.perf_counter()
    for i in range(total):
        claim = _claim(f"c-{i}")
        while True:
            out = allocate(
                node=node_objs[names[first_free]],
                slices=(),
                classes=(),
                claims=[claim],
                features=FEATURES,
                inventory=inv,
            )
            if out.status == "allocated":
                inv.commit(out.claims[0])
                break
            first_free += 1
    elapsed = time.perf_counter() - t1
    print(
        f"(c) {nodes} nodes x 8 GPUs, {total} single-GPU claims first-fit: build {build:.2f}s, fill {elapsed:.2f}s "
        f"({elapsed / total * 1e6:.1f} us/claim), index memory ~{(rss1 - rss0) / 1024:.0f} MiB"
    )
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=2000)
    args = parser.parse_args()
    if os.environ.get("DRAKIT_BENCH_STANDIN"):
        from tests.unit.allocator.cel_standin import StandIn

        cel.set_backend(StandIn())
    scenario_a(args.repeat)
    scenario_b(args.repeat)
    scenario_d(args.repeat)
    scenario_c(args.nodes)


if __name__ == "__main__":
    main()
