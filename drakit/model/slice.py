"""ResourceSlice (resource.k8s.io/v1) with every device field up to Kubernetes 1.37.

Attribute keys and capacity names are kept as written (short or ``domain/id``); the
allocator resolves short names against the slice's driver.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field
from typing_extensions import TypedDict

from drakit.model._base import Quantity, Time, Wire, empty, parse_quantity
from drakit.model.meta import ObjectMeta
from drakit.model.node import NodeSelector

DeviceAttribute = TypedDict("DeviceAttribute", {  # noqa: UP013 (keys named like builtins)
    "int": int | None,
    "bool": bool | None,
    "string": str | None,
    "version": str | None,
    # List forms (DRAListTypeAttributes, 1.36+).
    "ints": list[int] | None,
    "bools": list[bool] | None,
    "strings": list[str] | None,
    "versions": list[str] | None,
}, total=False)
"""One attribute value as written (``{"string": "gpu"}``): exactly one key should be set, and
``{}`` is kept (upstream's tests rely on it).  A plain dict, not a model: an inventory holds a
dozen attributes per device, and a model instance for each was half the cost of typing a
5,000-node inventory.  A ``null`` value counts as unset, as Go's pointer fields read it."""
DeviceAttribute.__pydantic_config__ = ConfigDict(extra="forbid", strict=True)  # type: ignore[attr-defined]

ATTRIBUTE_KEYS = ("int", "bool", "string", "version", "ints", "bools", "strings", "versions")
LIST_ATTRIBUTE_KEYS = frozenset({"ints", "bools", "strings", "versions"})


def attribute_value(a: DeviceAttribute) -> Any:
    """The one set value (None when none is set)."""
    for key in ATTRIBUTE_KEYS:
        v = a.get(key)
        if v is not None:
            return v
    return None


class CapacityRequestPolicyRange(Wire):
    min: Quantity | None = None
    max: Quantity | None = None
    step: Quantity | None = None


class CapacityRequestPolicy(Wire):
    default: Quantity | None = None
    valid_values: list[Quantity] = Field(default_factory=list)
    valid_range: CapacityRequestPolicyRange | None = None


class DeviceCapacity(Wire):
    value: Quantity
    request_policy: CapacityRequestPolicy | None = None

    def quantity(self) -> Any:
        return parse_quantity(self.value)


class Counter(Wire):
    value: Quantity

    def quantity(self) -> Any:
        return parse_quantity(self.value)


class CounterSet(Wire):
    name: str
    counters: dict[str, Counter] = Field(default_factory=dict)


class DeviceCounterConsumption(Wire):
    counter_set: str
    counters: dict[str, Counter] = Field(default_factory=dict)
    compatibility_groups: list[str] = Field(default_factory=list)  # 1.37


class DeviceTaint(Wire):
    key: str
    value: str | None = None
    effect: str
    time_added: Time | None = None


class NodeAllocatableMapping(Wire):
    capacity_key: str | None = None
    capacity_multiplier: Quantity | None = None
    device_multiplier: Quantity | None = None


class NodeAllocatableOverhead(Wire):
    per_pod: Quantity | None = None
    per_container: Quantity | None = None


class NodeAllocatableResource(Wire):
    """1.37 ``nodeAllocatableResources`` entry."""

    mapping: NodeAllocatableMapping | None = None
    overhead: NodeAllocatableOverhead | None = None


class Device(Wire):
    name: str
    attributes: dict[str, DeviceAttribute] = Field(default_factory=dict)
    capacity: dict[str, DeviceCapacity] = Field(default_factory=dict)
    consumes_counters: list[DeviceCounterConsumption] = Field(default_factory=list)
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    taints: list[DeviceTaint] = Field(default_factory=list)
    binds_to_node: bool | None = None
    binding_conditions: list[str] = Field(default_factory=list)
    binding_failure_conditions: list[str] = Field(default_factory=list)
    allow_multiple_allocations: bool | None = None
    node_allocatable_resources: dict[str, NodeAllocatableResource] = Field(default_factory=dict)  # 1.37
    # 1.36 alpha spelling of the above, renamed in 1.37; kept raw.
    node_allocatable_resource_mappings: dict[str, Any] | None = None


class ResourcePool(Wire):
    name: str
    generation: int
    resource_slice_count: int


class ResourceSliceSpec(Wire):
    driver: str
    pool: ResourcePool
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    devices: list[Device] = Field(default_factory=list)
    per_device_node_selection: bool | None = None
    shared_counters: list[CounterSet] = Field(default_factory=list)
    partition_type_attribute: str | None = None  # 1.37
    skip_node_operations: list[str] = Field(default_factory=list)  # 1.37


class ResourceSlice(Wire):
    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta = Field(default_factory=empty(ObjectMeta))
    spec: ResourceSliceSpec
