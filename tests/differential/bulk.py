"""Bulk differential run: many seeded random scenarios, drakit in-process against one oracle per worker.

``make differential N=100000`` runs ``python -m tests.differential.bulk --cases N --seed S``.
Hypothesis is too slow to draw 10^5 scenarios (about 0.25 s each), so cases come from
:func:`tests.differential.generator.random_scenario` — the same building blocks driven by
``random.Random(f"{seed}:{index}")``, so case ``index`` is reproducible on its own
(``--only INDEX`` prints it).  Each worker process keeps drakit imported (selector compile
caches stay warm) and one long-lived ``dra-oracle allocate-batch`` subprocess.

At the end every distinct kind of disagreement (``harness.signature``) is shrunk greedily
and written to ``tests/differential/regressions/<hash>.yaml`` with the oracle's answer, so
``test_regression_replays`` replays it without Go.  Exit status 1 when any were found.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.differential.generator import Scenario, random_scenario
from tests.differential.harness import (
    REGRESSIONS,
    Answer,
    disagreements,
    drakit_answer,
    record,
    shrink,
    signature,
)
from tests.oracle.client import DEFAULT_BINARY, DETERMINISTIC_ALLOCATORS, Oracle


@dataclass(frozen=True)
class CaseResult:
    index: int
    oracle_status: str
    drakit_status: str
    kind: str  # "" when both agree
    problems: tuple[str, ...]


_oracle: Oracle | None = None


def _binary() -> Path:
    return Path(os.environ.get("DRAKIT_ORACLE", DEFAULT_BINARY))


def _oracle_client() -> Oracle:
    global _oracle
    if _oracle is None:
        _oracle = Oracle(_binary())
    return _oracle


def oracle_answer(scenario: Scenario) -> Answer:
    return _oracle_client().allocate(
        list(scenario.objects), gates=scenario.gates, node=scenario.node, allocators=DETERMINISTIC_ALLOCATORS
    )


def run_case(seed: int, index: int) -> CaseResult:
    scenario = random_scenario(f"{seed}:{index}")
    want = oracle_answer(scenario)
    if want["status"] not in ("allocated", "unsatisfiable", "error"):
        return CaseResult(index, want["status"], "-", f"oracle rejected the bundle: {want['message']}", ())
    got = drakit_answer(scenario)
    problems = disagreements(want, got)
    kind = signature(problems, want, got) if problems else ""
    return CaseResult(index, want["status"], got["status"], kind, tuple(problems))


def _run_chunk(args: tuple[int, range]) -> list[CaseResult]:
    seed, indices = args
    return [run_case(seed, i) for i in indices]


def _chunks(seed: int, total: int, size: int) -> Iterator[tuple[int, range]]:
    for start in range(0, total, size):
        yield seed, range(start, min(start + size, total))


def keeps_kind(kind: str) -> Any:
    def keeps(scenario: Scenario) -> bool:
        want = oracle_answer(scenario)
        if want["status"] not in ("allocated", "unsatisfiable", "error"):
            return False
        got = drakit_answer(scenario)
        problems = disagreements(want, got)
        return bool(problems) and signature(problems, want, got) == kind

    return keeps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=20260701)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--chunk", type=int, default=100)
    parser.add_argument("--no-record", action="store_true", help="do not shrink and write regression files")
    parser.add_argument("--only", type=int, help="print case INDEX (scenario and both answers) and stop")
    parser.add_argument("--out", type=Path, default=REGRESSIONS)
    args = parser.parse_args(argv)
    if not _binary().is_file():
        print(f"dra-oracle not found at {_binary()}: run `make oracle`", file=sys.stderr)
        return 2

    if args.only is not None:
        scenario = random_scenario(f"{args.seed}:{args.only}")
        want, got = oracle_answer(scenario), drakit_answer(scenario)
        json.dump({"scenario": scenario.to_json(), "oracle": want, "drakit": got}, sys.stdout, indent=1)
        print()
        return 0

    started = time.monotonic()
    by_status: Counter[str] = Counter()
    kinds: dict[str, CaseResult] = {}
    kind_counts: Counter[str] = Counter()
    done = 0
    last = started
    context = multiprocessing.get_context("fork")
    with context.Pool(args.workers) as pool:
        for results in pool.imap_unordered(_run_chunk, _chunks(args.seed, args.cases, args.chunk)):
            for r in results:
                done += 1
                by_status[f"{r.oracle_status}"] += 1
                if r.kind:
                    kind_counts[r.kind] += 1
                    if r.kind not in kinds or r.index < kinds[r.kind].index:
                        kinds[r.kind] = r
            now = time.monotonic()
            if now - last >= 5 or done == args.cases:
                last = now
                rate = done / (now - started)
                print(
                    f"{done}/{args.cases} cases, {rate:.0f}/s, {sum(kind_counts.values())} disagreements "
                    f"({len(kinds)} kinds)",
                    flush=True,
                )
    elapsed = time.monotonic() - started
    print(
        f"\nran {done} cases in {elapsed:.1f} s ({done / elapsed:.0f}/s), seed {args.seed}, {args.workers} workers"
    )
    print(
        "oracle outcome: " + ", ".join(f"{s} {n} ({100 * n / done:.1f}%)" for s, n in by_status.most_common())
    )
    print(f"disagreements: {sum(kind_counts.values())} in {len(kinds)} kinds")
    for kind, n in kind_counts.most_common():
        r = kinds[kind]
        print(
            f"  {n:6d}  {kind}\n          first: case {r.index}: {r.problems[0][:300] if r.problems else ''}"
        )
    if not kinds or args.no_record:
        return 1 if kinds else 0
    for kind, r in sorted(kinds.items(), key=lambda item: item[1].index):
        scenario = random_scenario(f"{args.seed}:{r.index}")
        if kind.startswith("oracle rejected"):
            continue
        small = shrink(scenario, keeps_kind(kind))
        want, got = oracle_answer(small), drakit_answer(small)
        path = record(small, want, got, disagreements(want, got), args.out)
        print(f"recorded {path.name}: {kind}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
