"""Every command reads its input through drakit.sources, and nothing else in drakit reads input.

Two checks that fail differently: a runtime one (each command, given a real file and ``-``,
calls the reader's two primitives) and a static one (no module outside ``drakit/sources``
opens a file for reading, reads stdin or parses YAML/JSON text itself, except where listed
with the reason).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
import yaml

import drakit
import drakit.sources.read as read
from tests.hostile.corpus import BASE
from tests.hostile.harness import VERBS, run_in_process

ROOT = Path(drakit.__file__).parent

# file -> what it may do, and why
ALLOWED: dict[str, set[str]] = {
    "model/codec.py": {"yaml.SafeLoader"},  # the decoder itself: text in, documents out
    "profiles/apply.py": {"yaml.SafeLoader"},  # splices text the strict decoder accepted first (cli/profile.py)
    "profiles/loader.py": {".read_text"},  # the bundled profile library (package data, not user input)
    "cli/testing.py": {"sys.stdin"},  # the test helper hands a verb its stdin
    "demo/workload.py": {"open"},  # appends to the metrics channel: writes, never reads
    "executors/metrics.py": {".open"},  # os.open for O_APPEND writes to the metrics channel
    "live/jobs.py": {"yaml.safe_load"},  # reads back the Job text it generated and merged itself
    "web/pages.py": {".read_bytes"},  # the package's static files, read once at import
}
_READ_METHODS = {"read_text", "read_bytes", "open"}
_PARSERS = {("yaml", n) for n in ("load", "safe_load", "load_all", "safe_load_all", "full_load", "unsafe_load",
                                  "compose", "compose_all", "parse", "SafeLoader", "CSafeLoader")}
_PARSERS |= {("json", "load")}


def _offences(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open":
            found.add("open")
        elif isinstance(node, ast.Attribute):
            owner = node.value.id if isinstance(node.value, ast.Name) else ""
            if owner == "sys" and node.attr == "stdin":
                found.add("sys.stdin")
            elif (owner, node.attr) in _PARSERS:
                found.add(f"{owner}.{node.attr}")
            elif node.attr in _READ_METHODS and owner not in ("yaml", "json"):
                found.add(f".{node.attr}")
    return found


def test_no_module_outside_sources_reads_input() -> None:
    wrong = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("sources/"):
            continue
        extra = _offences(path) - ALLOWED.get(rel, set())
        if extra:
            wrong[rel] = sorted(extra)
    assert wrong == {}


def test_the_static_check_sees_each_kind_of_read(tmp_path: Path) -> None:
    p = tmp_path / "m.py"
    p.write_text("import sys, yaml, json\nopen('x')\nsys.stdin.read()\nyaml.safe_load('a')\n"
                 "json.load(f)\nPath('x').read_text()\nos.open('x', 0)\n")
    assert _offences(p) == {"open", "sys.stdin", "yaml.safe_load", "json.load", ".read_text", ".open"}


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names passed to the reader's two primitives while a command runs."""
    seen: list[str] = []
    real_path, real_stdin = read.read_path, read.read_stdin

    def path(name: str, *a: Any, **k: Any) -> str:
        seen.append(name)
        return real_path(name, *a, **k)

    def stdin(stream: Any, *a: Any, **k: Any) -> str:
        seen.append("-")
        return real_stdin(stream, *a, **k)

    monkeypatch.setattr(read, "read_path", path)
    monkeypatch.setattr(read, "read_stdin", stdin)
    return seen


@pytest.mark.parametrize("verb", list(VERBS))
def test_every_command_reads_through_the_one_reader(verb: str, tmp_path: Path, reads: list[str]) -> None:
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all(BASE))
    result = run_in_process(VERBS[verb](str(f)))
    assert result.crash == ""
    assert str(f) in reads
    reads.clear()
    result = run_in_process(VERBS[verb]("-"), stdin=yaml.safe_dump_all(BASE).encode())
    assert result.crash == ""
    assert reads == ["-"]
