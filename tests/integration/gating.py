"""Skip-or-fail policy shared by the integration fixtures and tests.

Locally a missing prerequisite (binaries not built, a drakit API not written yet) is a skip
with the reason; with ``CI`` set it is a failure, so CI can never go green by skipping.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import NoReturn

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def unavailable(reason: str) -> NoReturn:
    if in_ci():
        pytest.fail(f"{reason} (CI is set, so this is a failure, not a skip)", pytrace=False)
    pytest.skip(reason)


def require(module: str, *names: str) -> ModuleType:
    """Import ``module`` and check it has ``names``; otherwise skip locally / fail in CI."""
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        unavailable(f"{module} is not importable yet: {exc}")
    missing = [n for n in names if not hasattr(mod, n)]
    if missing:
        unavailable(f"{module} lacks {', '.join(missing)} (not written yet)")
    return mod
