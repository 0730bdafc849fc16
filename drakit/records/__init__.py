"""Run records: pure values for what ran where, on which device, in which environment, and how it went."""

from drakit.records.capture import capture_devices
from drakit.records.compare import By, Group, compare
from drakit.records.run import (
    MetricPoint,
    RecordCode,
    RecordRejected,
    Refusal,
    ResultProblem,
    Run,
    RunClaim,
    RunDevice,
    RunEnv,
    RunRecord,
    RunResult,
    RunState,
    Transition,
)

__all__ = [
    "By",
    "Group",
    "MetricPoint",
    "RecordCode",
    "RecordRejected",
    "Refusal",
    "ResultProblem",
    "Run",
    "RunClaim",
    "RunDevice",
    "RunEnv",
    "RunRecord",
    "RunResult",
    "RunState",
    "Transition",
    "capture_devices",
    "compare",
]
