"""The admission engine: Kueue v0.19.2's order, set-aside, borrowing, counting — as named cases and invariants."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drakit.queues import (
    Arrive,
    ClusterQueue,
    DeviceClassMapping,
    DeviceRequest,
    Engine,
    Finish,
    NotModelled,
    PodSet,
    ResourceQuota,
    Setup,
    WaitReason,
    Workload,
    replay,
)
from drakit.queues.admission import Mode

F = "default"
GPU = "gpu-48g.gpu.nvidia.com"
MAPPINGS = (DeviceClassMapping("gpu", (GPU,)), DeviceClassMapping("mem", ("mig.nvidia.com",), counter="memory"))


def cq(name: str, gpus: int, *, cohort: str | None = None, strategy: str = "BestEffortFIFO", borrow: int | None = None,
       lend: int | None = None, pods: int | None = None, max_running: int | None = None) -> ClusterQueue:
    quotas = {(F, "gpu"): ResourceQuota(gpus, borrow, lend)}
    covered: tuple[str, ...] = ("gpu",)
    if pods is not None:
        quotas[(F, "pods")] = ResourceQuota(pods)
        covered += ("pods",)
    return ClusterQueue(name, ((covered, (F,)),), quotas, cohort, strategy, None, max_running)  # type: ignore[arg-type]


def setup(*queues: ClusterQueue) -> Setup:
    return Setup(queues, {(f"ns-{q.name}", q.name): q.name for q in queues}, mappings=MAPPINGS)


def job(name: str, queue: str, gpus: int, t: float, priority: int = 0, count: int = 1, device_class: str = GPU) -> Workload:
    return Workload(name, f"ns-{queue}", queue, (PodSet("main", count, devices=(DeviceRequest(device_class, gpus),)),),
                    priority, t)


def arrivals(*jobs: Workload) -> list[Arrive | Finish]:
    return [Arrive(j, j.created) for j in jobs]


@pytest.mark.parametrize(
    ("queues", "events", "want_order", "want_waits"),
    [
        pytest.param(
            [cq("q", 4, strategy="StrictFIFO")],
            arrivals(job("a", "q", 2, 1), job("b", "q", 3, 2), job("c", "q", 1, 3)),
            ["a"], {"b": WaitReason.WAITING_FOR_QUOTA, "c": WaitReason.BEHIND_HEAD},
            id="strict-fifo-head-blocks-younger-that-would-fit",
        ),
        pytest.param(
            [cq("q", 4)],
            arrivals(job("a", "q", 2, 1), job("b", "q", 3, 2), job("c", "q", 1, 3)),
            ["a", "c"], {"b": WaitReason.WAITING_FOR_QUOTA},
            id="best-effort-sets-head-aside-younger-admitted",
        ),
        pytest.param(
            [cq("q", 1)],
            [Arrive(job("busy", "q", 1, 0), 0), Arrive(job("old", "q", 1, 1), 1), Arrive(job("urgent", "q", 1, 2, priority=10), 2),
             Finish("ns-q/busy", 3)],
            ["busy", "urgent"], {"old": WaitReason.WAITING_FOR_QUOTA},
            id="priority-before-creation-time",
        ),
        pytest.param(
            [cq("a", 2, cohort="org", borrow=1), cq("b", 2, cohort="org")],
            arrivals(job("x", "a", 3, 1), job("y", "a", 1, 2)),
            ["x"], {"y": WaitReason.WAITING_FOR_QUOTA},
            id="borrowing-stops-at-the-limit",
        ),
        pytest.param(
            [cq("a", 2, cohort="org"), cq("b", 2, cohort="org", lend=1)],
            arrivals(job("x", "a", 3, 1), job("y", "a", 1, 2)),
            ["x"], {"y": WaitReason.WAITING_FOR_QUOTA},
            id="lending-limit-keeps-quota-home",
        ),
        pytest.param(
            [cq("q", 4)],
            arrivals(job("big", "q", 5, 1)),
            [], {"big": WaitReason.EXCEEDS_MAX},
            id="more-than-the-queue-can-ever-hold",
        ),
        pytest.param(
            [cq("q", 4)],
            arrivals(job("odd", "q", 1, 1, device_class="other.example.com")),
            [], {"odd": WaitReason.MISCONFIGURED},
            id="unmapped-device-class",
        ),
        pytest.param(
            [cq("q", 8, pods=3)],
            arrivals(job("a", "q", 1, 1, count=2), job("b", "q", 1, 2, count=2)),
            ["a"], {"b": WaitReason.WAITING_FOR_QUOTA},
            id="pods-quota-counts-pods-not-workloads",
        ),
        pytest.param(
            [cq("q", 8, max_running=1)],
            arrivals(job("a", "q", 1, 1), job("b", "q", 1, 2)),
            ["a"], {"b": WaitReason.CONCURRENCY},
            id="drakit-only-concurrency-limit",
        ),
        pytest.param(
            [cq("q", 2)],
            [*arrivals(job("a", "q", 2, 1), job("b", "q", 2, 2)), Finish("ns-q/a", 3)],
            ["a", "b"], {},
            id="finish-requeues-the-set-aside",
        ),
    ],
)
def test_scenarios(queues: list[ClusterQueue], events: list[Arrive | Finish], want_order: list[str],
                   want_waits: dict[str, WaitReason]) -> None:
    engine, _ = replay(setup(*queues), events)
    assert [k.split("/")[1] for k in engine.order] == want_order
    assert {k.split("/")[1]: w.reason for k, w in engine.waits.items()} == want_waits


def test_resource_usage_in_kueues_shape() -> None:
    engine, _ = replay(setup(cq("q", 8, pods=8)), arrivals(job("a", "q", 2, 1, count=3)))
    assert engine.admitted["ns-q/a"].to_json()["podSetAssignments"] == [
        {"name": "main", "count": 3, "flavors": {"gpu": F, "pods": F}, "resourceUsage": {"gpu": "6", "pods": "3"}}]


def test_counter_charge_is_largest_consumption_times_count() -> None:
    q = ClusterQueue("mig", ((("mem",), (F,)),), {(F, "mem"): ResourceQuota(80 * 2**30)})
    wl = Workload("a", "ns-mig", "mig", (PodSet("main", 1, devices=(DeviceRequest("mig.nvidia.com", 2, {"mem": 20 * 2**30}),)),))
    engine, _ = replay(setup(q), [Arrive(wl, 1)])
    assert engine.admitted["ns-mig/a"].to_json()["podSetAssignments"][0]["resourceUsage"] == {"mem": str(40 * 2**30)}


def test_messages_are_kueues() -> None:
    engine, _ = replay(setup(cq("q", 4)), arrivals(job("a", "q", 3, 1), job("b", "q", 2, 2), job("c", "q", 5, 3)))
    assert engine.waits["ns-q/b"].message == ("couldn't assign flavors to pod set main: insufficient unused quota for gpu in "
                                              "flavor default, 1 more needed")
    assert engine.waits["ns-q/c"].message == (
        "couldn't assign flavors to pod set main: insufficient quota for gpu in flavor default, previously considered "
        "podsets requests (0) + current podset request (5) > maximum capacity (4)")


def test_one_admission_per_cluster_queue_per_cycle() -> None:
    engine = Engine(setup(cq("q", 8), cq("r", 8)))
    for i in range(3):
        engine.submit(job(f"a{i}", "q", 1, i))
        engine.submit(job(f"b{i}", "r", 1, i))
    got, _ = engine.cycle()
    assert sorted(got) == ["ns-q/a0", "ns-r/b0"]
    engine.settle()
    assert len(engine.admitted) == 6


def test_borrowed_capacity_is_recorded() -> None:
    engine, _ = replay(setup(cq("a", 2, cohort="org"), cq("b", 2, cohort="org")), arrivals(job("x", "a", 3, 1)))
    assert engine.admitted["ns-a/x"].borrowed == {(F, "gpu"): 1}


def test_preemption_is_refused_not_guessed() -> None:
    q = ClusterQueue("q", ((("gpu",), (F,)),), {(F, "gpu"): ResourceQuota(1)}, preemption={"withinClusterQueue": "LowerPriority"})
    with pytest.raises(NotModelled, match=r"spec.preemption.withinClusterQueue: LowerPriority is not modelled"):
        Engine(setup(q))


def test_within_nominal_but_lent_is_preempt_mode_without_candidates() -> None:
    s = setup(cq("a", 2, cohort="org"), cq("b", 2, cohort="org"))
    engine, _ = replay(s, arrivals(job("x", "b", 4, 1), job("y", "a", 1, 2)))
    assert engine.waits["ns-a/y"].set_aside
    nominated = engine._nominate(s.queue("a"), job("z", "a", 1, 3), engine.tree.copy(), {"a": 0, "b": 1})
    assert nominated.mode is Mode.PREEMPT


# -- invariants -------------------------------------------------------------------------------------------


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[Setup, list[Arrive | Finish]]:
    n = draw(st.integers(1, 3))
    queues = []
    for i in range(n):
        queues.append(cq(f"q{i}", draw(st.integers(0, 6)), cohort="org" if draw(st.booleans()) else None,
                         strategy=draw(st.sampled_from(["StrictFIFO", "BestEffortFIFO"])),
                         borrow=draw(st.none() | st.integers(0, 4)), lend=draw(st.none() | st.integers(0, 4)),
                         pods=draw(st.none() | st.integers(1, 6)), max_running=draw(st.none() | st.integers(1, 4))))
    queues = [q if q.cohort else ClusterQueue(q.name, q.groups, {fr: ResourceQuota(v.nominal) for fr, v in q.quotas.items()},
                                              None, q.strategy, None, q.max_running) for q in queues]
    events: list[Arrive | Finish] = []
    live: list[str] = []
    for t in range(draw(st.integers(1, 25))):
        if live and draw(st.booleans()):
            events.append(Finish(live.pop(draw(st.integers(0, len(live) - 1))), t))
        else:
            q = draw(st.sampled_from(queues)).name
            w = job(f"w{t}", q, draw(st.integers(1, 4)), t, draw(st.sampled_from([0, 10])), draw(st.integers(1, 2)))
            events.append(Arrive(w, t))
            live.append(w.key)
    return setup(*queues), events


def _check(engine: Engine, queues: Sequence[ClusterQueue]) -> None:
    cohort_nominal: dict[tuple[str, str], int] = {}
    cohort_used: dict[tuple[str, str], int] = {}
    for q in queues:
        running = [a for a in engine.admitted.values() if a.cluster_queue == q.name]
        if q.max_running is not None:
            assert len(running) <= q.max_running
        for fr, quota in q.quotas.items():
            used = sum(a.usage().get(fr, 0) for a in running)
            assert used == engine.tree.usage(q.name, fr)
            if quota.borrowing_limit is not None or q.cohort is None:
                assert used <= quota.nominal + (quota.borrowing_limit or 0)
            if q.cohort:
                cohort_nominal[fr] = cohort_nominal.get(fr, 0) + quota.nominal
                cohort_used[fr] = cohort_used.get(fr, 0) + used
    for fr, used in cohort_used.items():
        assert used <= cohort_nominal[fr]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(scenarios())
def test_never_over_quota_nor_over_concurrency(scenario: tuple[Setup, list[Arrive | Finish]]) -> None:
    s, events = scenario
    engine = Engine(s)
    for ev in events:
        if isinstance(ev, Arrive):
            engine.submit(ev.workload, ev.at)
        else:
            engine.finish(ev.workload, ev.at)
        engine.settle(ev.at)
        _check(engine, s.cluster_queues)
        assert set(engine.admitted).isdisjoint(engine.waits)
        assert set(engine.admitted) | set(engine.waits) == set(engine.workloads)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(scenarios())
def test_fast_forward_changes_nothing(scenario: tuple[Setup, list[Arrive | Finish]]) -> None:
    """Skipping set-aside cycles gives the same steps, cycle count, waits and usage as cycle by cycle."""
    s, events = scenario
    fast, fast_steps = replay(s, events)
    slow, slow_steps = replay(s, events, fast=False)
    assert [x.to_json() for x in fast_steps] == [x.to_json() for x in slow_steps]
    assert fast.cycles == slow.cycles
    assert {k: w.to_json() for k, w in fast.waits.items()} == {k: w.to_json() for k, w in slow.waits.items()}
    assert [a.to_json() for a in fast.admitted.values()] == [a.to_json() for a in slow.admitted.values()]


def test_counter_charge_from_slices_is_the_largest_matching_consumption() -> None:
    from drakit.queues.kueue import counter_charges, workload_from_job

    s = Setup((ClusterQueue("mig", ((("mem",), (F,)),), {(F, "mem"): ResourceQuota(100 * 2**30)}),),
              {("ns", "mig"): "mig"},
              mappings=(DeviceClassMapping("mem", ("mig.nvidia.com",), "memory", "gpu.nvidia.com",
                                           "device.attributes['gpu.nvidia.com'].type == 'mig'"),))

    def dev(name: str, kind: str, gib: int) -> dict:
        return {"name": name, "attributes": {"type": {"string": kind}},
                "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": f"{gib}Gi"}}}]}

    slices = [{"spec": {"driver": "gpu.nvidia.com", "pool": {"name": "n1"},
                        "devices": [dev("mig-1g", "mig", 10), dev("mig-3g", "mig", 40), dev("gpu-0", "gpu", 80)]}}]
    tmpl = {"spec": {"spec": {"devices": {"requests": [{"name": "m", "exactly": {"deviceClassName": "mig.nvidia.com", "count": 2}}]}}}}
    charges = counter_charges(s, {"two-mig": tmpl}, {}, slices)
    assert charges == {("two-mig", "m"): {"mem": 40 * 2**30}}  # the 80 GiB full GPU is not a MIG device
    job_obj = {"metadata": {"name": "j", "namespace": "ns", "labels": {"kueue.x-k8s.io/queue-name": "mig"}},
               "spec": {"template": {"spec": {"containers": [{"name": "c"}],
                                              "resourceClaims": [{"name": "m", "resourceClaimTemplateName": "two-mig"}]}}}}
    engine, _ = replay(s, [Arrive(workload_from_job(job_obj, {"two-mig": tmpl}, charges=charges), 1)])
    assert engine.admitted["ns/j"].to_json()["podSetAssignments"][0]["resourceUsage"] == {"mem": str(80 * 2**30)}


def test_the_simulators_admitter_charges_counters_from_the_runs_slices() -> None:
    """The simulator hands its inventory to the admitter: a counter quota charges what the matching
    MIG devices consume, so a 100 GiB quota admits one 2 × 40 GiB workload at a time, not every one."""
    from drakit.queues.sim import EngineAdmitter
    from drakit.sim.scenario import PodClaim
    from drakit.sim.scenario import Workload as SimWorkload

    s = Setup((ClusterQueue("mig", ((("mem",), (F,)),), {(F, "mem"): ResourceQuota(100 * 2**30)}),),
              {("ns", "mig"): "mig"},
              mappings=(DeviceClassMapping("mem", ("mig.nvidia.com",), "memory", "gpu.nvidia.com", "true"),))
    dev = {"name": "mig-3g", "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": "40Gi"}}}]}
    slices = [{"spec": {"driver": "gpu.nvidia.com", "pool": {"name": "n1"}, "devices": [dev]}}]
    tmpl = {"metadata": {"name": "two-mig", "namespace": "ns"},
            "spec": {"spec": {"devices": {"requests": [{"name": "m", "exactly": {"deviceClassName": "mig.nvidia.com",
                                                                               "count": 2}}]}}}}
    admitter = EngineAdmitter(s, [tmpl])
    admitter.observe_inventory({}, slices)
    for i in range(2):
        w = SimWorkload(name=f"w{i}", namespace="ns", kind="Job", start=float(i), count=1, interval=0.0, duration=10.0,
                        parallelism=1, claims=(PodClaim(name="m", template="two-mig"),),
                        labels=(("kueue.x-k8s.io/queue-name", "mig"),))
        admitter.arrive(f"w{i}", w, float(i))
    assert admitter.settle(2.0) == ["w0"]  # 80 GiB charged; the second would need 160 GiB of 100
