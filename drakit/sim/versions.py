"""What the control plane around the allocator does differently from one Kubernetes release to the next.

A scenario names a ``kubernetesVersion``; the feature-gate defaults follow it
(:class:`drakit.features.Features`), and so does the behaviour of the claim controller and the
scheduler plugins that the simulator reproduces.  Each switch below was read off upstream's
source at the release tags (kube-scheduler and kube-controller-manager v1.34.4, v1.35.4, v1.36.3
and v1.37.2); the pull request that changed it is named so a later release can be checked the
same way.  Behaviour that is the same in every supported release is not a switch:

* NodeResourcesFit marks a node whose allocatable cpu or memory is below the pod's request as
  unresolvable, so preemption counts it as "not helpful" (PR #131345, before 1.34);
* the DynamicResources Filter runs the allocator before it reports an allocated claim as
  unavailable on a node, and remembers that claim for PostFilter only when the allocation
  succeeded (every supported release).

Kept as a frozen value built once per run at the edge (like ``Features``), so the scheduler and
the controller never look at a version string themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

from drakit.errors import InvalidArgument
from drakit.features import NEWEST_VERSION, SUPPORTED_VERSIONS
from drakit.gostr import quote


def _minor(version: str) -> int:
    return int(version.split(".")[1])


@dataclass(frozen=True)
class ControlPlane:
    """Release-dependent behaviour of the resource-claim controller and kube-scheduler."""

    version: str = NEWEST_VERSION
    postfilter_noop_reasons: bool = False
    """DynamicResources PostFilter reports "still not schedulable" (pod with claims, nothing to
    deallocate) or "no new claims to deallocate" (no claims, or PreFilter failed first) when it
    does nothing.  1.34-1.36; 1.37 returns an empty Unschedulable status (PR #140222)."""
    owner_block_deletion: bool = False
    """Generated claims' owner reference carries ``blockOwnerDeletion: true``.  1.34 only; the
    controller sets just ``controller: true`` from 1.35 (PR #134956, v1.35.0-alpha.3)."""
    dra_score_weight: int = 2
    """Weight of the DynamicResources Score plugin in the default profile: 0 in 1.34 (the plugin
    had no Score), 2 from 1.35 (Score added by PR #134711 with weight 2)."""
    dra_score_allocated_claims: bool = True
    """The DynamicResources score also counts the chosen subrequests of the pod's claims that were
    already allocated (1.36+).  1.35 pairs every claim of the pod with the new allocations by
    index, so a pod with an allocated claim *and* a claim to allocate fails Score with an error
    whenever two or more nodes are feasible (fixed in 1.36)."""

    @classmethod
    def for_version(cls, version: str = NEWEST_VERSION) -> ControlPlane:
        if version not in SUPPORTED_VERSIONS:
            raise InvalidArgument(f"unsupported Kubernetes version {quote(version)}: choose one of {', '.join(SUPPORTED_VERSIONS)}")
        minor = _minor(version)
        return cls(
            version=version,
            postfilter_noop_reasons=minor <= 36,
            owner_block_deletion=minor <= 34,
            dra_score_weight=0 if minor <= 34 else 2,
            dra_score_allocated_claims=minor >= 36,
        )
