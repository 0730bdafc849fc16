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
    ("sources", "live", "webhook", "store", "executors", "web", "cli"),
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
            # "from drakit.selectors import types" imports the submodule, not only the package
            out += [(node.lineno, _submodule(root, module, a.name)) for a in node.names]
    return [(line, t) for line, t in out if t.startswith("drakit.")]


def _submodule(root: Path, module: str, name: str) -> str:
    path = root.parent.joinpath(*module.split("."), name)
    return f"{module}.{name}" if path.with_suffix(".py").exists() or path.is_dir() else module


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


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


def test_no_module_import_cycles() -> None:
    """Two modules importing each other (even lazily) means one of them does two jobs."""
    graph: dict[str, set[str]] = {}
    for path in ROOT.rglob("*.py"):
        graph[_module_name(path)] = {t for _, t in _imports(path)}
    for name in graph:
        graph[name] = {t for t in graph[name] if t in graph and t != name}
    assert _cycles(graph) == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


@pytest.mark.parametrize(
    ("source", "want"),
    [
        pytest.param("from drakit.explain.trace import Trace\n", "drakit.explain.trace", id="absolute"),
        pytest.param("from drakit import selectors\n", "drakit.selectors", id="from-package"),
        pytest.param("from drakit.allocator import trace\n", "drakit.allocator.trace", id="submodule"),
        pytest.param("from drakit.allocator import allocate\n", "drakit.allocator", id="package-member"),
        pytest.param("from ..explain import diagnose\n", "drakit.explain", id="relative"),
        pytest.param("def f():\n    import drakit.cli.main\n", "drakit.cli.main", id="lazy"),
    ],
)
def test_the_walk_sees_every_import_form(tmp_path: Path, source: str, want: str) -> None:
    """The checker itself must not be blind: each import spelling is found."""
    (tmp_path / "drakit" / "allocator").mkdir(parents=True)
    (tmp_path / "drakit" / "allocator" / "trace.py").touch()
    (tmp_path / "drakit" / "selectors").mkdir()
    path = tmp_path / "drakit" / "allocator" / "search.py"
    path.write_text(source, encoding="utf-8")
    assert [t for _, t in _imports(path, tmp_path / "drakit")] == [want]
