"""The pages without a browser: same data as the API, tenancy, escaping, sign-in cookie, static files.

The browser checks (charts drawn, clicks, every link) are in ``tests/e2e/web/``; these run in
the unit suite on the in-process app over the two-team world.
"""

from __future__ import annotations

import copy
import hashlib
import html
import re
from collections.abc import Iterator
from importlib import resources

import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st

from drakit.demo import cluster_objects, recipe_objects
from drakit.inventory.snapshot import ClusterSnapshot
from drakit.records.run import Run, RunDevice, RunResult, RunState
from drakit.store.memory import MemoryRecordStore
from drakit.web import pages
from drakit.web.app import create_app
from drakit.web.auth import Auth, MemoryTokenStore, issue
from drakit.web.state import StaticSource
from drakit.web.trial import TRIAL_NAMESPACE
from tests.e2e.web.apps import XSS, hostile_app
from tests.unit.web import world as w
from tests.unit.web.conftest import bearer

PAGE_PATHS = ["/fleet", "/fleet?product=NVIDIA+L4", "/fleet?node=h100-node-1", "/pending",
              "/pods/team-vision/train-0", "/queues", "/runs", "/runs?by=driverVersion", "/simulations", "/trial",
              "/login"]


def _cookie(world: w.World, who: str) -> dict[str, str]:
    return {pages.COOKIE: world.tokens[who]}


@pytest.mark.parametrize("path", PAGE_PATHS)
def test_every_page_is_html_under_a_strict_policy(client: TestClient, world: w.World, path: str) -> None:
    r = client.get(path, headers=bearer(world, "admin"))
    assert r.status_code == 200, r.text[:300]
    assert r.headers["content-type"].startswith("text/html")
    assert r.headers["content-security-policy"] == pages.CSP
    assert r.headers["x-content-type-options"] == "nosniff"
    assert "<script>" not in r.text and " style=" not in r.text  # no inline script or style: the CSP would block it


def test_the_cookie_signs_pages_in_like_the_header(client: TestClient, world: w.World) -> None:
    by_header = client.get("/pending", headers=bearer(world, "vision"))
    client.cookies.update(_cookie(world, "vision"))
    try:
        by_cookie = client.get("/pending")
    finally:
        client.cookies.clear()
    assert by_header.status_code == by_cookie.status_code == 200
    assert by_header.text == by_cookie.text


def test_pages_show_the_apis_data(client: TestClient, world: w.World) -> None:
    api = client.get("/api/v1/pending", headers=bearer(world, "vision")).json()
    page = client.get("/pending", headers=bearer(world, "vision")).text
    linked = [html.unescape(h) for h in re.findall(r'class="pod" href="/pods/([^"]+)"', page)]
    assert linked == [p["pod"] for p in api["pods"]]
    devices = client.get("/api/v1/inventory", headers=bearer(world, "admin")).json()["items"]
    heat = pages.heat_map(devices)
    fleet = client.get("/fleet", headers=bearer(world, "admin")).text
    for product in heat.products:
        assert f'<td class="num">{product["total"]}</td>\n      <td class="num">{product["free"]}</td>' in fleet


@pytest.mark.parametrize(("who", "path", "absent"), [
    pytest.param("vision", "/pending", "team-nlp", id="pending"),
    pytest.param("vision", "/fleet?node=h100-node-1", "nlp-runner", id="holders"),
    pytest.param("nlp", "/trial", "team-vision", id="trial"),
])
def test_a_team_sees_nothing_of_another(client: TestClient, world: w.World, who: str, path: str, absent: str) -> None:
    r = client.get(path, headers=bearer(world, who))
    assert r.status_code == 200
    assert absent not in r.text


@pytest.mark.parametrize(("who", "path", "status"), [
    pytest.param("vision", "/pods/team-nlp/train-0", 404, id="other-team-pod"),
    pytest.param("anonymous", "/pending", 401, id="anonymous-pending"),
    pytest.param("anonymous", "/runs", 401, id="anonymous-runs"),
    pytest.param("anonymous", "/simulations/abc", 401, id="anonymous-simulation"),
    pytest.param("admin", "/simulations/nope", 404, id="unknown-simulation"),
    pytest.param("admin", "/runs?by=colour", 422, id="bad-group"),
])
def test_refusals_are_pages_with_the_apis_status(client: TestClient, world: w.World, who: str, path: str,
                                                 status: int) -> None:
    r = client.get(path, headers=bearer(world, who))
    assert r.status_code == status
    assert r.headers["content-type"].startswith("text/html")
    assert 'class="card error"' in r.text and "Traceback" not in r.text


def test_a_bad_or_revoked_cookie_is_a_sign_in_page_and_is_dropped(client: TestClient) -> None:
    client.cookies.update({pages.COOKIE: "drakit_revoked"})
    try:
        r = client.get("/fleet")
    finally:
        client.cookies.clear()
    assert r.status_code == 401
    assert f'{pages.COOKIE}=""' in r.headers["set-cookie"] and "Max-Age=0" in r.headers["set-cookie"]


def test_sign_in_sets_an_httponly_strict_cookie(client: TestClient, world: w.World) -> None:
    r = client.post("/login", data={"token": world.tokens["vision"], "next": "/queues"}, follow_redirects=False)
    client.cookies.clear()
    assert r.status_code == 303 and r.headers["location"] == "/queues"
    cookie = r.headers["set-cookie"]
    assert cookie.startswith(f"{pages.COOKIE}={world.tokens['vision']};")
    for flag in ("HttpOnly", "SameSite=strict", "Path=/", "Max-Age=43200"):
        assert flag in cookie


@pytest.mark.parametrize("token", [
    pytest.param("", id="empty"), pytest.param("drakit_nope", id="unknown"), pytest.param("x" * 5000, id="huge"),
    pytest.param("tok\u00e9n", id="non-ascii"),
])
def test_sign_in_refuses_what_is_not_a_live_token(client: TestClient, token: str) -> None:
    r = client.post("/login", data={"token": token}, follow_redirects=False)
    assert r.status_code == 401 and "set-cookie" not in r.headers
    assert 'class="error"' in r.text


@pytest.mark.parametrize("body", [
    pytest.param(b"&".join(b"f%d=1" % i for i in range(50)), id="many-fields"),
    pytest.param(b"\xff\xfe=\x00", id="binary"), pytest.param(b"token", id="no-value"),
])
def test_sign_in_answers_a_hostile_form(client: TestClient, body: bytes) -> None:
    r = client.post("/login", content=body, headers={"Content-Type": "application/x-www-form-urlencoded"},
                    follow_redirects=False)
    assert r.status_code == 401 and "set-cookie" not in r.headers


@pytest.mark.parametrize(("target", "kept"), [
    pytest.param("/queues?x=1", "/queues?x=1", id="local"),
    pytest.param("//evil.example/x", "/", id="scheme-relative"),
    pytest.param("https://evil.example/", "/", id="absolute"),
    pytest.param("/\\evil.example", "/", id="backslash"),
    pytest.param("javascript:alert(1)", "/", id="javascript"),
])
def test_sign_in_goes_back_only_to_this_server(target: str, kept: str) -> None:
    assert pages._local(target) == kept


def test_the_cookie_never_authorizes_the_api(client: TestClient, world: w.World) -> None:
    """Pages read the cookie; the API reads only the header, so a cross-site form cannot change anything."""
    client.cookies.update(_cookie(world, "admin"))
    try:
        assert client.get("/api/v1/pending").status_code == 401
        assert client.post("/api/v1/simulations", content=b"kind: Scenario").status_code == 401
        assert client.post("/api/v1/refresh").status_code == 401
    finally:
        client.cookies.clear()


def test_no_page_changes_state() -> None:
    """Only sign-in and sign-out take a POST (they touch the caller's own cookie, nothing on the server)."""
    posts = {r.path for r in pages.router.routes if set(getattr(r, "methods", ())) - {"GET", "HEAD"}}
    assert posts == {"/login", "/logout"}


@pytest.fixture(scope="module")
def hostile() -> Iterator[TestClient]:
    with TestClient(hostile_app()) as c:
        yield c


@pytest.mark.parametrize("path", ["/fleet", "/fleet?node=h100-node-1", "/pending", "/trial",
                                  "/pods/ml/" + XSS.replace("/", "%2F")])
def test_hostile_names_are_escaped(hostile: TestClient, path: str) -> None:
    r = hostile.get(path)
    assert r.status_code == 200, r.text[:300]
    assert XSS not in r.text
    assert html.escape(XSS, quote=False).replace(">", "&gt;") in r.text.replace("&#34;", '"')


def test_static_files_are_a_fixed_table(client: TestClient) -> None:
    css = client.get("/static/drakit.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    assert client.get("/static/drakit.css", headers={"If-None-Match": css.headers["etag"]}).status_code == 304
    for path in ("/static/../pages.py", "/static/%2e%2e/pages.py", "/static/vendor/README.md", "/static/nope.js"):
        assert client.get(path).status_code == 404, path


def test_the_vendored_chart_is_the_one_its_readme_names() -> None:
    vendor = resources.files("drakit.web") / "static" / "vendor"
    digest = hashlib.sha256((vendor / "chart.umd.min.js").read_bytes()).hexdigest()
    assert f"`{digest}`" in (vendor / "README.md").read_text(encoding="utf-8")
    assert (vendor / "chart.js-LICENSE.md").read_text(encoding="utf-8").startswith("The MIT License")


def test_simulations_need_a_token_on_the_open_demo() -> None:
    app = create_app(StaticSource(w.snapshot(), "open"), auth=Auth(MemoryTokenStore(), open_reads=True))
    with TestClient(app) as c:
        listing = c.get("/simulations")
        assert listing.status_code == 200 and "sign in</a> to see yours" in listing.text
        assert "Simulations are off" in listing.text
        assert "class=\"json\"" not in listing.text  # the API would refuse it: no JSON link
        assert c.get("/pending").status_code == 200
        assert c.get("/simulations/abc").status_code == 404  # simulations are off there


_DEVICE = st.fixed_dictionaries({
    "node": st.sampled_from(["n1", "n2", "n3"]), "product": st.sampled_from(["A", "B"]),
    "driver": st.sampled_from(["d1", "d2"]), "free": st.booleans(), "memory": st.sampled_from(["", "80Gi", "24Gi"]),
})


@given(st.lists(_DEVICE, max_size=40))
def test_heat_map_counts_every_device_once(devices: list[dict[str, object]]) -> None:
    heat = pages.heat_map(devices)
    assert sum(c.total for c in heat.cells.values()) == len(devices)
    assert sum(p["total"] for p in heat.products) == len(devices)
    assert sum(p["free"] for p in heat.products) == sum(1 for d in devices if d["free"])
    assert all(0 <= c.shade <= 10 for c in heat.cells.values())
    assert set(heat.nodes) == {d["node"] for d in devices}


@pytest.mark.parametrize(("allocated", "total", "shade"), [
    pytest.param(0, 8, 0, id="free"), pytest.param(8, 8, 10, id="full"), pytest.param(1, 8, 1, id="one-eighth"),
    pytest.param(3, 4, 8, id="three-quarters"), pytest.param(2, 8, 3, id="a-quarter-half-up"),
    pytest.param(0, 0, 0, id="empty"),
])
def test_cell_shade(allocated: int, total: int, shade: int) -> None:
    assert pages.Cell(allocated, total, "").shade == shade


@pytest.mark.parametrize(("path", "status"), [
    pytest.param("/fleet?page=-5", 200, id="page-negative"),
    pytest.param("/fleet?page=99999999999999999999", 200, id="page-huge"),
    pytest.param("/fleet?page=x", 200, id="page-not-a-number"),
    pytest.param("/fleet?product=%00%ff", 200, id="product-binary"),
    pytest.param("/fleet?node=" + "n" * 5000, 200, id="node-long"),
    pytest.param("/pending?selector=a%20in%20(", 400, id="selector-broken"),
    pytest.param("/pending?namespace=team-nlp", 404, id="namespace-of-another-team"),
    pytest.param("/runs?metric=" + "%3Cb%3E", 200, id="metric-markup"),
    pytest.param("/pods/team-vision/" + "x" * 3000, 404, id="pod-long"),
    pytest.param("/claims/team-vision/nope", 404, id="claim-unknown"),
])
def test_hostile_queries_are_answered_not_crashed(client: TestClient, world: w.World, path: str, status: int) -> None:
    r = client.get(path, headers=bearer(world, "vision"))
    assert r.status_code == status, r.text[:400]
    assert "Traceback" not in r.text and "<b>" not in r.text


def _trial_store() -> MemoryRecordStore:
    """Two executed trial runs as ``drakit trial --execute`` records them: one correct on the H100, one wrong on an L4."""
    store = MemoryRecordStore(now=lambda: w.T0)
    for i, (profile, product, passed) in enumerate((("training-48g", "NVIDIA H100 80GB HBM3", 1.0),
                                                    ("evaluation", "NVIDIA L4", 0.0))):
        run = Run.submit(w.T0, id=f"trial-x-{i}", recipe=profile, profile=profile, namespace=TRIAL_NAMESPACE,
                         executor="local")
        store.create(run)
        store.advance(run.id, RunState.ADMITTED)
        store.advance(run.id, RunState.CLAIM_ALLOCATED,
                      devices=(RunDevice("gpu", "gpu.nvidia.com", "n", f"gpu-{i}", product=product),))
        store.advance(run.id, RunState.CONTAINER_STARTED)
        store.advance(run.id, RunState.FINISHED, result=RunResult(0, 1.5 + i, 20.0 + i,
                                                                   {"passed": passed, "max_abs_error": 1e-7}))
    return store


def test_the_trial_page_shows_executed_runs() -> None:
    tokens = MemoryTokenStore()
    admin = issue(tokens, "platform", admin=True).secret
    team = issue(tokens, "vision", ["team-vision"]).secret
    app = create_app(StaticSource(w.snapshot(), "two-teams"), _trial_store(), Auth(tokens))
    with TestClient(app) as c:
        doc = c.get("/api/v1/trial", headers={"Authorization": f"Bearer {admin}"}).json()
        assert [(m["profile"], m["product"], m["placed"], m["correct"], m["passed"])
                for m in doc["executed"]["products"]] == [
            ("evaluation", "NVIDIA L4", 1, 0, False), ("training-48g", "NVIDIA H100 80GB HBM3", 1, 1, True)]
        assert doc["profiles"]["passed"] is True and doc["passed"] is False  # the checks pass, a run was wrong
        page = c.get("/trial", headers={"Authorization": f"Bearer {admin}"}).text
        assert page.count('<tr><td>evaluation</td><td>NVIDIA L4</td><td class="num">1</td>') == 1
        assert "20.000" in page and "1.00e-07" in page
        # a team token does not see the trial's namespace: the table, no executed runs
        mine = c.get("/api/v1/trial", headers={"Authorization": f"Bearer {team}"}).json()
        assert mine["executed"]["products"] == [] and mine["passed"] is True


@pytest.mark.parametrize(("total", "page", "shown"), [
    pytest.param(0, "1", (1, 1, slice(0, 100)), id="empty"),
    pytest.param(250, "3", (3, 3, slice(200, 300)), id="last"),
    pytest.param(250, "9", (3, 3, slice(200, 300)), id="past-the-end"),
    pytest.param(250, "0", (1, 3, slice(0, 100)), id="zero"),
    pytest.param(250, "-2", (1, 3, slice(0, 100)), id="negative"),
    pytest.param(250, "2x", (1, 3, slice(0, 100)), id="junk"),
    pytest.param(250, "9" * 40, (1, 3, slice(0, 100)), id="huge"),
])
def test_pager(total: int, page: str, shown: tuple[int, int, slice]) -> None:
    assert pages._pager(total, page) == shown


def test_many_pending_pods_are_paged() -> None:
    objects = cluster_objects() + recipe_objects()
    eval_pod = next(o for o in objects if o["kind"] == "Pod" and o["metadata"]["name"] == "eval-0")
    for i in range(250):
        pod = copy.deepcopy(eval_pod)
        pod["metadata"]["name"] = f"many-{i:03d}"
        objects.append(pod)
    app = create_app(StaticSource(ClusterSnapshot.from_objects(objects), "many"),
                     auth=Auth(MemoryTokenStore(), open_reads=True))
    with TestClient(app) as c:
        first, last = c.get("/pending").text, c.get("/pending?page=3").text
    assert first.count('class="pod"') == 100 and last.count('class="pod"') == 254 - 200
    assert "page 1 of 3" in first and 'href="/pending?page=2" rel="next"' in first
    assert 'href="/pending?page=2" rel="prev"' in last and 'rel="next"' not in last


@pytest.mark.parametrize(("sort", "first"), [
    pytest.param("", "example-node-1", id="by-name"),
    pytest.param("busiest", "h100-node-1", id="busiest"),  # the node whose two devices the teams' runners hold
    pytest.param("freest", "example-node-1", id="freest"),  # 8 free devices, the most of any node
    pytest.param("<script>", "example-node-1", id="unknown-order-is-by-name"),
])
def test_fleet_orders_nodes(client: TestClient, world: w.World, sort: str, first: str) -> None:
    r = client.get("/fleet", params={"sort": sort}, headers=bearer(world, "admin"))
    rows = re.findall(r'<tr><td><a href="/fleet\?[^"]*node=([^"&]+)[^"]*">', r.text)
    assert rows[0] == first and len(rows) == 4


def test_empty_filters_redirect_to_the_short_url(client: TestClient, world: w.World) -> None:
    r = client.get("/fleet?product=NVIDIA+L4&driver=&pool=&node=&sort=", headers=bearer(world, "admin"),
                   follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/fleet?product=NVIDIA+L4"
    r = client.get("/pending?namespace=&selector=", headers=bearer(world, "admin"), follow_redirects=False)
    assert r.headers["location"] == "/pending"
