"""NodeResourcesFit in explain: cpu, memory and pod-count requests agree with the scheduler."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from drakit.corev1 import node_resource_fit, pod_requests
from drakit.explain.diagnose import diagnose
from drakit.inventory.snapshot import ClusterSnapshot
from tests.unit.explain import mixed as m

ONE_GPU = m.spec(m.request("gpus", 1))
SNAPSHOT = Path(__file__).resolve().parents[2] / "scenarios" / "sim" / "agreement-end.yaml"


def _resources(**requests: str) -> dict[str, Any]:
    return {"containers": [{"name": "main", "image": "trainer:1", "resources": {"claims": [{"name": "gpus"}], "requests": requests}}]}


def _cpu_hog(node: str, cpu: str, name: str) -> m.Obj:
    """A running pod without claims that takes ``cpu`` of ``node``."""
    obj = m.pod(name, node=node, phase="Running", **_resources(cpu=cpu))
    obj["spec"]["resourceClaims"] = []
    obj["spec"]["containers"][0]["resources"].pop("claims")
    return obj


def _all_nodes_hogged(cpu: str, phase: str = "Running") -> list[m.Obj]:
    hogs = [_cpu_hog(n, cpu, f"hog-{n}") for n in m.NODES]
    for h in hogs:
        h["status"]["phase"] = phase
    return hogs


ROWS = [
    pytest.param(m.pending("train", ONE_GPU, **_resources(cpu="200")), "never", "NodeInsufficientResources",
                 "requests 200 cpu; largest node allocatable 96", id="cpu-above-every-node"),
    pytest.param(m.pending("train", ONE_GPU, **_resources(memory="2Ti")), "never", "NodeInsufficientResources",
                 "requests 2Ti memory; largest node allocatable 1Ti", id="memory-above-every-node"),
    pytest.param(m.pending("train", ONE_GPU, containers=[{"name": "main", "image": "t:1",
                                                          "resources": {"limits": {"cpu": "100"}}}]),
                 "never", "NodeInsufficientResources", "requests 100 cpu", id="limits-default-requests"),
    pytest.param(m.pending("train", ONE_GPU, **_resources(cpu="64")) + _all_nodes_hogged("40"),
                 "waiting", "NodeInsufficientResources", "requests 64 cpu; most free on a usable node 56 of 96",
                 id="cpu-held-by-bound-pods"),
    pytest.param(m.pending("train", ONE_GPU, **_resources(cpu="64", memory="2Ti")) + _all_nodes_hogged("40"),
                 "never", "NodeInsufficientResources", "requests 2Ti memory; largest node allocatable 1Ti",
                 id="cpu-busy-but-memory-never-fits"),
    pytest.param(m.pending("train", ONE_GPU, **_resources(cpu="64")) + _all_nodes_hogged("40", "Succeeded"),
                 "ok", "Fits", "", id="terminal-pods-free-their-cpu"),
    pytest.param(m.pending("train", ONE_GPU, **_resources(cpu="500m", memory="4Gi")), "ok", "Fits", "",
                 id="small-requests-fit"),
]


@pytest.mark.parametrize(("extra", "verdict", "code", "hint"), ROWS)
def test_node_resources(extra: list[m.Obj], verdict: str, code: str, hint: str) -> None:
    d = diagnose(ClusterSnapshot.from_objects(m.cluster() + extra), "pod", "train", m.NS)
    doc = d.to_json()
    assert (doc["verdict"], doc["code"]) == (verdict, code), doc
    if hint:
        assert hint in d.fix


def test_too_many_pods_waits() -> None:
    cluster = m.cluster()
    for obj in cluster:
        if obj["kind"] == "Node":
            obj["status"]["allocatable"]["pods"] = "1"
    hogs = _all_nodes_hogged("1")
    d = diagnose(ClusterSnapshot.from_objects(cluster + hogs + m.pending("train", ONE_GPU)), "pod", "train", m.NS)
    assert (d.to_json()["verdict"], d.to_json()["code"]) == ("waiting", "NodeInsufficientResources")
    assert "Too many pods" in d.headline


@pytest.mark.parametrize(
    ("spec", "want"),
    [
        pytest.param({"containers": [{"resources": {"requests": {"cpu": "1"}}}, {"resources": {"requests": {"cpu": "250m"}}}]},
                     {"cpu": 1250}, id="sum-of-containers"),
        pytest.param({"initContainers": [{"resources": {"requests": {"cpu": "4"}}}],
                      "containers": [{"resources": {"requests": {"cpu": "1"}}}]}, {"cpu": 4000}, id="init-peak-wins"),
        pytest.param({"initContainers": [{"restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}},
                                         {"resources": {"requests": {"cpu": "2"}}}],
                      "containers": [{"resources": {"requests": {"cpu": "1"}}}]}, {"cpu": 3000}, id="sidecar-beside-init"),
        pytest.param({"containers": [{"resources": {"requests": {"memory": "1Gi"}, "limits": {"memory": "2Gi", "cpu": "2"}}}],
                      "overhead": {"cpu": "100m"}}, {"memory": 1 << 30, "cpu": 2100}, id="limits-default-and-overhead"),
        pytest.param({"containers": [{"resources": {"requests": {"cpu": "0.1"}}}] * 3}, {"cpu": 300}, id="decimal-exact"),
        pytest.param({"resources": {"limits": {"cpu": "8"}},
                      "containers": [{"resources": {"requests": {"cpu": "1", "nvidia.com/gpu": "1"}}}]},
                     {"cpu": 8000, "nvidia.com/gpu": 1}, id="pod-level-resources"),
        pytest.param({"containers": [{"name": "main"}]}, {}, id="best-effort"),
    ],
)
def test_pod_requests(spec: dict[str, Any], want: dict[str, int]) -> None:
    assert pod_requests({"spec": spec}) == want


def test_agreement_snapshot_matches_the_scheduler() -> None:
    """Every Pending pod's verdict agrees with the FailedScheduling message the simulator recorded."""
    snap = ClusterSnapshot.from_objects(yaml.safe_load(SNAPSHOT.read_text(encoding="utf-8"))["items"])
    checked = 0
    for pod in snap.pods:
        if (pod.get("status") or {}).get("phase") != "Pending":
            continue
        name = pod["metadata"]["name"]
        msg = " ".join(c.get("message", "") for c in pod["status"].get("conditions") or [] if c.get("type") == "PodScheduled")
        d = diagnose(snap, "pod", name, pod["metadata"]["namespace"])
        assert "nodes are available" in msg, name
        assert d.verdict.value != "ok", (name, msg)
        resources = "Insufficient" in msg or "Too many pods" in msg
        assert (d.code.value == "NodeInsufficientResources") == resources, (name, d.code, msg)
        if "does not exist" in msg:
            assert d.verdict.value == "broken", name
        checked += 1
    assert checked >= 20
    too_big = diagnose(snap, "pod", "too-big", "default")
    assert (too_big.verdict.value, too_big.owner.value) == ("never", "application")
    assert too_big.fix.startswith("requests 200 cpu; largest node allocatable 96")


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 10**7), min_size=1, max_size=5), st.integers(0, 10**8), st.integers(0, 10**8))
def test_fit_matches_the_arithmetic(milli: list[int], alloc: int, used: int) -> None:
    """Exact millicores: the pod fits iff its summed request is at most what the node has left."""
    spec = {"containers": [{"resources": {"requests": {"cpu": f"{n}m"}}} for n in milli]}
    want = pod_requests({"spec": spec})
    assert want.get("cpu", 0) == sum(milli)
    lacks = node_resource_fit(want, {"cpu": alloc, "pods": 110}, {"cpu": used, "pods": 1})
    assert bool(lacks) == (sum(milli) > 0 and sum(milli) > alloc - used)
    assert all(x.reason == "Insufficient cpu" and x.unresolvable == (sum(milli) > alloc) for x in lacks)


def test_a_pod_naming_its_node_does_not_crowd_itself_out() -> None:
    """A pod with ``nodeName`` is already in that node's total; it must not count twice against itself."""
    objects = m.cluster() + m.pending("train", ONE_GPU, nodeName="h100-quad", **_resources(cpu="60"))
    d = diagnose(ClusterSnapshot.from_objects(objects), "pod", "train", m.NS)
    assert "NodeInsufficientResources" not in d.codes, d.codes


def test_some_nodes_full_is_a_finding_not_a_blocker() -> None:
    hogs = [h for h in _all_nodes_hogged("40") if h["spec"]["nodeName"] != "h100-quad"]
    objects = m.cluster() + hogs + m.pending("train", ONE_GPU, **_resources(cpu="64"))
    d = diagnose(ClusterSnapshot.from_objects(objects), "pod", "train", m.NS)
    assert (d.verdict.value, d.code.value, d.placement) == ("ok", "Fits", "h100-quad")
    assert d.nodes is not None and dict(d.nodes.excluded) == {"Insufficient cpu": 4}
    assert "NodeInsufficientResources" in d.codes
