"""The YAML alias budget against the real kubectl: same verdict on every shape.

``kubectl label --local -f FILE`` reads the file through sigs.k8s.io/yaml (go-yaml v2) without
an API server, so its "document contains excessive aliasing" is the reference.  The shapes put
plain content before and after alias bombs near the budget, where counting totals and counting
step by step (as go-yaml does) disagree.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from drakit.model.codec import parse_text
from tests.integration.controlplane import bin_dir
from tests.integration.gating import unavailable
from tests.unit.sources.alias_shapes import alias_document

SHAPES = [(levels, width, plain, where) for levels, width in ((2, 10), (3, 10), (2, 33), (3, 12), (4, 6))
          for plain in (0, 50, 200, 1000, 5000, 20000) for where in ("after", "before")]


@pytest.mark.parametrize("shape", [pytest.param(s, id="-".join(map(str, s))) for s in SHAPES])
def test_alias_verdict_matches_kubectl(shape: tuple[int, int, int, str], tmp_path: Path) -> None:
    kubectl = bin_dir() / "kubectl"
    if not os.access(kubectl, os.X_OK):
        unavailable(f"kubectl is not built in {bin_dir()} (make cluster)")
    text = alias_document(*shape)
    path = tmp_path / "bomb.yaml"
    path.write_text(text)
    proc = subprocess.run([str(kubectl), "label", "--local", "-f", str(path), "a=b", "-o", "name"],
                          capture_output=True, text=True, timeout=60, check=False)
    _, problems = parse_text("bomb.yaml", text)
    ours = any("excessive aliasing" in p.message for p in problems)
    assert ours is ("excessive aliasing" in proc.stderr), (proc.stderr[-400:], problems)
