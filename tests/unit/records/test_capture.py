"""An allocation joined to its slices: every field the record keeps, from the slice as published then."""

from __future__ import annotations

from typing import Any

import pytest

from drakit.records import RecordRejected, capture_devices


def _gpu(minor: int, product: str, *, numa: bool = True) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "type": {"string": "gpu"},
        "uuid": {"string": f"GPU-{minor:04d}-aaaa"},
        "productName": {"string": product},
        "driverVersion": {"version": "580.65.6"},
        "cudaDriverVersion": {"version": "13.0.0"},
        "cudaComputeCapability": {"version": "9.0.0"},
        "resource.kubernetes.io/pcieRoot": {"string": "pci0000:00"},
    }
    if numa:
        attributes["resource.kubernetes.io/numaNode"] = {"int": minor % 2}
    return {"name": f"gpu-{minor}", "attributes": attributes, "capacity": {"memory": {"value": "80Gi"}}}


def _slice(name: str, generation: int, devices: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {"driver": "gpu.nvidia.com", "nodeName": "node-a",
                 "pool": {"name": "node-a", "generation": generation, "resourceSliceCount": 1},
                 "devices": devices},
    }


SLICES = [
    _slice("node-a-old", 1, [_gpu(0, "NVIDIA A100-SXM4-80GB")]),  # superseded generation: ignored
    _slice("node-a-gpu", 2, [_gpu(0, "NVIDIA H100 80GB HBM3"), _gpu(1, "NVIDIA H100 80GB HBM3", numa=False)]),
]


def _result(device: str, **extra: Any) -> dict[str, Any]:
    return {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "node-a", "device": device, **extra}


def test_rows_join_the_newest_slice_of_the_pool() -> None:
    allocation = {"devices": {"results": [
        _result("gpu-0"),
        _result("gpu-1", shareID="7f1c0d7e-0000-4000-8000-000000000001", consumedCapacity={"memory": "10Gi"}),
    ]}}
    first, second = capture_devices(allocation, SLICES)
    assert (first.product, first.uuid, first.slice_name, first.pool_generation) == (
        "NVIDIA H100 80GB HBM3", "GPU-0000-aaaa", "node-a-gpu", 2)
    assert (first.driver_version, first.cuda_driver_version, first.compute_capability) == ("580.65.6", "13.0.0", "9.0.0")
    assert (first.memory_bytes, first.pcie_root, first.numa_node) == (80 * 2**30, "pci0000:00", 0)
    assert dict(first.capacity) == {"memory": "80Gi"}
    assert first.attributes["productName"] == {"string": "NVIDIA H100 80GB HBM3"}
    assert (first.share_id, dict(first.consumed_capacity), first.joined) == ("", {}, True)
    assert second.numa_node is None  # a GPU without NUMA information
    assert (second.share_id, dict(second.consumed_capacity)) == ("7f1c0d7e-0000-4000-8000-000000000001",
                                                                 {"memory": "10Gi"})


@pytest.mark.parametrize(
    ("result", "why"),
    [
        pytest.param(_result("gpu-9"), "device not published", id="unknown-device"),
        pytest.param({**_result("gpu-0"), "pool": "node-b"}, "pool not published", id="unknown-pool"),
    ],
)
def test_an_unpublished_device_is_kept_unjoined(result: dict[str, Any], why: str) -> None:
    (row,) = capture_devices({"devices": {"results": [result]}}, SLICES)
    assert (row.device, row.pool, row.joined, row.product, row.slice_name) == (
        result["device"], result["pool"], False, "", ""), why


def test_no_results_no_rows() -> None:
    assert capture_devices({}, SLICES) == ()


def test_hostile_attribute_is_refused() -> None:
    huge = _gpu(0, "x" * 5000)
    with pytest.raises(RecordRejected, match=r"devices\[0\].product: 5000 characters, at most 1024"):
        capture_devices({"devices": {"results": [_result("gpu-0")]}}, [_slice("s", 1, [huge])])
