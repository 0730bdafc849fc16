"""The Profile document (``apiVersion: drakit.dev/v1alpha1``, ``kind: Profile``).

A profile is a hardware contract: what a workload needs, in capability words, independent of
any driver's attribute names.  pydantic with ``extra="forbid"`` and strict types so that a typo
(``memmory``) or a YAML surprise (``count: "2"``, ``minComputeCapability: 8.10`` read as a
float) is an error with a field path, never a silently ignored setting.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from pydantic.alias_generators import to_camel

API_VERSION = "drakit.dev/v1alpha1"
KIND = "Profile"

# Polyaxon's preset strategy names (ecosystem notes §2.5), applied to ``extends``:
#   replace    - a field this profile sets replaces the inherited field as a whole
#   isnull     - this profile only fills fields the parents left empty (parents win)
#   post_merge - deep merge, this profile wins on conflicts (the default)
#   pre_merge  - deep merge, the parents win on conflicts
MergeStrategy = Literal["replace", "isnull", "post_merge", "pre_merge"]
DEFAULT_MERGE_STRATEGY: MergeStrategy = "post_merge"

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")


def _version_text(value: Any) -> Any:
    # YAML reads 8.0 as a float and 8.10 as 8.1: refuse floats, accept ints (570 -> "570").
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        raise ValueError(f"write versions as quoted strings (e.g. '{value}'): YAML reads {value} as a number")
    return value


def _dns_label(value: Any) -> Any:
    if isinstance(value, str) and (len(value) > 63 or not _DNS_LABEL.match(value)):
        raise ValueError("must be a DNS label: lower case letters, digits and '-', at most 63 characters")
    return value


def _one_or_many(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


VersionText = Annotated[str, BeforeValidator(_version_text)]
DnsLabel = Annotated[str, BeforeValidator(_dns_label)]


class _Base(BaseModel):
    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, strict=True, alias_generator=to_camel, frozen=True
    )


class MemoryBounds(_Base):
    """Per-device memory with explicit units: ``48Gi`` (binary) or ``80GB`` (decimal)."""

    min: str | None = None
    max: str | None = None


class NameSet(_Base):
    """Names allowed (any of) and names excluded, matched exactly as the driver publishes them."""

    allow: list[str] | None = None
    exclude: list[str] | None = None


class Requirements(_Base):
    """What each device must be; shared by the profile and each of its alternatives."""

    count: int | None = Field(None, ge=1, le=32)
    memory: MemoryBounds | None = None
    products: NameSet | None = None
    architectures: NameSet | None = None
    min_compute_capability: VersionText | None = None
    min_driver_version: VersionText | None = None


class Alternative(Requirements):
    """One acceptable option; unset fields inherit the profile's requirements."""

    name: DnsLabel


class Alternatives(_Base):
    """Ordered options compiled to ``firstAvailable``.

    ``smallest-first`` (default) sorts options by the largest device each can get (memory max,
    or the biggest listed product), so small jobs take small devices before big ones;
    ``as-written`` keeps the file's order (e.g. "prefer H100, accept A100").
    """

    order: Literal["smallest-first", "as-written"] = "smallest-first"
    options: list[Alternative] = Field(min_length=1, max_length=8)


class Toleration(_Base):
    """A pod toleration (core/v1 Toleration)."""

    key: str | None = None
    operator: Literal["Equal", "Exists"] | None = None
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None
    toleration_seconds: int | None = None


class DeviceToleration(_Base):
    """A device-taint toleration on the request (resource.k8s.io/v1 DeviceToleration)."""

    key: str | None = None
    operator: Literal["Equal", "Exists"] | None = None
    value: str | None = None
    effect: Literal["NoSchedule", "NoExecute", "None"] | None = None
    toleration_seconds: int | None = None


class PodSettings(_Base):
    priority_class_name: str | None = None
    tolerations: list[Toleration] | None = None


class PolyaxonSettings(_Base):
    """How Polyaxon runs get the devices (docs/polyaxon.md).

    ``label`` (default): the preset labels the pods and admission injects the claims;
    ``extended-resource``: the preset asks for the profile's DRA extended resource, which
    passes through Polyaxon unchanged but says only "N devices of this one class".
    ``agentQueue`` is Polyaxon's own ``queue`` (``agent/queue``), not the Kueue queue.
    """

    mode: Literal["label", "extended-resource"] | None = None
    agent_queue: str | None = None


class ProfileSpec(Requirements):
    vendor: Literal["nvidia", "amd", "intel", "example"] | None = None
    driver: str | None = None
    # All devices of the request on one PCIe root or one NUMA node (a matchAttribute constraint).
    colocate: Literal["pcieRoot", "numaNode"] | None = None
    alternatives: Alternatives | None = None
    claim: Literal["per-pod", "shared"] | None = None
    claim_name: DnsLabel | None = None
    request_name: DnsLabel | None = None
    admin_access: bool | None = None
    device_tolerations: list[DeviceToleration] | None = Field(None, max_length=16)
    queue: str | None = None
    pod: PodSettings | None = None
    polyaxon: PolyaxonSettings | None = None


class ProfileMeta(_Base):
    name: DnsLabel
    description: str | None = None
    labels: dict[str, str] | None = None


class Profile(_Base):
    api_version: Literal["drakit.dev/v1alpha1"]
    kind: Literal["Profile"]
    metadata: ProfileMeta
    # One name or a list; later parents win over earlier ones, this profile over all of them.
    extends: Annotated[list[DnsLabel], BeforeValidator(_one_or_many)] | None = None
    merge_strategy: MergeStrategy | None = None
    spec: ProfileSpec = Field(default_factory=lambda: ProfileSpec.model_validate({}))

    @property
    def name(self) -> str:
        return self.metadata.name

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True)


def profile_json_schema() -> dict[str, Any]:
    """The published JSON schema (``docs/profile.schema.json`` is generated from this)."""
    schema = Profile.model_json_schema(by_alias=True)
    # Validators widen what the types say: ``extends`` takes one name, versions take integers.
    schema["properties"]["extends"] = {
        "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}, {"type": "null"}],
        "description": "Profiles to inherit from; later ones win over earlier ones, this profile over all.",
    }
    for definition in schema.get("$defs", {}).values():
        for key in ("minComputeCapability", "minDriverVersion"):
            if key in definition.get("properties", {}):
                definition["properties"][key] = {
                    "anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}],
                    "description": "MAJOR[.MINOR[.PATCH]]; quote it, YAML reads 8.0 as a number",
                }
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://drakit.dev/schemas/profile.v1alpha1.json"
    schema["title"] = "drakit Profile (drakit.dev/v1alpha1)"
    return schema
