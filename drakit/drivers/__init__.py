"""Driver schemas: which attributes and capacities each DRA driver publishes, by schema version.

The profile compiler needs this to turn "min memory", "architecture", "compute capability" into
the attribute keys a driver really writes, and to know which keys may be missing (and so must
be guarded in CEL).  The schemas are hand-written from the drivers' sources because no driver
publishes a machine-readable schema; :func:`learn_schema` derives one from an inventory instead.
"""

from drakit.drivers.learn import learn_schema
from drakit.drivers.registry import (
    DRIVERS,
    STANDARD_DOMAIN,
    VENDORS,
    get_schema,
    known_drivers,
    parse_driver_ref,
    schema_versions,
)
from drakit.drivers.schema import AttributeSpec, CapacitySpec, DriverSchema, SchemaChange, qualify, split_key

__all__ = [
    "DRIVERS",
    "STANDARD_DOMAIN",
    "VENDORS",
    "AttributeSpec",
    "CapacitySpec",
    "DriverSchema",
    "SchemaChange",
    "get_schema",
    "known_drivers",
    "learn_schema",
    "parse_driver_ref",
    "qualify",
    "schema_versions",
    "split_key",
]
