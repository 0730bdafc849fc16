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
from drakit.model.load import Bundle, Document, Entry, decode_documents
from drakit.model.node import Node, NodeSelector
from drakit.model.pod import Pod
from drakit.model.slice import Device, DeviceAttribute, ResourceSlice
from drakit.model.taintrule import DeviceTaintRule
from drakit.model.validate import validate, validate_report

__all__ = [
    "KINDS",
    "NAMESPACED",
    "AllocationResult",
    "Bundle",
    "Device",
    "DeviceAttribute",
    "DeviceClass",
    "DeviceRequest",
    "DeviceSubRequest",
    "DeviceTaintRule",
    "Document",
    "Entry",
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
    "decode_documents",
    "model_for",
    "parse_object",
    "parse_quantity",
    "to_wire",
    "validate",
    "validate_report",
]
