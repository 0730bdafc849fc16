"""DeviceClass (resource.k8s.io/v1), plus the selector and opaque-config types claims share."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from drakit.model._base import Wire, empty
from drakit.model.meta import ObjectMeta


class CELDeviceSelector(Wire):
    expression: str


class DeviceSelector(Wire):
    cel: CELDeviceSelector | None = None


class OpaqueDeviceConfiguration(Wire):
    driver: str
    # runtime.RawExtension: any JSON; validation requires an object of at most 10 KiB.
    parameters: Any


class DeviceClassConfiguration(Wire):
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceClassSpec(Wire):
    selectors: list[DeviceSelector] = Field(default_factory=list)
    config: list[DeviceClassConfiguration] = Field(default_factory=list)
    extended_resource_name: str | None = None


class DeviceClass(Wire):
    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta = Field(default_factory=empty(ObjectMeta))
    spec: DeviceClassSpec = Field(default_factory=empty(DeviceClassSpec))
