"""``drakit snapshot -A`` next to ``kubectl get … -A -o json`` on a fleet-sized test cluster, and
live ``drakit explain`` next to offline explain on the snapshot it wrote.

Cluster (the integration tests' control plane, v1.37.2, started here): 5,000 Nodes, 5,000
ResourceSlices of 8 H100s each as the NVIDIA driver publishes them (``drakit.inventory.templates``),
10,000 ResourceClaims (one GPU each, unallocated) and one pending Pod whose template asks for
9 GPUs on one node (never fits).  Objects are created by 16 concurrent clients.

Rows, each timed twice in alternation and the faster run kept (the machine is shared):

* ``kubectl get nodes,resourceslices,resourceclaims,pods -A -o json`` (the cached kubectl built
  from the same k8s.io/kubernetes module) vs ``drakit snapshot -A -o json``: wall time and the
  child's peak RSS (``wait4``).  Target: time ≤ 1.5×, drakit peak RSS < 600 MB.  drakit reads
  more than kubectl here (also DeviceClasses, DeviceTaintRules, templates and Events).
* ``drakit explain pod/pending`` on the cluster vs on the snapshot file (``-f``).  Target ≤ 2×.

Nothing here asserts a time.  ``--quick`` shrinks the cluster (200 nodes, 400 claims).

    .venv/bin/python benchmarks/bench_live.py [--quick] [--nodes 5000] [--claims 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # run as a plain script
    sys.path.insert(0, str(REPO_ROOT))

import urllib3  # noqa: E402

from drakit.inventory.templates import expand, nvidia_device_class  # noqa: E402
from tests.integration.controlplane import ControlPlane, bin_dir, missing_binaries, start_control_plane  # noqa: E402

NS = "bench"
V1 = "resource.k8s.io/v1"
CLASS = "gpu.nvidia.com"


def fleet(nodes: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    out_nodes, out_slices = [], []
    for i in range(nodes):
        node, slice_ = expand("h100-8x", f"node-{i:05d}")
        node.pop("status", None)  # create ignores status; no kubelet would keep it anyway
        out_nodes.append(node)
        out_slices.append(slice_)
    return out_nodes, out_slices


def claim(i: int) -> dict[str, Any]:
    return {"apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": f"claim-{i:05d}", "namespace": NS},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": CLASS}}]}}}


def pending_pod() -> list[dict[str, Any]]:
    template = {"apiVersion": V1, "kind": "ResourceClaimTemplate", "metadata": {"name": "nine", "namespace": NS},
                "spec": {"spec": {"devices": {"requests": [
                    {"name": "gpus", "exactly": {"deviceClassName": CLASS, "count": 9}}]}}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pending", "namespace": NS},
           "spec": {"containers": [{"name": "main", "image": "registry.example/train:1",
                                    "resources": {"claims": [{"name": "gpus"}]}}],
                    "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "nine"}]}}
    return [template, pod]


class Creator:
    """Concurrent POSTs on one connection pool (the Python client's models would be the bottleneck)."""

    def __init__(self, plane: ControlPlane, workers: int = 16) -> None:
        self.plane = plane
        self.workers = workers
        self.pool = urllib3.PoolManager(maxsize=workers, ca_certs=str(plane.ca_file))
        self.headers = {"Authorization": f"Bearer {plane.admin_token}", "Content-Type": "application/json"}

    def path(self, obj: dict[str, Any]) -> str:
        kind, ns = obj["kind"], obj["metadata"].get("namespace")
        plural = {"Node": "nodes", "Namespace": "namespaces", "Pod": "pods", "DeviceClass": "deviceclasses",
                  "ResourceSlice": "resourceslices", "ResourceClaim": "resourceclaims",
                  "ResourceClaimTemplate": "resourceclaimtemplates"}[kind]
        base = "/api/v1" if obj["apiVersion"] == "v1" else f"/apis/{obj['apiVersion']}"
        return f"{base}/namespaces/{ns}/{plural}" if ns else f"{base}/{plural}"

    def create(self, obj: dict[str, Any]) -> None:
        for attempt in range(5):
            r = self.pool.request("POST", self.plane.server + self.path(obj), body=json.dumps(obj).encode(),
                                  headers=self.headers, timeout=60.0)
            if r.status < 300 or r.status == 409:
                return
            if r.status not in (429, 500, 503, 504) or attempt == 4:
                raise RuntimeError(f"create {obj['kind']} {obj['metadata']['name']}: HTTP {r.status}: {r.data[:300]!r}")
            time.sleep(0.5 * (attempt + 1))

    def create_all(self, objects: Sequence[dict[str, Any]], what: str) -> float:
        started = time.perf_counter()
        with ThreadPoolExecutor(self.workers) as pool:
            list(pool.map(self.create, objects))
        took = time.perf_counter() - started
        print(f"created {len(objects):,} {what} in {took:.1f} s ({len(objects) / took:,.0f}/s)", file=sys.stderr)
        return took


def timed(argv: Sequence[str], stdout: Any) -> tuple[float, float, int]:
    """Wall seconds, the child's peak RSS in MiB, and its exit code."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.PIPE, cwd=REPO_ROOT)
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode not in (0, 3):
        raise RuntimeError(f"{' '.join(argv[:4])}…: exit {proc.returncode}: {err[-500:]}")
    return took, usage.ru_maxrss / 1024, proc.returncode


def best(runs: int, measure: Callable[[], tuple[float, float, int]]) -> tuple[float, float, list[float]]:
    results = [measure() for _ in range(runs)]
    times = [r[0] for r in results]
    return min(times), max(r[1] for r in results), times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--claims", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=2)
    args = ap.parse_args()
    nodes, claims = (200, 400) if args.quick else (args.nodes, args.claims)
    binaries = bin_dir()
    if missing_binaries(binaries) or not (binaries / "kubectl").exists():
        sys.exit(f"control-plane binaries or kubectl missing in {binaries}: run `make cluster`")
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="bench-live-") as tmp:
        work = Path(tmp)
        plane = start_control_plane(work / "plane", binaries=binaries)
        try:
            kubeconfig = str(plane.write_kubeconfig(work / "admin.kubeconfig"))
            c = Creator(plane)
            c.create_all([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
                          nvidia_device_class()], "namespace and class")
            node_objs, slice_objs = fleet(nodes)
            c.create_all(node_objs, "Nodes")
            c.create_all(slice_objs, "ResourceSlices (8 GPUs each)")
            c.create_all([claim(i) for i in range(claims)], "ResourceClaims")
            time.sleep(5)  # the namespace's ServiceAccount, then the pod
            c.create_all(pending_pod(), "template and pending pod")
            time.sleep(10)  # the claim controller and the scheduler have their say

            kubectl = [str(binaries / "kubectl"), "--kubeconfig", kubeconfig, "get",
                       "nodes,resourceslices,resourceclaims,pods", "-A", "-o", "json"]
            drakit = [python, "-m", "drakit.cli.main"]
            snapshot = [*drakit, "snapshot", "-A", "-o", "json", "--kubeconfig", kubeconfig, "--request-timeout", "120"]
            bundle = work / "snapshot.json"
            rows: list[tuple[str, float, float, list[float], float, float, list[float]]] = []

            k_runs, d_runs = [], []
            for _ in range(args.runs):  # alternate, so load on the shared machine hits both alike
                with open(os.devnull, "wb") as null:
                    k_runs.append(timed(kubectl, null))
                with bundle.open("wb") as out:
                    d_runs.append(timed(snapshot, out))
            k_best, k_rss = min(r[0] for r in k_runs), max(r[1] for r in k_runs)
            d_best, d_rss = min(r[0] for r in d_runs), max(r[1] for r in d_runs)
            rows.append(("snapshot -A vs kubectl get -A -o json", d_best, d_rss, [r[0] for r in d_runs],
                         k_best, k_rss, [r[0] for r in k_runs]))

            explain = [*drakit, "explain", "pod/pending", "-n", NS, "-o", "json"]
            live_runs, offline_runs = [], []
            for _ in range(args.runs):
                with open(os.devnull, "wb") as null:
                    live_runs.append(timed([*explain, "--kubeconfig", kubeconfig, "--request-timeout", "120"], null))
                    offline_runs.append(timed([*explain, "-f", str(bundle)], null))
            rows.append(("explain pod/pending: live vs offline on the snapshot",
                         min(r[0] for r in live_runs), max(r[1] for r in live_runs), [r[0] for r in live_runs],
                         min(r[0] for r in offline_runs), max(r[1] for r in offline_runs), [r[0] for r in offline_runs]))
            size = bundle.stat().st_size / 2**20
        finally:
            plane.stop()

    targets = (1.5, 2.0)
    print(f"### drakit live: {nodes:,} nodes, {nodes:,} slices × 8 GPUs, {claims:,} claims (best of {args.runs})\n")
    print("| scenario | drakit | reference | ratio | target | met | drakit peak RSS | reference peak RSS | runs (drakit / reference) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for (name, d, drss, druns, ref, rrss, rruns), target in zip(rows, targets, strict=True):
        ratio = d / ref
        print(f"| {name} | {d:.2f} s | {ref:.2f} s | {ratio:.2f}× | ≤ {target:g}× | {'yes' if ratio <= target else 'NO'} | "
              f"{drss:.0f} MiB | {rrss:.0f} MiB | {', '.join(f'{t:.2f}' for t in druns)} / "
              f"{', '.join(f'{t:.2f}' for t in rruns)} |")
    print(f"\nsnapshot bundle: {size:.1f} MiB of JSON; peak RSS target for drakit snapshot: < 600 MB "
          f"({'met' if rows[0][2] * 1.048576 < 600 else 'NOT met'})")


if __name__ == "__main__":
    main()
