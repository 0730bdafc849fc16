"""Imports point down the house's layer list only (every import, lazy ones included).

The list is the architecture's: a core package that imported an edge (``cli``, ``sources``,
``live``, ``store``, ``web``, ``webhook``) could no longer run inside a server or a test without
it, and the allocator importing ``explain`` would tie the search to its reader.  A new
top-level module must be placed in the list before it can be imported at all.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import drakit

LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "features", "quantity", "semver", "gostr", "clock", "outcomes"),
    ("selectors", "drivers"),
    ("model", "corev1"),
    ("inventory",),
    ("allocator",),
    ("explain",),
    ("sim", "profiles", "trial", "demo"),
    ("queues", "records"),
    ("sources", "live", "webhook", "store", "web", "cli"),
)
LAYER = {name: i for i, names in enumerate(LAYERS) for name in names}
EDGES = frozenset(LAYERS[-1])
ROOT = Path(drakit.__file__).parent


def _imports(path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """``(line, dotted target)`` of every drakit import in ``path``, relative ones resolved."""
    package = path.relative_to(root.parent).parts[:-1]  # a module's package; __init__'s own
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            if module == "drakit":  # from drakit import selectors
                out += [(node.lineno, f"drakit.{a.name}") for a in node.names]
            else:
                out.append((node.lineno, module))
    return [(line, t) for line, t in out if t.startswith("drakit.")]


def _edges() -> list[tuple[str, int, str, str]]:
    """``(file, line, source top, target top)`` for every import between top-level parts."""
    edges = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if rel == Path("__init__.py"):  # the public facade re-exports from every layer
            continue
        src = rel.with_suffix("").parts[0]
        for line, target in _imports(path):
            edges.append((str(rel), line, src, target.split(".")[1]))
    return edges


def test_every_top_level_module_has_a_layer() -> None:
    tops = {p.stem for p in ROOT.glob("*.py") if p.stem != "__init__"}
    tops |= {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert tops - LAYER.keys() == set()


def test_imports_point_down_only() -> None:
    upward = [
        f"{file}:{line} ({src}, L{LAYER[src]}) imports drakit.{tgt} (L{LAYER[tgt]})"
        for file, line, src, tgt in _edges()
        if LAYER[tgt] > LAYER[src]
    ]
    assert upward == []


def test_core_imports_no_edge_package() -> None:
    into_edges = [f"{f}:{line} -> {t}" for f, line, s, t in _edges() if t in EDGES and s not in EDGES]
    assert into_edges == []


def test_allocator_imports_nothing_from_explain() -> None:
    assert [f"{f}:{line}" for f, line, s, t in _edges() if s == "allocator" and t == "explain"] == []


@pytest.mark.parametrize(
    ("source", "want"),
    [
        pytest.param("from drakit.explain.trace import Trace\n", "drakit.explain.trace", id="absolute"),
        pytest.param("from drakit import selectors\n", "drakit.selectors", id="from-package"),
        pytest.param("from ..explain import diagnose\n", "drakit.explain", id="relative"),
        pytest.param("def f():\n    import drakit.cli.main\n", "drakit.cli.main", id="lazy"),
    ],
)
def test_the_walk_sees_every_import_form(tmp_path: Path, source: str, want: str) -> None:
    """The checker itself must not be blind: each import spelling is found."""
    (tmp_path / "drakit" / "allocator").mkdir(parents=True)
    path = tmp_path / "drakit" / "allocator" / "search.py"
    path.write_text(source, encoding="utf-8")
    assert [t for _, t in _imports(path, tmp_path / "drakit")] == [want]
