"""ObjectMeta, ListMeta, OwnerReference and Condition (apimachinery meta/v1 subset)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from drakit.model._base import Time, Wire


class OwnerReference(Wire):
    api_version: str = Field(alias="apiVersion")
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(Wire):
    """The metadata fields a manifest or ``kubectl get -o yaml`` may carry."""

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    owner_references: list[OwnerReference] = Field(default_factory=list)
    finalizers: list[str] = Field(default_factory=list)
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: Time | None = None
    deletion_timestamp: Time | None = None
    deletion_grace_period_seconds: int | None = None
    self_link: str | None = None
    # managedFields is server bookkeeping, irrelevant to allocation: kept raw.
    managed_fields: list[Any] | None = None


class ListMeta(Wire):
    resource_version: str | None = None
    continue_: str | None = Field(None, alias="continue")
    remaining_item_count: int | None = None
    self_link: str | None = None


class Condition(Wire):
    """metav1.Condition (used by device status and DeviceTaintRule status)."""

    type: str
    status: str
    observed_generation: int | None = None
    last_transition_time: Time | None = None
    reason: str | None = None
    message: str | None = None
