"""Run records as JSON documents (``runs show -o json``, the MLflow mirror) and as text lines.

Keys are camelCase like the API objects they sit beside; the values are the record's own, so
that a document written today reads the same after any refactoring of the classes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from drakit.records.compare import Group
from drakit.records.run import Run, RunRecord

__all__ = ["comparison_json", "record_json", "run_json", "run_line", "runs_json"]


def run_json(run: Run) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": run.id, "recipe": run.recipe, "profile": run.profile, "queue": run.queue, "namespace": run.namespace,
        "executor": run.executor, "command": list(run.command), "image": run.image, "imageUsed": run.image_used,
        "pinnedProduct": run.pinned_product, "env": dict(run.env), "state": run.state.value,
        "transitions": [{"state": t.state.value, "at": t.at.isoformat()} for t in run.transitions],
    }
    if run.reason_code or run.message:
        out["reason"] = {"code": run.reason_code, "verdict": run.verdict.value if run.verdict else None,
                         "message": run.message}
    return out


def record_json(record: RunRecord) -> dict[str, Any]:
    out = run_json(record.run)
    if record.claim is not None:
        c = record.claim
        out["claim"] = {"namespace": c.namespace, "name": c.name, "uid": c.uid, "template": c.template,
                        "podName": c.pod_name, "podUID": c.pod_uid, "node": c.node}
    out["devices"] = [
        {"request": d.request, "driver": d.driver, "pool": d.pool, "device": d.device, "product": d.product,
         "uuid": d.uuid, "memoryBytes": d.memory_bytes, "driverVersion": d.driver_version,
         "cudaDriverVersion": d.cuda_driver_version, "computeCapability": d.compute_capability,
         "pcieRoot": d.pcie_root, "numaNode": d.numa_node, "slice": d.slice_name,
         "poolGeneration": d.pool_generation, "shareID": d.share_id, "consumedCapacity": dict(d.consumed_capacity),
         "joined": d.joined, "attributes": dict(d.attributes), "capacity": dict(d.capacity)}
        for d in record.devices
    ]
    if record.env is not None:
        e = record.env
        out["environment"] = {"imageDigest": e.image_digest, "python": e.python, "frameworks": dict(e.frameworks),
                              "nvml": [dict(g) for g in e.nvml]}
    if record.result is not None:
        r = record.result
        out["result"] = {"exitStatus": r.exit_status, "startupSeconds": r.startup_s, "runtimeSeconds": r.runtime_s,
                         "correctness": dict(r.correctness),
                         "series": [{"name": p.name, "step": p.step, "value": p.value} for p in r.series],
                         "problemCount": r.problem_count,
                         "problems": [{"line": p.line, "reason": p.reason, "raw": p.raw} for p in r.problems]}
    return out


def runs_json(records: Iterable[RunRecord]) -> dict[str, Any]:
    """``runs ls -o json`` (and ``GET /api/v1/runs``)."""
    return {"runs": [record_json(r) for r in records]}


def comparison_json(by: str, metric: str, groups: Iterable[Group]) -> dict[str, Any]:
    """``runs compare -o json`` (and ``GET /api/v1/comparisons``)."""
    return {"by": by, "metric": metric, "groups": [g.to_json() for g in groups]}


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}s"


def run_line(record: RunRecord, widths: Sequence[int] = (24, 18, 14, 12)) -> str:
    """``ID PROFILE STATE NODE DEVICES EXIT STARTUP RUNTIME`` for ``runs ls``."""
    run, result = record.run, record.result
    products = sorted({d.product for d in record.devices})
    node = record.claim.node if record.claim else "-"
    exit_status = "-" if result is None or result.exit_status is None else str(result.exit_status)
    cells = [run.id, run.profile, run.state.value, node]
    text = " ".join(f"{c:<{w}}" for c, w in zip(cells, widths, strict=True))
    return (f"{text} {exit_status:>4} {_seconds(result.startup_s if result else None):>9} "
            f"{_seconds(result.runtime_s if result else None):>9}  {len(record.devices)}× {', '.join(products) or '-'}")
