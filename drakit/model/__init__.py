"""Typed resource.k8s.io/v1 (and core/v1 subset) objects: pure data, no client.

One module per resource.  Python attributes are snake_case, JSON names are aliases;
:func:`to_wire` dumps exactly what was loaded.
"""

from drakit.model._base import Quantity, Wire, parse_quantity, to_wire
from drakit.model.claim import (
    AllocationResult,
    DeviceRequest,
    DeviceSubRequest,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimTemplate,
)
from drakit.model.deviceclass import DeviceClass
from drakit.model.event import Event
from drakit.model.kinds import KINDS, NAMESPACED, KindError, model_for, parse_object
from drakit.model.node import Node, NodeSelector
from drakit.model.pod import Pod
from drakit.model.slice import Device, DeviceAttribute, ResourceSlice
from drakit.model.taintrule import DeviceTaintRule

__all__ = [
    "KINDS",
    "NAMESPACED",
    "AllocationResult",
    "Device",
    "DeviceAttribute",
    "DeviceClass",
    "DeviceRequest",
    "DeviceSubRequest",
    "DeviceTaintRule",
    "Event",
    "ExactDeviceRequest",
    "KindError",
    "Node",
    "NodeSelector",
    "Pod",
    "Quantity",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "ResourceSlice",
    "Wire",
    "model_for",
    "parse_object",
    "parse_quantity",
    "to_wire",
]
