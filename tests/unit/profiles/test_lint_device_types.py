"""DK003 and the compiler's guards follow what NVIDIA's driver publishes per device type and version.

From the kubelet plugin's ``GetDevice`` at v25.3.0, v25.8.0, v25.12.0, v0.4.0 and main: full
GPUs and MIG devices always carry productName, brand, architecture, cudaComputeCapability and
the driver versions; vfio devices (v25.12+) do not; ``profile``/``parentUUID`` only MIG devices.
"""

from __future__ import annotations

import pytest

from drakit.drivers import get_schema
from drakit.profiles.lint import lint_documents
from drakit.profiles.source import parse_documents

NV = "device.attributes['gpu.nvidia.com']"
HELM_GPU_CLASS = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"
DRIVER_ONLY = "device.driver == 'gpu.nvidia.com'"


def _bundle(class_name: str, request_expr: str, class_exprs: tuple[str, ...] | None) -> str:
    text = ""
    if class_exprs is not None:
        selectors = "".join(f'  - cel:\n      expression: "{e}"\n' for e in class_exprs)
        text = f"apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: {class_name}\nspec:\n  selectors:\n{selectors}---\n"
    return text + f"""apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: train
  namespace: ml
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: {class_name}
          count: 4
          selectors:
          - cel:
              expression: "{request_expr}"
"""


@pytest.mark.parametrize(
    ("class_name", "class_exprs", "request_expr", "flagged"),
    [
        pytest.param("gpu.nvidia.com", None, f"{NV}.architecture == 'Hopper'", False, id="installed-gpu-class"),
        pytest.param("gpu.nvidia.com", (HELM_GPU_CLASS,), f"{NV}.architecture == 'Hopper'", False, id="helm-gpu-class"),
        pytest.param(
            "gpu.nvidia.com", (HELM_GPU_CLASS,), f"{NV}.cudaComputeCapability.compareTo(semver('9.0.0')) >= 0", False,
            id="compute-capability",
        ),
        pytest.param("gpu.nvidia.com", None, f"{NV}.brand == 'Nvidia'", False, id="brand"),
        pytest.param("mig.nvidia.com", None, f"{NV}.profile == '1g.10gb'", False, id="mig-profile-on-mig-class"),
        pytest.param("mig.nvidia.com", None, f"{NV}.architecture == 'Ampere'", False, id="architecture-on-mig"),
        pytest.param("gpu.nvidia.com", None, f"{NV}.profile == '1g.10gb'", True, id="mig-only-key-on-gpu-class"),
        pytest.param("vfio.gpu.nvidia.com", None, f"{NV}.architecture == 'Hopper'", True, id="vfio-has-no-nvml"),
        pytest.param("vfio.gpu.nvidia.com", None, f"{NV}.deviceID == '2330'", False, id="vfio-key-on-vfio"),
        pytest.param("any-gpu", (DRIVER_ONLY,), f"{NV}.architecture == 'Hopper'", True, id="unrestricted-class"),
        pytest.param("any-gpu", (DRIVER_ONLY,), f"{NV}.productName == 'NVIDIA H100 80GB HBM3'", False, id="product-everywhere"),
        pytest.param(
            "any-gpu", (DRIVER_ONLY, f"{NV}.type in ['gpu', 'mig']"), f"{NV}.architecture == 'Hopper'", False,
            id="class-restricts-with-in",
        ),
        pytest.param(
            "any-gpu", (DRIVER_ONLY,), f"{NV}.type == 'gpu' && {NV}.architecture == 'Hopper'", False,
            id="same-expression-restricts",
        ),
        pytest.param(
            "any-gpu", (DRIVER_ONLY,), f"'gpu' == {NV}['type'] && {NV}['architecture'] == 'Hopper'", False,
            id="reversed-and-index-form",
        ),
        pytest.param(
            "gpu.nvidia.com", None, "device.attributes['resource.kubernetes.io'].pcieRoot == 'pci0000:00'", True,
            id="pcie-root-optional-everywhere",
        ),
    ],
)
def test_dk003_per_device_type(class_name: str, class_exprs: tuple[str, ...] | None, request_expr: str, flagged: bool) -> None:
    docs = parse_documents(_bundle(class_name, request_expr, class_exprs), "recipe.yaml")
    findings = [f for f in lint_documents(docs, use_cel=False) if f.code == "DK003"]
    assert bool(findings) is flagged, [f.line() for f in findings]
    if flagged:
        assert findings[0].path.endswith("selectors[0].cel.expression") and findings[0].hint


def test_class_selector_restricted_by_an_earlier_one() -> None:
    text = _bundle("any-gpu", f"{NV}.productName != ''", (DRIVER_ONLY, f"{NV}.architecture == 'Hopper'"))
    later_first = _bundle("any-gpu", f"{NV}.productName != ''", (f"{NV}.architecture == 'Hopper'", HELM_GPU_CLASS))
    assert [f.code for f in lint_documents(parse_documents(text, "a.yaml"), use_cel=False)] == ["DK003"]
    # The type test in a *later* selector does not guard an earlier one: selectors run in order.
    assert [f.code for f in lint_documents(parse_documents(later_first, "b.yaml"), use_cel=False)] == ["DK003"]


@pytest.mark.parametrize(
    ("version", "space", "key", "types", "always"),
    [
        pytest.param("v25.3", "attributes", "architecture", (), True, id="v25.3-architecture-every-device"),
        pytest.param("v25.3", "attributes", "pcieBusID", (), True, id="v25.3-pcieBusID-every-device"),
        pytest.param("v25.3", "attributes", "minor", (), False, id="v25.3-minor-not-on-mig"),
        pytest.param("v25.3", "attributes", "minor", ("gpu",), True, id="v25.3-minor-on-gpu"),
        pytest.param("v25.8", "attributes", "architecture", (), True, id="v25.8-architecture-every-device"),
        pytest.param("v25.12", "attributes", "architecture", (), False, id="v25.12-vfio-lacks-architecture"),
        pytest.param("v25.12", "attributes", "architecture", ("gpu", "mig"), True, id="v25.12-gpu-and-mig"),
        pytest.param("v25.12", "attributes", "resource.kubernetes.io/pciBusID", ("gpu",), True, id="v25.12-bus-id-on-gpu"),
        pytest.param("v25.12", "capacity", "memory", ("gpu",), True, id="v25.12-memory-on-gpu"),
        pytest.param("v0.4", "capacity", "memory", ("gpu",), False, id="v0.4-memory-may-be-missing"),
        pytest.param("v0.4", "attributes", "resource.kubernetes.io/pciBusID", ("gpu",), False, id="v0.4-bus-id-optional"),
        pytest.param("main", "attributes", "productName", ("vfio",), True, id="main-product-everywhere"),
        pytest.param("main", "attributes", "profile", ("gpu", "mig"), False, id="main-profile-only-mig"),
    ],
)
def test_nvidia_schema_per_version(version: str, space: str, key: str, types: tuple[str, ...], always: bool) -> None:
    assert get_schema("gpu.nvidia.com", version).always_published(space, key, types) is always
