"""Test-wide settings: hypothesis runs derandomized unless asked to explore.

``make test`` (and a bare ``pytest``) use the ``repeatable`` profile: the same examples on every
run and machine, so a red build is the code's fault and not the seed's, and no deadline or
too-slow health check on a shared, busy CI host.  ``make fuzz`` selects ``explore``
(``HYPOTHESIS_PROFILE=explore``): fresh random examples, more of them, failures kept in the
example database so that the next run replays them first.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "repeatable",
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile("explore", derandomize=False, max_examples=2_000, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
