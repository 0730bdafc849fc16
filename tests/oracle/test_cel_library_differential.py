"""Differential test of the Kubernetes IP, CIDR, URL and format CEL libraries against the oracle.

Cases come from ``tests/differential/cel_library_generator.py`` (case ``i`` of seed ``S`` is
``random_library_case("S:i")``, so any case replays alone); the comparison and the
regression files are those of ``test_cel_differential.py`` (same rules, same
``cel_regressions/`` directory, replayed there without Go).

``DRAKIT_CEL_LIB_DIFF_EXAMPLES`` cases (default 300) with seed ``DRAKIT_CEL_LIB_DIFF_SEED``
(default 0); ``DRAKIT_CEL_DIFF_RECORD=1`` writes the shrunk disagreements,
``DRAKIT_CEL_DIFF_REPORT=1`` prints the outcome mix and throughput.
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from collections.abc import Iterator

import pytest

from tests.differential.cel_generator import CelCase
from tests.differential.cel_library_generator import random_library_case
from tests.oracle.client import oracle_binary
from tests.oracle.test_cel_differential import (
    CelOracle,
    _chunks,
    _record,
    disagreements,
    drakit_answer,
    outcome_class,
    signature,
)


@pytest.fixture(scope="module")
def cel_oracle() -> Iterator[CelOracle]:
    client = CelOracle(oracle_binary())
    yield client
    client.close()


def _generate(examples: int, seed_value: int) -> list[CelCase]:
    return [random_library_case(f"{seed_value}:{i}") for i in range(examples)]


@pytest.mark.oracle
def test_generated_library_cel_agrees(cel_oracle: CelOracle) -> None:
    examples = int(os.environ.get("DRAKIT_CEL_LIB_DIFF_EXAMPLES", "300"))
    seed_value = int(os.environ.get("DRAKIT_CEL_LIB_DIFF_SEED", "0"))
    t0 = time.perf_counter()
    cases = _generate(examples, seed_value)
    answers = []
    for chunk in _chunks(cases, 2000):
        answers.extend(cel_oracle.ask_many([c.request() for c in chunk]))
    found: dict[str, tuple[CelCase, dict[str, object], dict[str, object], list[str]]] = {}
    mix: Counter[str] = Counter()
    for case, want in zip(cases, answers, strict=True):
        mix[outcome_class(want)] += 1
        got = drakit_answer(case)
        problems = disagreements(case, want, got)
        if problems:
            found.setdefault(signature(problems), (case, want, got, problems))
    if os.environ.get("DRAKIT_CEL_DIFF_REPORT"):
        print(
            f"\n{len(cases)} library cases (seed {seed_value}) in {time.perf_counter() - t0:.1f}s; "
            f"outcomes {dict(mix)}; {len(found)} kind(s) of disagreement",
            file=sys.stderr,
        )
    if not found:
        return
    lines = []
    for case, want, got, problems in found.values():
        lines.append(f"- {problems[0]}\n  expression: {case.expression}")
        if os.environ.get("DRAKIT_CEL_DIFF_RECORD"):
            lines.append(f"  recorded: {_record(case, want, got, problems)}")
    pytest.fail(f"{len(found)} kind(s) of disagreement:\n" + "\n".join(lines), pytrace=False)
