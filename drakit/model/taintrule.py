"""DeviceTaintRule (resource.k8s.io/v1alpha3, v1beta2, and v1 in 1.37)."""

from __future__ import annotations

from pydantic import Field

from drakit.model._base import Wire, empty
from drakit.model.meta import Condition, ObjectMeta
from drakit.model.slice import DeviceTaint


class DeviceTaintSelector(Wire):
    driver: str | None = None
    pool: str | None = None
    device: str | None = None


class DeviceTaintRuleSpec(Wire):
    device_selector: DeviceTaintSelector | None = None
    taint: DeviceTaint


class DeviceTaintRuleStatus(Wire):
    conditions: list[Condition] = Field(default_factory=list)


class DeviceTaintRule(Wire):
    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta = Field(default_factory=empty(ObjectMeta))
    spec: DeviceTaintRuleSpec
    status: DeviceTaintRuleStatus = Field(default_factory=empty(DeviceTaintRuleStatus))
