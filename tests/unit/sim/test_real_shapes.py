"""The simulator on realistic NVIDIA clusters (A100 40/80 GB, L40S, H100, L4) with drakit's allocator.

Each table pins a verdict or a number a platform engineer reads off ``drakit simulate``:
what the claim controller creates, which waits are still open, which devices are stranded,
which topology a node template publishes, and what a what-if with the user's own nodes says.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml

from drakit.errors import InvalidInput
from drakit.inventory import templates
from drakit.sim import parse_scenario, run_scenario
from drakit.sim.runner import Run
from drakit.sim.scenario import parse_node_manifests

NV = templates.NVIDIA_DRIVER
H100 = "NVIDIA H100 80GB HBM3"
L4 = "NVIDIA L4"


def _template(name: str, devices: dict[str, Any]) -> str:
    doc = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"spec": {"devices": devices}},
    }
    return "---\n" + yaml.safe_dump(doc, sort_keys=False)


def _product_is(product: str) -> list[dict[str, Any]]:
    return [{"cel": {"expression": f"device.attributes['{NV}'].productName == '{product}'"}}]


ONE_GPU = _template("one-gpu", {"requests": [{"name": "gpu", "exactly": {"deviceClassName": NV}}]})
FOUR_SAME_ROOT = _template(
    "four-same-root",
    {
        "requests": [{"name": "gpus", "exactly": {"deviceClassName": NV, "count": 4}}],
        "constraints": [{"requests": ["gpus"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}],
    },
)
# Evaluation recipes: ordered alternatives, the first naming the product the team wants.
H100_FIRST = _template(
    "h100-first",
    {"requests": [{"name": "gpu", "firstAvailable": [
        {"name": "h100", "deviceClassName": NV, "selectors": _product_is(H100)},
        {"name": "any", "deviceClassName": NV},
    ]}]},
)
L4_FIRST = _template(
    "l4-first",
    {"requests": [{"name": "gpu", "firstAvailable": [
        {"name": "l4", "deviceClassName": NV, "selectors": _product_is(L4)},
        {"name": "any", "deviceClassName": NV},
    ]}]},
)


def scenario(nodes: str, workloads: str, extra: str = ONE_GPU, until: str = "") -> str:
    return (
        "apiVersion: drakit.dev/v1alpha1\nkind: Scenario\nmetadata: {name: real}\nspec:\n  seed: 5\n"
        + (f"  until: {until}\n" if until else "")
        + f"  deviceClasses: [{NV}]\n  nodes:\n{textwrap.indent(textwrap.dedent(nodes), '    ')}"
        + f"  workloads:\n{textwrap.indent(textwrap.dedent(workloads), '    ')}"
        + extra
    )


@dataclass(frozen=True)
class _Result:
    exit_code: int
    output: str


def cli(*args: str) -> _Result:
    """``drakit ARGS`` as the console script runs it (errors mapped to one line and an exit code)."""
    from drakit.cli.console import run_guarded
    from drakit.cli.main import app

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out), mock.patch.object(sys, "argv", ["drakit", *args]):
        code = run_guarded(app)
    return _Result(code, out.getvalue())


# --- the claim controller: the first failing pod claim ends syncPod ---------------------------

POD_WITH_CLAIMS = """---
apiVersion: v1
kind: Pod
metadata: {{name: trainer, namespace: default}}
spec:
  resourceClaims: {claims}
  containers: [{{name: main, image: trainer:1}}]
"""


@pytest.mark.parametrize(
    ("claims", "created", "event_claim"),
    [
        pytest.param(
            "[{name: a, resourceClaimTemplateName: one-gpu}, {name: b, resourceClaimTemplateName: missing},"
            " {name: c, resourceClaimTemplateName: one-gpu}]",
            ["trainer-a-"], "b", id="middle-missing-stops-later-claims",
        ),
        pytest.param(
            "[{name: a, resourceClaimTemplateName: missing}, {name: b, resourceClaimTemplateName: one-gpu}]",
            [], "a", id="first-missing-creates-nothing",
        ),
        pytest.param(
            "[{name: a, resourceClaimTemplateName: one-gpu}, {name: b, resourceClaimTemplateName: missing}]",
            ["trainer-a-"], "b", id="last-missing",
        ),
    ],
)
def test_failing_pod_claim_stops_the_pods_other_claims(claims: str, created: list[str], event_claim: str) -> None:
    sc = parse_scenario(scenario("- {count: 1, template: h100-8x}\n", "[]\n", ONE_GPU + POD_WITH_CLAIMS.format(claims=claims)), "s.yaml")
    run = Run(sc, 5)
    result = run.run()
    (pod,) = result.pods
    # Claims before the failing entry exist (the controller created them), later ones do not,
    # and none is recorded in the pod's status: the pod stays gated.
    assert sorted(c.obj["metadata"]["generateName"] for c in run.cluster.claims.values()) == created
    assert pod.claims == ("",) * len(pod.claims)
    assert (pod.phase, pod.reason, pod.message) == ("Pending", "Gated", 'pod "default/trainer": ResourceClaim not created yet')
    assert [(e.reason, e.message.split(":", 1)[0]) for e in result.events] == [
        ("FailedResourceClaimCreation", f"PodResourceClaim {event_claim}")
    ]


# --- values that are not numbers stop at parse ------------------------------------------------

BAD_VALUES = [
    pytest.param("- {name: w, duration: .nan}\n", "", "spec.workloads[0].duration: Invalid value: \"nan\": must be a finite number of seconds", id="nan-duration"),
    pytest.param("- {name: w, interval: .inf, count: 2}\n", "", "spec.workloads[0].interval: Invalid value: \"inf\": must be a finite number of seconds", id="inf-interval"),
    pytest.param("- {name: w, start: -5}\n", "", "spec.workloads[0].start: Invalid value: -5: must be greater than or equal to 0", id="negative-start"),
    pytest.param("- {name: w}\n", ".inf", "spec.until: Invalid value: \"inf\": must be a finite number of seconds", id="inf-until"),
    pytest.param("- {name: w, resources: {cpu: '-2'}}\n", "", "spec.workloads[0].resources.cpu: Invalid value: \"-2\": must be greater than or equal to 0", id="negative-cpu"),
    pytest.param("- {name: w, resources: {memory: '-8Gi'}}\n", "", "spec.workloads[0].resources.memory: Invalid value: \"-8Gi\": must be greater than or equal to 0", id="negative-memory"),
    pytest.param("- {name: w, resources: {cpu: inf}}\n", "", "spec.workloads[0].resources.cpu: Invalid value: \"inf\": not a cpu quantity", id="inf-cpu"),
]


@pytest.mark.parametrize(("workloads", "until", "want"), BAD_VALUES)
def test_non_finite_and_negative_values_are_rejected_at_parse(tmp_path: Path, workloads: str, until: str, want: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(scenario("- {count: 1, template: l4-4x}\n", workloads, until=until))
    res = cli("simulate", str(path), "-q")
    assert res.exit_code == 1
    (line,) = res.output.strip().splitlines()
    assert line.startswith(f"error: {path}:") and line.endswith(want), line


@pytest.mark.parametrize(
    ("annotation", "value"),
    [
        pytest.param("drakit.dev/arrival", "nan", id="nan-arrival"),
        pytest.param("drakit.dev/duration", "-60", id="negative-duration"),
        pytest.param("drakit.dev/duration", "soon", id="not-a-number"),
    ],
)
def test_mixed_in_pod_times_are_checked_at_parse(annotation: str, value: str) -> None:
    pod = f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p, annotations: {{{annotation}: '{value}'}}}}\nspec:\n  containers: [{{name: c, image: x}}]\n"
    with pytest.raises(InvalidInput) as e:
        parse_scenario(scenario("- {count: 1, template: l4-4x}\n", "[]\n", ONE_GPU + pod), "s.yaml")
    assert f"metadata.annotations.{annotation}: Invalid value: \"{value}\"" in str(e.value)


# --- waits still open at the end are censored, not dropped --------------------------------------


@pytest.mark.parametrize(
    ("pods", "pending", "p50", "p99", "bounds"),
    [
        # 16 H100s, pods that never finish: the ones beyond 16 wait until the end (3600 s).
        pytest.param(20, 4, 0, 3600, ["p90", "p99", "max", "mean"], id="backlog-of-4"),
        pytest.param(40, 24, 3600, 3600, ["p50", "p90", "p99", "max", "mean"], id="most-pods-waiting"),
        pytest.param(16, 0, 0, 0, [], id="everything-fits"),
    ],
)
def test_open_waits_count_as_lower_bounds(pods: int, pending: int, p50: float, p99: float, bounds: list[str]) -> None:
    sc = parse_scenario(
        scenario("- {count: 2, template: h100-8x}\n",
                 f"- {{name: train, count: {pods}, resourceClaims: [{{name: gpu, resourceClaimTemplateName: one-gpu}}]}}\n",
                 until="3600"),
        "s.yaml",
    )
    (g,) = run_scenario(sc).by_workload()
    assert (g.pending, g.censored, g.wait_p50, g.wait_p99, list(g.lower_bounds)) == (pending, pending, p50, p99, bounds)
    assert g.wait_mean == pytest.approx(pending * 3600 / pods)


def test_open_waits_in_json_and_text() -> None:
    sc = parse_scenario(
        scenario("- {count: 1, template: l4-4x}\n",
                 "- {name: infer, count: 6, resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]}\n", until="600"),
        "s.yaml",
    )
    from drakit.sim.report import render_text

    result = run_scenario(sc)
    wait = result.to_json()["workloads"][0]["wait"]
    assert (wait["p99"], wait["max"], wait["censored"], wait["lowerBounds"]) == (600, 600, 2, ["p90", "p99", "max", "mean"])
    row = next(line for line in render_text(result).splitlines() if line.strip().startswith("infer"))
    assert row.split()[4:8] == ["0s", "≥600s", "≥600s", "≥600s"]


# --- stranded capacity follows the firstAvailable order ----------------------------------------


@pytest.mark.parametrize(
    ("template", "claim", "pods", "placement", "stranded"),
    [
        # The first choice names the H100: getting it is what was asked for, not waste.
        pytest.param(H100_FIRST, "h100-first", 4, {H100: 4}, 0, id="first-choice-is-not-waste"),
        # L4 first: 4 fit the L4 node, the 2 that fall back to "any" take H100s an L4 would do.
        pytest.param(L4_FIRST, "l4-first", 6, {L4: 4, H100: 2}, 2, id="fallback-to-a-larger-device-is-stranded"),
        # No alternatives: a single-GPU request fits an L4, so an H100 is larger than needed.
        pytest.param(ONE_GPU, "one-gpu", 12, {H100: 8, L4: 4}, 8, id="exactly-request-on-large-device"),
    ],
)
def test_stranded_respects_first_available_order(template: str, claim: str, pods: int, placement: dict[str, int], stranded: int) -> None:
    sc = parse_scenario(
        scenario("- {count: 1, template: h100-8x}\n- {count: 1, template: l4-4x}\n",
                 f"- {{name: w, count: {pods}, duration: 3600, resourceClaims: [{{name: gpu, resourceClaimTemplateName: {claim}}}]}}\n",
                 template),
        "s.yaml",
    )
    (g,) = run_scenario(sc).by_workload()
    assert dict(g.placement) == placement
    assert g.stranded.devices == stranded
    assert g.stranded.device_seconds == stranded * 3600


# --- node templates with a selectable topology --------------------------------------------------


@pytest.mark.parametrize(
    ("node", "placed"),
    [
        # Pairs of GPUs per PCIe root (the default): no root has 4 GPUs.
        pytest.param("- {count: 1, template: h100-8x}\n", 0, id="default-pairs"),
        pytest.param("- {count: 1, template: h100-8x, topology: {gpusPerPcieRoot: 4}}\n", 2, id="four-per-root"),
        pytest.param("- {count: 1, template: a100-80gb-8x, topology: {gpusPerPcieRoot: 8, numaNodes: 1}}\n", 2, id="one-switch"),
        pytest.param("- {count: 1, template: l40s-4x, topology: {gpusPerPcieRoot: 4, numaNodes: 1}}\n", 1, id="l40s-single-root"),
        pytest.param("- {count: 2, template: a100-40gb-8x, topology: {gpusPerPcieRoot: 2, numaNodes: 2}}\n", 0, id="explicit-default"),
    ],
)
def test_topology_decides_same_root_requests(node: str, placed: int) -> None:
    sc = parse_scenario(
        scenario(node, "- {name: train, count: 2, resourceClaims: [{name: gpus, resourceClaimTemplateName: four-same-root}]}\n",
                 FOUR_SAME_ROOT),
        "s.yaml",
    )
    result = run_scenario(sc)
    assert sum(1 for p in result.pods if p.node) == placed
    for p in result.pods:
        if p.node is None:
            assert "cannot allocate all claims" in p.message


@pytest.mark.parametrize(
    ("gpus", "topology", "numa", "roots"),
    [
        pytest.param(8, templates.Topology(4, 2), [0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 0, 1, 1, 1, 1], id="8-root4-numa2"),
        pytest.param(8, templates.Topology(2, 1), [0] * 8, [0, 0, 1, 1, 2, 2, 3, 3], id="8-root2-numa1"),
        pytest.param(8, templates.Topology(1, 4), [0, 0, 1, 1, 2, 2, 3, 3], list(range(8)), id="8-root1-numa4"),
        pytest.param(4, templates.Topology(2, 2), [0, 0, 1, 1], [0, 0, 1, 1], id="4-root2-numa2"),
    ],
)
def test_topology_attributes(gpus: int, topology: templates.Topology, numa: list[int], roots: list[int]) -> None:
    node, slice_ = templates.expand(f"h100-{gpus}x", "n", topology=topology)
    devices = slice_["spec"]["devices"]
    got_numa = [d["attributes"]["resource.kubernetes.io/numaNode"]["int"] for d in devices]
    root_names = [d["attributes"]["resource.kubernetes.io/pcieRoot"]["string"] for d in devices]
    got_roots = [sorted(set(root_names), key=root_names.index).index(r) for r in root_names]
    assert (got_numa, got_roots) == (numa, roots)
    assert len({d["attributes"]["resource.kubernetes.io/pciBusID"]["string"] for d in devices}) == gpus
    assert node["metadata"]["labels"]["drakit.dev/node-topology"] == topology.label()


@pytest.mark.parametrize(
    ("node", "want"),
    [
        pytest.param("- {template: l4-4x, topology: {numaNodes: 3}}\n", "4 GPUs do not split evenly over 3 NUMA nodes", id="uneven-numa"),
        pytest.param("- {template: h100-8x, topology: {gpusPerPcieRoot: 3}}\n", "4 GPUs per NUMA node do not fill PCIe roots of 3", id="root-spans-numa"),
        pytest.param("- {template: example-8x, topology: {numaNodes: 1}}\n", "dra-example-driver publishes no PCIe or NUMA attributes", id="example-driver"),
        pytest.param("- {template: h100-8x, topology: {gpusPerPcieRoot: 0}}\n", "gpusPerPcieRoot: Invalid value: 0: must be greater than or equal to 1", id="zero"),
        pytest.param("- {template: h100-8x, topology: {nvlink: true}}\n", 'unknown field "spec.nodes[0].topology.nvlink"', id="unknown-field"),
    ],
)
def test_topology_errors(node: str, want: str) -> None:
    with pytest.raises(InvalidInput) as e:
        parse_scenario(scenario(node, "[]\n"), "s.yaml")
    assert want in str(e.value)


# --- what-if with the user's own Node and ResourceSlice manifests ------------------------------


def _manifests(*nodes: tuple[str, str]) -> str:
    return yaml.safe_dump_all([o for template, name in nodes for o in templates.expand(template, name)], sort_keys=False)


BACKLOG = scenario(
    "- {count: 1, template: l4-4x, namePrefix: l4-}\n",
    "- {name: infer, count: 12, duration: 600, resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]}\n",
)


def test_add_nodes_file_runs_the_users_nodes(tmp_path: Path) -> None:
    path, nodes = tmp_path / "s.yaml", tmp_path / "nodes.yaml"
    path.write_text(BACKLOG)
    nodes.write_text(_manifests(("a100-40gb-8x", "a100-a"), ("l40s-4x", "l40s-a")))
    res = cli("simulate", "-f", str(path), "-q", "-o", "json", "--add-nodes", str(nodes))
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert set(doc) == {"labels", "base", "variant", "diff"}
    assert doc["labels"] == {"base": "base", "variant": "+nodes.yaml"}
    assert (doc["diff"]["nodes"], doc["diff"]["devices"]) == (2, 12)
    assert doc["diff"]["workloads"]["infer"]["waitMax"] == -1200
    by_product = doc["variant"]["utilisation"]["byProduct"]
    assert {k: v["capacity"] for k, v in by_product.items()} == {"NVIDIA A100-SXM4-40GB": 8, "NVIDIA L4": 4, "NVIDIA L40S": 4}
    assert set(doc["diff"]["utilisation"]["byProduct"]) == set(by_product)


@pytest.mark.parametrize(
    ("objects", "want"),
    [
        pytest.param([("h100-8x", "l4-0")], 'metadata.name: Duplicate value: "l4-0": a node of this name exists already', id="node-exists"),
        pytest.param([("h100-8x", "new-0"), ("l4-4x", "new-0")], 'nodes.yaml:269: metadata.name: Duplicate value: "new-0"', id="node-twice-in-the-file"),
        pytest.param([], "no Node or ResourceSlice in this file", id="empty"),
    ],
)
def test_add_nodes_file_errors(objects: list[tuple[str, str]], want: str) -> None:
    base = parse_scenario(BACKLOG, "s.yaml")
    with pytest.raises(InvalidInput) as e:
        parse_node_manifests(_manifests(*objects) if objects else "", "nodes.yaml", base)
    assert want in str(e.value)


@pytest.mark.parametrize(
    ("edit", "want"),
    [
        pytest.param(lambda objs: objs[1]["spec"].update(nodeName="elsewhere"), 'spec.nodeName: Not found: "elsewhere"', id="slice-for-missing-node"),
        pytest.param(lambda objs: objs[1]["spec"]["pool"].update(name="l4-0"), 'spec.pool.name: Duplicate value: "l4-0"', id="pool-exists"),
        pytest.param(lambda objs: objs[1]["spec"].update(driver="Not A Driver"), "spec.driver: Invalid value", id="api-validation"),
        pytest.param(lambda objs: objs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}), "kind: Unsupported value: \"Pod\"", id="not-a-node"),
        pytest.param(lambda objs: objs[0]["status"]["allocatable"].update(memory="-512Gi"),
                     'status.allocatable.memory: Invalid value: "-512Gi": must be greater than or equal to 0', id="negative-allocatable"),
    ],
)
def test_add_nodes_file_is_validated(tmp_path: Path, edit: Any, want: str) -> None:
    objs = templates.expand("h100-8x", "h100-new")
    edit(objs)
    path, nodes = tmp_path / "s.yaml", tmp_path / "nodes.yaml"
    path.write_text(BACKLOG)
    nodes.write_text(yaml.safe_dump_all(objs, sort_keys=False))
    res = cli("simulate", str(path), "-q", "--add-nodes", str(nodes))
    assert res.exit_code == 1
    assert any(line.startswith(f"error: {nodes}") and want in line for line in res.output.splitlines()), res.output


# --- utilisation per product, the chart's axes, -f -----------------------------------------------


def test_utilisation_per_product_in_text_and_json() -> None:
    sc = parse_scenario(
        scenario("- {count: 1, template: h100-8x}\n- {count: 1, template: l4-4x}\n",
                 "- {name: w, count: 4, duration: 100, resourceClaims: [{name: gpu, resourceClaimTemplateName: l4-first}]}\n",
                 L4_FIRST, until="200"),
        "s.yaml",
    )
    from drakit.sim.report import render_text

    result = run_scenario(sc)
    assert result.product_utilisation() == {H100: 0.0, L4: pytest.approx(0.5)}
    assert result.to_json()["utilisation"]["byProduct"] == {
        H100: {"capacity": 8, "meanUtilisation": 0}, L4: {"capacity": 4, "meanUtilisation": 0.5}
    }
    text = render_text(result)
    section = text.split("utilisation by device product", 1)[1]
    assert f"{L4:<32}   50.0% of 4 devices" in section and f"{H100:<32}    0.0% of 8 devices" in section


def test_chart_axes_start_at_zero_with_whole_pods() -> None:
    import matplotlib.pyplot as plt

    from drakit.sim.report import _figure

    sc = parse_scenario(
        scenario("- {count: 1, template: l4-4x}\n",
                 "- {name: w, count: 7, start: 1800, duration: 600, resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]}\n"),
        "s.yaml",
    )
    fig = _figure([("run", run_scenario(sc))])
    by_class, by_product, queue = fig.axes
    assert [ax.get_title() for ax in fig.axes] == ["utilisation per device class", "utilisation per device product", "scheduling queue depth"]
    assert queue.get_xlim()[0] == 0 and queue.get_ylim()[0] == 0
    assert by_class.get_ylim()[0] == 0 and by_product.get_ylim()[0] == 0
    assert all(float(t).is_integer() for t in queue.get_yticks())
    assert [line.get_label() for line in by_product.get_lines()] == [f"{L4} (4)"]
    plt.close(fig)


@pytest.mark.parametrize(
    ("args", "code", "want"),
    [
        pytest.param(["-f", "{path}"], 0, "scenario real", id="dash-f"),
        pytest.param(["{path}"], 0, "scenario real", id="positional"),
        pytest.param(["{path}", "-f", "{path}"], 2, "give the scenario once", id="both"),
        pytest.param([], 2, "missing the scenario file", id="neither"),
    ],
)
def test_simulate_takes_dash_f(tmp_path: Path, args: list[str], code: int, want: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(BACKLOG)
    res = cli("simulate", "-q", *[a.format(path=path) for a in args])
    assert res.exit_code == code and want in res.output, res.output


@pytest.mark.parametrize(
    ("spec", "code", "placed"),
    [
        # Four GPUs on one PCIe root: only servers built that way take the training pods.
        pytest.param("2xh100-8x", 0, 0, id="default-topology-adds-nothing-that-fits"),
        pytest.param("2xh100-8x@root4-numa2", 0, 2, id="four-per-root"),
        pytest.param("1xa100-80gb-8x@root8-numa1", 0, 2, id="one-switch"),
        pytest.param("2xh100-8x@root3-numa2", 2, 0, id="root-spans-numa"),
    ],
)
def test_add_nodes_with_topology(tmp_path: Path, spec: str, code: int, placed: int) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(scenario(
        "- {count: 1, template: h100-8x}\n",
        "- {name: train, count: 2, resourceClaims: [{name: gpus, resourceClaimTemplateName: four-same-root}]}\n",
        FOUR_SAME_ROOT,
    ))
    res = cli("simulate", str(path), "-q", "-o", "json", "--add-nodes", spec)
    assert res.exit_code == code, res.output
    if code:
        assert res.output.startswith("error: --add-nodes: node group") and "do not fill PCIe roots of 3" in res.output
        return
    doc = json.loads(res.output)
    assert doc["variant"]["totals"]["scheduled"] - doc["base"]["totals"]["scheduled"] == placed
