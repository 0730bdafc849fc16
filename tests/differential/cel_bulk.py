"""Bulk CEL differential run: ``python -m tests.differential.cel_bulk --cases 5000 --seed 7``.

Generates cases with ``cel_generator.cel_cases`` (Hypothesis, seeded), asks one pipelined
``dra-oracle cel eval-batch`` and drakit, and prints the outcome mix, the throughput and every
kind of disagreement with its count and first example (no shrinking: the pytest run,
``tests/oracle/test_cel_differential.py``, shrinks and records).  Exit status 1 when any
disagreement is found.  Chunks with different seeds add up to large runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from typing import Any

from tests.oracle.client import DEFAULT_BINARY
from tests.oracle.test_cel_differential import (
    CelOracle,
    _generate,
    disagreements,
    drakit_answer,
    outcome_class,
    signature,
    upstream_panics,
)


def _estimate(answer: dict[str, Any]) -> Any:
    return (answer.get("cost") or {}).get("estimated")


def _excuse(want: dict[str, Any], got: dict[str, Any]) -> str:
    """Which documented difference let two different answers agree."""
    message = str((got.get("error") or {}).get("message", ""))
    if message.startswith("Too long"):
        return "new-expression length validation"
    if message.startswith("too complex"):
        return "new-expression cost validation"
    return "upstream runtime panic"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    generated = _generate(args.cases, args.seed)
    cases = [c for c in generated if not upstream_panics(c)]
    t1 = time.perf_counter()
    oracle = CelOracle(DEFAULT_BINARY)
    try:
        answers = []
        for i in range(0, len(cases), 2000):
            answers.extend(oracle.ask_many([c.request() for c in cases[i : i + 2000]]))
    finally:
        oracle.close()
    t2 = time.perf_counter()
    mix: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    tags: Counter[str] = Counter()
    first: dict[str, tuple[str, str]] = {}
    excused: Counter[str] = Counter()
    for case, want in zip(cases, answers, strict=True):
        mix[outcome_class(want)] += 1
        tags[case.tags[0] if case.tags else "?"] += 1
        got = drakit_answer(case)
        problems = disagreements(case, want, got)
        if not problems and want.get("error") != got.get("error"):
            excused[_excuse(want, got)] += 1
        elif not problems and "error" not in want and _estimate(want) != _estimate(got):
            mode = want.get("mode") == "selector" and "includes(" in case.expression
            excused["includes() estimate (v0.37.2 vs the vectors)" if mode else "value-mode estimate"] += 1
        if problems:
            kind = signature(problems)
            kinds[kind] += 1
            first.setdefault(kind, (problems[0], json.dumps(case.to_json(), ensure_ascii=False)))
    t3 = time.perf_counter()
    print(
        f"{len(cases)} cases (seed {args.seed}; {len(generated) - len(cases)} not asked: upstream panics): generate {t1 - t0:.0f}s, oracle {t2 - t1:.0f}s, "
        f"drakit {t3 - t2:.0f}s; outcomes {dict(mix)}; generators {dict(tags)}; "
        f"{sum(kinds.values())} disagreement(s) of {len(kinds)} kind(s); documented differences {dict(excused)}"
    )
    for kind, n in kinds.most_common():
        problem, case_json = first[kind]
        print(f"- {n} x {problem[:600]}\n  case: {case_json[:1500]}")
    return 1 if kinds else 0


if __name__ == "__main__":
    sys.exit(main())
