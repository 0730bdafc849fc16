"""The part of core/v1 Pod that DRA scheduling reads.

Every PodSpec/Container/PodStatus field of 1.37 is declared (so real ``kubectl get pod
-o yaml`` output loads under unknown-field rejection); only the DRA-relevant ones are
typed, the rest are kept raw.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from drakit.model._base import Quantity, Wire, empty
from drakit.model.meta import ObjectMeta


class ContainerResourceClaim(Wire):
    """core/v1 ResourceClaim: a container's reference to one of the pod's claims."""

    name: str
    request: str | None = None


class ResourceRequirements(Wire):
    limits: dict[str, Quantity] = Field(default_factory=dict)
    requests: dict[str, Quantity] = Field(default_factory=dict)
    claims: list[ContainerResourceClaim] = Field(default_factory=list)


class Container(Wire):
    name: str
    image: str | None = None
    resources: ResourceRequirements = Field(default_factory=empty(ResourceRequirements))
    args: Any = None
    command: Any = None
    env: Any = None
    env_from: Any = None
    image_pull_policy: Any = None
    lifecycle: Any = None
    liveness_probe: Any = None
    ports: Any = None
    readiness_probe: Any = None
    resize_policy: Any = None
    restart_policy: Any = None
    restart_policy_rules: Any = None
    security_context: Any = None
    startup_probe: Any = None
    stdin: Any = None
    stdin_once: Any = None
    termination_message_path: Any = None
    termination_message_policy: Any = None
    tty: Any = None
    volume_devices: Any = None
    volume_mounts: Any = None
    working_dir: Any = None


class PodResourceClaim(Wire):
    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class Toleration(Wire):
    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: int | None = None


class PodSpec(Wire):
    containers: list[Container] = Field(default_factory=list)
    init_containers: list[Container] = Field(default_factory=list)
    resource_claims: list[PodResourceClaim] = Field(default_factory=list)
    node_name: str | None = None
    node_selector: dict[str, str] = Field(default_factory=dict)
    tolerations: list[Toleration] = Field(default_factory=list)
    # Affinity is evaluated by the scheduler's other plugins; kept raw.
    affinity: dict[str, Any] | None = None
    scheduler_name: str | None = None
    priority_class_name: str | None = None
    priority: int | None = None
    active_deadline_seconds: Any = None
    automount_service_account_token: Any = None
    dns_config: Any = None
    dns_policy: Any = None
    enable_service_links: Any = None
    ephemeral_containers: Any = None
    eviction_responders: Any = None
    host_aliases: Any = None
    host_ipc: Any = Field(None, alias="hostIPC")
    host_network: Any = None
    host_pid: Any = Field(None, alias="hostPID")
    host_users: Any = None
    hostname: Any = None
    hostname_override: Any = None
    image_pull_secrets: Any = None
    os: Any = None
    overhead: Any = None
    preemption_policy: Any = None
    readiness_gates: Any = None
    resources: Any = None
    restart_policy: Any = None
    runtime_class_name: Any = None
    scheduling_gates: Any = None
    scheduling_group: Any = None
    security_context: Any = None
    service_account: Any = None
    service_account_name: Any = None
    set_hostname_as_fqdn: Any = Field(None, alias="setHostnameAsFQDN")
    share_process_namespace: Any = None
    subdomain: Any = None
    termination_grace_period_seconds: Any = None
    topology_spread_constraints: Any = None
    volumes: Any = None


class PodResourceClaimStatus(Wire):
    name: str
    resource_claim_name: str | None = None


class ContainerExtendedResourceRequest(Wire):
    container_name: str
    resource_name: str
    request_name: str


class PodExtendedResourceClaimStatus(Wire):
    resource_claim_name: str
    request_mappings: list[ContainerExtendedResourceRequest] = Field(default_factory=list)


class PodCondition(Wire):
    type: str
    status: str
    observed_generation: int | None = None
    last_probe_time: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


class PodStatus(Wire):
    phase: str | None = None
    conditions: list[PodCondition] = Field(default_factory=list)
    resource_claim_statuses: list[PodResourceClaimStatus] = Field(default_factory=list)
    extended_resource_claim_status: PodExtendedResourceClaimStatus | None = None
    nominated_node_name: str | None = None
    allocated_resources: Any = None
    container_statuses: Any = None
    ephemeral_container_statuses: Any = None
    host_ip: Any = Field(None, alias="hostIP")
    host_ips: Any = Field(None, alias="hostIPs")
    init_container_statuses: Any = None
    message: Any = None
    node_allocatable_resource_claim_statuses: Any = None
    observed_generation: Any = None
    pod_ip: Any = Field(None, alias="podIP")
    pod_ips: Any = Field(None, alias="podIPs")
    qos_class: Any = None
    reason: Any = None
    resize: Any = None
    resources: Any = None
    start_time: Any = None
    volume_health: Any = None


class Pod(Wire):
    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta = Field(default_factory=empty(ObjectMeta))
    spec: PodSpec = Field(default_factory=empty(PodSpec))
    status: PodStatus = Field(default_factory=empty(PodStatus))


class PodTemplateSpec(Wire):
    metadata: ObjectMeta = Field(default_factory=empty(ObjectMeta))
    spec: PodSpec = Field(default_factory=empty(PodSpec))


class PodTemplate(Wire):
    """core/v1 PodTemplate: how drakit publishes a profile's pod fragment as a validatable object."""

    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta = Field(default_factory=empty(ObjectMeta))
    template: PodTemplateSpec = Field(default_factory=empty(PodTemplateSpec))
