"""Driver schema registry: versions, history, lookups, and schemas learned from inventories."""

from __future__ import annotations

import pytest

from drakit.drivers import DRIVERS, get_schema, learn_schema, parse_driver_ref, schema_versions
from drakit.errors import NotFound
from tests.unit.profiles import inventories as inv


def test_nvidia_history() -> None:
    assert schema_versions("gpu.nvidia.com") == ["v25.3", "v25.8", "v25.12", "v0.4", "main"]
    old, main = get_schema("gpu.nvidia.com", "v25.3"), get_schema("gpu.nvidia.com")
    assert old.attribute("index") is not None and main.attribute("index") is None
    assert main.removed_key("minor") is not None and main.removed_key("pcieBusID").replacement == "resource.kubernetes.io/pciBusID"  # type: ignore[union-attr]
    assert old.capacity("memory").required and not main.capacity("memory").required  # type: ignore[union-attr]
    assert main.attribute("resource.kubernetes.io/numaNode") is not None
    assert get_schema("gpu.nvidia.com", "v25.8").attribute("resource.kubernetes.io/numaNode") is None
    assert main.attribute("gpu.nvidia.com/productName") is main.attribute("productName")


@pytest.mark.parametrize(("ref", "want"), [
    pytest.param("gpu.nvidia.com", ("gpu.nvidia.com", None), id="plain"),
    pytest.param("gpu.nvidia.com@v25.3", ("gpu.nvidia.com", "v25.3"), id="versioned"),
])
def test_parse_driver_ref(ref: str, want: tuple[str, str | None]) -> None:
    assert parse_driver_ref(ref) == want


@pytest.mark.parametrize(("driver", "version", "match"), [
    pytest.param("gpu.acme.com", None, 'unknown driver "gpu.acme.com"', id="unknown-driver"),
    pytest.param("gpu.nvidia.com", "v1", 'unknown schema version "v1"', id="unknown-version"),
])
def test_unknown_driver_or_version(driver: str, version: str | None, match: str) -> None:
    with pytest.raises(NotFound, match=match):
        get_schema(driver, version)


def test_every_schema_declares_its_roles_keys() -> None:
    for versions in DRIVERS.values():
        for s in versions:
            for role, key in s.roles.items():
                assert s.attribute(key) is not None, f"{s.ref}: role {role} -> {key}"
            if s.device_type:
                assert s.attribute(s.device_type[0]) is not None


@pytest.mark.parametrize("driver", list(inv.INVENTORIES), ids=list(inv.INVENTORIES))
def test_learned_schema_marks_gaps_optional(driver: str) -> None:
    devices = [d for sl in inv.INVENTORIES[driver]() for d in sl["spec"]["devices"]]
    learned = learn_schema(driver, devices, get_schema(driver))
    for key, spec in learned.attributes.items():
        assert spec.required == all(key in d["attributes"] for d in devices), key
    if driver == "gpu.nvidia.com":
        assert not learned.capacity("memory").required  # type: ignore[union-attr]  # the GB10-like device
        assert learned.attribute("cudaComputeCapability").type == "version"  # type: ignore[union-attr]
    if driver == "gpu.intel.com":
        assert learned.capacity("memory").zero_means_unknown  # type: ignore[union-attr]
        assert not learned.attribute("resource.kubernetes.io/pcieRoot").required  # type: ignore[union-attr]
