"""ResourceClaim, ResourceClaimTemplate, and the claim status with its AllocationResult."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from drakit.model._base import Quantity, Time, Wire, empty
from drakit.model.deviceclass import DeviceSelector, OpaqueDeviceConfiguration
from drakit.model.meta import Condition, ObjectMeta
from drakit.model.node import NodeSelector

ALLOCATION_MODE_EXACT_COUNT = "ExactCount"
ALLOCATION_MODE_ALL = "All"


class DeviceToleration(Wire):
    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: int | None = None


class CapacityRequirements(Wire):
    requests: dict[str, Quantity] = Field(default_factory=dict)


class DeviceDerivedAttribute(Wire):
    """1.37: an attribute computed per request by a CEL expression."""

    name: str
    expression: str


class ExactDeviceRequest(Wire):
    device_class_name: str
    selectors: list[DeviceSelector] = Field(default_factory=list)
    allocation_mode: str | None = None
    count: int | None = None
    admin_access: bool | None = None
    tolerations: list[DeviceToleration] = Field(default_factory=list)
    capacity: CapacityRequirements | None = None
    derived_attributes: list[DeviceDerivedAttribute] = Field(default_factory=list)


class DeviceSubRequest(Wire):
    name: str
    device_class_name: str
    selectors: list[DeviceSelector] = Field(default_factory=list)
    allocation_mode: str | None = None
    count: int | None = None
    tolerations: list[DeviceToleration] = Field(default_factory=list)
    capacity: CapacityRequirements | None = None
    derived_attributes: list[DeviceDerivedAttribute] = Field(default_factory=list)


class DeviceRequest(Wire):
    name: str
    exactly: ExactDeviceRequest | None = None
    first_available: list[DeviceSubRequest] = Field(default_factory=list)


class DeviceConstraint(Wire):
    requests: list[str] = Field(default_factory=list)
    match_attribute: str | None = None
    distinct_attribute: str | None = None


class DeviceClaimConfiguration(Wire):
    requests: list[str] = Field(default_factory=list)
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceClaim(Wire):
    requests: list[DeviceRequest] = Field(default_factory=list)
    constraints: list[DeviceConstraint] = Field(default_factory=list)
    config: list[DeviceClaimConfiguration] = Field(default_factory=list)


class ResourceClaimSpec(Wire):
    devices: DeviceClaim = Field(default_factory=empty(DeviceClaim))


class DeviceRequestAllocationResult(Wire):
    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    tolerations: list[DeviceToleration] = Field(default_factory=list)
    binding_conditions: list[str] = Field(default_factory=list)
    binding_failure_conditions: list[str] = Field(default_factory=list)
    share_id: str | None = Field(None, alias="shareID")
    consumed_capacity: dict[str, Quantity] = Field(default_factory=dict)
    skip_node_operations: list[str] = Field(default_factory=list)  # 1.37


class DeviceAllocationConfiguration(Wire):
    source: str
    requests: list[str] = Field(default_factory=list)
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceAllocationResult(Wire):
    results: list[DeviceRequestAllocationResult] = Field(default_factory=list)
    config: list[DeviceAllocationConfiguration] = Field(default_factory=list)


class AllocationResult(Wire):
    devices: DeviceAllocationResult = Field(default_factory=empty(DeviceAllocationResult))
    node_selector: NodeSelector | None = None
    allocation_timestamp: Time | None = None


class ResourceClaimConsumerReference(Wire):
    api_group: str | None = None
    resource: str
    name: str
    uid: str


class NetworkDeviceData(Wire):
    interface_name: str | None = None
    ips: list[str] = Field(default_factory=list)
    hardware_address: str | None = None


class AllocatedDeviceStatus(Wire):
    driver: str
    pool: str
    device: str
    share_id: str | None = Field(None, alias="shareID")
    conditions: list[Condition] = Field(default_factory=list)
    data: Any = None
    network_data: NetworkDeviceData | None = None


class ResourceClaimStatus(Wire):
    allocation: AllocationResult | None = None
    reserved_for: list[ResourceClaimConsumerReference] = Field(default_factory=list)
    devices: list[AllocatedDeviceStatus] = Field(default_factory=list)


class ResourceClaim(Wire):
    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta = Field(default_factory=empty(ObjectMeta))
    spec: ResourceClaimSpec = Field(default_factory=empty(ResourceClaimSpec))
    status: ResourceClaimStatus = Field(default_factory=empty(ResourceClaimStatus))


class ResourceClaimTemplateSpec(Wire):
    metadata: ObjectMeta = Field(default_factory=empty(ObjectMeta))
    spec: ResourceClaimSpec = Field(default_factory=empty(ResourceClaimSpec))


class ResourceClaimTemplate(Wire):
    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta = Field(default_factory=empty(ObjectMeta))
    spec: ResourceClaimTemplateSpec = Field(default_factory=empty(ResourceClaimTemplateSpec))
