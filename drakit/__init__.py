"""drakit: request accelerators by capability on Kubernetes Dynamic Resource Allocation."""

from __future__ import annotations

from drakit.errors import DrakitError, InvalidInput, SelectorError
from drakit.features import Features

__version__ = "0.1.0"

__all__ = [
    "DrakitError",
    "Features",
    "InvalidInput",
    "SelectorError",
    "__version__",
]
