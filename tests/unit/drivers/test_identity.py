"""One product label for a device, from the driver schema's ``product`` role."""

from __future__ import annotations

from typing import Any

import pytest

from drakit.drivers import get_schema
from drakit.drivers.identity import UNNAMED, product_of


def _dev(**attrs: Any) -> dict[str, Any]:
    return {"name": "d", "attributes": attrs}


@pytest.mark.parametrize(
    ("driver", "device", "want"),
    [
        pytest.param("gpu.nvidia.com", _dev(productName={"string": "NVIDIA H100 80GB HBM3"}, type={"string": "gpu"}),
                     "NVIDIA H100 80GB HBM3", id="nvidia-role"),
        pytest.param("gpu.nvidia.com", _dev(**{"gpu.nvidia.com/productName": {"string": "NVIDIA A100"}}),
                     "NVIDIA A100", id="qualified-key"),
        pytest.param("gpu.nvidia.com", _dev(model={"string": "not the role"}), UNNAMED, id="nvidia-ignores-model"),
        pytest.param("gpu.intel.com", _dev(model={"string": "Max 1550"}, productName={"string": "x"}),
                     "Max 1550", id="intel-model-role"),
        pytest.param("gpu.amd.com", _dev(productName={"string": "AMD_Instinct_MI300X_OAM"}),
                     "AMD_Instinct_MI300X_OAM", id="amd"),
        pytest.param("acme.example.org", _dev(type={"string": "fpga"}), "fpga", id="unknown-driver-common-keys"),
        pytest.param("acme.example.org", _dev(model={"version": "1.2.3"}), "1.2.3", id="any-value-kind"),
        pytest.param("gpu.nvidia.com", {"name": "d"}, UNNAMED, id="no-attributes"),
        pytest.param("gpu.nvidia.com", {"name": "d", "attributes": ["bad"]}, UNNAMED, id="malformed"),
    ],
)  # fmt: skip
def test_product_of(driver: str, device: dict[str, Any], want: str) -> None:
    assert product_of(driver, device) == want


def test_a_given_schema_version_decides() -> None:
    schema = get_schema("gpu.intel.com")
    assert product_of("gpu.intel.com", _dev(model={"string": "Flex 170"}), schema) == "Flex 170"
