"""Benchmark: admission decisions per second, drakit's engine next to real Kueue, on one backlog.

The backlog (:func:`backlog`): the ``lab`` example catalog's three ClusterQueues in one cohort,
``--workloads`` Jobs (default 2,000) arriving at once — round-robin over the queues' namespaces,
two priorities, 1 or 2 GPUs of ``gpu-48g`` or 1 of ``gpu-80g`` — then, until every Job has been
admitted, the oldest admitted Job finishes and the engine settles again.  A decision is one
workload admitted; the engine's time covers submitting, every scheduling cycle (heads,
nomination, ordering, set-aside and requeue) and every finish.

The real-Kueue column is filled when ``benchmarks/_kueue_bench.py`` provides
``kueue_seconds_per_decision(catalog_text, jobs, templates)`` (the test control plane with Kueue
v0.19.2 and kwok finishing pods); without it the column reads ``n/a``.  Target (issue 15): the
engine at least 10× Kueue's rate (ratio drakit/Kueue time ≤ 0.1).  Nothing here asserts a time.

Run: ``python benchmarks/bench_queues.py [--workloads N] [--quick]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO_ROOT, Row, print_table

from drakit.queues import Engine, load_catalog_text, setup_of
from drakit.queues.kueue import PRIORITY_LABEL, QUEUE_LABEL, workload_from_job

CATALOG = REPO_ROOT / "drakit" / "queues" / "examples" / "lab.yaml"
CLASSES = {"gpu-48g": "gpu-48g.gpu.nvidia.com", "gpu-80g": "gpu-80g.gpu.nvidia.com"}
ROUTES = [("team-vision", "training"), ("team-nlp", "research"), ("team-vision", "batch"), ("team-nlp", "batch")]


def templates() -> dict[str, dict[str, Any]]:
    """One ResourceClaimTemplate per (class, count), in every namespace the jobs use."""
    out = {}
    for res, dc in CLASSES.items():
        for count in (1, 2):
            name = f"{res}-x{count}"
            out[name] = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name},
                         "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": dc,
                                                                                                  "count": count}}]}}}}
    return out


def backlog(n: int) -> list[dict[str, Any]]:
    """``n`` suspended Jobs, as Kueue would see them (queue and priority labels, a claim template)."""
    jobs = []
    for i in range(n):
        ns, queue = ROUTES[i % len(ROUTES)]
        tmpl = "gpu-80g-x1" if i % 7 == 0 and queue != "batch" else f"gpu-48g-x{1 + i % 2}"
        jobs.append({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": f"job-{i:05d}", "namespace": ns,
                         "labels": {QUEUE_LABEL: queue, PRIORITY_LABEL: "high" if i % 5 == 0 else "low"}},
            "spec": {"suspend": True, "parallelism": 1, "completions": 1, "template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "main", "image": "busybox", "resources": {"claims": [{"name": "gpu"}]}}],
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": tmpl}]}}},
        })
    return jobs


def drakit_seconds_per_decision(catalog_text: str, jobs: list[dict[str, Any]], tmpls: dict[str, Any]) -> tuple[float, int, int]:
    catalog = load_catalog_text(catalog_text, CATALOG.name).catalog
    setup = setup_of(catalog)
    workloads = [workload_from_job(j, tmpls, setup.priority_classes, created=float(i)) for i, j in enumerate(jobs)]
    start = time.process_time()
    engine = Engine(setup)
    for w in workloads:
        engine.submit(w, w.created)
    engine.settle(0.0)
    done = 0
    while len(engine.order) < len(workloads):
        engine.finish(engine.order[done], float(done))
        done += 1
        engine.settle(float(done))
    elapsed = time.process_time() - start
    return elapsed / len(engine.order), len(engine.order), engine.cycles


def _kueue() -> Callable[[str, list[dict[str, Any]], dict[str, Any]], float | None] | None:
    try:
        from _kueue_bench import kueue_seconds_per_decision
    except ImportError:
        return None
    fn: Callable[[str, list[dict[str, Any]], dict[str, Any]], float | None] = kueue_seconds_per_decision
    return fn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workloads", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="200 workloads, no real Kueue")
    args = parser.parse_args()
    n = 200 if args.quick else args.workloads
    text = CATALOG.read_text(encoding="utf-8")
    jobs, tmpls = backlog(n), templates()
    per, decisions, cycles = drakit_seconds_per_decision(text, jobs, tmpls)
    kueue = None if args.quick else _kueue()
    kueue_per = kueue(text, jobs, tmpls) if kueue else None
    print_table(f"queue admission: {n}-workload backlog, 3 ClusterQueues in a cohort",
                [Row("(a) drain the backlog (admit, finish oldest, settle)", "decision", per, kueue_per, target=0.1,
                     note=f"{decisions} admissions in {cycles} cycles")],
                notes=["Go (upstream) column = real Kueue v0.19.2 on the test control plane (n/a without it)."])


if __name__ == "__main__":
    main()
