"""core/v1 Event: what the scheduler and drivers report about claims and pods."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from drakit.model._base import Time, Wire, empty
from drakit.model.meta import ObjectMeta


class ObjectReference(Wire):
    api_version: str | None = None
    kind: str | None = None
    name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    field_path: str | None = None


class EventSource(Wire):
    component: str | None = None
    host: str | None = None


class Event(Wire):
    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta = Field(default_factory=empty(ObjectMeta))
    involved_object: ObjectReference = Field(default_factory=empty(ObjectReference))
    reason: str | None = None
    message: str | None = None
    source: EventSource | None = None
    first_timestamp: Time | None = None
    last_timestamp: Time | None = None
    count: int | None = None
    type: str | None = None
    event_time: Time | None = None
    series: Any = None
    action: str | None = None
    related: ObjectReference | None = None
    reporting_component: str | None = None
    reporting_instance: str | None = None
