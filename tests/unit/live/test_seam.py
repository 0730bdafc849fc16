"""The seam stays a seam: one module imports the client library, and offline verbs never load it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import drakit

ROOT = Path(drakit.__file__).parent


def _imports_kubernetes(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
            [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
        if any(n == "kubernetes" or n.startswith("kubernetes.") for n in names):
            return True
    return False


def test_only_kube_py_imports_the_client_library() -> None:
    assert [str(p.relative_to(ROOT)) for p in sorted(ROOT.rglob("*.py")) if _imports_kubernetes(p)] == ["live/kube.py"]


def test_an_offline_verb_does_not_load_it(tmp_path: Path) -> None:
    code = ("import sys; from drakit.cli.testing import run; r = run('explain', 'pod/x', '--demo');"
            "print(r.exit_code, 'kubernetes' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["2", "False"]
