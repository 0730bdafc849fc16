"""The shape of one driver schema version: attribute and capacity specs plus capability roles."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Literal

AttrType = Literal["string", "int", "bool", "version"]

# Capability words a profile uses, mapped per driver to the attribute key that carries them.
# Sorted alphabetically; when adding, also teach drakit.profiles.compile how to compile it.
Role = Literal["architecture", "computeCapability", "driverVersion", "product"]
ROLES: tuple[Role, ...] = ("architecture", "computeCapability", "driverVersion", "product")


def split_key(key: str, driver: str) -> tuple[str, str]:
    """``productName`` -> (driver, productName); ``resource.kubernetes.io/pcieRoot`` -> (domain, id).

    Unqualified names belong to the driver's own domain, as in the CEL ``device`` variable.
    """
    domain, sep, name = key.rpartition("/")
    return (domain, name) if sep else (driver, key)


def qualify(key: str, driver: str) -> str:
    """The fully qualified name (what ``matchAttribute`` needs)."""
    domain, name = split_key(key, driver)
    return f"{domain}/{name}"


@dataclass(frozen=True)
class AttributeSpec:
    """One attribute key as the driver writes it (bare for its own domain, qualified otherwise)."""

    key: str
    type: AttrType
    required: bool = False  # published on every device of this schema version
    note: str = ""
    # Device types (values of the schema's ``device_type`` attribute) on which the key is
    # always published, for keys that only some types carry (NVIDIA: ``architecture`` on
    # every gpu and mig device, never on vfio ones).
    on: frozenset[str] = frozenset()


@dataclass(frozen=True)
class CapacitySpec:
    """One capacity key; ``zero_means_unknown`` marks drivers that publish 0 when they cannot measure."""

    key: str
    required: bool = False
    zero_means_unknown: bool = False
    note: str = ""
    on: frozenset[str] = frozenset()  # as AttributeSpec.on


@dataclass(frozen=True)
class SchemaChange:
    """A key that a schema version no longer publishes, and what replaced it (for lint hints)."""

    key: str
    since: str
    replacement: str = ""
    note: str = ""


@dataclass(frozen=True)
class DriverSchema:
    """What one driver (at one schema version) publishes for the devices a profile may request."""

    driver: str
    version: str
    vendor: str
    attributes: Mapping[str, AttributeSpec]
    capacities: Mapping[str, CapacitySpec]
    roles: Mapping[Role, str] = field(default_factory=dict)
    # Attribute/value that marks a full accelerator (NVIDIA ``type == 'gpu'``); None: select on the driver.
    device_type: tuple[str, str] | None = None
    device_types: tuple[str, ...] = ()  # every value the device_type attribute takes
    # DeviceClasses the driver installs -> the device type each selects (``type == 'mig'``).
    class_types: Mapping[str, str] = field(default_factory=dict)
    memory_capacity: str | None = "memory"
    # Known product names -> published memory, for "smallest first" ordering and near-miss lint.
    products: Mapping[str, str] = field(default_factory=dict)
    removed: tuple[SchemaChange, ...] = ()
    default_class: str = ""
    learned: bool = False  # derived from an inventory rather than from the driver's code

    @property
    def ref(self) -> str:
        return f"{self.driver}@{self.version}"

    def attribute(self, key: str) -> AttributeSpec | None:
        """Look a key up bare or qualified (``gpu.nvidia.com/productName`` is ``productName``)."""
        domain, name = split_key(key, self.driver)
        return self.attributes.get(name if domain == self.driver else f"{domain}/{name}")

    def capacity(self, key: str) -> CapacitySpec | None:
        domain, name = split_key(key, self.driver)
        return self.capacities.get(name if domain == self.driver else f"{domain}/{name}")

    def always_published(self, space: str, key: str, types: Collection[str] | None = None) -> bool:
        """Whether every device (of the given device types, when known) publishes ``key``.

        ``space`` is ``attributes`` or ``capacity``; ``types`` are the values of
        ``device_type`` a selector is already restricted to (None or empty: any device).
        """
        spec = self.attribute(key) if space == "attributes" else self.capacity(key)
        if spec is None:
            return False
        return spec.required or (bool(types) and set(types or ()) <= spec.on)

    def removed_key(self, key: str) -> SchemaChange | None:
        domain, name = split_key(key, self.driver)
        bare = name if domain == self.driver else f"{domain}/{name}"
        return next((c for c in self.removed if c.key == bare), None)
