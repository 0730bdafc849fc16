"""Text output of five scenarios against reviewed golden files.

Regenerate with ``DRAKIT_UPDATE_GOLDEN=1 pytest tests/unit/explain/test_golden.py`` and read the
diff before committing: these files are what a user sees.
"""

from __future__ import annotations

import os

import pytest

from drakit.explain.render import render_text
from tests.unit.explain.conftest import SCENARIOS, explain_scenario

GOLDEN = SCENARIOS / "golden"
NAMES = [
    "memory-80gi-near-miss",
    "devices-in-use",
    "constraint-pcie-root",
    "first-available-exhausted",
    "selector-runtime-error",
]


@pytest.mark.parametrize("name", NAMES)
def test_golden(name: str) -> None:
    text = render_text(explain_scenario(name)) + "\n"
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("DRAKIT_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    assert path.read_text(encoding="utf-8") == text
