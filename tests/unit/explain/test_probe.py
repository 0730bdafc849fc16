"""Selector probing: splitting into terms, projections, and the numbers in explanations."""

from __future__ import annotations

from typing import Any

import pytest

from drakit.explain.probe import MissingKey, Probe, Unknown, project, projection, split_terms

DRIVER = "gpu.nvidia.com"
H100: dict[str, Any] = {
    "name": "gpu-0",
    "attributes": {
        "productName": {"string": "NVIDIA H100 80GB HBM3"},
        "architecture": {"string": "Hopper"},
        "cudaComputeCapability": {"version": "9.0.0"},
        "resource.kubernetes.io/numaNode": {"int": 0},
    },
    "capacity": {"memory": {"value": "81559Mi"}},
}
MEM = "device.capacity['gpu.nvidia.com'].memory"
ATTR = "device.attributes['gpu.nvidia.com']"


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        pytest.param("a && b", ["a", "b"], id="two"),
        pytest.param("a && (b || c) && d", ["a", "(b || c)", "d"], id="parens"),
        pytest.param("a || b && c", ["a || b && c"], id="top-level-or"),
        pytest.param("x == '&&' && y", ["x == '&&'", "y"], id="string-literal"),
        pytest.param("a ? b : c && d", ["a ? b : c && d"], id="ternary"),
        pytest.param("f(a && b)", ["f(a && b)"], id="nested"),
    ],
)
def test_split_terms(expr: str, want: list[str]) -> None:
    assert split_terms(expr) == want


def test_projection_static_and_dynamic() -> None:
    refs = projection(f"{ATTR}.productName == 'x' && {MEM}.compareTo(quantity('1Gi')) >= 0")
    assert refs == (("attributes", DRIVER, "productName"), ("capacity", DRIVER, "memory"))
    assert projection(f"{ATTR}.exists(k, k == 'x')") is None
    assert projection("device.attributes[device.driver].x == 1") is None


def test_projection_ignores_other_attributes() -> None:
    refs = projection(f"{ATTR}.productName == 'x'")
    assert refs is not None
    other = {**H100, "attributes": {**H100["attributes"], "uuid": {"string": "GPU-2"}}}
    assert project(refs, DRIVER, H100) == project(refs, DRIVER, other)


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        pytest.param(f"{MEM}.compareTo(quantity('80Gi')) >= 0", False, id="compareTo"),
        pytest.param(f"{MEM}.isGreaterThan(quantity('80G'))", True, id="isGreaterThan"),
        pytest.param(f"!{MEM}.isLessThan(quantity('80Gi'))", False, id="negated"),
        pytest.param(f"{ATTR}.productName.startsWith('NVIDIA H100')", True, id="startsWith"),
        pytest.param(f"{ATTR}.cudaComputeCapability.isGreaterThan(semver('8.0.0'))", True, id="semver"),
        pytest.param(f"'architecture' in {ATTR} && {ATTR}.architecture == 'Hopper'", True, id="guarded"),
        pytest.param("device.attributes['resource.kubernetes.io'].numaNode == 0", True, id="qualified"),
    ],
)
def test_probe_evaluate(expr: str, want: bool) -> None:
    assert Probe().evaluate(expr, DRIVER, H100) is want


def test_probe_missing_and_unknown() -> None:
    with pytest.raises(MissingKey):
        Probe().evaluate(f"{ATTR}.migProfile == '1g'", DRIVER, H100)
    with pytest.raises(Unknown):
        Probe().evaluate(f"{ATTR}.exists(k, k == 'x')", DRIVER, H100)


@pytest.mark.parametrize(
    ("expr", "message", "hint"),
    [
        pytest.param(
            f"{MEM}.compareTo(quantity('80Gi')) >= 0",
            "memory 81559Mi; the selector asks >= 80Gi = 81920Mi (short by 361Mi)",
            "did you mean 80G (decimal)? 81559Mi >= 80G",
            id="binary-vs-decimal",
        ),
        pytest.param(
            f"{MEM}.compareTo(quantity('96Gi')) >= 0",
            "memory 81559Mi; the selector asks >= 96Gi = 98304Mi (short by 16745Mi)",
            "",
            id="really-short",
        ),
        pytest.param(
            f"{MEM}.isLessThan(quantity('40Gi'))",
            "memory 81559Mi; the selector asks < 40Gi = 40960Mi (over by 40599Mi)",
            "",
            id="upper-bound",
        ),
        pytest.param(
            f"{ATTR}.productName == 'NVIDIA H100 80GB hbm3'",
            'productName is "NVIDIA H100 80GB HBM3"; the selector asks == "NVIDIA H100 80GB hbm3"',
            "the values differ only in upper/lower case",
            id="case",
        ),
        pytest.param(
            f"{ATTR}.productName == 'H100'",
            'productName is "NVIDIA H100 80GB HBM3"; the selector asks == "H100"',
            'the device\'s value contains "H100": use .contains("H100")',
            id="substring",
        ),
        pytest.param(
            f"{ATTR}.cudaComputeCapability.compareTo(semver('10.0.0')) >= 0",
            "cudaComputeCapability is 9.0.0; the selector asks >= 10.0.0",
            "",
            id="version",
        ),
        pytest.param(f"{ATTR}.migProfile == '1g.10gb'", "no attribute migProfile", "", id="missing"),
        pytest.param("'Hopper' == " + f"{ATTR}.architecture && false", "", "", id="not-a-comparison"),
    ],
)
def test_probe_explain(expr: str, message: str, hint: str) -> None:
    assert Probe().explain(expr, DRIVER, H100) == (message, hint)
