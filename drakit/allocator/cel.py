"""The allocator's one seam to the CEL implementation in :mod:`drakit.selectors`.

The allocator compiles in the **stored-expressions** environment (every field and function of
the current version, whatever the feature gates say), evaluates per device view, and wraps
outcomes in upstream's wording at the call site.  The DRA-specific decoration of runtime errors
(upstream's ``cel.EnhanceRuntimeError``) lives here, not in the generic CEL engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drakit import selectors
from drakit.features import Features


def compile_stored(expr: str, features: Features) -> Any:
    return selectors.compile_selector(expr, environment="stored", features=features)


def device_view(driver: str, device: Mapping[str, Any]) -> Any:
    return selectors.device_view(driver, device)


def error_message(err: Any) -> str:
    """The text of a compile error object or runtime exception."""
    msg = getattr(err, "message", None)
    return str(msg) if msg else str(err)


# Appended by upstream's DRA ``cel.EnhanceRuntimeError`` (v0.37.2) to runtime errors that mention
# a missing map key.  It lives here, at the allocator's seam, because upstream adds it in the
# allocator's selector loop, not in CEL itself: ``cel eval`` and the CEL engine print the bare
# cel-go message.
NO_SUCH_KEY_HINT = (
    ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() "
    "for optional fields"
)


def runtime_error_message(err: Any) -> str:
    """A selector's runtime error as the allocator reports it.

    Upstream tests the message for ``no such key:`` anywhere (wrapped errors included) and
    appends the hint once per error; a message that merely already contains the hint's text
    still gets it (the idempotency is by error identity, which a fresh evaluation never has).
    """
    text = error_message(err)
    return text + NO_SUCH_KEY_HINT if "no such key:" in text else text
