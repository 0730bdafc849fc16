"""Names with control characters reach messages through Go's ``%q`` (no terminal escape injection).

Each case feeds a name holding an ANSI escape or another control character through one core
message that embeds it, and checks that the message shows ``gostr.quote(name)``, as the upstream
message it mirrors does with ``%q``.  Where upstream's text prints the same name with ``%s``
(the allocator's "could not retrieve device class %s") it stays verbatim: the CLI escapes whole
lines at its edge.
"""

from __future__ import annotations

from typing import Any

import pytest

from drakit.allocator.search import allocate
from drakit.explain.diagnose import diagnose
from drakit.features import Features
from drakit.gostr import quote
from drakit.inventory.snapshot import ClusterSnapshot
from drakit.inventory.templates import parse_template
from drakit.model import parse_object
from drakit.model.validate import validate_object
from drakit.profiles.units import normalize_version

NAMES = [
    pytest.param("gpu\x1b[31mred", id="ansi-colour"),
    pytest.param("gpu\x1b]0;title\x07", id="osc-title"),
    pytest.param("gpu\nnext", id="newline"),
    pytest.param("gpu\x9bc", id="c1-csi"),
    pytest.param('gpu"\\x', id="quote-and-backslash"),
    pytest.param("gpu\x7fé", id="del-and-printable-non-ascii"),
]

FEATURES = Features.for_version()
NODE: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-0"}}


def _pod(claim: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "train", "namespace": "ml"},
        "spec": {
            "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", **claim}],
        },
    }


def _claim(name: str, class_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": class_name}}]}},
    }


def _explain_messages(pod: dict[str, Any]) -> list[str]:
    snapshot = ClusterSnapshot.from_objects([NODE, pod])
    found = diagnose(snapshot, "pod", "train", "ml", features=FEATURES)
    return [found.headline, *(r.message for r in found.findings)]


def _missing_claim(name: str) -> tuple[list[str], str]:
    return _explain_messages(_pod({"resourceClaimName": name})), quote("ml/" + name)


def _missing_template(name: str) -> tuple[list[str], str]:
    return _explain_messages(_pod({"resourceClaimTemplateName": name})), quote("ml/" + name)


def _missing_class(name: str) -> tuple[list[str], str]:
    out = allocate(node=NODE, slices=(), classes=(), claims=[_claim("c", name)], features=FEATURES)
    assert out.status == "error"
    return [out.message], f"deviceclass.resource.k8s.io {quote(name)} not found"


def _invalid_name(name: str) -> tuple[list[str], str]:
    errors, _ = validate_object(parse_object(_claim(name, "gpu")), FEATURES)
    return [e.body() for e in errors], f"Invalid value: {quote(name)}"


def _raised(call: Any, arg: str) -> list[str]:
    with pytest.raises(ValueError) as info:
        call(arg)
    return [str(info.value)]


def _bad_template(name: str) -> tuple[list[str], str]:
    return _raised(parse_template, name), f"node template {quote(name)}"


def _bad_version(name: str) -> tuple[list[str], str]:
    return _raised(normalize_version, name), f"version {quote(name)}"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    ("probe", "verbatim_s"),
    [
        pytest.param(_missing_claim, False, id="explain-claim-missing"),
        pytest.param(_missing_template, False, id="explain-template-missing"),
        pytest.param(_missing_class, True, id="allocate-class-missing"),
        pytest.param(_invalid_name, False, id="validate-name"),
        pytest.param(_bad_template, False, id="inventory-node-template"),
        pytest.param(_bad_version, False, id="profile-driver-version"),
    ],
)
def test_names_are_go_quoted(probe: Any, verbatim_s: bool, name: str) -> None:
    messages, expected = probe(name)
    hits = [m for m in messages if expected in m]
    assert hits, (expected, messages)
    if not verbatim_s:
        for message in hits:
            assert not any(ch in message for ch in "\x1b\x07\n\x9b"), message
