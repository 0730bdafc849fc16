"""ResourceSlice (resource.k8s.io/v1) with every device field up to Kubernetes 1.37.

Attribute keys and capacity names are kept as written (short or ``domain/id``); the
allocator resolves short names against the slice's driver.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from drakit.model._base import Quantity, Time, Wire, empty, parse_quantity
from drakit.model.meta import ObjectMeta
from drakit.model.node import NodeSelector


class DeviceAttribute(Wire):
    """Exactly one value should be set; ``{}`` is kept (upstream tests rely on it)."""

    int_value: int | None = Field(None, alias="int")
    bool_value: bool | None = Field(None, alias="bool")
    string_value: str | None = Field(None, alias="string")
    version_value: str | None = Field(None, alias="version")
    # List forms (DRAListTypeAttributes, 1.36+).
    int_values: list[int] | None = Field(None, alias="ints")
    bool_values: list[bool] | None = Field(None, alias="bools")
    string_values: list[str] | None = Field(None, alias="strings")
    version_values: list[str] | None = Field(None, alias="versions")

    def value(self) -> Any:
        """The one set value (None when none is set)."""
        for name in ("int_value", "bool_value", "string_value", "version_value",
                     "int_values", "bool_values", "string_values", "version_values"):
            if name in self.model_fields_set and getattr(self, name) is not None:
                return getattr(self, name)
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
