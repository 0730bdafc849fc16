"""Requests from many threads at once get exactly the answers one thread gets.

The explain core's ``Shared`` memo and the allocator's inventory mutate their caches while they
work; a revision guards them and caches each answer single-flight (``drakit.web.state``).  These
tests start threads on a *cold* revision behind a barrier, so they race on building every cache,
and compare each answer with one computed alone on a revision of its own; and they swap
revisions under readers, which must each see one whole revision.
"""

from __future__ import annotations

import random
import sys
import threading
from collections.abc import Callable
from typing import Any

from drakit.features import Features
from drakit.inventory.snapshot import ClusterSnapshot
from drakit.web import views
from drakit.web.auth import Auth, MemoryTokenStore, Principal
from drakit.web.state import Revision, StaticSource, WebState
from tests.unit.web import world as w

ADMIN = Principal(team="platform", admin=True, token_id="a")
TEAMS = [Principal(team=t, namespaces=frozenset({ns}), token_id=t) for t, ns in w.TEAMS.items()]
THREADS = 8


def _asks(snapshot: ClusterSnapshot) -> list[tuple[str, Callable[[Revision], Any]]]:
    asks: list[tuple[str, Callable[[Revision], Any]]] = []
    for who in (ADMIN, *TEAMS):
        for pod in snapshot.pods:
            ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
            if who.sees(ns):
                asks.append((f"explain {who.team} {ns}/{name}",
                             lambda rev, who=who, ns=ns, name=name: views.explain(rev, who, "pod", ns, name)))
        for q in (views.InventoryQuery(limit=7), views.InventoryQuery(free=True, limit=3),
                  views.InventoryQuery(selector="productName=NVIDIA L4"), views.InventoryQuery(driver="gpu.example.com")):
            asks.append((f"inventory {who.team} {q}", lambda rev, who=who, q=q: views.inventory(rev, who, q)))
        asks.append((f"pending {who.team}", lambda rev, who=who: views.pending(rev, who)))
    asks.append(("fleet", views.fleet_summary))
    return asks


def _hammer(work: list[Callable[[], None]]) -> list[BaseException]:
    barrier = threading.Barrier(len(work))
    errors: list[BaseException] = []

    def run(job: Callable[[], None]) -> None:
        barrier.wait()
        try:
            job()
        except BaseException as e:  # reported by the test
            errors.append(e)

    threads = [threading.Thread(target=run, args=(job,)) for job in work]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often, so races in the caches show up
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    finally:
        sys.setswitchinterval(interval)
    return errors


def test_threads_on_a_cold_revision_get_the_single_thread_answers() -> None:
    snapshot = w.snapshot()
    features = Features.for_version()
    asks = _asks(snapshot)
    alone = Revision(1, snapshot, features)
    want = {name: ask(alone) for name, ask in asks}
    assert sum(1 for name in want if name.startswith("explain")) >= 20  # the race covers many diagnoses
    shared = Revision(1, snapshot, features)  # cold: no rows, no Shared, no answers yet
    got: dict[str, list[Any]] = {}
    lock = threading.Lock()

    def reader(seed: int) -> Callable[[], None]:
        order = list(asks) * 3
        random.Random(seed).shuffle(order)

        def job() -> None:
            for name, ask in order:
                answer = ask(shared)
                with lock:
                    got.setdefault(name, []).append(answer)

        return job

    errors = _hammer([reader(i) for i in range(THREADS)])
    assert errors == []
    wrong = [name for name, answers in got.items() if any(a != want[name] for a in answers)]
    assert wrong == []
    assert {name: len(a) for name, a in got.items()} == {name: 3 * THREADS for name in want}


def test_a_refresh_under_readers_swaps_whole_revisions() -> None:
    base = w.snapshot()
    # Two cluster states that differ in what is free: every device held, and none.
    emptied = ClusterSnapshot.from_objects([*base.nodes, *base.slices, *base.classes])
    states = [base, emptied]
    reads = iter(range(10_000))

    class Alternating:
        description = "alternating"

        def read(self) -> ClusterSnapshot:
            return states[next(reads) % 2]

    web = WebState(Alternating(), auth=Auth(MemoryTokenStore()))
    free = {id(s): views.inventory(Revision(0, s, web.features), ADMIN, views.InventoryQuery(free=True, limit=5000))
            for s in states}
    stop = threading.Event()
    seen: list[tuple[int, bool]] = []

    def refresher() -> None:
        for _ in range(30):
            web.refresh()
        stop.set()

    def reader() -> None:
        while not stop.is_set():
            rev = web.revision
            answer = views.inventory(rev, ADMIN, views.InventoryQuery(free=True, limit=5000))
            want = free[id(rev.snapshot)]
            seen.append((rev.number, answer["items"] == want["items"]))

    errors = _hammer([refresher, *([reader] * (THREADS - 1))])
    assert errors == []
    assert web.revision.number == 31
    assert seen and all(ok for _, ok in seen)
    assert len({n for n, _ in seen}) > 1  # readers did see the revisions change


def test_concurrent_requests_through_the_app_agree() -> None:
    from fastapi.testclient import TestClient

    from drakit.web.app import create_app

    world = w.world()
    app = create_app(StaticSource(w.snapshot()), world.store, world.auth)
    client = TestClient(app)
    urls = [f"/api/v1/namespaces/{ns}/pods/{name}/explanation" for ns in w.TEAMS.values()
            for name in ("train-0", "eval-0", "eval-1")] + ["/api/v1/inventory?limit=5", "/api/v1/pending"]
    headers = {"Authorization": f"Bearer {world.tokens['admin']}"}
    want = {u: TestClient(create_app(StaticSource(w.snapshot()), world.store, world.auth)).get(u, headers=headers).json()
            for u in urls}
    got: list[tuple[str, int, Any]] = []

    def job() -> None:
        for u in random.Random(threading.get_ident()).sample(urls, len(urls)):
            r = client.get(u, headers=headers)
            got.append((u, r.status_code, r.json()))

    assert _hammer([job] * THREADS) == []
    assert [(u, s) for u, s, body in got if s != 200 or body != want[u]] == []
    assert len(got) == THREADS * len(urls)
