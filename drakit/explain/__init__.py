"""Explanations: why a device was or was not chosen.

``reasons`` holds the stable vocabulary (:class:`ReasonCode`, :class:`Reason`); ``trace`` holds
the collector the allocator writes into at exactly its rejection points.
"""

from drakit.explain.reasons import Reason, ReasonCode, Severity
from drakit.explain.trace import Trace

__all__ = ["Reason", "ReasonCode", "Severity", "Trace"]
