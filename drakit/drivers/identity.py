"""Which product a device is: the one label every report groups devices by.

``match``, ``trial``, ``simulate``, ``explain`` and profile eligibility all name devices by
product, and run records compare results "by product", so the label must be the same
everywhere.  It comes from the driver schema's ``product`` role (``productName`` for NVIDIA and
AMD, ``model`` for Intel and the example driver); for a driver drakit has no schema for, the
first of the attribute names drivers commonly use.  A device without any of them is
``(unnamed)``: grouping unnamed devices together is more useful than one group per device.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from drakit.drivers.registry import DRIVERS
from drakit.drivers.schema import DriverSchema

__all__ = ["UNNAMED", "product_of"]

UNNAMED = "(unnamed)"
_COMMON_KEYS = ("productName", "model", "product", "type")
_VALUE_KINDS = ("string", "version", "int", "bool")


def product_of(driver: str, device: Mapping[str, Any], schema: DriverSchema | None = None) -> str:
    """The product label of ``device`` published by ``driver`` (``schema``: a specific version)."""
    attributes = device.get("attributes")
    if type(attributes) is not dict and not isinstance(attributes, Mapping):  # exact type first: ABC checks are slow
        return UNNAMED
    keys = _keys(driver) if schema is None else _qualified(driver, (schema.roles.get("product", ""),))
    for key in keys:
        value = attributes.get(key)
        if type(value) is dict or isinstance(value, Mapping):
            for kind in _VALUE_KINDS:
                if kind in value and value[kind] is not None:
                    return str(value[kind])
    return UNNAMED


@functools.lru_cache(maxsize=256)
def _keys(driver: str) -> tuple[str, ...]:
    schemas = DRIVERS.get(driver)
    role = schemas[-1].roles.get("product") if schemas else None
    return _qualified(driver, (role,) if role else _COMMON_KEYS)


def _qualified(driver: str, names: tuple[str, ...]) -> tuple[str, ...]:
    """Each name bare and qualified with the driver's domain (both spellings are legal)."""
    return tuple(k for name in names if name for k in (name, f"{driver}/{name}"))
