"""Queues: a catalog compiled to Kueue, admission predicted as Kueue v0.19.2 decides, a ledger for local runs.

Pure (house layer L7): no I/O; the CLI and the store are the edges.  See ``README.md`` here for
the shapes other parts of drakit (the simulator, the local executor, the real-Kueue tests) use.
"""

from drakit.queues.admission import (
    Admission,
    Arrive,
    ClusterQueue,
    Cohort,
    DeviceClassMapping,
    DeviceRequest,
    Engine,
    Finish,
    NotModelled,
    PodSet,
    Setup,
    Step,
    Wait,
    WaitReason,
    Workload,
    replay,
)
from drakit.queues.catalog import Catalog, load_catalog_text
from drakit.queues.compile import compile_catalog, configuration_patch, features, setup_of
from drakit.queues.kueue import setup_from_objects, workload_from_job, workload_from_object
from drakit.queues.ledger import QueueLedger, Refused, Reserved
from drakit.queues.memory import MemoryLedger
from drakit.queues.quota import ResourceQuota

__all__ = [
    "Admission", "Arrive", "Catalog", "ClusterQueue", "Cohort", "DeviceClassMapping", "DeviceRequest", "Engine",
    "Finish", "MemoryLedger", "NotModelled", "PodSet", "QueueLedger", "Refused", "Reserved", "ResourceQuota", "Setup",
    "Step", "Wait", "WaitReason", "Workload", "compile_catalog", "configuration_patch", "features",
    "load_catalog_text", "replay", "setup_from_objects", "setup_of", "workload_from_job", "workload_from_object",
]
