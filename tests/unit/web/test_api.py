"""The REST API on an in-process client: the CLI's JSON shapes, paging, problem+json, refresh, simulations."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from drakit.cli.testing import run as cli
from drakit.errors import DrakitError
from drakit.inventory.snapshot import ClusterSnapshot
from drakit.web.app import create_app
from drakit.web.auth import Auth, MemoryTokenStore, issue
from drakit.web.simulations import Simulations
from drakit.web.state import DemoSource, StaticSource
from tests.unit.web import world as w
from tests.unit.web.conftest import bearer

PROBLEM = "application/problem+json"


@pytest.fixture(scope="module")
def demo() -> Iterator[TestClient]:
    """The open demo: no tokens, reads open (what ``drakit serve --demo`` on loopback is)."""
    with TestClient(create_app(DemoSource(), auth=Auth(MemoryTokenStore(), open_reads=True)),
                    raise_server_exceptions=False) as c:
        yield c


def _cli_json(*args: str) -> Any:
    result = cli(*args)
    assert result.exit_code in (0, 3), result.stderr
    return json.loads(result.stdout)


# -- the CLI's shapes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "params", "argv", "pick"),
    [
        pytest.param("/api/v1/inventory", {"limit": 5000}, ("get", "devices", "--demo", "-o", "json"),
                     lambda d: d["items"], id="inventory=get-devices"),
        pytest.param("/api/v1/inventory", {"free": "true", "node": "l4-node-1"},
                     ("get", "devices", "--demo", "--free", "--node", "l4-node-1", "-o", "json"),
                     lambda d: d["items"], id="inventory-filtered=get-devices-filtered"),
        pytest.param("/api/v1/inventory", {"selector": "productName=NVIDIA L4"},
                     ("get", "devices", "--demo", "-l", "productName=NVIDIA L4", "-o", "json"),
                     lambda d: d["items"], id="inventory-selector=get-devices-l"),
        pytest.param("/api/v1/namespaces/ml/pods/train-0/explanation", {},
                     ("explain", "--demo", "-n", "ml", "pod/train-0", "-o", "json"), lambda d: d, id="explain-pod"),
        pytest.param("/api/v1/pending", {}, ("explain", "pods", "--all-pending", "-A", "--demo", "-o", "json"),
                     lambda d: d, id="pending=all-pending"),
        pytest.param("/api/v1/profiles/eligibility", {"profile": "training-48g"},
                     ("profile", "eligible", "training-48g", "--demo", "-o", "json"), lambda d: d, id="eligibility"),
    ],
)
def test_answers_are_the_cli_json(demo: TestClient, path: str, params: dict[str, Any], argv: tuple[str, ...],
                                  pick: Any) -> None:
    got = demo.get(path, params=params)
    assert got.status_code == 200, got.text
    assert got.headers["content-type"] == "application/json"
    want = _cli_json(*argv)
    assert pick(got.json()) == pick(want)
    assert pick(want)  # the comparison is over something


def test_runs_and_comparison_are_runs_ls_and_compare_json(client: TestClient, world: w.World) -> None:
    from drakit.records.compare import compare
    from drakit.records.render import record_json

    admin = bearer(world, "admin")
    runs = client.get("/api/v1/runs", headers=admin).json()
    assert runs == {"runs": [record_json(world.store.get(r.id)) for r in world.store.runs()]}
    groups = client.get("/api/v1/comparisons", params={"by": "product"}, headers=admin).json()
    want = compare([world.store.get(r.id) for r in world.store.runs()], "product")
    assert groups == {"by": "product", "metric": "runtime", "groups": [g.to_json() for g in want]}
    assert [g["n"] for g in groups["groups"]] == [2]


# -- paging ------------------------------------------------------------------------------------


def _walk(c: TestClient, limit: int, **params: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cont = None
    while True:
        page = c.get("/api/v1/inventory", params={**params, "limit": limit, **({"continue": cont} if cont else {})})
        assert page.status_code == 200, page.text
        body = page.json()
        items += body["items"]
        assert len(body["items"]) <= limit
        cont = body["metadata"].get("continue")
        if cont is None:
            assert "remainingItemCount" not in body["metadata"]
            return items
        assert body["metadata"]["remainingItemCount"] > 0


@pytest.mark.parametrize("limit", [1, 5, 7, 24, 5000])
def test_pages_add_up_to_the_whole_list(demo: TestClient, limit: int) -> None:
    whole = demo.get("/api/v1/inventory", params={"limit": 5000}).json()["items"]
    assert len(whole) == 24
    assert _walk(demo, limit) == whole
    assert _walk(demo, limit, driver="gpu.nvidia.com") == [d for d in whole if d["driver"] == "gpu.nvidia.com"]


def test_a_continue_token_is_for_its_own_list_and_revision() -> None:
    base = w.snapshot()
    snapshots = iter([ClusterSnapshot.from_objects(base.nodes + base.slices),
                      ClusterSnapshot.from_objects(base.nodes + base.slices + base.classes)])

    class Changing:
        description = "changing"

        def read(self) -> ClusterSnapshot:
            return next(snapshots)

    c = TestClient(create_app(Changing(), auth=Auth(MemoryTokenStore(), open_reads=True)), raise_server_exceptions=False)
    first = c.get("/api/v1/inventory", params={"limit": 2}).json()
    token = first["metadata"]["continue"]
    other = c.get("/api/v1/inventory", params={"limit": 2, "continue": token, "free": "true"})
    assert (other.status_code, other.json()["type"]) == (422, "urn:drakit:problem:invalid-argument")
    c.app.state.web.refresh()  # type: ignore[attr-defined]
    gone = c.get("/api/v1/inventory", params={"limit": 2, "continue": token})
    assert gone.status_code == 410
    assert gone.json()["detail"] == "continue: the inventory changed (revision 1 -> 2); list again without continue"


# -- problems ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "params", "status", "code", "field"),
    [
        pytest.param("GET", "/api/v1/inventory", {"limit": "many"}, 422, "invalid-request", "query.limit", id="wrong-type"),
        pytest.param("GET", "/api/v1/inventory", {"limit": 0}, 422, "invalid-request", "query.limit", id="below-min"),
        pytest.param("GET", "/api/v1/inventory", {"limit": "NaN"}, 422, "invalid-request", "query.limit", id="nan"),
        pytest.param("GET", "/api/v1/inventory", {"free": "perhaps"}, 422, "invalid-request", "query.free", id="bool"),
        pytest.param("GET", "/api/v1/inventory", {"continue": "%%%"}, 422, "invalid-argument", None, id="forged-continue"),
        pytest.param("GET", "/api/v1/inventory", {"selector": "a in (b"}, 400, "bad-request", None, id="bad-selector"),
        pytest.param("GET", "/api/v1/namespaces/ml/pods/nope/explanation", {}, 404, "not-found", None, id="no-pod"),
        pytest.param("GET", "/api/v1/profiles/eligibility", {"profile": "nope"}, 404, "not-found", None, id="no-profile"),
        pytest.param("GET", "/api/v1/runs", {}, 404, "not-found", None, id="no-store"),
        pytest.param("GET", "/api/v1/nowhere", {}, 404, "http", None, id="no-route"),
        pytest.param("DELETE", "/api/v1/inventory", {}, 405, "http", None, id="wrong-method"),
        pytest.param("POST", "/api/v1/simulations", {}, 401, "token-required", None, id="write-without-token"),
        pytest.param("POST", "/api/v1/refresh", {}, 401, "token-required", None, id="refresh-without-token"),
    ],
)
def test_errors_are_problem_json(demo: TestClient, method: str, path: str, params: dict[str, Any], status: int,
                                 code: str, field: str | None) -> None:
    got = demo.request(method, path, params=params)
    assert got.status_code == status, got.text
    assert got.headers["content-type"] == PROBLEM
    body = got.json()
    assert body["type"] == f"urn:drakit:problem:{code}"
    assert body["status"] == status and body["title"] and body["detail"]
    assert body.get("field") == field
    assert "Traceback" not in got.text


def test_an_unexpected_failure_is_a_500_problem_without_internals() -> None:
    from drakit.features import Features
    from drakit.web.state import Revision

    class Exploding(Revision):
        @property
        def rows(self) -> Any:
            raise RuntimeError("secret internal state /etc/passwd")

    app = create_app(StaticSource(ClusterSnapshot()), auth=Auth(MemoryTokenStore(), open_reads=True))
    app.state.web._revision = Exploding(1, ClusterSnapshot(), Features.for_version())
    got = TestClient(app, raise_server_exceptions=False).get("/api/v1/inventory")
    assert (got.status_code, got.headers["content-type"]) == (500, PROBLEM)
    assert "secret" not in got.text and got.json()["type"] == "urn:drakit:problem:internal"


# -- access basics (the full matrix is test_tenancy.py) -----------------------------------------


@pytest.mark.parametrize(
    ("header", "code"),
    [
        pytest.param("Bearer nope", "bad-token", id="unknown"),
        pytest.param("Basic dXNlcjpwYXNz", "bad-token", id="wrong-scheme"),
        pytest.param("Bearer ", "bad-token", id="empty"),
        pytest.param("Bearer " + "x" * 5000, "bad-token", id="huge"),
        pytest.param("Bearer drakit_\u00e9\u00e9", "bad-token", id="non-ascii"),
    ],
)
def test_bad_tokens_are_401(client: TestClient, header: str, code: str) -> None:
    got = client.get("/api/v1/whoami", headers={"Authorization": header.encode("utf-8")})  # type: ignore[dict-item]
    assert got.status_code == 401 and got.headers["www-authenticate"] == "Bearer"
    assert got.json()["type"] == f"urn:drakit:problem:{code}"


def test_a_revoked_token_is_refused_within_the_recheck() -> None:
    tokens = MemoryTokenStore()
    issued = issue(tokens, "vision", ["team-vision"])
    clock = [0.0]
    c = TestClient(create_app(StaticSource(w.snapshot()), auth=Auth(tokens, monotonic=lambda: clock[0])),
                   raise_server_exceptions=False)
    headers = {"Authorization": f"Bearer {issued.secret}"}
    assert c.get("/api/v1/whoami", headers=headers).json()["principal"]["team"] == "vision"
    tokens.revoke(issued.token.id, issued.token.created_at)
    clock[0] += 6  # the server remembers a token for at most 5 s
    assert c.get("/api/v1/whoami", headers=headers).status_code == 401


def test_open_reads_close_once_a_token_exists() -> None:
    tokens = MemoryTokenStore()
    clock = [0.0]
    auth = Auth(tokens, open_reads=True, monotonic=lambda: clock[0])
    c = TestClient(create_app(DemoSource(), auth=auth), raise_server_exceptions=False)
    assert c.get("/api/v1/pending").status_code == 200
    issue(tokens, "ml", ["ml"])
    clock[0] += 10  # the server rechecks every few seconds
    assert c.get("/api/v1/pending").status_code == 401
    assert c.get("/api/v1/inventory").status_code == 200  # cluster-scoped devices stay readable


def test_tokens_are_stored_as_digests_only() -> None:
    tokens = MemoryTokenStore()
    issued = issue(tokens, "vision", ["team-vision"])
    stored = tokens.tokens()[0]
    assert issued.secret not in repr(stored) and issued.secret not in json.dumps(stored.to_json())
    assert len(issued.secret) >= 43 + len("drakit_")  # 32 random bytes, URL-safe base64


# -- refresh -----------------------------------------------------------------------------------


def test_refresh_swaps_the_revision_and_a_failed_read_keeps_the_last() -> None:
    reads: list[ClusterSnapshot | Exception] = [w.snapshot(), ClusterSnapshot(), DrakitError("cluster unreachable")]

    class Source:
        description = "sequence"

        def read(self) -> ClusterSnapshot:
            got = reads.pop(0)
            if isinstance(got, Exception):
                raise got
            return got

    tokens = MemoryTokenStore()
    admin = {"Authorization": f"Bearer {issue(tokens, 'platform', admin=True).secret}"}
    team = {"Authorization": f"Bearer {issue(tokens, 'vision', ['team-vision']).secret}"}
    c = TestClient(create_app(Source(), auth=Auth(tokens)), raise_server_exceptions=False)
    assert len(c.get("/api/v1/inventory", headers=admin).json()["items"]) == 24
    assert c.post("/api/v1/refresh", headers=team).status_code == 403
    assert c.post("/api/v1/refresh", headers=admin).json() == {"revision": 2, "lastError": None}
    assert c.get("/api/v1/inventory", headers=admin).json()["items"] == []
    assert c.post("/api/v1/refresh", headers=admin).json() == {"revision": 2, "lastError": "cluster unreachable"}
    assert c.get("/api/v1/whoami", headers=admin).json()["lastError"] == "cluster unreachable"


# -- simulations -------------------------------------------------------------------------------


def test_a_simulation_is_submitted_polled_and_fetched(client: TestClient, world: w.World) -> None:
    from drakit.sim import run_scenario
    from drakit.sim.scenario import parse_scenario

    vision = bearer(world, "vision")
    text = w.scenario_text()
    got = client.post("/api/v1/simulations", content=text, params={"seed": 3}, headers=vision)
    assert got.status_code == 202, got.text
    sim = got.json()
    assert got.headers["location"] == f"/api/v1/simulations/{sim['id']}"
    assert w.wait(client, sim["id"], vision)["state"] == "succeeded"
    report = client.get(f"/api/v1/simulations/{sim['id']}/report", headers=vision).json()
    assert report == json.loads(json.dumps(run_scenario(parse_scenario(text), 3).to_json()))
    assert [s["id"] for s in client.get("/api/v1/simulations", headers=vision).json()["simulations"]] == [sim["id"]]
    nlp = bearer(world, "nlp")
    assert client.get(f"/api/v1/simulations/{sim['id']}", headers=nlp).status_code == 404
    assert client.get(f"/api/v1/simulations/{sim['id']}/report", headers=nlp).status_code == 404
    assert client.get("/api/v1/simulations", headers=nlp).json() == {"simulations": []}
    assert client.get(f"/api/v1/simulations/{sim['id']}", headers=bearer(world, "admin")).status_code == 200


def test_a_broken_scenario_is_refused_at_once_with_its_field_path(client: TestClient, world: w.World) -> None:
    text = w.scenario_text().replace("count: ", "count: -", 1)
    got = client.post("/api/v1/simulations", content=text, headers=bearer(world, "vision"))
    assert got.status_code == 422 and got.headers["content-type"] == PROBLEM
    assert "count" in got.json()["detail"]


def test_the_waiting_line_is_bounded() -> None:
    import threading

    gate = threading.Event()
    sims = Simulations(processes=False, workers=1, max_queued=2)
    import drakit.web.simulations as module

    real = module.run_text

    def slow(text: str, source: str, seed: int | None) -> dict[str, Any]:
        gate.wait(30)
        return real(text, source, seed)

    module.run_text = slow  # type: ignore[assignment]
    try:
        tokens = MemoryTokenStore()
        headers = {"Authorization": f"Bearer {issue(tokens, 'vision', ['team-vision']).secret}"}
        c = TestClient(create_app(StaticSource(w.snapshot()), auth=Auth(tokens), simulations=sims),
                       raise_server_exceptions=False)
        codes = [c.post("/api/v1/simulations", content=w.scenario_text(), headers=headers).status_code for _ in range(3)]
        assert codes == [202, 202, 503]
        busy = c.post("/api/v1/simulations", content=w.scenario_text(), headers=headers)
        assert busy.headers["retry-after"] == "5" and busy.json()["type"] == "urn:drakit:problem:busy"
    finally:
        gate.set()
        module.run_text = real  # type: ignore[assignment]
        sims.close()


def test_the_fleet_summary_counts_every_device_once(demo: TestClient) -> None:
    fleet = demo.get("/api/v1/fleet").json()
    devices = demo.get("/api/v1/inventory", params={"limit": 5000}).json()["items"]
    assert fleet["devices"] == len(devices) == sum(c["free"] + c["allocated"] for c in fleet["cells"])
    h100 = next(c for c in fleet["cells"] if c["node"] == "h100-node-1")
    assert (h100["product"], h100["free"], h100["memory"]) == ("NVIDIA H100 80GB HBM3", 8, ["81559Mi"])


def test_a_simulation_runs_in_a_worker_process() -> None:
    """What ``drakit serve`` runs: a spawned process, so the server's own threads keep answering."""
    sims = Simulations(workers=1)
    try:
        tokens = MemoryTokenStore()
        headers = {"Authorization": f"Bearer {issue(tokens, 'vision', ['team-vision']).secret}"}
        c = TestClient(create_app(StaticSource(w.snapshot()), auth=Auth(tokens), simulations=sims))
        sim = c.post("/api/v1/simulations", content=w.scenario_text(), headers=headers).json()
        assert w.wait(c, sim["id"], headers)["state"] == "succeeded"
        assert c.get(f"/api/v1/simulations/{sim['id']}/report", headers=headers).json()["pods"]
    finally:
        sims.close()


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.text(max_size=200) | st.binary(max_size=120).map(lambda b: base64.urlsafe_b64encode(b).decode()))
def test_any_continue_token_is_refused_or_read_never_a_crash(token: str) -> None:
    from drakit.errors import InvalidArgument
    from drakit.web.views import Expired, _offset

    try:
        offset = _offset(token, 1, "q")
    except (InvalidArgument, Expired):
        return
    assert isinstance(offset, int) and offset >= 0


def test_a_refresh_that_finds_nothing_new_keeps_the_revision_and_its_caches() -> None:
    class Same:
        description = "same"

        def read(self) -> ClusterSnapshot:
            return w.snapshot()  # equal objects in new dicts: what a quiet cluster's re-list returns

    app = create_app(Same(), auth=Auth(MemoryTokenStore(), open_reads=True))
    web = app.state.web
    first = web.revision
    assert TestClient(app).get("/api/v1/namespaces/team-vision/pods/train-0/explanation").status_code == 200
    assert web.refresh() is first and first.number == 1
    assert first.bodies.peek(("explain", "pod", "team-vision", "train-0", "all")) is not None
