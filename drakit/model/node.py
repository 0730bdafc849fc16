"""The part of core/v1 Node that allocation needs, plus NodeSelector and Taint.

Fields allocation never reads (addresses, images, nodeInfo, ...) are declared so that
``kubectl get node -o yaml`` output loads under unknown-field rejection, but kept raw.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from drakit.model._base import Quantity, Time, Wire, empty
from drakit.model.meta import ObjectMeta


class NodeSelectorRequirement(Wire):
    key: str
    operator: str
    values: list[str] = Field(default_factory=list)


class NodeSelectorTerm(Wire):
    match_expressions: list[NodeSelectorRequirement] = Field(default_factory=list)
    match_fields: list[NodeSelectorRequirement] = Field(default_factory=list)


class NodeSelector(Wire):
    node_selector_terms: list[NodeSelectorTerm]


class Taint(Wire):
    key: str
    value: str | None = None
    effect: str
    time_added: Time | None = None


class NodeSpec(Wire):
    pod_cidr: str | None = Field(None, alias="podCIDR")
    pod_cidrs: list[str] = Field(default_factory=list, alias="podCIDRs")
    provider_id: str | None = Field(None, alias="providerID")
    unschedulable: bool | None = None
    taints: list[Taint] = Field(default_factory=list)
    config_source: Any = None
    external_id: str | None = Field(None, alias="externalID")
    pod_preemption_policy: Any = None


class NodeStatus(Wire):
    capacity: dict[str, Quantity] = Field(default_factory=dict)
    allocatable: dict[str, Quantity] = Field(default_factory=dict)
    phase: str | None = None
    conditions: list[Any] = Field(default_factory=list)
    addresses: list[Any] = Field(default_factory=list)
    daemon_endpoints: Any = None
    node_info: Any = None
    images: list[Any] = Field(default_factory=list)
    volumes_in_use: list[Any] = Field(default_factory=list)
    volumes_attached: list[Any] = Field(default_factory=list)
    config: Any = None
    runtime_handlers: list[Any] = Field(default_factory=list)
    features: Any = None
    declared_features: list[Any] = Field(default_factory=list)


class Node(Wire):
    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta = Field(default_factory=empty(ObjectMeta))
    spec: NodeSpec = Field(default_factory=empty(NodeSpec))
    status: NodeStatus = Field(default_factory=empty(NodeStatus))
