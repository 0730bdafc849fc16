"""``drakit queue explain job/NAME`` without -f: the live form, end to end on the in-memory twin.

The Workloads, LocalQueue and ClusterQueue are the objects recorded from real Kueue v0.19.2
(``tests/integration/fixtures/kueue_workloads.json``); the Jobs are rebuilt around them with the
UIDs Kueue's ``kueue.x-k8s.io/job-uid`` label recorded.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from drakit.cli.testing import run
from drakit.live import MemoryCluster
from drakit.live.client import KUEUE_V1BETA2, ClusterError, ErrorCode

RECORDED = json.loads(
    (Path(__file__).resolve().parents[2] / "integration" / "fixtures" / "kueue_workloads.json").read_text()
)
NS = RECORDED["localQueues"][0]["metadata"]["namespace"]
CQ = RECORDED["clusterQueues"][0]["metadata"]["name"]


def _job(name: str, uid: str, *, queue: str | None = "lq", suspend: bool = True) -> dict[str, Any]:
    labels = {"kueue.x-k8s.io/queue-name": queue} if queue else {}
    return {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": NS, "uid": uid, "labels": labels},
        "spec": {"suspend": suspend, "template": {"spec": {"restartPolicy": "Never",
                                                           "containers": [{"name": "c", "image": "pause"}]}}},
    }  # fmt: skip


def _objects() -> list[dict[str, Any]]:
    jobs = [
        _job(wl["metadata"]["ownerReferences"][0]["name"], wl["metadata"]["labels"]["kueue.x-k8s.io/job-uid"])
        for wl in RECORDED["workloads"]
    ]
    return [*copy.deepcopy(RECORDED["clusterQueues"] + RECORDED["localQueues"] + RECORDED["workloads"]), *jobs,
            _job("fresh", "uid-fresh"), _job("plain", "uid-plain", queue=None)]  # fmt: skip


def _config_map(mapped: list[str]) -> dict[str, Any]:
    config = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
              "resources": {"deviceClassMappings": [{"name": f"example.com/{c}", "deviceClassNames": [c]}
                                                    for c in mapped]}}  # fmt: skip
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "kueue-manager-config", "namespace": "kueue-system"},
            "data": {"controller_manager_config.yaml": yaml.safe_dump(config)}}  # fmt: skip


@pytest.fixture
def on_twin(monkeypatch: pytest.MonkeyPatch) -> Callable[..., MemoryCluster]:
    def make(extra: list[dict[str, Any]] = (), **kwargs: Any) -> MemoryCluster:  # type: ignore[assignment]
        unserved = kwargs.pop("unserved", frozenset())
        cluster = MemoryCluster.of([*_objects(), *extra], **kwargs)
        cluster.unserved = unserved  # after the objects went in: as if Kueue's CRDs were removed
        monkeypatch.setattr("drakit.cli.door.live_client", lambda source: cluster)
        return cluster

    return make


@pytest.mark.parametrize(
    ("target", "extra", "code", "verdict", "says"),
    [
        pytest.param("job/holder", [], 0, "Admitted", [f"is admitted in ClusterQueue {CQ}, holding 2 × "],
                     id="admitted"),
        pytest.param("job/first", [], 3, "WaitingForQuota",
                     [f"ClusterQueue {CQ}: quota 2 × ", "2 used by jobs holder", "needs 1",
                      f"ClusterQueue {CQ} status: 1 admitted, 1 reserving quota, 2 pending",
                      "Kueue says: couldn't assign flavors to pod set main: insufficient unused quota"],
                     id="waiting-for-quota-with-usage"),
        pytest.param("job/unmapped", [], 3, "Inadmissible",
                     ["is inadmissible: Kueue refused its device requests", "remedy: map DeviceClass gpu-unmapped"],
                     id="inadmissible-config-unreadable"),
        pytest.param("job/unmapped", [_config_map(["gpu-48g"])], 3, "Inadmissible",
                     ["DeviceClass gpu-unmapped is not mapped"], id="inadmissible-still-unmapped"),
        pytest.param("job/unmapped", [_config_map(["gpu-48g", "gpu-unmapped"])], 3, "StuckInadmissible",
                     ["although DeviceClass gpu-unmapped is mapped now", "issue 13969", "restart the Kueue manager"],
                     id="stuck-13969-after-the-fix"),
        pytest.param("job/fresh", [], 3, "NoWorkload", ["names LocalQueue lq but Kueue has not created its Workload"],
                     id="no-workload-yet"),
        pytest.param("job/plain", [], 0, "NotManagedByKueue",
                     ["is not managed by Kueue", "suspended", "label it kueue.x-k8s.io/queue-name="],
                     id="not-managed-by-kueue"),
        pytest.param("workload/job-holder-237fb", [], 0, "Admitted", ["(Job holder) is admitted"],
                     id="workload-by-name"),
        pytest.param(f"{NS}/first", [], 3, "WaitingForQuota", ["insufficient unused quota"], id="ns-slash-name"),
    ],
)  # fmt: skip
def test_live_verdicts(on_twin: Callable[..., MemoryCluster], target: str, extra: list[dict[str, Any]], code: int,
                       verdict: str, says: list[str]) -> None:  # fmt: skip
    on_twin(extra)
    text = run("queue", "explain", target, "-n", NS)
    assert text.exit_code == code, text.stdout + text.stderr
    for s in says:
        assert s in text.stdout, text.stdout
    js = run("queue", "explain", target, "-n", NS, "-o", "json")
    assert js.exit_code == code
    assert json.loads(js.stdout)["verdict"] == verdict


def test_ahead_counts_other_pending_workloads_of_the_cluster_queue(on_twin: Callable[..., MemoryCluster]) -> None:
    on_twin()
    r = run("queue", "explain", "job/second", "-n", NS, "-o", "json")
    out = json.loads(r.stdout)
    assert r.exit_code == 3
    assert "1 ahead of you (StrictFIFO)" in out["summary"] and out["details"][0] == "ahead: first"


def _error(code: ErrorCode, status: int, message: str) -> ClusterError:
    return ClusterError(code, message, status=status)


@pytest.mark.parametrize(
    ("setup", "target", "code", "line"),
    [
        pytest.param({"unserved": frozenset({KUEUE_V1BETA2})}, "job/first", 7,
                     f"the API server does not serve Kueue's API {KUEUE_V1BETA2}", id="no-kueue-crds"),
        pytest.param({"failures": {("get", "Job"): _error(ErrorCode.FORBIDDEN, 403, "forbidden: may not get jobs")}},
                     "job/first", 6, "forbidden: may not get jobs", id="forbidden"),
        pytest.param({}, "job/nope", 2, f'job "nope" not found in namespace {NS}', id="job-not-found"),
        pytest.param({}, "workload/nope", 2, f'workload "nope" not found in namespace {NS}', id="workload-not-found"),
    ],
)  # fmt: skip
def test_errors_are_one_line(on_twin: Callable[..., MemoryCluster], setup: dict[str, Any], target: str, code: int,
                             line: str) -> None:  # fmt: skip
    on_twin(**setup)
    r = run("queue", "explain", target, "-n", NS)
    assert r.exit_code == code, r.stdout + r.stderr
    assert line in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_forbidden_across_namespaces_reads_the_jobs_namespace(on_twin: Callable[..., MemoryCluster]) -> None:
    cluster = on_twin()
    real_list = cluster.list

    def namespaced_only(kind: str, **kw: Any) -> Any:
        if kind == "Workload" and kw.get("namespace") is None:
            raise _error(ErrorCode.FORBIDDEN, 403, "forbidden: may not list workloads cluster-wide")
        return real_list(kind, **kw)

    cluster.list = namespaced_only  # type: ignore[method-assign]
    r = run("queue", "explain", "job/second", "-n", NS)
    assert r.exit_code == 3
    assert "1 ahead of you" in r.stdout
    assert f"reading namespace {NS} only" in r.stderr


def test_live_and_files_exclude_each_other(on_twin: Callable[..., MemoryCluster], tmp_path: Path) -> None:
    on_twin()
    f = tmp_path / "x.yaml"
    f.write_text("{}")
    r = run("queue", "explain", "job/first", "-f", str(f), "--context", "kind")
    assert r.exit_code == 2 and "give one source" in r.stderr
    r = run("queue", "explain", "job/first", "--catalog", str(f))
    assert r.exit_code == 2 and "--catalog takes manifests" in r.stderr
    r = run("queue", "explain", "job/")
    assert r.exit_code == 2 and "want [job/|workload/][NS/]NAME" in r.stderr


@pytest.mark.parametrize(
    "breakage",
    [
        pytest.param(lambda wl: wl["spec"].update(priority="high"), id="priority-not-a-number"),
        pytest.param(lambda wl: wl["metadata"].update(creationTimestamp="yesterday"), id="bad-timestamp"),
        pytest.param(lambda wl: wl["status"].update(conditions="QuotaReserved"), id="conditions-not-a-list"),
        pytest.param(lambda wl: wl["status"].update(resourceRequests=[{"resources": ["gpu"]}]), id="requests-a-list"),
    ],
)  # fmt: skip
def test_hostile_workload_status_is_one_line(on_twin: Callable[..., MemoryCluster],
                                             breakage: Callable[[dict[str, Any]], None]) -> None:  # fmt: skip
    cluster = on_twin()
    key = next(k for k in cluster.objects if k[0] == "Workload" and k[2].startswith("job-second-"))
    breakage(cluster.objects[key])
    r = run("queue", "explain", "job/second", "-n", NS)
    assert r.exit_code == 1, r.stdout + r.stderr
    assert f"MemoryCluster: Workload {NS}/{key[2]} (or its queues): malformed (" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
