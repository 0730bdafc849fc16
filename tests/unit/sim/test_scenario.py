from __future__ import annotations

from pathlib import Path

import pytest

from drakit.errors import InvalidArgument, InvalidInput
from drakit.features import NEWEST_VERSION, Features
from drakit.sim import parse_add_nodes, parse_scenario
from drakit.sim.versions import ControlPlane
from drakit.sources import load_scenario

EXAMPLES = Path(__file__).resolve().parents[3] / "drakit" / "sim" / "examples"

HEAD = """apiVersion: drakit.dev/v1alpha1
kind: Scenario
metadata: {name: t}
spec:
"""


@pytest.mark.parametrize(
    ("body", "want"),
    [
        pytest.param("  nodes:\n    - {count: 0, template: h100-8x}\n", "s.yaml:6: spec.nodes[0].count: Invalid value: 0", id="count-zero"),
        pytest.param("  nodes:\n    - count: 2\n      template: h999-8x\n", "s.yaml:7: spec.nodes[0].template: Unsupported value", id="unknown-sku"),
        pytest.param("  workloads:\n    - name: a\n      duration: -1\n", "s.yaml:7: spec.workloads[0].duration: Invalid value: -1", id="negative-duration"),
        pytest.param("  workloads:\n    - name: a\n      kind: Job\n", "s.yaml:6: spec.workloads[0].duration: Required value", id="job-needs-duration"),
        pytest.param("  bogus: 1\n", 's.yaml:5: unknown field "spec.bogus"', id="unknown-field"),
        pytest.param(
            "  workloads:\n    - name: a\n      resourceClaims:\n        - {name: gpu, resourceClaimTemplateName: nope}\n",
            "s.yaml:8: spec.workloads[0].resourceClaims[0].resourceClaimTemplateName: Not found",
            id="missing-template",
        ),
        pytest.param("  kubernetesVersion: '1.20'\n", "s.yaml:5: spec.kubernetesVersion: Unsupported value", id="version"),
        pytest.param("  nodes: [\n", "s.yaml:6: invalid YAML", id="bad-yaml"),
    ],
)
def test_errors_carry_line_numbers(body: str, want: str) -> None:
    with pytest.raises(InvalidInput) as e:
        parse_scenario(HEAD + body, "s.yaml")
    assert want in str(e.value)


def test_mixed_in_manifest_errors_have_lines() -> None:
    text = HEAD + "  seed: 1\n---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\nspec:\n  selectors: 3\n"
    with pytest.raises(InvalidInput) as e:
        parse_scenario(text, "s.yaml")
    assert "s.yaml:11: spec.selectors" in str(e.value)


def test_exactly_one_scenario_document() -> None:
    with pytest.raises(InvalidInput, match="exactly one 'kind: Scenario'"):
        parse_scenario("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n", "s.yaml")


def test_memory_limit_stops_before_start() -> None:
    sc = parse_scenario(HEAD + "  memoryLimitMiB: 64\n  nodes:\n    - {count: 5000, template: h100-8x}\n", "s.yaml")
    with pytest.raises(InvalidInput, match="above the limit of 64 MiB"):
        sc.check_memory()
    big = parse_scenario(HEAD + "  nodes:\n    - {count: 5000, template: h100-8x}\n", "s.yaml")
    big.check_memory()  # the issue's 5,000 x 8 shape fits the default limit


def test_memory_limit_stops_run_scenario_before_anything_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    from drakit.sim import run_scenario, runner

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the run was built despite the memory limit")

    monkeypatch.setattr(runner, "Run", never)
    sc = parse_scenario(HEAD + "  memoryLimitMiB: 100\n  nodes:\n    - {count: 40, template: h100-8x}\n", "s.yaml")
    assert sc.estimated_bytes() > 100 * 2**20  # the 120 MiB base alone is above it
    with pytest.raises(InvalidInput) as e:
        run_scenario(sc)
    assert str(e.value).startswith("s.yaml: scenario \"t\" needs an estimated ")
    assert "(40 nodes, 320 devices, 0 pods), above the limit of 100 MiB" in str(e.value)


def test_memory_limit_is_a_one_line_cli_error(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "big.yaml"
    path.write_text(HEAD + "  memoryLimitMiB: 256\n  nodes:\n    - {count: 5000, template: h100-8x}\n")
    proc = subprocess.run(
        [sys.executable, "-m", "drakit.cli.main", "simulate", str(path), "--quiet"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 1, proc.stderr
    assert "needs an estimated 432 MiB" in proc.stderr
    assert "above the limit of 256 MiB: shrink the scenario or raise spec.memoryLimitMiB" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


@pytest.mark.parametrize(
    ("nodes", "pods", "fits"),
    [
        pytest.param(5000, 40000, True, id="issue-5000x8-fill-fits-2GiB"),
        pytest.param(5000, 300000, False, id="300000-pods-do-not"),
        pytest.param(32000, 0, False, id="32000-h100-nodes-do-not"),
    ],
)
def test_default_limit_against_the_issue_shapes(nodes: int, pods: int, fits: bool) -> None:
    work = f"  workloads:\n    - {{name: w, count: {pods}}}\n" if pods else ""
    sc = parse_scenario(HEAD + f"  nodes:\n    - {{count: {nodes}, template: h100-8x}}\n" + work, "s.yaml")
    assert sc.memory_limit_mib == 2048
    if fits:
        sc.check_memory()
    else:
        with pytest.raises(InvalidInput, match="above the limit of 2048 MiB"):
            sc.check_memory()


@pytest.mark.parametrize(
    ("spec", "count", "template"),
    [pytest.param("4xh200-8x", 4, "h200-8x", id="h200"), pytest.param("1xexample-2x", 1, "example-2x", id="example")],
)
def test_add_nodes(spec: str, count: int, template: str) -> None:
    g = parse_add_nodes(spec)
    assert (g.count, g.template, g.name_prefix) == (count, template, f"whatif-{template}-")


@pytest.mark.parametrize("spec", ["h200-8x", "4xh999-8x", "0xh200-8x"])
def test_add_nodes_rejects(spec: str) -> None:
    with pytest.raises(InvalidArgument, match=r"^node group "):
        parse_add_nodes(spec)


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.name)
def test_examples_load(path: Path) -> None:
    sc = load_scenario(path)
    assert sc.workloads


@pytest.mark.parametrize(
    ("body", "version", "gates"),
    [
        # Like every other drakit entry point, the newest supported release unless told otherwise.
        pytest.param("  seed: 1\n", NEWEST_VERSION, Features.for_version(NEWEST_VERSION), id="default-is-newest"),
        pytest.param("  kubernetesVersion: '1.35'\n", "1.35", Features.for_version("1.35"), id="1.35"),
        pytest.param("  kubernetesVersion: '1.34'\n", "1.34", Features.for_version("1.34"), id="1.34"),
    ],
)
def test_kubernetes_version_sets_gates_and_control_plane(body: str, version: str, gates: Features) -> None:
    sc = parse_scenario(HEAD + body, "s.yaml")
    assert (sc.kubernetes_version, sc.features) == (version, gates)
    assert ControlPlane.for_version(sc.kubernetes_version).version == version


@pytest.mark.parametrize(
    ("version", "want"),
    [
        pytest.param("1.34", ControlPlane("1.34", postfilter_noop_reasons=True, owner_block_deletion=True, dra_score_weight=0, dra_score_allocated_claims=False), id="1.34"),
        pytest.param("1.35", ControlPlane("1.35", postfilter_noop_reasons=True, owner_block_deletion=False, dra_score_weight=2, dra_score_allocated_claims=False), id="1.35"),
        pytest.param("1.36", ControlPlane("1.36", postfilter_noop_reasons=True, owner_block_deletion=False, dra_score_weight=2, dra_score_allocated_claims=True), id="1.36"),
        pytest.param("1.37", ControlPlane("1.37", postfilter_noop_reasons=False, owner_block_deletion=False, dra_score_weight=2, dra_score_allocated_claims=True), id="1.37"),
    ],
)
def test_control_plane_per_release(version: str, want: ControlPlane) -> None:
    assert ControlPlane.for_version(version) == want


def test_control_plane_rejects_unknown_release() -> None:
    with pytest.raises(InvalidArgument, match=r'unsupported Kubernetes version "1\.20"'):
        ControlPlane.for_version("1.20")


def test_scenario_from_objects_equals_parsing_the_same_stream() -> None:
    """What ``drakit trial`` uses instead of dumping its snapshot to YAML and parsing it again."""
    import dataclasses

    import yaml

    from drakit.sim import scenario_from_objects

    path = Path(__file__).resolve().parents[3] / "drakit" / "sim" / "examples" / "mixed.yaml"
    header, *objects = yaml.safe_load_all(path.read_text(encoding="utf-8"))
    assert header["kind"] == "Scenario" and objects
    assert scenario_from_objects(header, objects, source="x") == dataclasses.replace(load_scenario(path), source="x")


def test_scenario_from_objects_refuses_invalid_manifests_with_validates_lines() -> None:
    from drakit.sim import scenario_from_objects

    header = {"apiVersion": "drakit.dev/v1alpha1", "kind": "Scenario", "metadata": {"name": "s"}, "spec": {}}
    bad = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "Bad_Name"}, "spec": {}}
    with pytest.raises(InvalidInput) as e:
        scenario_from_objects(header, [bad], source="trial")
    (line,) = str(e.value).splitlines()
    assert line.startswith('trial[1]: DeviceClass "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": ')
