from __future__ import annotations

import random
from typing import Any

import pytest

from drakit.sim.controller import (
    POD_CLAIM_NAME_ANNOTATION,
    SUFFIX_ALPHABET,
    claim_from_template,
    generate_name,
    name_from_generate_name,
)


@pytest.mark.parametrize(
    ("pod", "claim", "want"),
    [
        pytest.param("train-0", "gpu", "train-0-gpu-", id="short"),
        pytest.param("p" * 50, "c" * 5, "p" * 50 + "-" + "c" * 5 + "-", id="exactly-57"),
        # 60 + 1 + 10 + 1 = 72 > 57: 60*57//72 = 47 and 10*57//72 = 7, no trailing dash.
        pytest.param("p" * 60, "c" * 10, "p" * 47 + "-" + "c" * 7, id="truncated-proportionally"),
        pytest.param("a" * 10, "b" * 60, "a" * 7 + "-" + "b" * 47, id="long-claim-name-keeps-pod"),
    ],
)
def test_generate_name(pod: str, claim: str, want: str) -> None:
    assert generate_name(pod, claim) == want


def test_generated_names_use_the_api_server_alphabet_and_repeat_per_seed() -> None:
    a = [name_from_generate_name("x-", random.Random("s")) for _ in range(3)]
    b = [name_from_generate_name("x-", random.Random("s")) for _ in range(3)]
    assert a == b
    for n in a:
        assert n.startswith("x-") and len(n) == 7
        assert all(ch in SUFFIX_ALPHABET for ch in n[2:])
    assert len(name_from_generate_name("y" * 70, random.Random(1))) == 63


OWNER = {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u1", "controller": True}


@pytest.mark.parametrize(
    ("block", "want_owner"),
    [
        # kube-controller-manager 1.35+ (PR #134956): only controller: true.
        pytest.param(False, OWNER, id="1.35-and-later"),
        pytest.param(True, {**OWNER, "blockOwnerDeletion": True}, id="1.34"),
    ],
)
def test_claim_from_template_has_owner_annotation_and_labels(block: bool, want_owner: dict[str, Any]) -> None:
    tmpl: dict[str, Any] = {
        "spec": {
            "metadata": {"labels": {"team": "ml"}, "annotations": {"a": "b"}},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "c"}}]}},
        }
    }
    claim = claim_from_template(
        tmpl,
        name="p-gpu-abcde",
        generate="p-gpu-",
        namespace="ns",
        pod_name="p",
        pod_uid="u1",
        pod_claim_name="gpu",
        uid="u2",
        block_owner_deletion=block,
    )
    meta = claim["metadata"]
    assert meta["annotations"] == {"a": "b", POD_CLAIM_NAME_ANNOTATION: "gpu"}
    assert meta["labels"] == {"team": "ml"}
    assert meta["ownerReferences"] == [want_owner]
    assert claim["spec"] == tmpl["spec"]["spec"]
    assert claim["spec"] is not None and "annotations" not in tmpl["spec"]["metadata"]["labels"]
