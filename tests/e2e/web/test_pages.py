"""The dashboard in a real headless Chromium: every page loads, a pending pod opens its explanation,
the fleet filters by product, the charts are drawn, hostile names stay text, every link resolves.

Each test's page fails on a console error, a script error or any response of 400 or more
(``conftest.py``); a test that expects a refusal takes it off the list after checking it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest

from tests.e2e.web import apps
from tests.e2e.web.browser import ARTIFACTS, served
from tests.e2e.web.conftest import Problems
from tests.unit.web import world as w


@pytest.fixture(scope="module")
def world_site() -> Iterator[tuple[str, w.World, str]]:
    app, world = apps.world_app()
    try:
        with served(app) as url:
            yield url, world, app.state.sim_id
    finally:
        app.state.web.simulations.close()


@pytest.fixture(scope="module")
def hostile_url() -> Iterator[str]:
    with served(apps.hostile_app()) as url:
        yield url


def sign_in(page: Any, base: str, token: str) -> None:
    page.goto(f"{base}/login")
    page.fill("input[name=token]", token)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/fleet")


PAGES = [
    pytest.param("/fleet", "#heat", id="fleet"),
    pytest.param("/fleet?product=NVIDIA+L4", "#heat", id="fleet-by-product"),
    pytest.param("/fleet?node=h100-node-1", "#devices", id="fleet-node"),
    pytest.param("/pending", "#pods", id="pending"),
    pytest.param("/pods/team-vision/train-0", ".funnel", id="explanation"),
    pytest.param("/queues", ".quotas", id="queues"),
    pytest.param("/runs", "#runs-chart[data-drawn]", id="runs"),
    pytest.param("/runs?by=profile&metric=startup", "#groups", id="runs-by-profile"),
    pytest.param("/simulations", "#simulations", id="simulations"),
    pytest.param("/simulations/{sim}", "#workloads", id="simulation-report"),
    pytest.param("/trial", "#checks", id="trial"),
    pytest.param("/login", "form.login", id="login"),
]


@pytest.mark.parametrize(("path", "selector"), PAGES)
def test_every_page_loads(page: Any, world_site: tuple[str, w.World, str], path: str, selector: str) -> None:
    base, world, sim = world_site
    sign_in(page, base, world.tokens["admin"])
    response = page.goto(base + path.format(sim=sim))
    assert response is not None and response.status == 200
    assert page.locator(selector).count() >= 1, f"{path}: no {selector}"
    assert page.locator("h1").inner_text().strip()
    assert page.locator("header .who").inner_text().startswith("platform (admin)")


def test_pending_pod_opens_its_explanation(page: Any, world_site: tuple[str, w.World, str]) -> None:
    base, world, _ = world_site
    sign_in(page, base, world.tokens["vision"])
    page.goto(f"{base}/pending")
    rows = page.locator("#pods a.pod")
    api = page.request.get(f"{base}/api/v1/pending", headers={"Authorization": f"Bearer {world.tokens['vision']}"})
    assert rows.all_inner_texts() == [p["pod"] for p in api.json()["pods"]]  # the API's pods, in its order
    assert rows.count() >= 4 and all(t.startswith("team-vision/") for t in rows.all_inner_texts())
    target = rows.filter(has_text="team-vision/train-0")
    target.click()
    page.wait_for_url(f"{base}/pods/team-vision/train-0")
    assert page.locator("#verdict .verdict").inner_text().lower() in ("ok", "waiting", "never", "broken")
    assert page.locator("#headline").inner_text()
    steps = page.locator(".funnel tr.step")
    assert steps.count() >= 3
    first = steps.nth(0).locator("td.num").nth(0).inner_text()
    assert first == "24"  # the demo cluster's devices: the funnel starts from the whole inventory
    api = page.request.get(base + page.locator("a.json").get_attribute("href"),  # the page's own JSON link
                           headers={"Authorization": f"Bearer {world.tokens['vision']}"})
    assert api.status == 200 and api.json()["target"] == "pod/team-vision/train-0"
    # a pod that waits: its verdict, the stage that took its devices, the hint, and who holds them
    page.goto(f"{base}/pending")
    rows.filter(has_text="team-vision/vision-big").click()
    page.wait_for_url(f"{base}/pods/team-vision/vision-big")
    assert page.locator("#verdict .verdict").inner_text().lower() == "waiting"
    last = page.locator(".funnel tr.step").last.locator("td")
    assert last.nth(0).inner_text().startswith("free") and last.nth(1).inner_text() == "6"
    assert page.locator("#hint").inner_text().startswith("wait for the holding claims")
    assert page.locator("#holders tr").nth(1).locator("td").all_inner_texts()[:3] == ["<hidden>", "1", "<hidden>"]  # not named


def test_fleet_filters_by_product(page: Any, world_site: tuple[str, w.World, str]) -> None:
    base, world, _ = world_site
    sign_in(page, base, world.tokens["admin"])
    page.goto(f"{base}/fleet")
    assert page.locator("#heat th").count() == 1 + 3  # node + the demo's three products
    page.select_option("select[name=product]", "NVIDIA L4")
    page.click("form.filters button[type=submit]")
    page.wait_for_url(f"{base}/fleet?product=NVIDIA+L4")  # the form's empty fields dropped: a short URL to share
    assert page.locator("#heat th").all_inner_texts() == ["node", "NVIDIA L4"]
    assert page.locator("#heat td a").all_inner_texts()[:2] == ["l4-node-1", "0/4"]
    assert page.locator("#products tr").count() == 2  # header + the one product
    # the shared URL reproduces the view
    page.goto(page.url)
    assert page.locator("select[name=product]").input_value() == "NVIDIA L4"


def _painted(page: Any, selector: str) -> int:
    """Pixels the chart painted (alpha > 0) on its canvas: 0 for a canvas that is only present."""
    return int(page.eval_on_selector(selector, """c => {
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; }"""))


def test_runs_comparison_draws_its_chart(page: Any, world_site: tuple[str, w.World, str]) -> None:
    base, world, _ = world_site
    sign_in(page, base, world.tokens["admin"])
    page.goto(f"{base}/runs?by=product")
    page.wait_for_selector("#runs-chart[data-drawn]")
    assert _painted(page, "#runs-chart") > 2000
    boxes = page.evaluate("""() => Chart.getChart('runs-chart').getDatasetMeta(1).data.map(b => b.height)""")
    assert len(boxes) == 1 and boxes[0] > 0  # one product (H100), a box of visible height (runtimes 100 and 110)
    cells = page.locator("#groups tr").nth(1).locator("td").all_inner_texts()
    assert cells[:3] == ["NVIDIA H100 80GB HBM3", "2", "100"]


def test_simulation_report_draws_its_chart(page: Any, world_site: tuple[str, w.World, str]) -> None:
    base, world, _ = world_site
    sign_in(page, base, world.tokens["admin"])
    page.goto(f"{base}/simulations")
    page.locator("#simulations a").first.click()
    page.wait_for_selector("#sim-chart[data-drawn]")
    assert _painted(page, "#sim-chart") > 2000
    assert page.locator("#workloads tr").count() == 1 + 4  # the mixed scenario's four workloads


def test_a_team_sees_only_its_own(page: Any, world_site: tuple[str, w.World, str], problems: Problems) -> None:
    base, world, _ = world_site
    sign_in(page, base, world.tokens["nlp"])
    page.goto(f"{base}/runs?by=product")
    assert page.locator("#groups tr").nth(1).locator("td").nth(1).inner_text() == "1"  # its one run, not two
    response = page.goto(f"{base}/pods/team-vision/train-0")
    assert response is not None and response.status == 404
    assert "not found" in page.locator(".error").inner_text()
    assert problems.responses == [f"HTTP 404 {base}/pods/team-vision/train-0"]
    assert problems.expected(404) == 1


def test_without_a_token_pages_ask_to_sign_in(page: Any, world_site: tuple[str, w.World, str],
                                             problems: Problems) -> None:
    base, world, _ = world_site
    response = page.goto(f"{base}/pending")
    assert response is not None and response.status == 401
    page.click("header .who a")
    page.fill("input[name=token]", "drakit_not-a-token")
    page.click("button[type=submit]")
    assert page.locator("form.login .error").inner_text()
    assert problems.expected(401) == 2  # the page, then the form with a token that is not live
    sign_in(page, base, world.tokens["vision"])
    assert page.context.cookies()[0]["httpOnly"] is True
    page.click("header .who button")
    page.wait_for_url(f"{base}/fleet")
    assert page.locator("header .who").inner_text().startswith("anonymous")


def test_hostile_names_stay_text(page: Any, hostile_url: str) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(f"{hostile_url}/fleet?node=h100-node-1")
    assert page.locator("#devices td", has_text=apps.XSS).count() == 8  # shown as the text it is
    page.goto(f"{hostile_url}/pending")
    page.locator("#pods a.pod", has_text=apps.XSS).click()
    assert apps.XSS in page.locator("h1").inner_text()
    for path in ("/fleet", "/trial"):
        page.goto(hostile_url + path)
    assert page.evaluate("() => window.__pwned") is None
    assert dialogs == []


def _crawl(page: Any, base: str, headers: dict[str, str]) -> dict[str, int]:
    """Every same-site page, stylesheet, script and JSON link reachable from the fleet page: its status."""
    seen: dict[str, int] = {}
    todo = [f"{base}/fleet"]
    while todo and len(seen) < 300:
        url = todo.pop()
        if url in seen:
            continue
        path = urlsplit(url).path
        if path.startswith("/api/") or path.startswith("/static/"):
            seen[url] = page.request.get(url, headers=headers).status
            continue
        response = page.goto(url)
        seen[url] = response.status if response is not None else 0
        links = page.eval_on_selector_all(
            "a[href], link[href], script[src]", "els => els.map(e => e.getAttribute('href') || e.getAttribute('src'))")
        for link in links:
            target = urljoin(url, link).split("#")[0]
            if target.startswith(base) and target not in seen:
                todo.append(target)
    return seen


def test_every_link_resolves(page: Any, world_site: tuple[str, w.World, str]) -> None:
    base, world, _ = world_site
    sign_in(page, base, world.tokens["admin"])
    statuses = _crawl(page, base, {"Authorization": f"Bearer {world.tokens['admin']}"})
    bad = {u: s for u, s in statuses.items() if not 200 <= s < 400}
    assert not bad
    assert len(statuses) > 30
    assert any("/pods/" in u for u in statuses) and any("/api/v1/" in u for u in statuses)


def test_fleet_of_5000_nodes_renders_paged(page: Any) -> None:
    """Usable at 5,000 nodes: 100 nodes a page with a pager; the render times go to the test's log."""
    built = time.perf_counter()
    app = apps.large_app(5000)
    built = time.perf_counter() - built
    with served(app) as base:
        timings = {}
        for label, path in (("first", "/fleet"), ("again", "/fleet"), ("last page", "/fleet?page=50"),
                            ("by product", "/fleet?product=NVIDIA+L4"), ("one node", "/fleet?node=h100-00001")):
            start = time.perf_counter()
            response = page.goto(base + path)
            timings[label] = round(time.perf_counter() - start, 3)
            assert response is not None and response.status == 200
        assert page.locator("#devices tr").count() == 1 + 8
        page.goto(f"{base}/fleet")
        assert page.locator("#heat tr").count() == 1 + 100
        assert page.locator(".pager").inner_text().startswith("page 1 of 50")
        page.click(".pager a[rel=next]")
        assert page.locator(".pager span").inner_text() == "page 2 of 50"
        assert page.locator("#products td.num").all_inner_texts()[:4] == ["4000", "32000", "30000", "2000"]
        page.select_option("select[name=sort]", "busiest")
        page.click("form.filters button[type=submit]")
        assert page.locator("#heat td.cell a").first.inner_text() == "2/8"  # the busy nodes first
        assert page.locator("#heat td.cell.h3").count() == 100
    line = json.dumps({"test": "fleet-5000", "build_s": round(built, 2), "page_load_s": timings})
    print(line)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with (ARTIFACTS / "timings.jsonl").open("a", encoding="utf-8") as log:
        log.write(line + "\n")


def test_serve_demo_pages_and_links(page: Any, demo_url: str) -> None:
    """``drakit serve --demo`` on loopback, no token: every page reads, every link resolves, a pod explains."""
    statuses = _crawl(page, demo_url, {})
    assert {u: s for u, s in statuses.items() if not 200 <= s < 400} == {}
    for path in ("/queues", "/runs", "/simulations", "/trial"):
        assert f"{demo_url}{path}" in statuses
    page.goto(f"{demo_url}/pending")
    page.locator("#pods a.pod", has_text="ml/eval-0").click()
    page.wait_for_url(f"{demo_url}/pods/ml/eval-0")
    assert page.locator(".funnel tr.step").count() >= 3
