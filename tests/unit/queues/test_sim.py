"""Scenarios with queues: Jobs suspended until the engine admits them; queue wait apart from scheduling wait."""

from __future__ import annotations

from drakit.queues import load_catalog_text, setup_of
from drakit.queues.sim import EngineAdmitter
from drakit.sim import parse_scenario, run_scenario

CATALOG = """
apiVersion: drakit.dev/v1alpha1
kind: QueueCatalog
metadata: {name: sim}
spec:
  resources: [{name: gpus, deviceClasses: [gpu.nvidia.com]}]
  cohorts: [{name: org}]
  queues:
    - {name: train, namespaces: [default], cohort: org, strategy: StrictFIFO, quotas: [{resource: gpus, nominal: 4}]}
    - {name: spare, namespaces: [other], cohort: org, quotas: [{resource: gpus, nominal: 4}]}
  routing: {default: train}
"""

SCENARIO = """
apiVersion: drakit.dev/v1alpha1
kind: Scenario
metadata: {name: queued}
spec:
  seed: 1
  deviceClasses: [gpu.nvidia.com]
  nodes: [{count: 2, template: h100-8x, namePrefix: h100-}]
  workloads:
    - name: a
      kind: Job
      completions: 2
      parallelism: 2
      duration: 100
      resourceClaims: [{name: gpus, resourceClaimTemplateName: two-gpus}]
    - {name: b, kind: Job, start: 1, duration: 100, resourceClaims: [{name: gpus, resourceClaimTemplateName: two-gpus}]}
    - {name: c, kind: Job, start: 2, duration: 100, resourceClaims: [{name: gpus, resourceClaimTemplateName: two-gpus}]}
    - {name: d, kind: Job, start: 3, duration: 100, labels: {kueue.x-k8s.io/queue-name: nowhere},
       resourceClaims: [{name: gpus, resourceClaimTemplateName: two-gpus}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: two-gpus, namespace: default}
spec:
  spec:
    devices:
      requests: [{name: gpus, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}]
"""


def _run() -> dict:
    catalog = load_catalog_text(CATALOG, "catalog.yaml").catalog
    scenario = parse_scenario(SCENARIO, "scenario.yaml")
    templates = [o for o in scenario.objects if o.get("kind") == "ResourceClaimTemplate"]
    admitter = EngineAdmitter(setup_of(catalog), templates, catalog)
    return run_scenario(scenario, admitter=admitter).to_json(events=False)


def test_jobs_wait_in_the_queue_then_schedule() -> None:
    doc = _run()
    units = {u["unit"]: u for u in doc["queues"]["units"]}
    # a (2 pods x 2 GPUs) fills train's 4 and nothing is left to borrow... spare lends its 4: b borrows.
    assert units["a"]["admitted"] == 0 and units["a"]["queueWait"] == 0
    assert units["b"]["admitted"] == 1 and units["b"]["borrowed"] == {"gpus": 2}
    assert units["c"]["admitted"] == 2 and units["c"]["borrowed"] == {"gpus": 2}
    assert units["d"]["admitted"] is None and units["d"]["reason"] == "LocalQueueNotFound"
    pods = {p["name"].rsplit("-", 1)[0]: p for p in doc["pods"]}
    assert "d" not in pods  # suspended: no pod exists
    assert all(p["arrival"] >= units[p["workload"]]["admitted"] for p in doc["pods"])


def test_queue_summary_and_quota_over_time() -> None:
    doc = _run()
    train = doc["queues"]["byQueue"]["train"]
    assert (train["units"], train["admitted"], train["borrowedUnits"]) == (3, 3, 2)
    first = doc["queues"]["quota"][0]
    assert ["train", "gpus", 4] in first["used"]
    assert any(b[:2] == ["train", "gpus"] for s in doc["queues"]["quota"] for b in s["borrowed"])


def test_same_bytes_twice() -> None:
    assert _run() == _run()
