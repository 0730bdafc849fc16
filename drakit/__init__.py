"""drakit: request accelerators by capability on Kubernetes Dynamic Resource Allocation.

The public Python API, declared once here (a test pins ``__all__``)::

    bundle = load_bundle(["cluster.yaml"])            # typed resource.k8s.io/v1 objects
    problems = validate(bundle.objects, Features())   # API-server validation, all errors
    outcome = allocate(node=..., slices=..., classes=..., claims=..., features=Features())
    compile_selector("device.driver == 'gpu.nvidia.com'").evaluate(device_view(driver, device))
"""

from __future__ import annotations

from drakit.allocator import AllocationOutcome, Inventory, allocate
from drakit.errors import AllocationError, DrakitError, InvalidInput, SelectorError, UsageError
from drakit.features import Features
from drakit.model import Bundle, to_wire, validate
from drakit.selectors import compile_selector, device_view, evaluate_expression
from drakit.sources import load_bundle

__version__ = "0.1.0"

__all__ = [
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
]
