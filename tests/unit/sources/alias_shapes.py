"""Alias-budget shapes shared by the unit table and the kubectl agreement test.

A bomb of ``levels`` anchors, each a list of ``width`` aliases of the one before, and a plain
list of ``plain`` scalars placed before or after it.  Plain content after the bomb lowers the
final ratio but not the one go-yaml v2 checks while it decodes the bomb, so only a stepwise
count gets these right.
"""

from __future__ import annotations


def alias_document(levels: int, width: int, plain: int, where: str) -> str:
    head = ["apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: x", "spec:"]
    bomb = ["  a0: &a0 [" + ", ".join(["x"] * width) + "]"]
    bomb += [f"  a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels + 1)]
    listed = ["  p: [" + ", ".join(["y"] * plain) + "]"] if plain else []
    return "\n".join(head + (bomb + listed if where == "after" else listed + bomb)) + "\n"


# (levels, width, plain, where) -> whether kubectl 1.37.2 (sigs.k8s.io/yaml, go-yaml v2) refuses
# it with "document contains excessive aliasing"; recorded with `kubectl label --local -f`.
KUBECTL_VERDICTS: dict[tuple[int, int, int, str], bool] = {
    (2, 10, 20000, "after"): False,
    (3, 10, 0, "after"): True,
    (3, 10, 200, "after"): True,
    (3, 10, 200, "before"): False,
    (3, 10, 20000, "after"): True,
    (2, 33, 200, "before"): True,
    (2, 33, 1000, "after"): True,
    (2, 33, 1000, "before"): False,
    (3, 12, 50, "before"): True,
    (3, 12, 200, "before"): False,
    (3, 12, 5000, "after"): True,
    (4, 6, 50, "before"): True,
    (4, 6, 200, "before"): False,
}
