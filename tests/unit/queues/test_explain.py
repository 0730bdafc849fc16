"""Offline queue explanations and the Kueue 13969 stuck state."""

from __future__ import annotations

import pytest

from drakit.queues import Engine, replay
from drakit.queues.explain import explain_workload, stuck_after_fix
from tests.unit.queues.test_admission import arrivals, cq, job, setup


def test_lender_is_named() -> None:
    s = setup(cq("training", 4, cohort="org"), cq("research", 2, cohort="org"))
    engine, _ = replay(s, arrivals(job("a", "training", 2, 1), job("r", "research", 3, 2), job("b", "training", 2, 3)))
    ex = explain_workload(engine, "ns-training/b")
    assert not ex.admitted
    assert ex.lines == ("ClusterQueue training: quota 4 × gpu, 2 used by jobs a (1 borrowed by research); 0 ahead of you "
                        "(BestEffortFIFO)",)
    assert ex.reason == "WaitingForQuota" and "insufficient unused quota for gpu" in ex.message


def test_admitted_says_what_it_holds() -> None:
    engine, _ = replay(setup(cq("q", 4)), arrivals(job("a", "q", 2, 1)))
    assert explain_workload(engine, "ns-q/a").text() == "ns-q/a: admitted by ClusterQueue q\n  holds 2 × gpu\n"


def _workload(requeued: str, reason: str, reserved: str = "False") -> dict:
    return {"metadata": {"name": "job-train-1a2b3", "namespace": "ns-q"},
            "status": {"conditions": [
                {"type": "QuotaReserved", "status": reserved, "reason": "Pending",
                 "message": "DeviceClass gpu-48g.gpu.nvidia.com is not mapped in DRA configuration for podset main"},
                {"type": "Requeued", "status": requeued, "reason": reason, "message": ""}]}}


@pytest.mark.parametrize(
    ("obj", "stuck"),
    [
        pytest.param(_workload("False", "Inadmissible"), True, id="parked-after-fix"),
        pytest.param(_workload("True", "Pending"), False, id="requeued-normally"),
        pytest.param(_workload("False", "Inadmissible", reserved="True"), False, id="admitted-meanwhile"),
    ],
)
def test_13969_is_recognised(obj: dict, stuck: bool) -> None:
    text = stuck_after_fix(obj)
    assert bool(text) is stuck
    if stuck:
        assert "kueue issue 13969" in text and "kubectl delete workload -n ns-q job-train-1a2b3" in text
        assert "is not mapped in DRA configuration" in text


def test_13969_not_claimed_while_still_misconfigured() -> None:
    engine = Engine(setup(cq("q", 4)))
    engine.submit(job("job-train-1a2b3", "q", 1, 0, device_class="unmapped.example.com"))
    assert stuck_after_fix(_workload("False", "Inadmissible"), engine) == ""
