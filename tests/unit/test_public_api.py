"""The public surface is declared once and pinned; every public exception descends from DrakitError."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import drakit
from drakit.errors import DrakitError

PINNED = {
    "AllocationError",
    "AllocationOutcome",
    "Bundle",
    "DrakitError",
    "Features",
    "InvalidInput",
    "Inventory",
    "SelectorError",
    "UsageError",
    "__version__",
    "allocate",
    "compile_selector",
    "device_view",
    "evaluate_expression",
    "load_bundle",
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
