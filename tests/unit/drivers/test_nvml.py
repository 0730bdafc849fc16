"""NVML → ResourceSlice: recorded machines replayed through the reader map to what the NVIDIA driver publishes.

Each ``tests/golden/nvml/<gpu>.recording.json`` is what NVML (and sysfs) answered, call by call;
``<gpu>.slice.yaml`` is the slice the driver's non-DynamicMIG path would publish for it.
``DRAKIT_UPDATE_GOLDEN=1`` rewrites the slices after a reviewed change.
"""

from __future__ import annotations

import json
import math
import os
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from drakit.drivers.nvml import (
    GpuRecord,
    MigRecord,
    NvmlError,
    NvmlSnapshot,
    coerce_version,
    cuda_driver_version,
    mig_profile_name,
    pci_bus_id,
    pcie_root,
    resource_slice,
)
from drakit.executors.nvmlread import read_snapshot
from drakit.executors.nvmlreplay import ReplayNvml, record
from drakit.features import Features
from drakit.model.validate import validate

GOLDEN = Path(__file__).parents[2] / "golden" / "nvml"
RECORDINGS = sorted(GOLDEN.glob("*.recording.json"))


def _replay(path: Path) -> tuple[dict[str, Any], ReplayNvml]:
    recording = json.loads(path.read_text())
    return recording, ReplayNvml(recording)


def test_the_six_machines_are_recorded() -> None:
    assert {p.name.split(".")[0] for p in RECORDINGS} == {"t4", "l4", "a100-80gb", "h100", "a100-mig", "azure-no-numa"}


@pytest.mark.parametrize("path", [pytest.param(p, id=p.name.split(".")[0]) for p in RECORDINGS])
def test_recording_maps_to_the_golden_slice(path: Path) -> None:
    recording, lib = _replay(path)
    got = resource_slice(read_snapshot(lib, lib.readlink), "node-1")
    golden = path.with_name(path.name.replace(".recording.json", ".slice.yaml"))
    if os.environ.get("DRAKIT_UPDATE_GOLDEN"):
        golden.write_text(f"# {recording['comment']}\n" + yaml.safe_dump(got, sort_keys=False))
    assert got == yaml.safe_load(golden.read_text())
    # What the driver publishes the API server accepts.
    assert validate([got], Features.for_version("1.37")) == []


@pytest.mark.parametrize("path", [pytest.param(p, id=p.name.split(".")[0]) for p in RECORDINGS])
def test_record_of_a_replay_is_the_recording(path: Path) -> None:
    """``discover --record`` on a live NVML writes exactly what the replay reads (the round trip is closed)."""
    recording, lib = _replay(path)
    again = record(lib, lib.readlink)
    assert again["system"] == recording["system"]
    for mine, theirs in zip(again["gpus"], recording["gpus"], strict=True):
        assert {k: v for k, v in theirs.items() if k != "maxMigDeviceCount"} == mine


def _devices(name: str) -> dict[str, dict[str, Any]]:
    _, lib = _replay(GOLDEN / f"{name}.recording.json")
    return {d["name"]: d for d in resource_slice(read_snapshot(lib, lib.readlink), "n")["spec"]["devices"]}


def test_names_come_from_the_minor_number_not_the_index() -> None:
    # NVML index 0 is minor 1 on this machine; the driver names devices by minor.
    devices = _devices("a100-80gb")
    assert devices["gpu-1"]["attributes"]["uuid"]["string"] == "GPU-11111111-2222-3333-4444-555555555555"
    assert devices["gpu-0"]["attributes"]["resource.kubernetes.io/pcieRoot"]["string"] == "pci0000:80"


def test_mig_enabled_gpu_is_published_only_as_its_mig_devices() -> None:
    devices = _devices("a100-mig")
    assert sorted(devices) == ["gpu-0-mig-1g5gb-19-2", "gpu-0-mig-1g5gb-me-20-3", "gpu-0-mig-2g10gb-14-0",
                               "gpu-0-mig-3g20gb-9-4"]
    big = devices["gpu-0-mig-3g20gb-9-4"]
    assert big["capacity"]["memory"] == {"value": "20096Mi"}
    assert [k for k in big["capacity"] if k.startswith("memorySlice")] == [f"memorySlice{i}" for i in range(4, 8)]


def test_no_numa_and_no_pcie_root_on_a_virtual_bus() -> None:
    attrs = _devices("azure-no-numa")["gpu-0"]["attributes"]
    assert attrs["resource.kubernetes.io/pciBusID"] == {"string": "0001:00:00.0"}
    assert "resource.kubernetes.io/pcieRoot" not in attrs
    assert not any("numa" in k.lower() for k in attrs)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param("535.104.05", "535.104.5", id="leading-zero-patch"),
        pytest.param("9.0", "9.0.0", id="two-parts"),
        pytest.param("580.126.20", "580.126.20", id="three-parts"),
        pytest.param("v12", "12.0.0", id="v-prefix-one-part"),
        pytest.param("1.2.3-rc.1+build.5", "1.2.3-rc.1+build.5", id="pre-and-meta"),
    ],
)
def test_versions_are_coerced_as_masterminds_does(text: str, want: str) -> None:
    assert coerce_version(text) == want


@pytest.mark.parametrize("text", [pytest.param("", id="empty"), pytest.param("r535", id="letters"),
                                  pytest.param("1.2.3.4", id="four-parts")])
def test_unparseable_versions_are_refused(text: str) -> None:
    with pytest.raises(NvmlError, match="not a semantic version"):
        coerce_version(text)


@pytest.mark.parametrize(
    ("value", "want"),
    [pytest.param(12040, "12.4", id="12.4"), pytest.param(13000, "13.0", id="13.0"),
     pytest.param(11080, "11.8", id="11.8"), pytest.param(12091, "12.9", id="odd-units-dropped")],
)
def test_cuda_driver_version(value: int, want: str) -> None:
    assert cuda_driver_version(value) == want


@pytest.mark.parametrize(
    ("bus", "want"),
    [pytest.param("00000000:65:00.0", "0000:65:00.0", id="eight-digit-domain"),
     pytest.param("0000:3B:00.0", ":3b:00.0", id="four-digit-domain-loses-it-too"),
     pytest.param("0000", "0000", id="only-zeros-kept"),
     pytest.param("00000000:07:00.0\x00\x00", "0000:07:00.0", id="nul-terminated")],
)
def test_pci_bus_id_as_go_nvlib_prints_it(bus: str, want: str) -> None:
    # go-nvlib trims one leading "0000" from whatever NVML gave, so a 4-digit domain is mangled too;
    # the driver then refuses that GPU (its BDF check fails), as resource_slice does.
    assert pci_bus_id(bus) == want


@pytest.mark.parametrize(
    ("link", "want"),
    [pytest.param("../../../devices/pci0000:00/0000:00:03.0", "pci0000:00", id="relative"),
     pytest.param("/devices/pci0000:00/0000:00:03.0", None, id="absolute-not-under-bus"),
     pytest.param("../../../devices/pci0000:00/0000:00:04.0", None, id="other-device"),
     pytest.param(None, None, id="unreadable")],
)
def test_pcie_root_from_the_sysfs_link(link: str | None, want: str | None) -> None:
    assert pcie_root("0000:00:03.0", link) == want


def _gpu(**kw: Any) -> GpuRecord:
    base: dict[str, Any] = {"index": 0, "minor": 0, "uuid": "GPU-x", "name": "NVIDIA GB10", "brand": 14,
                            "architecture": 10, "compute_capability": (12, 1), "bus_id": "0000000F:01:00.0"}
    return GpuRecord(**{**base, **kw})


def test_gpu_without_memory_info_has_no_capacity() -> None:
    # GB10's unified memory: NVML answers NOT_SUPPORTED and the driver publishes no capacity.
    device = resource_slice(NvmlSnapshot("580.95.5", 13000, (_gpu(),)), "n")["spec"]["devices"][0]
    assert "capacity" not in device
    assert device["attributes"]["architecture"] == {"string": "Blackwell"}


@pytest.mark.parametrize(
    ("gpu", "message"),
    [pytest.param(_gpu(architecture=13), "architecture 13", id="arch-unknown-to-go-nvlib"),
     pytest.param(_gpu(brand=99), "brand 99", id="brand"),
     pytest.param(_gpu(bus_id="garbage"), "PCI bus id", id="bus-id")],
)
def test_values_the_driver_refuses_are_refused(gpu: GpuRecord, message: str) -> None:
    with pytest.raises(NvmlError, match=message):
        resource_slice(NvmlSnapshot("580.95.5", 13000, (gpu,)), "n")


@settings(derandomize=True, max_examples=200, deadline=None)
@given(total_gib=st.integers(8, 192), share=st.integers(1, 8))
def test_mig_profile_memory_rounds_to_whole_gb(total_gib: int, share: int) -> None:
    mib = total_gib * 1024 * share // 8 - 100  # a profile is a little under its eighth of the GPU
    mig = MigRecord("MIG-x", 0, 19, 0, 1, mib, 14, 1, 0, 0, 0, 0)
    name = mig_profile_name(mig, total_gib * 2**30)
    # the share rounds up to its eighth; times whole GiB, rounded half away from zero as Go does
    assert name == f"1g.{math.floor(Fraction(total_gib * share, 8) + Fraction(1, 2))}gb"
