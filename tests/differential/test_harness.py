"""The differential machinery itself: reproducible scenarios, the shrinker, a small bulk run."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.differential import bulk
from tests.differential.generator import Scenario, random_scenario
from tests.differential.harness import disagreements, record, shrink, signature


def _kinds(s: Scenario) -> list[str]:
    return [o["kind"] for o in s.objects]


def test_random_scenarios_are_reproducible_per_seed() -> None:
    assert random_scenario("1:5") == random_scenario("1:5")
    assert random_scenario("1:5") != random_scenario("1:6")
    s = random_scenario("1:5")
    assert _kinds(s)[0] == "Node" and "ResourceClaim" in _kinds(s)


def _has_device(s: Scenario, name: str) -> bool:
    return any(
        d.get("name") == name
        for o in s.objects
        if o["kind"] == "ResourceSlice"
        for d in o["spec"].get("devices") or []
    )


def test_shrink_keeps_only_what_the_property_needs() -> None:
    seed = next(f"3:{i}" for i in range(200) if _has_device(random_scenario(f"3:{i}"), "dev-1"))
    big = random_scenario(seed)
    small = shrink(big, lambda s: _has_device(s, "dev-1"))
    assert _has_device(small, "dev-1")
    devices = [
        d for o in small.objects if o["kind"] == "ResourceSlice" for d in o["spec"].get("devices") or []
    ]
    # every optional field and every other device went; per-device node selection must stay
    assert [d["name"] for d in devices] == ["dev-1"]
    assert set(devices[0]) <= {"name", "nodeName", "allNodes", "nodeSelector"}
    assert "=true" not in small.gates
    assert small.node == big.node and small.objects[0]["metadata"]["name"] == big.node


def test_signature_groups_by_message_template() -> None:
    want = {"status": "error", "message": "claim default/claim-0: selector #1 on device a.example.com/p/d: x"}
    got = {"status": "error", "message": "claim default/claim-2: selector #0 on device b.example.com/q/e: y"}
    other = {
        "status": "error",
        "message": "claim default/claim-2: selector #0 on device b.example.com/q/e: x",
    }
    assert signature(disagreements(want, got), want, got) != signature(
        disagreements(want, other), want, other
    )
    again = {
        "status": "error",
        "message": "claim default/claim-5: selector #3 on device c.example.com/r/f: x",
    }
    assert signature(disagreements(again, got), again, got) == signature(disagreements(want, got), want, got)


@pytest.mark.parametrize(
    ("oracle_message", "drakit_message", "agree"),
    [
        pytest.param(
            "filter operation aborted: context deadline exceeded",
            "timed out trying to allocate devices",
            True,
            id="both-timed-out",
        ),
        pytest.param("filter operation aborted: context deadline exceeded", "other", False, id="only-oracle"),
        pytest.param("a", "b", False, id="different-errors"),
    ],
)
def test_deadline_on_both_sides_agrees(oracle_message: str, drakit_message: str, agree: bool) -> None:
    want = {"status": "error", "message": oracle_message, "claims": []}
    got = {"status": "error", "message": drakit_message, "claims": []}
    assert (disagreements(want, got) == []) is agree


def test_record_stores_the_oracle_answer(tmp_path: Path) -> None:
    s = random_scenario("1:1")
    want = {"status": "unsatisfiable", "message": "cannot allocate all claims", "claims": []}
    got = {"status": "allocated", "message": "", "claims": []}
    path = record(s, want, got, ["status differs"], tmp_path, note="why")
    text = path.read_text(encoding="utf-8")
    assert path.parent == tmp_path and "cannot allocate all claims" in text and "note: why" in text
    assert path.stem == record(s, want, got, [], tmp_path).stem  # named by the scenario


@pytest.mark.oracle
def test_small_bulk_run_agrees(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A few hundred generated cases on every CI run (fixed seed; `make differential` runs more)."""
    if not bulk._binary().is_file():
        if os.environ.get("CI"):
            pytest.fail("CI must run the differential test: build the oracle with `make oracle`")
        pytest.skip("dra-oracle not built (make oracle)")
    cases = os.environ.get("DRAKIT_DIFF_CI_CASES", "500")
    assert bulk.main(["--cases", cases, "--workers", "2", "--seed", "11", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"ran {cases} cases" in out and "disagreements: 0" in out
    assert not list(tmp_path.iterdir())
    json.dumps(out)  # printable summary
