"""The fast scheduler path against the node loop: byte-identical results for the same seed.

``SimOptions(fast=False)`` runs the literal Filter loop and per-node Score; the default path
uses per-shape verdicts and Fenwick trees (``drakit/sim/fastpath.py``).  Every scenario here
runs both ways and must give the same JSON (pods, devices, messages, events, allocator calls
and cached answers) and the same text report.  Clusters have more than 100 nodes where it
matters, so that ``numFeasibleNodesToFind`` is below the node count and the round-robin start
index moves.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drakit.features import SUPPORTED_VERSIONS
from drakit.sim import NodeGroup, Scenario, SimOptions, fastpath, parse_scenario
from drakit.sim.report import render_text
from drakit.sim.runner import AllocatorFactory, Run
from drakit.sources import load_scenario
from tests.unit.sim.fakes import FakeAllocator

EXAMPLES = Path(__file__).resolve().parents[3] / "drakit" / "sim" / "examples"

Tweak = Callable[[Run], None]


def both(sc: Scenario, seed: int, allocator: AllocatorFactory | None = FakeAllocator, tweak: Tweak | None = None) -> tuple[Run, Run]:
    """Run ``sc`` through the node loop and the fast path; assert identical output; return both runs."""
    runs, dumps = [], []
    for fast in (False, True):
        run = Run(sc, seed, allocator, SimOptions(fast=fast))
        if tweak is not None:
            tweak(run)
        result = run.run()
        runs.append(run)
        dumps.append((json.dumps(result.to_json(), sort_keys=True), render_text(result)))
    assert dumps[0][0] == dumps[1][0]
    assert dumps[0][1] == dumps[1][1]
    return runs[0], runs[1]


# --- generated scenarios (in-memory allocator twin) ------------------------------------------

TEMPLATES = """---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one, namespace: default}
spec:
  spec:
    devices:
      requests:
        - {name: gpu, exactly: {deviceClassName: gpu.example.com}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: two, namespace: default}
spec:
  spec:
    devices:
      requests:
        - {name: gpus, exactly: {deviceClassName: gpu.example.com, count: 2}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: pick, namespace: default}
spec:
  spec:
    devices:
      requests:
        - name: gpus
          firstAvailable:
            - {name: three, deviceClassName: gpu.example.com, count: 3}
            - {name: one, deviceClassName: gpu.example.com}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: tpu, namespace: default}
spec:
  spec:
    devices:
      requests:
        - {name: tpu, exactly: {deviceClassName: tpu.example.com}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared-a, namespace: default}
spec:
  devices:
    requests:
      - {name: gpu, exactly: {deviceClassName: gpu.example.com}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared-b, namespace: default}
spec:
  devices:
    requests:
      - {name: gpus, exactly: {deviceClassName: gpu.example.com, count: 2}}
"""

CLAIMS = {
    "one": "{name: c%d, resourceClaimTemplateName: one}",
    "two": "{name: c%d, resourceClaimTemplateName: two}",
    "pick": "{name: c%d, resourceClaimTemplateName: pick}",
    "tpu": "{name: c%d, resourceClaimTemplateName: tpu}",
    "shared-a": "{name: c%d, resourceClaimName: shared-a}",
    "shared-b": "{name: c%d, resourceClaimName: shared-b}",
}


@st.composite
def workload(draw: st.DrawFn, i: int) -> str:
    claims = draw(
        st.lists(
            st.sampled_from(["one", "one", "two", "pick", "tpu", "shared-a", "shared-b"]), max_size=2, unique=True
        )
    )
    fields = [f"name: w{i}"]
    if draw(st.integers(0, 4)) == 0:
        fields += ["kind: Job", f"completions: {draw(st.integers(1, 40))}", f"parallelism: {draw(st.integers(1, 10))}",
                   f"duration: {draw(st.integers(1, 30))}"]
    else:
        fields.append(f"count: {draw(st.integers(1, 160))}")
        fields.append(f"interval: {draw(st.sampled_from([0, 0, 1, 3]))}")
        duration = draw(st.sampled_from([None, 5, 20, 60]))
        if duration is not None:
            fields.append(f"duration: {duration}")
    fields.append(f"start: {draw(st.sampled_from([0, 0, 2, 10]))}")
    cpu = draw(st.sampled_from([None, None, "500m", "20", "60"]))
    mem = draw(st.sampled_from([None, None, "8Gi", "300Gi"]))
    resources = {k: v for k, v in (("cpu", cpu), ("memory", mem)) if v is not None}
    if resources:
        fields.append("resources: {" + ", ".join(f"{k}: '{v}'" for k, v in resources.items()) + "}")
    if claims:
        fields.append("resourceClaims: [" + ", ".join(CLAIMS[c] % j for j, c in enumerate(claims)) + "]")
    return "    - {" + ", ".join(fields) + "}\n"


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[Scenario, int, list[int]]:
    groups = draw(
        st.lists(
            st.tuples(st.sampled_from(["example-2x", "example-4x", "example-8x"]), st.integers(1, 70)),
            min_size=1,
            max_size=3,
        )
    )
    nodes = "".join(f"    - {{count: {n}, template: {t}, namePrefix: g{i}-}}\n" for i, (t, n) in enumerate(groups))
    workloads = "".join(draw(workload(i)) for i in range(draw(st.integers(1, 4))))
    # Every release: the PostFilter wording and DynamicResources scoring differ between them.
    version = draw(st.sampled_from(SUPPORTED_VERSIONS))
    text = (
        f"apiVersion: drakit.dev/v1alpha1\nkind: Scenario\nmetadata: {{name: gen}}\nspec:\n  kubernetesVersion: '{version}'\n"
        "  deviceClasses: [gpu.example.com]\n  nodes:\n" + nodes + "  workloads:\n" + workloads + TEMPLATES
    )
    total = sum(n for _, n in groups)
    small = draw(st.lists(st.integers(0, total - 1), max_size=4))  # nodes limited to 2 pods
    return parse_scenario(text, "gen.yaml"), draw(st.integers(0, 2**16)), small


def _limit_pods(small: list[int]) -> Tweak:
    def tweak(run: Run) -> None:
        for i in small:
            run.cluster.nodes[i].max_pods = 2

    return tweak


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_generated_scenarios_are_byte_identical(case: tuple[Scenario, int, list[int]]) -> None:
    sc, seed, small = case
    both(sc, seed, tweak=_limit_pods(small))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_generated_scenarios_with_every_fallback(case: tuple[Scenario, int, list[int]]) -> None:
    """Scoring by enumeration, an index per shape at once, one shape kept, a tiny change log."""
    sc, seed, small = case
    limit = _limit_pods(small)

    def tweak(run: Run) -> None:
        limit(run)
        run.scheduler._compact_at = 3

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fastpath, "MAX_CLASSES", 1)
        mp.setattr(fastpath, "MAX_SHAPES", 1)
        mp.setattr(fastpath, "INDEX_AFTER", 1)
        both(sc, seed, tweak=tweak)


# --- hand-written scenarios ---------------------------------------------------------------------

HEAD = "apiVersion: drakit.dev/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  deviceClasses: [gpu.example.com]\n"


def _scenario(nodes: str, workloads: str, extra: str = TEMPLATES) -> Scenario:
    return parse_scenario(HEAD + "  nodes:\n" + nodes + "  workloads:\n" + workloads + extra, "t.yaml")


def test_fill_examines_far_fewer_nodes_than_the_loop() -> None:
    """The point of the fast path: filling 150 nodes does not re-filter 100 nodes per pod."""
    sc = _scenario(
        "    - {count: 150, template: example-4x, namePrefix: n-}\n",
        "    - {name: fill, count: 600, resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n",
    )
    slow, fast = both(sc, 5)
    assert slow.scheduler.node_checks >= 600 * 100
    assert fast.scheduler.node_checks < slow.scheduler.node_checks // 20
    assert all(p.phase == "Running" for p in fast.pods)


def test_resource_and_dra_scores_combine_as_in_the_loop() -> None:
    """Nodes differ in cpu load and in which firstAvailable subrequest fits: normalisation matters.

    Half the nodes carry a cpu hog, the other half a pod holding two GPUs; on the 4-GPU nodes of
    the second half only the 1-GPU subrequest fits, and their spare cpu outweighs the
    DynamicResources score (weight 2) of the 3-GPU subrequest on the loaded nodes.
    """
    sc = _scenario(
        "    - {count: 60, template: example-4x, namePrefix: a-}\n    - {count: 60, template: example-8x, namePrefix: b-}\n",
        "    - {name: cpuhog, count: 60, resources: {cpu: '60'}}\n"
        "    - {name: gpuhog, start: 1, count: 60, resourceClaims: [{name: gpus, resourceClaimTemplateName: two}]}\n"
        "    - {name: pick, start: 2, count: 150, resources: {cpu: '9', memory: 100Gi}, resourceClaims: [{name: gpu, resourceClaimTemplateName: pick}]}\n",
    )
    for seed in (1, 2, 3):
        slow, _ = both(sc, seed)
        assert {len(p.devices) for p in slow.pods if p.workload == "pick" and p.node} == {1, 3}


CEL_ERROR = """---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: broken, namespace: default}
spec:
  spec:
    devices:
      requests:
        - name: gpu
          exactly:
            deviceClassName: gpu.example.com
            selectors:
              - cel: {expression: "device.attributes['gpu.example.com'].nosuchattribute == 1"}
"""

SHARED_POOL = """---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: network-attached}
spec:
  driver: gpu.example.com
  pool: {name: network-attached, generation: 1, resourceSliceCount: 1}
  allNodes: true
  devices:
    - {name: remote-0}
    - {name: remote-1}
    - {name: remote-2}
"""

REAL: list[Any] = [
    pytest.param(
        lambda: load_scenario(EXAMPLES / "mixed.yaml").with_nodes([NodeGroup(110, "l4-4x", "more-l4-")]),
        id="mixed-example-constraints-shared-claim-missing-class",
    ),
    pytest.param(
        lambda: _scenario(
            "    - {count: 104, template: example-2x, namePrefix: n-}\n",
            "    - {name: ok, count: 150, duration: 10, interval: 1, resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n"
            "    - {name: bad, count: 4, start: 3, resourceClaims: [{name: gpu, resourceClaimTemplateName: broken}]}\n"
            "    - {name: pairs, count: 60, start: 5, duration: 7, resourceClaims: [{name: gpu, resourceClaimTemplateName: two}]}\n",
            TEMPLATES + CEL_ERROR,
        ),
        id="allocator-errors-abort-the-filter",
    ),
    pytest.param(
        lambda: _scenario(
            "    - {count: 102, template: example-2x, namePrefix: n-}\n",
            "    - {name: fill, count: 210, duration: 20, resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n"
            "    - {name: late, start: 5, count: 30, duration: 4, resourceClaims: [{name: gpu, resourceClaimTemplateName: pick}]}\n",
            TEMPLATES + SHARED_POOL,
        ),
        id="pool-shared-by-all-nodes",
    ),
]


@pytest.mark.parametrize("make", REAL)
def test_real_allocator_scenarios_are_byte_identical(make: Callable[[], Scenario]) -> None:
    slow, fast = both(make(), 11, allocator=None)
    assert fast.scheduler.allocator_calls == slow.scheduler.allocator_calls


def test_real_allocator_error_path_is_exercised() -> None:
    sc = REAL[1].values[0]()
    _, fast = both(sc, 3, allocator=None)
    bad = [p for p in fast.pods if p.workload == "bad"]
    assert bad and all(p.reason == "SchedulerError" and "CEL runtime error" in p.message for p in bad)


def test_shared_pool_devices_are_used() -> None:
    sc = REAL[2].values[0]()
    _, fast = both(sc, 3, allocator=None)
    assert any("network-attached" in d for p in fast.pods for d in p.devices)


# --- backlogs: lanes of identical waiting pods -------------------------------------------------

BACKLOGS = [
    pytest.param("    - {count: 2, template: example-4x, namePrefix: n-}\n",
                 "    - {name: q, count: 300, duration: 5, resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n",
                 id="identical-backlog"),
    pytest.param("    - {count: 3, template: example-4x, namePrefix: n-}\n",
                 "    - {name: a, count: 120, interval: 1, duration: 7, resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n"
                 "    - {name: b, count: 80, duration: 4, resourceClaims: [{name: gpus, resourceClaimTemplateName: two}]}\n"
                 "    - {name: c, kind: Job, completions: 40, parallelism: 10, duration: 3, resourceClaims: [{name: g, resourceClaimTemplateName: pick}]}\n",
                 id="interleaved-shapes-and-a-job"),
    pytest.param("    - {count: 2, template: example-2x, namePrefix: n-}\n",
                 "    - {name: big, count: 60, duration: 6, resources: {cpu: '60'}, resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n"
                 "    - {name: small, count: 90, start: 2, duration: 3, resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n"
                 "    - {name: shared, count: 30, duration: 2, resourceClaims: [{name: s, resourceClaimName: shared-a}]}\n",
                 id="messages-change-and-shared-claims"),
]


@pytest.mark.parametrize("slack", [pytest.param(32, id="default-compaction"), pytest.param(0, id="compact-always")])
@pytest.mark.parametrize(("nodes", "workloads"), BACKLOGS)
def test_backlog_lanes_are_byte_identical(nodes: str, workloads: str, slack: int) -> None:
    from drakit.sim import lanes

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lanes, "COMPACT_SLACK", slack)
        both(_scenario(nodes, workloads), 11)


def test_backlog_visits_each_pod_a_bounded_number_of_times() -> None:
    """Lanes are the point: a backlog of identical pods is not re-visited pod by pod per release."""
    sc = _scenario("    - {count: 2, template: example-4x, namePrefix: n-}\n",
                   "    - {name: q, count: 800, duration: 5, resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n")
    visits = []
    for fast in (False, True):
        run = Run(sc, 1, FakeAllocator, SimOptions(fast=fast))
        calls = [0]
        schedule = run.scheduler.schedule

        def counted(pod: Any, schedule: Any = schedule, calls: list[int] = calls) -> Any:
            calls[0] += 1
            return schedule(pod)

        run.scheduler.schedule = counted  # type: ignore[method-assign]
        result = run.run()
        visits.append(calls[0])
    assert result.attempts > 40 * 800  # every waiting pod still counts an attempt per release
    assert visits[0] == result.attempts and visits[1] <= 3 * 800


def test_snapshot_read_back_keeps_bound_pods_in_both_paths() -> None:
    """A ``--snapshot-at end`` bundle simulated again: no bound pod moves, and both paths agree."""
    from drakit.sim import scenario_from_objects
    from drakit.sources import load_bundle

    bundle = load_bundle([str(Path(__file__).resolve().parents[2] / "scenarios" / "sim" / "agreement-end.yaml")])
    objects = [e.wire for e in bundle.entries if e.kind != "Event"]
    header = {"apiVersion": "drakit.dev/v1alpha1", "kind": "Scenario", "metadata": {"name": "again"}, "spec": {}}
    plain, _ = both(scenario_from_objects(header, objects), 0, allocator=None)
    bound = {f"{o['metadata']['namespace']}/{o['metadata']['name']}": o["spec"]["nodeName"]
             for o in objects if o["kind"] == "Pod" and o["spec"].get("nodeName")}
    assert len(bound) > 100
    assert {p.key: p.node for p in plain.pods if p.key in bound} == bound
