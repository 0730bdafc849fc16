"""Differential testing: drakit's allocator against the upstream one on random scenarios.

Scenarios come from ``tests/differential/generator.py``.  Both sides must agree on the
status, on the exact message for errors, and on every allocation result (share IDs
normalised; device-result and node-selector order ignored as in ``convert.compare``).

- ``test_generated_scenarios_agree``: ``DRAKIT_DIFF_EXAMPLES`` examples (default 300),
  derandomised, or seeded with ``DRAKIT_DIFF_SEED``.  Hypothesis shrinks a failure.
- ``make differential N=...`` sets ``DRAKIT_DIFF_RECORD=1``: exploration does not stop at the
  first disagreement; one shrunk example per kind of disagreement is written to
  ``tests/differential/regressions/<hash>.yaml`` together with the oracle's answer.
- ``test_regression_replays``: every recorded file, replayed against drakit (and, when the
  oracle is built, against the oracle too, to keep the recording honest).

Until drakit's allocator can be imported (or with ``DRAKIT_DIFF_ORACLE_ONLY=1``) the generated
test runs oracle-only and checks that every generated bundle is accepted (the generator
produces storable objects).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, find, given, seed, settings

from tests.conformance.convert import compare
from tests.differential.generator import Scenario, scenarios
from tests.oracle.client import DETERMINISTIC_ALLOCATORS, Oracle

REGRESSIONS = Path(__file__).resolve().parents[1] / "differential" / "regressions"


def _drakit_allocate() -> Any:
    if os.environ.get("DRAKIT_DIFF_ORACLE_ONLY"):
        return None
    try:
        from drakit.allocator import allocate
    except ImportError:
        return None
    return allocate


def run_drakit(objects: list[dict[str, Any]], node_name: str, gates: str) -> dict[str, Any]:
    """drakit's answer in the oracle's output shape; exceptions become status "exception"."""
    from drakit.features import Features

    allocate = _drakit_allocate()
    assert allocate is not None
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for obj in objects:
        by_kind.setdefault(obj["kind"], []).append(copy.deepcopy(obj))
    node = next(n for n in by_kind.get("Node", []) if n["metadata"]["name"] == node_name)
    try:
        outcome = allocate(
            node=node,
            slices=by_kind.get("ResourceSlice", []),
            classes=by_kind.get("DeviceClass", []),
            claims=by_kind.get("ResourceClaim", []),
            features=Features().with_gates(gates),
            timeout=10.0,
        )
    except Exception as exc:  # every escape is a disagreement worth recording
        return {"status": "exception", "claims": [], "message": f"{type(exc).__name__}: {exc}"}
    result: dict[str, Any] = outcome.to_json()
    return result


def run_oracle(oracle: Oracle, scenario: Scenario) -> dict[str, Any]:
    return oracle.allocate(
        list(scenario.objects), gates=scenario.gates, node=scenario.node, allocators=DETERMINISTIC_ALLOCATORS
    )


def disagreements(want: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """Differences between the oracle's outcome (``want``) and drakit's (``got``)."""
    if want["status"] == "error" and got["status"] == "error" and want["message"] != got["message"]:
        return [f"error message: oracle {want['message']!r}, drakit {got['message']!r}"]
    expect = {
        "status": want["status"],
        "results": [(c.get("status") or {}).get("allocation") for c in want["claims"]]
        if want["status"] == "allocated"
        else [],
        "errorContains": want["message"],
        "orderedDeviceResults": False,
    }
    return compare({"expect": expect}, got)


def signature(problems: list[str], want: dict[str, Any], got: dict[str, Any]) -> str:
    """A coarse kind of disagreement, so that one example per kind gets shrunk and kept."""
    if want["status"] != got["status"]:
        return f"status {want['status']} -> {got['status']}"
    first = problems[0].split(":")[0]
    return f"{want['status']}: {first}"


def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize="DRAKIT_DIFF_SEED" not in os.environ,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
        print_blob=True,
    )


def _record(scenario: Scenario, want: dict[str, Any], got: dict[str, Any], problems: list[str]) -> Path:
    document = {
        "problems": problems,
        "scenario": scenario.to_json(),
        "oracle": {"status": want["status"], "message": want["message"], "claims": want["claims"]},
        "drakit": {"status": got["status"], "message": got["message"]},
    }
    digest = hashlib.sha256(json.dumps(scenario.to_json(), sort_keys=True).encode()).hexdigest()[:16]
    REGRESSIONS.mkdir(parents=True, exist_ok=True)
    path = REGRESSIONS / f"{digest}.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


@pytest.mark.oracle
def test_generated_scenarios_agree(oracle: Oracle) -> None:
    examples = int(os.environ.get("DRAKIT_DIFF_EXAMPLES", "300"))
    record = bool(os.environ.get("DRAKIT_DIFF_RECORD"))
    have_drakit = _drakit_allocate() is not None
    found: dict[str, Scenario] = {}

    def check(scenario: Scenario) -> list[str]:
        want = run_oracle(oracle, scenario)
        assert want["status"] in ("allocated", "unsatisfiable", "error"), (
            f"oracle rejected the bundle: {want['message']}"
        )
        if not have_drakit:
            return []
        got = run_drakit(list(scenario.objects), scenario.node, scenario.gates)
        problems = disagreements(want, got)
        if problems and record:
            found.setdefault(signature(problems, want, got), scenario)
        return problems

    @_settings(examples)
    @given(scenarios())
    def explore(scenario: Scenario) -> None:
        problems = check(scenario)
        if not record:
            assert not problems, "\n".join(problems)

    if "DRAKIT_DIFF_SEED" in os.environ:
        explore = seed(int(os.environ["DRAKIT_DIFF_SEED"]))(explore)
    explore()

    if not record:
        return
    written = []
    for kind in found:

        def same_kind(s: Scenario, kind: str = kind) -> bool:
            want = run_oracle(oracle, s)
            got = run_drakit(list(s.objects), s.node, s.gates)
            problems = disagreements(want, got)
            return bool(problems) and signature(problems, want, got) == kind

        minimal = find(scenarios(), same_kind, settings=_settings(2000))
        want = run_oracle(oracle, minimal)
        got = run_drakit(list(minimal.objects), minimal.node, minimal.gates)
        written.append(_record(minimal, want, got, disagreements(want, got)))
    assert not written, f"{len(written)} kind(s) of disagreement recorded: " + ", ".join(
        str(p) for p in written
    )


def _regression_files() -> list[Any]:
    return [pytest.param(p, id=p.stem) for p in sorted(REGRESSIONS.glob("*.yaml"))]


@pytest.mark.parametrize("path", _regression_files())
def test_regression_replays(path: Path, request: pytest.FixtureRequest) -> None:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    scenario = Scenario(
        objects=tuple(document["scenario"]["objects"]),
        node=document["scenario"]["node"],
        gates=document["scenario"]["featureGates"],
    )
    want: dict[str, Any] = document["oracle"]
    if os.path.exists(
        os.environ.get(
            "DRAKIT_ORACLE", str(Path(__file__).resolve().parents[2] / "oracle" / "bin" / "dra-oracle")
        )
    ):
        live = run_oracle(request.getfixturevalue("oracle"), scenario)
        assert not disagreements(want, live), "the recorded oracle answer is stale: re-record this file"
    if _drakit_allocate() is None:
        pytest.skip("drakit.allocator.allocate is not importable yet")
    got = run_drakit(list(scenario.objects), scenario.node, scenario.gates)
    problems = disagreements(want, got)
    assert not problems, "\n".join(problems)
