"""Which DRA behaviours are on: a frozen value built once at the edge and passed to the core.

Gate names are upstream's (``pkg/features``).  Defaults follow the Kubernetes release
(reference notes §0); every flag changes control flow somewhere, so core code never reads
configuration of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from drakit.errors import InvalidArgument
from drakit.gostr import quote

SUPPORTED_VERSIONS = ("1.34", "1.35", "1.36", "1.37")
NEWEST_VERSION = SUPPORTED_VERSIONS[-1]

# Gate name -> attribute name.  Sorted alphabetically; when adding, also extend Features
# and _DEFAULTS.
GATES: dict[str, str] = {
    "DRAAdminAccess": "admin_access",
    "DRAConsumableCapacity": "consumable_capacity",
    "DRADeviceBindingConditions": "binding_conditions",
    "DRADeviceTaints": "device_taints",
    "DRAListTypeAttributes": "list_type_attributes",
    "DRAPartitionableDevices": "partitionable_devices",
    "DRAPrioritizedList": "prioritized_list",
    "DRAResourceClaimDeviceStatus": "device_status",
}

# Gates of kube-scheduler outside DRA (the allocator and the oracle know nothing of them).
SCHEDULER_GATES: dict[str, str] = {
    "TaintTolerationComparisonOperators": "taint_comparison_operators",  # Lt/Gt tolerations; alpha 1.35-1.37
}


@dataclass(frozen=True)
class Features:
    """DRA feature gates as booleans."""

    admin_access: bool = True
    prioritized_list: bool = True
    device_status: bool = True
    device_taints: bool = False
    partitionable_devices: bool = False
    consumable_capacity: bool = False
    binding_conditions: bool = False
    list_type_attributes: bool = False
    taint_comparison_operators: bool = False

    @property
    def binding_and_status(self) -> bool:
        """Upstream's allocator treats binding conditions as one switch with device status."""
        return self.binding_conditions and self.device_status

    @classmethod
    def for_version(cls, version: str = NEWEST_VERSION) -> Features:
        if version not in _DEFAULTS:
            raise InvalidArgument(
                f"unsupported Kubernetes version {quote(version)}: choose one of {', '.join(SUPPORTED_VERSIONS)}"
            )
        return _DEFAULTS[version]

    @classmethod
    def all_on(cls) -> Features:
        return cls(**{f.name: True for f in fields(cls)})

    def with_gates(self, spec: str | None) -> Features:
        """Apply ``Name=true,Other=false`` (kube-scheduler's --feature-gates syntax)."""
        if not spec:
            return self
        changes: dict[str, bool] = {}
        for item in spec.split(","):
            item = item.strip()
            if not item:
                continue
            name, sep, raw = item.partition("=")
            name = name.strip()
            if not sep:
                raise InvalidArgument(f"feature gate {quote(name)}: missing '=true' or '=false'")
            attribute = GATES.get(name) or SCHEDULER_GATES.get(name)
            if attribute is None:
                raise InvalidArgument(f"unknown feature gate {quote(name)}: known gates are "
                                      f"{', '.join([*GATES, *SCHEDULER_GATES])}")
            value = raw.strip().lower()
            if value not in ("true", "false"):
                raise InvalidArgument(f"feature gate {name}: invalid value {quote(raw)}, want true or false")
            changes[attribute] = value == "true"
        return replace(self, **changes)

    def gate_string(self) -> str:
        """The canonical ``Name=bool,...`` form of the DRA gates (what the oracle is handed)."""
        return ",".join(f"{g}={str(getattr(self, a)).lower()}" for g, a in GATES.items())


_BETA_1_36 = Features(
    admin_access=True,
    prioritized_list=True,
    device_status=True,
    device_taints=True,
    partitionable_devices=True,
    consumable_capacity=True,
    binding_conditions=True,
    list_type_attributes=False,  # alpha in 1.36
)

_DEFAULTS: dict[str, Features] = {
    "1.34": Features(),
    "1.35": Features(),
    "1.36": _BETA_1_36,
    "1.37": _BETA_1_36,
}
