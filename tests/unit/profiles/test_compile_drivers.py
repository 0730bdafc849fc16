"""Golden manifests per driver schema, and compiled selectors matching exactly the intended devices."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from drakit.drivers import get_schema
from drakit.profiles import compile_profile, drivers_for, eligibility, parse_profiles
from drakit.profiles.eligibility import cel_evaluator
from drakit.profiles.lint import lint_documents
from drakit.profiles.render import to_yaml
from drakit.profiles.source import parse_documents
from tests.unit.profiles import driver_profiles as dp
from tests.unit.profiles import inventories as inv

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "profiles"
UPDATE = os.environ.get("DRAKIT_UPDATE_GOLDEN") == "1"


def _profiles():  # type: ignore[no-untyped-def]
    return parse_profiles([(text, f"{name}.yaml") for name, text in dp.PROFILES.items()])


# driver ref -> profiles compiled into its golden file
GOLDEN_CASES = {
    "gpu.nvidia.com": ["nv-80gb", "nv-80gi", "nv-pair-pcie", "nv-small-first", "nv-no-t4"],
    "gpu.nvidia.com@v25.3": ["nv-80gb", "nv-pair-pcie"],
    "gpu.example.com": ["ex-any"],
    "gpu.intel.com": ["intel-16g", "intel-small"],
    "gpu.amd.com": ["amd-mi300"],
}


@pytest.mark.parametrize("driver_ref", list(GOLDEN_CASES), ids=list(GOLDEN_CASES))
def test_golden_manifests(driver_ref: str) -> None:
    pset = _profiles()
    docs = []
    for name in GOLDEN_CASES[driver_ref]:
        rp = pset.get(name)
        (schema,) = drivers_for(rp, driver_ref)
        docs += compile_profile(rp, schema, namespace="ml").manifests()
    text = to_yaml(docs)
    path = GOLDEN / f"{driver_ref.replace('@', '-')}.yaml"
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}: run with DRAKIT_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), f"regenerate with DRAKIT_UPDATE_GOLDEN=1 and review {path}"


def test_old_schema_does_not_guard_required_memory() -> None:
    rp = _profiles().get("nv-80gb")
    old = compile_profile(rp, get_schema("gpu.nvidia.com", "v25.3"))
    new = compile_profile(rp, get_schema("gpu.nvidia.com"))
    old_mem = next(c for c in old.class_clauses if c.kind == "memory-min").expression
    new_mem = next(c for c in new.class_clauses if c.kind == "memory-min").expression
    assert not old_mem.startswith("'memory' in")
    assert new_mem.startswith("'memory' in device.capacity['gpu.nvidia.com'] && ")


@pytest.mark.parametrize("name", list(dp.EXPECTED), ids=list(dp.EXPECTED))
def test_intended_devices_qualify(name: str) -> None:
    """The profile's meaning (Python semantics) picks exactly the expected devices of a gappy inventory."""
    rp = _profiles().get(name)
    driver, want = dp.EXPECTED[name]
    (schema,) = drivers_for(rp)
    assert schema.driver == driver
    result = eligibility(compile_profile(rp, schema), inv.everything(), use_cel=False)
    assert {r.device: r.option for r in result.qualifying} == want
    assert not any(r.blocked for r in result.excluded)


@pytest.mark.parametrize("name", list(dp.EXPECTED), ids=list(dp.EXPECTED))
def test_compiled_cel_matches_intended_devices(name: str) -> None:
    """The emitted CEL, evaluated by drakit's CEL engine, agrees with the meaning on every device,
    and no selector raises a runtime error on any device (guards hold on every gap)."""
    evaluate = cel_evaluator()
    rp = _profiles().get(name)
    _, want = dp.EXPECTED[name]
    (schema,) = drivers_for(rp)
    result = eligibility(compile_profile(rp, schema), inv.everything(), evaluate=evaluate)
    assert result.engine == "cel"
    assert result.disagreements == ()
    assert [r for r in result.excluded if r.blocked] == []
    assert {r.device: r.option for r in result.qualifying} == want


@pytest.mark.parametrize("name", list(dp.PROFILES), ids=list(dp.PROFILES))
def test_compiled_selectors_guard_every_optional_key(name: str) -> None:
    """Lint's reader finds no unknown and no unguarded key in anything the compiler emits."""
    rp = _profiles().get(name)
    (schema,) = drivers_for(rp)
    cp = compile_profile(rp, schema)
    docs = parse_documents(to_yaml(cp.manifests()), "compiled.yaml")
    findings = [f for f in lint_documents(docs, use_cel=False) if f.code in ("DK002", "DK003")]
    assert findings == []


def test_nvidia_numa_colocation_needs_a_schema_that_publishes_it() -> None:
    text = dp.doc("numa", "vendor: nvidia\ncount: 2\ncolocate: numaNode\n")
    rp = parse_profiles([(text, "numa.yaml")]).get("numa")
    compile_profile(rp, get_schema("gpu.nvidia.com", "main"))
    from drakit.errors import InvalidInput

    with pytest.raises(InvalidInput, match=r"numa.yaml:8: .*spec.colocate: Forbidden: gpu.nvidia.com@v25.8 does not publish"):
        compile_profile(rp, get_schema("gpu.nvidia.com", "v25.8"))


def test_example_driver_has_no_architecture() -> None:
    from drakit.errors import InvalidInput

    text = dp.doc("arch", "vendor: example\narchitectures: {allow: [Hopper]}\n")
    rp = parse_profiles([(text, "arch.yaml")]).get("arch")
    with pytest.raises(InvalidInput, match=r"arch.yaml:7: .*spec.architectures: Forbidden: gpu.example.com@v0.4 publishes no architecture"):
        compile_profile(rp, drivers_for(rp)[0])
