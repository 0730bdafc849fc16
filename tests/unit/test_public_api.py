"""The public surface is declared once and pinned; every public exception descends from DrakitError."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import drakit
from drakit.errors import DrakitError

PINNED = {
    "AllocationError",
    "AllocationOutcome",
    "Bundle",
    "Clock",
    "ClusterSnapshot",
    "Diagnosis",
    "DrakitError",
    "ExplainCode",
    "Features",
    "IdSource",
    "InvalidArgument",
    "InvalidInput",
    "Inventory",
    "NotFound",
    "Reason",
    "ReasonCode",
    "Scenario",
    "SelectorError",
    "SimulationResult",
    "Trace",
    "UsageError",
    "Verdict",
    "__version__",
    "allocate",
    "compile_selector",
    "device_view",
    "diagnose",
    "evaluate_expression",
    "load_bundle",
    "load_scenario",
    "run_scenario",
    "to_wire",
    "validate",
}


def test_all_is_pinned() -> None:
    assert set(drakit.__all__) == PINNED
    for name in drakit.__all__:
        assert hasattr(drakit, name), name


def test_public_exceptions_descend_from_drakit_error() -> None:
    offenders = []
    for info in pkgutil.walk_packages(drakit.__path__, "drakit."):
        if ".cli." in info.name or info.name.endswith(".__main__"):
            continue
        module = importlib.import_module(info.name)
        # "Public" = exported through a package or module __all__; internal control-flow
        # exceptions (the CEL engine's ParseError, EvalError...) never reach a caller.
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, Exception) and not issubclass(obj, DrakitError):
                offenders.append(f"{module.__name__}.{name}")
    # Value-level parse errors of the two ports are ValueErrors by design (like int("x")); callers
    # wrap them with a field path.  Everything else must be a DrakitError.
    assert {o.rsplit(".", 1)[1] for o in offenders} <= {"QuantityError", "SemverError", "KindError"}


def test_heavy_entry_points_load_on_first_use() -> None:
    """``import drakit`` leaves the explain and simulator packages unloaded until asked for."""
    import subprocess
    import sys

    code = (
        "import sys, drakit; before = 'drakit.sim' in sys.modules or 'drakit.explain.diagnose' in sys.modules;"
        " drakit.run_scenario, drakit.diagnose; print(before, 'drakit.sim' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


def test_the_public_entry_points_work_together() -> None:
    """A snapshot from objects is diagnosed through the public names alone."""
    from tests.unit.explain.conftest import SCENARIOS, scenario_input

    snapshot = scenario_input("fits")
    assert isinstance(snapshot, drakit.ClusterSnapshot) and SCENARIOS.is_dir()
    diagnosis = drakit.diagnose(snapshot, "pod", "train", "ml")
    assert isinstance(diagnosis, drakit.Diagnosis) and diagnosis.verdict is drakit.Verdict.OK
    with pytest.raises(drakit.NotFound, match=r'^pod "ml/nope" not found in the input$'):
        drakit.diagnose(snapshot, "pod", "nope", "ml")
