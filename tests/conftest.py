"""Test-wide settings: derandomized hypothesis, temporary files on tmpfs, and the order in which
``make test``'s pytest-xdist workers take the test files.

Hypothesis: ``make test`` (and a bare ``pytest``) use the ``repeatable`` profile: the same
examples on every run and machine, so a red build is the code's fault and not the seed's, and no
deadline or too-slow health check on a shared, busy CI host.  ``make fuzz`` selects ``explore``
(``HYPOTHESIS_PROFILE=explore``): fresh random examples, more of them, failures kept in the
example database so that the next run replays them first.

Workers (``make test`` runs ``-n``; pyproject sets ``--dist loadfile``): xdist hands out whole
files, so a module-scoped fixture is built once, and a session fixture (the control plane, Kueue,
the oracle) once per worker that draws a file needing it.  Files go out in collection order, which
:func:`pytest_collection_modifyitems` sets longest first, so that a worker finishing early takes
the next file and the run ends about when its longest file does: files with a test marked
``slow``, then files needing a control plane (marked ``cluster``, or using the session's), then
the rest.  (``--dist loadgroup`` would let a mark choose the unit, but pytest 9.2's structured
node ids silently break it: pytest-xdist issue 1386.)
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "repeatable",
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile("explore", derandomize=False, max_examples=2_000, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

_PLANE_FIXTURES = frozenset({"control_plane"})
_TMPFS = Path("/dev/shm")


def pytest_configure(config: pytest.Config) -> None:
    # Temporary files (tmp_path, the control plane's and Kueue's directories, SQLite stores) on
    # tmpfs when the machine has one and neither TMPDIR nor --basetemp says otherwise: the store
    # checks commit tens of thousands of times, and an fsync on a virtual disk costs milliseconds.
    # pyproject's tmp_path_retention_policy = "failed" keeps this from piling up in memory.
    if config.option.basetemp or os.environ.get("TMPDIR"):
        return
    if _TMPFS.is_dir() and os.access(_TMPFS, os.W_OK | os.X_OK):
        tempfile.tempdir = str(_TMPFS)


def _rank(item: pytest.Item) -> int:
    """0: slow; 1: needs a control plane (its own or the session's); 2: the rest."""
    if item.get_closest_marker("slow"):
        return 0
    if item.get_closest_marker("cluster") or not _PLANE_FIXTURES.isdisjoint(getattr(item, "fixturenames", ())):
        return 1
    return 2


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not hasattr(config, "workerinput"):
        return  # only an xdist worker's order decides anything (the order work is handed out in)
    rank: dict[str, int] = {}
    for item in items:
        file = item.nodeid.split("::", 1)[0]
        rank[file] = min(rank.get(file, 2), _rank(item))
    # Stable: within a rank files keep their order, and each file's tests theirs.
    items.sort(key=lambda item: rank[item.nodeid.split("::", 1)[0]])
