"""What the web app serves from: the current snapshot revision, refreshed by swapping, never mutated.

A :class:`SnapshotSource` (demo, manifests through the one front door, the live cluster) reads a
:class:`ClusterSnapshot`.  :class:`WebState` wraps each one read in a :class:`Revision` — the
snapshot, a number that only grows, and the revision's caches — warms the caches that every
request would otherwise race to build, and only then swaps it in.  A request takes the current
revision once (one attribute read, atomic under the GIL) and answers from it alone, so a refresh
in the middle of a request never mixes two cluster states.

Thread safety of the caches: a revision's device rows are built once under a lock before the
swap.  The explain core's ``Shared`` (cluster index, compiled selectors, memoised walks) mutates
itself on every diagnosis and has no lock of its own (the allocator's ``Inventory`` is the same),
so each revision guards its ``Shared`` with a lock and caches every answer by its inputs: a
snapshot never changes, so neither does the diagnosis of a pod in it.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from drakit.errors import InvalidInput
from drakit.features import Features
from drakit.inventory.fleet import DeviceRow, fleet
from drakit.inventory.snapshot import KIND_FIELDS, ClusterSnapshot, Provenance

if TYPE_CHECKING:
    from drakit.explain.diagnose import Shared
    from drakit.profiles.compile import CompiledProfile
    from drakit.queues.admission import Setup
    from drakit.queues.catalog import Catalog
    from drakit.queues.ledger import QueueLedger
    from drakit.store.protocol import RecordStore
    from drakit.web.auth import Auth
    from drakit.web.simulations import Simulations

__all__ = ["BundleSource", "DemoSource", "LiveSource", "Revision", "SnapshotSource", "StaticSource", "WebState"]

_T = TypeVar("_T")
_ANSWERS = 4096  # cached answers per revision (explanations, pages): bounded, least recently used out
_BODIES = 256  # serialized responses per revision: a 500-device page is ~0.5 MB, so at most ~128 MB


class SnapshotSource(Protocol):
    """Reads the cluster once per call; a web app calls it at start and on every refresh."""

    description: str

    def read(self) -> ClusterSnapshot: ...


@dataclass
class StaticSource:
    """A snapshot already in memory (tests, benchmarks); ``read`` returns it every time."""

    snapshot: ClusterSnapshot
    description: str = "snapshot"

    def read(self) -> ClusterSnapshot:
        return self.snapshot


@dataclass
class BundleSource:
    """``-f BUNDLE``: manifests read through :mod:`drakit.sources` (bounded) and validated, re-read on refresh."""

    paths: Sequence[str]
    features: Features = field(default_factory=Features.for_version)
    description: str = ""
    warnings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.description = self.description or ", ".join(self.paths)

    def read(self) -> ClusterSnapshot:
        from drakit.model import validate_report
        from drakit.sources import load_bundle

        bundle = load_bundle(list(self.paths))
        report = validate_report((*bundle.entries, *bundle.checked_pods), self.features)
        if report.errors:
            raise InvalidInput(list(report.errors))
        self.warnings = tuple(str(w) for w in report.warnings)
        return ClusterSnapshot.from_bundle(bundle, provenance=Provenance(self.description, time.time()))


class DemoSource(BundleSource):
    """``--demo``: the embedded demo cluster."""

    def __init__(self, features: Features | None = None) -> None:
        from drakit.demo import demo_paths

        super().__init__(demo_paths(), features or Features.for_version(), "demo")


@dataclass
class LiveSource:
    """The cluster of a kubeconfig, read whole (every namespace) through :mod:`drakit.live`.

    ``connect`` makes the client for each read (default: the kubeconfig's ``KubeClient``; a test
    passes the in-memory twin); the client is closed after the read.
    """

    kubeconfig: str | None = None
    context: str | None = None
    timeout: float = 30.0
    description: str = "cluster"
    connect: Callable[[], Any] | None = None
    warnings: list[str] = field(default_factory=list)

    def _client(self) -> Any:
        if self.connect is not None:
            return self.connect()
        from drakit.live.config import ConnectOptions
        from drakit.live.kube import KubeClient

        return KubeClient.connect(ConnectOptions(self.kubeconfig, self.context, self.timeout))

    def read(self) -> ClusterSnapshot:
        from drakit.live.snapshot import Scope, read_snapshot

        client = self._client()
        try:
            target = getattr(client, "target", None)
            self.description = str(target.describe()) if target is not None else self.description
            self.warnings = []
            return read_snapshot(client, Scope(namespace=None), source=self.description, warn=self.warnings.append)
        finally:
            client.close()


class _Lru:
    """A small thread-safe LRU of computed answers, single-flight: concurrent requests for one key
    wait for the first one's computation instead of repeating it (200 clients asking for the same
    explanation of a fresh revision compute it once)."""

    def __init__(self, size: int = _ANSWERS) -> None:
        self._size = size
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._computing: dict[Hashable, threading.Lock] = {}

    def peek(self, key: Hashable) -> Any | None:
        """The cached value or None, never waiting on a computation (the event loop's fast path)."""
        with self._lock:
            return self._items.get(key)

    def _hit(self, key: Hashable) -> tuple[bool, Any]:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return True, self._items[key]
            return False, self._computing.setdefault(key, threading.Lock())

    def get_or(self, key: Hashable, compute: Callable[[], _T]) -> _T:
        found, value = self._hit(key)
        if found:
            return value
        with value:  # this key's computation lock
            found, again = self._hit(key)
            if found:
                return again
            result = compute()  # an exception leaves nothing cached: the next caller retries
            with self._lock:
                self._items[key] = result
                self._computing.pop(key, None)
                if len(self._items) > self._size:
                    self._items.popitem(last=False)
            return result


class Revision:
    """One snapshot and what is computed from it, shared by every request that reads it."""

    def __init__(self, number: int, snapshot: ClusterSnapshot, features: Features) -> None:
        self.number = number
        self.snapshot = snapshot
        self.features = features
        self.answers = _Lru()
        self.bodies = _Lru(_BODIES)
        """Serialized responses by route, query and visibility: a hot page is sent, not re-encoded."""
        self._rows: tuple[DeviceRow, ...] | None = None
        self._rows_json: tuple[dict[str, Any], ...] | None = None
        self._rows_lock = threading.Lock()
        self._shared: Shared | None = None
        self.explain_lock = threading.Lock()
        """Held around every use of :attr:`shared`, which mutates its memo tables."""

    @property
    def rows(self) -> tuple[DeviceRow, ...]:
        """Every device of the snapshot (:func:`drakit.inventory.fleet.fleet`), built once."""
        if self._rows is None:
            with self._rows_lock:
                if self._rows is None:
                    rows = fleet(self.snapshot)
                    self._rows_json = tuple(r.to_json() for r in rows)
                    self._rows = rows
        return self._rows

    @property
    def rows_json(self) -> tuple[dict[str, Any], ...]:
        """``DeviceRow.to_json()`` of :attr:`rows`, in the same order (read-only by convention)."""
        self.rows  # noqa: B018 - builds both
        assert self._rows_json is not None
        return self._rows_json

    @property
    def shared(self) -> Shared:
        """The explain core's per-input memo; use only while holding :attr:`explain_lock`."""
        if self._shared is None:
            from drakit.explain.diagnose import Shared

            self._shared = Shared(self.snapshot, self.features)
        return self._shared

    def warm(self) -> None:
        self.rows  # noqa: B018


class WebState:
    """The app's data: the current :class:`Revision`, the store, the queue catalog and ledger, access.

    ``refresh`` reads the source and swaps the new revision in after warming it; a failing read
    keeps serving the last good revision and records the error (``last_error``).
    """

    def __init__(
        self,
        source: SnapshotSource,
        *,
        auth: Auth,
        store: RecordStore | None = None,
        catalog: Catalog | None = None,
        ledger: QueueLedger | None = None,
        profiles: Sequence[CompiledProfile] | None = None,
        features: Features | None = None,
        simulations: Simulations | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.source = source
        self.auth = auth
        self.store = store
        self.catalog = catalog
        self.ledger = ledger
        self.features = features or Features.for_version()
        self._profiles = tuple(profiles) if profiles is not None else None
        self.simulations = simulations
        self.clock = clock
        self.last_error = ""
        self.refreshed_at: float | None = None
        self._refresh_lock = threading.Lock()
        self._revision = self._read(1)

    def _read(self, number: int) -> Revision:
        revision = Revision(number, self.source.read(), self.features)
        revision.warm()
        self.refreshed_at = self.clock()
        return revision

    @property
    def revision(self) -> Revision:
        """The revision to answer from; read it once per request."""
        return self._revision

    def refresh(self) -> Revision:
        """Read the source again and swap; on failure keep the old revision (and say why in ``last_error``).

        A read that finds exactly the objects already served keeps the current revision, so its
        caches (an explanation costs up to a second at 5,000 nodes) survive a quiet cluster's
        periodic refresh.
        """
        with self._refresh_lock:
            try:
                snapshot = self.source.read()
                if not _same_objects(snapshot, self._revision.snapshot):
                    new = Revision(self._revision.number + 1, snapshot, self.features)
                    new.warm()
                    self._revision = new
            except Exception as e:  # the server keeps serving the last good state
                self.last_error = str(e).splitlines()[0] if str(e) else type(e).__name__
                return self._revision
            self.refreshed_at = self.clock()
            self.last_error = ""
            return self._revision

    @property
    def profiles(self) -> tuple[CompiledProfile, ...]:
        """The profiles eligibility is shown for: those given, else the bundled examples (compiled once)."""
        with self._refresh_lock:
            if self._profiles is None:
                from drakit.profiles import compile_profile, drivers_for
                from drakit.sources import load_profile_files

                self._profiles = tuple(compile_profile(rp, schema) for rp in load_profile_files([]).selected()
                                       for schema in drivers_for(rp))
            return self._profiles

    def setup(self, namespaces: Sequence[str] = ()) -> Setup | None:
        """The catalog's admission setup (None without a catalog)."""
        if self.catalog is None:
            return None
        from drakit.queues.compile import setup_of

        return setup_of(self.catalog, namespaces=list(namespaces))


def _same_objects(a: ClusterSnapshot, b: ClusterSnapshot) -> bool:
    """Whether two snapshots hold the same objects (a deep comparison, in C: ~0.1 s at 5,000 nodes)."""
    return a is b or all(getattr(a, f) == getattr(b, f) for _, f in KIND_FIELDS)


class Refresher:
    """Refreshes a :class:`WebState` every ``interval`` seconds on a daemon thread (the live source)."""

    def __init__(self, state: WebState, interval: float) -> None:
        self.state = state
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="drakit-web-refresh", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.state.refresh()
