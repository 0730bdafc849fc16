"""The fleet as devices (``drakit get devices``): holders, admin access, taints, generations, filters."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from drakit.cli.get import select, table
from drakit.cli.testing import run
from drakit.inventory import templates as t
from drakit.inventory.fleet import attribute_labels, fleet
from drakit.inventory.snapshot import ClusterSnapshot
from tests.unit.explain import fleetdata as f

RULE = {"apiVersion": "resource.k8s.io/v1alpha3", "kind": "DeviceTaintRule", "metadata": {"name": "maint"},
        "spec": {"deviceSelector": {"driver": t.INTEL_DRIVER, "pool": "max-0"},
                 "taint": {"key": "maintenance", "value": "fw", "effect": "NoSchedule"}}}


def _objects() -> list[dict[str, Any]]:
    objects = [*f.nodes_and_slices(), *f.CLASSES]
    nvidia = next(o for o in objects if o["kind"] == "ResourceSlice" and o["spec"]["driver"] == t.NVIDIA_DRIVER)
    nvidia["spec"]["devices"][3]["taints"] = [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoExecute"}]
    stale = json.loads(json.dumps(nvidia))  # an older generation of the same pool: not what the scheduler uses
    stale["metadata"]["name"] = "h100-0-old"
    stale["spec"]["devices"] = [{"name": "gpu-9"}]
    stale["spec"]["pool"]["generation"] = 0
    return [
        *objects, stale, RULE,
        f.allocated_claim("train", "gpu.nvidia.com", t.NVIDIA_DRIVER, "h100-0", ["gpu-0", "gpu-1"], "train-0"),
        f.allocated_claim("monitor", "gpu.nvidia.com", t.NVIDIA_DRIVER, "h100-0", ["gpu-0", "gpu-2"], "dcgm",
                          admin=True),
        f.allocated_claim("infer", "gpu.amd.com", t.AMD_DRIVER, "mi300-0", ["gpu-0-128"], "infer-0"),
    ]


@pytest.fixture
def rows() -> Any:
    return {r.ident: r for r in fleet(ClusterSnapshot.from_objects(_objects()))}


def test_every_device_of_the_newest_generation_once(rows: Any) -> None:
    assert len(rows) == 8 and "gpu.nvidia.com/h100-0/gpu-9" not in rows
    assert [(r.product, r.memory) for r in rows.values() if r.driver == t.INTEL_DRIVER] == [(f.INTEL_PRODUCT, "131072Mi")] * 2


@pytest.mark.parametrize(("ident", "claims", "pods", "free"), [
    pytest.param("gpu.nvidia.com/h100-0/gpu-0", ["ml/train", "ml/monitor"], {"ml/train-0", "ml/dcgm"}, False,
                 id="held-and-watched"),
    pytest.param("gpu.nvidia.com/h100-0/gpu-2", ["ml/monitor"], {"ml/dcgm"}, True, id="admin-only-leaves-free"),
    pytest.param("gpu.nvidia.com/h100-0/gpu-3", [], set(), True, id="free"),
    pytest.param("gpu.amd.com/mi300-0/gpu-0-128", ["ml/infer"], {"ml/infer-0"}, False, id="amd"),
])
def test_holders(rows: Any, ident: str, claims: list[str], pods: set[str], free: bool) -> None:
    r = rows[ident]
    assert [h.claim for h in r.holdings] == claims
    assert {p for h in r.holdings for p in h.pods} == pods
    assert r.free is free


def test_taints_from_device_and_rule(rows: Any) -> None:
    assert rows["gpu.nvidia.com/h100-0/gpu-3"].taints == ("gpu.nvidia.com/xid=79:NoExecute",)
    intel = [r for r in rows.values() if r.driver == t.INTEL_DRIVER]
    assert all(r.taints == ("maintenance=fw:NoSchedule",) for r in intel)


def test_attribute_labels_take_bare_and_qualified_names(rows: Any) -> None:
    labels = attribute_labels(rows["gpu.nvidia.com/h100-0/gpu-0"])
    assert labels["productName"] == labels["gpu.nvidia.com/productName"] == f.H100.product_name
    assert labels["resource.kubernetes.io/pcieRoot"].startswith("pci0000:")


@pytest.mark.parametrize(("kw", "want"), [
    pytest.param({"selector": "architecture in (Hopper)"}, 4, id="attribute-in"),
    pytest.param({"selector": f"productName={f.AMD_PRODUCT}"}, 2, id="amd-product"),
    pytest.param({"selector": "!resource.kubernetes.io/numaNode"}, 4, id="without-attribute"),
    pytest.param({"free": True}, 5, id="free"),
    pytest.param({"node": "max-0"}, 2, id="node"),
    pytest.param({"driver": t.AMD_DRIVER, "free": True}, 1, id="driver-free"),
])
def test_select(rows: Any, kw: dict[str, Any], want: int) -> None:
    args = {"selector": None, "free": False, "node": None, "driver": None, **kw}
    assert len(select(list(rows.values()), **args)) == want


def test_table_marks_admin_holders_and_free_devices(rows: Any) -> None:
    text = table(list(rows.values()), wide=True)
    assert text.splitlines()[0].split() == ["NODE", "DRIVER", "POOL", "DEVICE", "PRODUCT", "MEMORY", "TAINTS",
                                            "CLAIM", "PODS", "REQUEST", "SLICE"]
    assert "ml/train,ml/monitor (admin)" in text and "<free>" in text


@pytest.fixture
def bundle(tmp_path: Path) -> str:
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": _objects()}))
    return str(path)


@pytest.mark.parametrize(("args", "code", "check"), [
    pytest.param(["-o", "name", "--free", "--node", "h100-0"], 0,
                 lambda out: out.split() == ["gpu.nvidia.com/h100-0/gpu-2", "gpu.nvidia.com/h100-0/gpu-3"], id="name"),
    pytest.param(["-o", "json", "--driver", t.AMD_DRIVER], 0,
                 lambda out: [i["holders"][0]["claim"] if i["holders"] else None for i in json.loads(out)["items"]]
                 == ["ml/infer", None], id="json"),
    pytest.param(["-l", "productName=nothing"], 0, lambda out: out == "", id="none"),
    pytest.param(["-l", "a in b"], 2, lambda out: out == "", id="bad-selector"),
])
def test_cli(bundle: str, args: list[str], code: int, check: Any) -> None:
    r = run("get", "devices", "-f", bundle, *args)
    assert r.exit_code == code, r.stderr
    assert check(r.stdout), r.stdout


def test_cli_refuses_other_resources_and_a_missing_source() -> None:
    r = run("get", "pods", "--demo")
    assert (r.exit_code, r.stderr.count("\n")) == (2, 1) and "devices only" in r.stderr
    r = run("get", "devices", "--kubeconfig", "/nonexistent/kubeconfig")
    assert (r.exit_code, r.stderr.count("\n")) == (1, 1) and "/nonexistent/kubeconfig" in r.stderr
