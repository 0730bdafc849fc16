"""The front door of the verbs: manifests, the demo or a live cluster → one :class:`ClusterSnapshot`.

Every verb that answers on a cluster (allocate, explain, match, lint, trial, profile eligible)
opens its input here.  :func:`open_source` is the one resolver: ``-f`` reads manifests (validated
once, an invalid object refused with the exact lines ``drakit validate`` prints, exit 1),
``--demo`` the embedded demo, and otherwise — kubectl's convention — the cluster of the
kubeconfig (``--kubeconfig``/``--context``), read through :mod:`drakit.live`.  Objects read
from an API server are not validated again: the server validated them when they were written.
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from drakit.errors import InvalidInput, UsageError
from drakit.features import Features
from drakit.inventory.snapshot import ClusterSnapshot, Provenance
from drakit.model import validate_report
from drakit.model.load import Bundle, collector_paused
from drakit.sources import load_bundle

if TYPE_CHECKING:
    from drakit.live.client import ServerInfo
    from drakit.live.config import Target


@dataclass(frozen=True)
class Source:
    """Where a verb's objects come from, as the command line said it."""

    files: Sequence[str] = ()
    kubeconfig: str | None = None
    context: str | None = None
    demo: bool = False
    timeout: float = 30.0
    target: Target | None = None  # the cluster's config, once resolved (:func:`or_demo`)

    @property
    def live(self) -> bool:
        return not self.files and not self.demo

    def check(self) -> None:
        """-f, --demo and a cluster exclude each other (a usage error, exit 2)."""
        cluster = self.kubeconfig is not None or self.context is not None
        if sum((bool(self.files), self.demo, cluster)) > 1:
            raise UsageError("give one source: -f FILE (manifests), --demo, or --kubeconfig/--context (a cluster)")


def open_source(source: Source, features: Features, *, namespace: str | None = "default", pod_selector: str = "",
                kinds: Iterable[str] | None = None, as_given: bool = False) -> ClusterSnapshot:
    """The snapshot of ``source``.  A live read covers ``namespace`` (``None``: all), the pods of
    ``pod_selector`` and only ``kinds`` when given (``match`` needs no pods)."""
    source.check()
    if not source.live:
        from drakit.demo import demo_paths

        return open_snapshot(list(source.files) or demo_paths(), features, as_given=as_given)
    if as_given:
        raise UsageError("--as-given takes manifests (-f): objects from a cluster are as the API server keeps them")
    from drakit.live.snapshot import Scope, read_snapshot

    client = live_client(source)
    try:
        scope = Scope(namespace, pod_selector, frozenset(kinds) if kinds is not None else None)
        seen = _SERVER_INFO.pop(id(source), None)
        info = seen[1] if seen is not None and seen[0] is source else client.server_info()
        _warn_release(info.git_version, features)
        snapshot = read_snapshot(client, scope, source=where(client), info=info,
                                 warn=lambda w: print(f"Warning: {w}", file=sys.stderr))
    finally:
        client.close()
    keep_until_exit(snapshot)
    freeze_loaded()
    return snapshot


def or_demo(source: Source) -> Source:
    """``source``, falling back to the embedded demo where it names nothing and no cluster is configured.

    The trial's rule (the README's first command must run anywhere): without -f, --demo,
    --kubeconfig or --context it reads the configured cluster as kubectl would, and only where
    there is none at all ($KUBECONFIG, ~/.kube/config, in-cluster) the demo, with a warning.
    The config is resolved here once and travels in :attr:`Source.target`, so the cluster
    chosen is the cluster read.
    """
    from drakit.live.client import ClusterError
    from drakit.live.config import ConnectOptions, resolve

    source.check()
    if not source.live:
        return source
    try:
        return replace(source, target=resolve(ConnectOptions(source.kubeconfig, source.context, source.timeout)))
    except ClusterError:
        if source.kubeconfig is not None or source.context is not None:
            raise
    print("Warning: no -f and no cluster configured ($KUBECONFIG, ~/.kube/config, in-cluster): "
          "running on the embedded demo cluster", file=sys.stderr)
    return replace(source, demo=True)


# What :func:`release` read, for the :func:`open_source` of the same Source (held, so its id stays its own).
_SERVER_INFO: dict[int, tuple[Source, ServerInfo]] = {}


def release(source: Source, given: str | None, gates: str | None = None) -> str:
    """The release whose feature-gate defaults a verb answers with.

    ``--kubernetes-version`` when given; on a live cluster otherwise the cluster's own release
    (``/version``), since its scheduler decides with that release's defaults; else the newest.
    A cluster newer than drakit knows answers with the newest, and says so.  A bad flag
    (``given``, ``gates``) is refused before any request.
    """
    from drakit.features import NEWEST_VERSION, SUPPORTED_VERSIONS

    Features.for_version(given or NEWEST_VERSION).with_gates(gates)
    if given is not None or not source.live:
        return given or NEWEST_VERSION
    from drakit.live.snapshot import minor_release

    client = live_client(source)
    try:
        info = client.server_info()
    finally:
        client.close()
    _SERVER_INFO[id(source)] = (source, info)  # open_source(source) asks no second time
    git_version = info.git_version
    minor = minor_release(git_version)
    if minor in SUPPORTED_VERSIONS:
        return str(minor)
    if minor is not None and tuple(map(int, minor.split("."))) > tuple(map(int, NEWEST_VERSION.split("."))):
        print(f"Warning: the cluster runs Kubernetes {git_version}; answering with {NEWEST_VERSION}'s feature-gate "
              f"defaults, the newest drakit knows", file=sys.stderr)
    return NEWEST_VERSION  # older releases are refused when read (no resource.k8s.io/v1)


def _warn_release(git_version: str, features: Features) -> None:
    """Say so when the defaults of a release the user named are not the cluster's own.

    Without ``--kubernetes-version`` a live verb takes the cluster's release
    (:func:`release`), so this speaks only when the flag chose another release whose
    defaults differ; gates set by hand (``--feature-gates``) are left unremarked.
    """
    from drakit.features import SUPPORTED_VERSIONS
    from drakit.live.snapshot import minor_release

    minor = minor_release(git_version)
    if minor not in SUPPORTED_VERSIONS or features == Features.for_version(str(minor)):
        return
    if any(Features.for_version(v) == features for v in SUPPORTED_VERSIONS):
        print(f"Warning: the cluster runs Kubernetes {git_version}; --kubernetes-version chose other feature-gate "
              f"defaults than {minor}'s (leave it out, or give {minor}, to match the cluster)", file=sys.stderr)


def where(client: Any) -> str:
    """What a snapshot names as its source: the kubeconfig context (the twin has none)."""
    target = getattr(client, "target", None)
    return str(target.describe()) if target is not None else type(client).__name__


def live_client(source: Source) -> Any:
    """A :class:`drakit.live.kube.KubeClient` for ``source``'s kubeconfig and context (the caller closes it)."""
    from drakit.live.config import ConnectOptions, resolve
    from drakit.live.kube import KubeClient

    return KubeClient(source.target or resolve(ConnectOptions(source.kubeconfig, source.context, source.timeout)))


def refuse_invalid(entries: Iterable[Any], features: Features) -> None:
    """Raise :class:`InvalidInput` with ``validate``'s problems if any object is invalid.

    ``validate``'s warnings (a field its feature gate would drop) go to stderr as it prints them.
    """
    report = validate_report(entries, features)
    if report.errors:
        raise InvalidInput(list(report.errors))
    for w in report.warnings:
        print(f"Warning: {w}", file=sys.stderr)


def open_snapshot(paths: Sequence[str], features: Features, *, as_given: bool = False) -> ClusterSnapshot:
    """Load, validate and snapshot ``paths`` (files, directories, ``-``).

    ``as_given`` is ``allocate --as-given``: the objects exactly as upstream's allocator tests
    feed them — no API validation (the allocator's own checks answer), namespaces as written,
    objects that share a name kept in input order.
    """
    bundle = load_frozen(paths, allow_duplicate_names=as_given)
    if not as_given:  # pods made from workload templates are validated like pods
        refuse_invalid((*bundle.entries, *bundle.checked_pods), features)
    snapshot = ClusterSnapshot.from_bundle(bundle, provenance=Provenance(", ".join(paths), time.time()), as_given=as_given)
    keep_until_exit(bundle, snapshot)
    freeze_loaded()
    return snapshot


def load_frozen(paths: Sequence[str], *, allow_duplicate_names: bool = False) -> Bundle:
    """:func:`load_bundle` with what it built frozen before the collector runs again, and kept
    until the process exits (:func:`keep_until_exit`).

    Loading pauses the collector; re-enabling it with millions of new containers in the
    youngest generation would make the next allocation scan them all (~1 s at 5,000 nodes),
    so they are frozen while it is still paused.
    """
    with collector_paused():
        bundle = load_bundle(list(paths), allow_duplicate_names=allow_duplicate_names)
        keep_until_exit(bundle)
        freeze_loaded()
    return bundle


_KEPT: list[Any] = []


def keep_until_exit(*loaded: Any) -> None:
    """Hold what a verb loaded until the process exits, replacing what an earlier call held.

    Freeing a 5,000-node bundle costs ~0.1 s for its typed objects and as much again for the
    snapshot, spent when the verb drops them (or when its exit unwinds) and again at interpreter
    teardown — on memory the kernel reclaims at exit for free.  The holder refers to itself and
    is frozen with the loaded objects (:func:`freeze_loaded`), so teardown, which collects no
    frozen object, never frees it.  A later call (tests run many verbs in one process) lets the
    previous input go.
    """
    if not _KEPT:
        _KEPT.append(_KEPT)
    _KEPT[1:] = loaded


def freeze_loaded() -> None:
    """Move what a verb just loaded out of the cyclic collector's view (the CLI edge's choice).

    The loaded objects are acyclic (recursive anchors are refused) and live until the process
    exits; refcounting still frees them, but every full collection would rescan millions of
    containers (~2 s at 5,000 nodes, ~40% of a diagnosis).  Freezing also exempts whatever else
    is alive, which a one-shot command does not mind and a long-running server would: that is
    why the library's loader never does it.
    """
    gc.freeze()
