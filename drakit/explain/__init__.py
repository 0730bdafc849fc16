"""Explanations: why a pod or claim waits, and why a device was or was not chosen.

The vocabulary (codes, verdicts, the :class:`~drakit.outcomes.Reason` record) lives below the
allocator in :mod:`drakit.outcomes`; the allocator's trace in :mod:`drakit.allocator.trace`.
"""
