"""The MLflow mirror: each drakit run written as an MLflow run with ``drakit.*`` tags, within MLflow's limits.

MLflow keys GPUs by container-local index; the tags carry what only drakit knows — the claim
UID, each device's UUID, product, pool and driver versions, the queue and the profile — so
MLflow's "group by tag" compares runs per physical product.  The limits are mlflow's own
(``mlflow/utils/validation.py`` in 3.17): keys of at most 250 characters from ``[/\\w.\\- :]``
that stay the same under ``posixpath.normpath``; tag values of at most 8,000 characters; per
``log_batch`` at most 100 tags, 1,000 metrics, 1,000 entities and a 1 MB request.  Values over
the limit are cut and the cut keys listed in ``drakit.truncated``; nothing is silently dropped.

Needs the ``drakit[mlflow]`` extra (``mlflow-skinny`` 3.17.x, the client this registry serves).
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drakit.errors import DrakitError
from drakit.records.run import RunRecord, RunState

__all__ = ["LIMITS", "Batch", "batches", "key", "metrics_of", "mirror", "tags_of"]


@dataclass(frozen=True)
class Limits:
    key: int = 250
    tag_value: int = 8000
    tags_per_batch: int = 100
    metrics_per_batch: int = 1000
    entities_per_batch: int = 1000
    request_bytes: int = 1_000_000


LIMITS = Limits()
_BAD = re.compile(r"[^/\w.\- :]")
_STATUS = {RunState.FINISHED: "FINISHED", RunState.FAILED: "FAILED", RunState.CANCELLED: "KILLED"}


def key(name: str) -> str:
    """``name`` as a key MLflow accepts: foreign characters become ``_``, at most 250, normpath-stable."""
    text = _BAD.sub("_", name)[: LIMITS.key]
    text = posixpath.normpath(text).lstrip("/") if text else "_"
    while text.startswith(".."):
        text = "_" + text[2:]
    return text if text not in ("", ".") else "_"


def tags_of(record: RunRecord) -> tuple[dict[str, str], list[str]]:
    """``(tags, truncated keys)`` for one run: identity, claim, every device, environment, verdicts."""
    run = record.run
    raw: dict[str, str] = {
        "mlflow.runName": run.id, "drakit.run.id": run.id, "drakit.recipe": run.recipe, "drakit.profile": run.profile,
        "drakit.queue": run.queue, "drakit.namespace": run.namespace, "drakit.executor": run.executor,
        "drakit.state": run.state.value, "drakit.command": json.dumps(list(run.command)), "drakit.image": run.image,
    }
    if run.image:
        raw["drakit.image.used"] = "true" if run.image_used else "false"  # false: requested, the host ran it
    if run.pinned_product:
        raw["drakit.pinnedProduct"] = run.pinned_product
    if record.result is not None and record.result.problem_count:
        raw["drakit.problems"] = str(record.result.problem_count)  # metric reports the run could not use
    if run.reason_code:
        raw.update({"drakit.reason.code": run.reason_code, "drakit.reason.message": run.message})
    if record.claim is not None:
        c = record.claim
        raw.update({"drakit.claim.namespace": c.namespace, "drakit.claim.name": c.name, "drakit.claim.uid": c.uid,
                    "drakit.claim.template": c.template, "drakit.node": c.node})
    products = sorted({d.product for d in record.devices if d.product})
    if products:
        raw["drakit.device.product"] = ", ".join(products)  # the one tag to group a compare view by
    for i, d in enumerate(record.devices):
        for name, value in (("uuid", d.uuid), ("product", d.product), ("driver", d.driver), ("pool", d.pool),
                            ("device", d.device), ("driverVersion", d.driver_version),
                            ("cudaDriverVersion", d.cuda_driver_version), ("computeCapability", d.compute_capability),
                            ("pcieRoot", d.pcie_root), ("memoryBytes", "" if d.memory_bytes is None else str(d.memory_bytes)),
                            ("slice", d.slice_name), ("shareID", d.share_id)):
            raw[f"drakit.device.{i}.{name}"] = value
    if record.env is not None:
        raw["drakit.env.python"] = record.env.python
        raw["drakit.env.imageDigest"] = record.env.image_digest
        raw.update({f"drakit.env.{k}": v for k, v in record.env.frameworks.items()})
    tags, cut = {}, []
    for name, value in raw.items():
        if not value:
            continue
        k = key(name)
        if len(value) > LIMITS.tag_value:
            cut.append(k)
            value = value[: LIMITS.tag_value - 1] + "…"
        tags[k] = value
    if cut:
        tags["drakit.truncated"] = ",".join(cut)[: LIMITS.tag_value]
    return tags, cut


def metrics_of(record: RunRecord) -> list[tuple[str, float, int]]:
    """``(key, value, step)``: startup and runtime, correctness metrics, and every series point."""
    result = record.result
    if result is None:
        return []
    out = [(key(f"drakit.{name}"), value, 0) for name, value in
           (("startup_s", result.startup_s), ("runtime_s", result.runtime_s)) if value is not None]
    out += [(key(f"correctness.{name}"), value, 0) for name, value in result.correctness.items()]
    out += [(key(p.name), p.value, p.step) for p in result.series]
    return out


@dataclass(frozen=True)
class Batch:
    tags: tuple[tuple[str, str], ...]
    metrics: tuple[tuple[str, float, int], ...]


def _size(tags: Sequence[tuple[str, str]], metrics: Sequence[tuple[str, float, int]]) -> int:
    # Overestimates the REST body of log_batch (JSON with timestamps), so a batch never exceeds 1 MB.
    return sum(len(k) + len(v) + 40 for k, v in tags) + sum(len(k) + 90 for k, _, _ in metrics)


def batches(tags: Mapping[str, str], metrics: Sequence[tuple[str, float, int]]) -> Iterator[Batch]:
    """``log_batch`` calls that each respect every per-batch limit."""
    pending_tags, pending_metrics = list(tags.items()), list(metrics)
    while pending_tags or pending_metrics:
        batch_tags: list[tuple[str, str]] = []
        batch_metrics: list[tuple[str, float, int]] = []
        while pending_tags and len(batch_tags) < LIMITS.tags_per_batch and \
                _size([*batch_tags, pending_tags[0]], batch_metrics) <= LIMITS.request_bytes:
            batch_tags.append(pending_tags.pop(0))
        room = LIMITS.entities_per_batch - len(batch_tags)
        while pending_metrics and len(batch_metrics) < min(LIMITS.metrics_per_batch, room) and \
                _size(batch_tags, [*batch_metrics, pending_metrics[0]]) <= LIMITS.request_bytes:
            batch_metrics.append(pending_metrics.pop(0))
        yield Batch(tuple(batch_tags), tuple(batch_metrics))


def _millis(record: RunRecord, last: bool) -> int:
    at = record.run.transitions[-1 if last else 0].at
    return int(at.timestamp() * 1000)


def mirror(record: RunRecord, tracking_uri: str, experiment: str = "drakit", client: Any | None = None) -> str:
    """Write ``record`` as one MLflow run (a new one each call); returns MLflow's run ID."""
    try:
        from mlflow.entities import Metric, RunTag
        from mlflow.tracking import MlflowClient
    except ImportError:
        raise DrakitError("the MLflow mirror needs mlflow: pip install 'drakit[mlflow]'") from None
    client = client or MlflowClient(tracking_uri=tracking_uri)
    found = client.get_experiment_by_name(experiment)
    experiment_id = found.experiment_id if found is not None else client.create_experiment(experiment)
    tags, _ = tags_of(record)
    created = client.create_run(experiment_id, start_time=_millis(record, False), run_name=record.run.id)
    run_id: str = created.info.run_id
    stamp = _millis(record, True)
    for batch in batches(tags, metrics_of(record)):
        client.log_batch(run_id, metrics=[Metric(k, v, stamp, s) for k, v, s in batch.metrics],
                         tags=[RunTag(k, v) for k, v in batch.tags])
    if record.run.state in _STATUS:
        client.set_terminated(run_id, _STATUS[record.run.state], end_time=stamp)
    return run_id
