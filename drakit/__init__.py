"""drakit: request accelerators by capability on Kubernetes Dynamic Resource Allocation.

The public Python API, declared once here (a test pins ``__all__``)::

    bundle = load_bundle(["cluster.yaml"])            # typed resource.k8s.io/v1 objects
    problems = validate(bundle.objects, Features())   # API-server validation, all errors
    snapshot = ClusterSnapshot.from_objects(...)      # the cluster as drakit sees it
    outcome = allocate(node=..., slices=..., classes=..., claims=..., features=Features())
    diagnosis = diagnose(snapshot, "pod", "train", "ml")   # why it waits, with evidence
    result = run_scenario(load_scenario("day.yaml"))        # the simulator
    compile_selector("device.driver == 'gpu.nvidia.com'").evaluate(device_view(driver, device))

The explain and simulator entry points load on first use, so that ``import drakit`` (and so
every command) does not pay for them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from drakit.allocator import AllocationOutcome, Inventory, allocate
from drakit.allocator.trace import Trace
from drakit.clock import Clock, IdSource
from drakit.errors import (
    AllocationError,
    DrakitError,
    InvalidArgument,
    InvalidInput,
    NotFound,
    SelectorError,
    UsageError,
)
from drakit.features import Features
from drakit.inventory.snapshot import ClusterSnapshot
from drakit.model import Bundle, to_wire, validate
from drakit.outcomes import ExplainCode, Reason, ReasonCode, Verdict
from drakit.selectors import compile_selector, device_view, evaluate_expression
from drakit.sources import load_bundle

if TYPE_CHECKING:
    from drakit.explain.diagnose import diagnose
    from drakit.explain.diagnosis import Diagnosis
    from drakit.sim import Scenario, SimulationResult, run_scenario
    from drakit.sources import load_scenario

__version__ = "0.1.0"

_LAZY = {
    "Diagnosis": "drakit.explain.diagnosis",
    "Scenario": "drakit.sim",
    "SimulationResult": "drakit.sim",
    "diagnose": "drakit.explain.diagnose",
    "load_scenario": "drakit.sources",
    "run_scenario": "drakit.sim",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'drakit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
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
]
