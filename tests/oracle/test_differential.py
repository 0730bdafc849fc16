"""Differential testing: drakit's allocator against the upstream one on random scenarios.

Scenarios come from ``tests/differential/generator.py``.  Both sides must agree on the
status, on the exact message for errors, and on every allocation result (share IDs
normalised; device-result and node-selector order ignored as in ``convert.compare``).

- ``test_generated_scenarios_agree``: ``DRAKIT_DIFF_EXAMPLES`` examples (default 50; the bulk run covers volume),
  derandomised, or seeded with ``DRAKIT_DIFF_SEED``.  Hypothesis shrinks a failure.
- ``DRAKIT_DIFF_RECORD=1``: exploration does not stop at the first disagreement; one shrunk
  example per kind of disagreement is written to ``tests/differential/regressions/<hash>.yaml``
  together with the oracle's answer.  (``make differential N=...`` runs the much faster bulk
  mode, ``tests/differential/bulk.py``, which records the same files.)
- ``test_regression_replays``: every recorded file, replayed against drakit (and, when the
  oracle is built, against the oracle too, to keep the recording honest).

Until drakit's allocator can be imported (or with ``DRAKIT_DIFF_ORACLE_ONLY=1``) the generated
test runs oracle-only and checks that every generated bundle is accepted (the generator
produces storable objects).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, find, given, seed, settings

from tests.differential import harness
from tests.differential.generator import Scenario, scenarios
from tests.differential.harness import REGRESSIONS, disagreements, run_drakit, signature
from tests.oracle.client import DETERMINISTIC_ALLOCATORS, Oracle


def _drakit_allocate() -> Any:
    """drakit's allocator, or None when only the oracle is exercised (DRAKIT_DIFF_ORACLE_ONLY)."""
    if os.environ.get("DRAKIT_DIFF_ORACLE_ONLY"):
        return None
    from drakit.allocator import allocate

    return allocate


def run_oracle(oracle: Oracle, scenario: Scenario) -> dict[str, Any]:
    return oracle.allocate(
        list(scenario.objects), gates=scenario.gates, node=scenario.node, allocators=DETERMINISTIC_ALLOCATORS
    )


def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize="DRAKIT_DIFF_SEED" not in os.environ,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
        print_blob=True,
    )


@pytest.mark.oracle
def test_generated_scenarios_agree(oracle: Oracle) -> None:
    examples = int(os.environ.get("DRAKIT_DIFF_EXAMPLES", "50"))
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
        written.append(harness.record(minimal, want, got, disagreements(want, got)))
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
        pytest.skip("DRAKIT_DIFF_ORACLE_ONLY is set")
    got = run_drakit(list(scenario.objects), scenario.node, scenario.gates)
    problems = disagreements(want, got)
    assert not problems, "\n".join(problems)
