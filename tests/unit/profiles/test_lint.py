"""Each lint finding on a minimal input, with its code, line and hint."""

from __future__ import annotations

import pytest

from drakit.profiles.eligibility import cel_evaluator
from drakit.profiles.lint import lint_documents
from drakit.profiles.render import to_yaml
from drakit.profiles.source import parse_documents
from tests.unit.profiles import inventories as inv


def _lint(text: str, **kw):  # type: ignore[no-untyped-def]
    return lint_documents(parse_documents(text, "in.yaml"), **kw)


CLASS = """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: {name}
spec:
  selectors:
  - cel:
      expression: "{expr}"
"""

CLAIM = """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: t
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: {cls}
          count: {count}
"""


@pytest.mark.parametrize(
    ("expr", "code", "message"),
    [
        pytest.param("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].minor == 0", "DK002",
                     "gpu.nvidia.com stopped publishing \"minor\" in v25.8", id="removed-minor"),
        pytest.param("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].pcieBusID == 'x'", "DK002",
                     "stopped publishing \"pcieBusID\" in v25.12", id="renamed-pcie-bus-id"),
        pytest.param("device.attributes['gpu.intel.com'].vram > 0", "DK002",
                     "gpu.intel.com@v0.10 does not publish attribute \"vram\"", id="never-published"),
        pytest.param("device.attributes['gpu.nvidia.com'].architecture == 'Hopper'", "DK003",
                     "architecture is not published on vfio devices of gpu.nvidia.com@main", id="unguarded-type-specific"),
        pytest.param("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0", "DK004",
                     "threshold 80Gi excludes NVIDIA H100 80GB HBM3, NVIDIA H100 PCIe (81559Mi) by a hair", id="near-miss-binary"),
        pytest.param("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('16.2G')) >= 0", "DK004",
                     "threshold 16.2G excludes Tesla T4 (15360Mi)", id="near-miss-decimal"),
    ],
)
def test_selector_findings(expr: str, code: str, message: str) -> None:
    findings = _lint(CLASS.format(name="c", expr=expr) + "---\n" + CLAIM.format(cls="c", count=1), use_cel=False)
    hits = [f for f in findings if f.code == code]
    assert hits and message in hits[0].message, [f.line() for f in findings]
    assert hits[0].loc.line == 8 and hits[0].hint


def test_guarded_optional_reads_are_fine() -> None:
    expr = ("'architecture' in device.attributes['gpu.nvidia.com'] && "
            "device.attributes['gpu.nvidia.com'].architecture == 'Hopper'")
    findings = _lint(CLASS.format(name="c", expr=expr) + "---\n" + CLAIM.format(cls="c", count=1), use_cel=False)
    assert findings == []


def test_double_allocation() -> None:
    pod = """apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  resourceClaims: [{name: gpus, resourceClaimTemplateName: t}]
  containers:
  - name: c
    resources:
      limits: {nvidia.com/gpu: 1}
      claims: [{name: gpus}]
"""
    (f,) = _lint(pod, use_cel=False)
    assert (f.code, f.severity, f.loc.line) == ("DK001", "error", 8)
    assert "remove nvidia.com/gpu" in f.hint


def test_unused_class_but_not_the_drivers_own() -> None:
    text = CLASS.format(name="orphan", expr="device.driver == 'gpu.nvidia.com'") + "---\n" + \
        CLASS.format(name="gpu.nvidia.com", expr="device.driver == 'gpu.nvidia.com'")
    findings = _lint(text, use_cel=False)
    assert [(f.code, f.object) for f in findings] == [("DK005", "DeviceClass/orphan")]
    assert _lint(text, use_cel=False, profile_classes=["orphan"]) == []


def test_unsatisfiable_request_against_inventory() -> None:
    evaluate = cel_evaluator()
    text = to_yaml(inv.nvidia()) + "---\n" + CLASS.format(name="c", expr="device.driver == 'gpu.nvidia.com'") + \
        "---\n" + CLAIM.format(cls="c", count=5)
    findings = [f for f in lint_documents(parse_documents(text, "in.yaml"), evaluate=evaluate) if f.code == "DK006"]
    assert len(findings) == 1 and "needs 5 matching device(s) on one node; the inventory has at most 4" in findings[0].message
