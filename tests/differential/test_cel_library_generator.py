"""The library generator reaches every function and overload of the IP, CIDR, URL and format
libraries (checked with drakit's type checker, no Go needed)."""

from __future__ import annotations

from hypothesis import given, settings

from drakit.features import Features
from drakit.selectors.checker import check
from drakit.selectors.compile import env_key
from drakit.selectors.env import build_env
from drakit.selectors.parser import ParsedExpr, ParseError, Parser, Source
from tests.differential.cel_generator import CelCase
from tests.differential.cel_library_generator import LIBRARY_OVERLOADS, library_cases, random_library_case


def _overloads(case: CelCase) -> set[str]:
    try:
        p = Parser(case.expression)
        root = p.parse()
    except ParseError:
        return set()
    key = env_key(case.environment, Features().with_gates(case.gates))
    checked, _ = check(build_env(key), ParsedExpr(root, Source(case.expression), p.positions, p.next_id))
    return {oid for ids in checked.overloads.values() for oid in ids}


def test_every_library_overload_is_generated() -> None:
    """The bulk run's cases (random, by seed) reach every overload, also with device inputs."""
    cases = [random_library_case(f"coverage:{i}") for i in range(800)]
    seen = set().union(*(_overloads(c) for c in cases))
    assert LIBRARY_OVERLOADS - seen == set()
    assert sum("device.attributes" in c.expression for c in cases) > 100


def test_hypothesis_cases_compile_through_the_same_grammar() -> None:
    """The shrinkable (Hypothesis) flavour draws from the same productions."""
    seen: set[str] = set()

    @settings(max_examples=200, derandomize=True, database=None, deadline=None)
    @given(library_cases())
    def collect(case: CelCase) -> None:
        seen.update(_overloads(case))

    collect()
    assert len(seen & LIBRARY_OVERLOADS) > 20
