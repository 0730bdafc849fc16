"""The resource-claim controller's part of the simulation: claims generated from templates.

Mirrors kube-controller-manager's ``resourceclaim`` controller (reference notes §5.1): one
claim per pod and template entry, ``generateName`` built from pod and claim names with the
proportional 57-character truncation, the API server's 5-character suffix, the
``resource.kubernetes.io/pod-claim-name`` annotation and a controlling owner reference to the
pod (with ``blockOwnerDeletion`` only where the release set it, see ``drakit.sim.versions``).
The random parts (suffix, UIDs) come from a seeded generator so runs repeat exactly.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Mapping
from typing import Any

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
DELETE_PROTECTION_FINALIZER = "resource.kubernetes.io/delete-protection"

MAX_BASE_LEN = 57
"""63 (DNS label) minus a hyphen and the 5 generated characters: the controller truncates
``<pod>-<claim>-`` to this many characters itself so that both parts survive."""

MAX_GENERATED_BASE = 58
"""The API server's SimpleNameGenerator cuts generateName to 63 - 5 characters."""

# k8s.io/apimachinery/pkg/util/rand: consonants and digits only, so that generated names never
# spell words.
SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def generate_name(pod_name: str, pod_claim_name: str) -> str:
    """The ``generateName`` the controller puts on a claim for ``pod_name``/``pod_claim_name``."""
    base = f"{pod_name}-{pod_claim_name}-"
    if len(base) > MAX_BASE_LEN:
        # Truncate both parts in proportion to their length (no trailing dash then), so that a
        # long pod name does not swallow the claim name.
        total = len(base)
        base = pod_name[: len(pod_name) * MAX_BASE_LEN // total] + "-" + pod_claim_name[: len(pod_claim_name) * MAX_BASE_LEN // total]
    return base


def name_from_generate_name(generate: str, rng: random.Random) -> str:
    """The API server's name for a ``generateName`` (base cut to 58 + 5 random characters)."""
    return generate[:MAX_GENERATED_BASE] + "".join(rng.choice(SUFFIX_ALPHABET) for _ in range(5))


def deterministic_uid(seed: int, kind: str, namespace: str, name: str) -> str:
    """A UID that depends only on the seed and the object's identity."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"drakit-sim/{seed}/{kind}/{namespace}/{name}"))


def claim_from_template(
    template: Mapping[str, Any],
    *,
    name: str,
    generate: str,
    namespace: str,
    pod_name: str,
    pod_uid: str,
    pod_claim_name: str,
    uid: str,
    block_owner_deletion: bool = False,
) -> dict[str, Any]:
    """A ResourceClaim as the controller creates it from a ResourceClaimTemplate.

    ``block_owner_deletion``: 1.34's controller also set ``blockOwnerDeletion: true`` on the
    owner reference; from 1.35 it sets only ``controller: true``.
    """
    tspec = template.get("spec") or {}
    tmeta = tspec.get("metadata") or {}
    annotations = dict(tmeta.get("annotations") or {})
    annotations[POD_CLAIM_NAME_ANNOTATION] = pod_claim_name
    owner: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "name": pod_name, "uid": pod_uid, "controller": True}
    if block_owner_deletion:
        owner["blockOwnerDeletion"] = True
    meta: dict[str, Any] = {
        "name": name,
        "generateName": generate,
        "namespace": namespace,
        "uid": uid,
        "annotations": annotations,
        "ownerReferences": [owner],
    }
    if tmeta.get("labels"):
        meta["labels"] = dict(tmeta["labels"])
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": tspec.get("spec") or {},
        "status": {},
    }
