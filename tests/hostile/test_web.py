"""The REST API on hostile inputs: problem+json with a documented 4xx, never a 5xx or a traceback.

The corpus's scenario and stream cases (every one a file that ``drakit simulate`` refuses or
accepts) are posted as a simulation's body; HTTP's own hostile inputs — bodies over the limit
(declared and streamed), deep JSON, wrong types and NaN in queries, bad tokens, odd methods —
go to every route.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from drakit.web.app import MAX_BODY_BYTES, create_app
from drakit.web.simulations import Simulations
from drakit.web.state import StaticSource
from tests.hostile.corpus import SCENARIO_CASES, Case, framing_cases, stream_cases
from tests.unit.web import world as w

PROBLEM = "application/problem+json"
DOCUMENTED = {400, 401, 403, 404, 405, 410, 413, 422, 503}


@pytest.fixture(scope="module")
def env() -> Iterator[tuple[TestClient, dict[str, str]]]:
    world = w.world()
    sims = Simulations(processes=False, workers=1, max_queued=64)
    app = create_app(StaticSource(w.snapshot()), world.store, world.auth, catalog=world.catalog,
                     ledger=world.ledger, simulations=sims)
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c, {"Authorization": f"Bearer {world.tokens['vision']}"}
    sims.close()


def _refused(got: httpx.Response) -> list[str]:
    wrong = []
    if got.status_code not in DOCUMENTED:
        wrong.append(f"status {got.status_code}")
    if got.headers["content-type"] != PROBLEM:
        wrong.append(f"content-type {got.headers['content-type']}")
    if "Traceback" in got.text or 'File "' in got.text:
        wrong.append("traceback in the body")
    return wrong


def _bodies() -> list[Case]:
    return [*SCENARIO_CASES, *stream_cases(), *framing_cases()]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in _bodies()])
def test_hostile_scenarios_are_refused_as_problems(env: tuple[TestClient, dict[str, str]], case: Case,
                                                   tmp_path: Path) -> None:
    c, headers = env
    path = case.make(tmp_path)
    if not os.path.isfile(path):
        pytest.skip("not a file: a body is bytes (the reader's own test covers directories and FIFOs)")
    with open(path, "rb") as f:
        body = f.read(MAX_BODY_BYTES + 1)
    got = c.post("/api/v1/simulations", content=body, headers=headers)
    if got.status_code == 202:  # a scenario simulate accepts too (the case targets other readers)
        assert case.refused_by is not None and "simulate" not in case.refused_by, got.text
        return
    assert _refused(got) == []
    assert got.status_code in (413, 422), got.text


def test_a_declared_huge_body_is_refused_before_it_is_read(env: tuple[TestClient, dict[str, str]]) -> None:
    c, headers = env
    got = c.post("/api/v1/simulations", content=b"x" * (MAX_BODY_BYTES + 1), headers=headers)
    assert (got.status_code, got.headers["content-type"]) == (413, PROBLEM)


def test_a_streamed_body_is_cut_at_the_limit(env: tuple[TestClient, dict[str, str]]) -> None:
    c, headers = env

    def chunks() -> Iterator[bytes]:
        for _ in range(MAX_BODY_BYTES // 65536 + 2):
            yield b"#" * 65536

    got = c.post("/api/v1/simulations", content=chunks(), headers=headers)
    assert (got.status_code, got.headers["content-type"]) == (413, PROBLEM)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"[" * 100_000 + b"]" * 100_000, id="deep-json"),
        pytest.param(b'{"apiVersion": "drakit.dev/v1alpha1", "kind": "Scenario", "spec": {"seed": NaN}}', id="nan-json"),
        pytest.param(b"\xff\xfe\x00\x00garbage", id="not-utf8"),
        pytest.param(b"", id="empty"),
        pytest.param(b"null", id="null"),
        pytest.param(b'{"kind": "Scenario", "spec": "x"}', id="wrong-type"),
    ],
)
def test_hostile_json_bodies(env: tuple[TestClient, dict[str, str]], body: bytes) -> None:
    c, headers = env
    got = c.post("/api/v1/simulations", content=body, headers={**headers, "Content-Type": "application/json"})
    assert _refused(got) == [] and got.status_code == 422, got.text


@pytest.mark.parametrize(
    ("url", "status"),
    [
        pytest.param("/api/v1/inventory?limit=NaN", 422, id="nan-limit"),
        pytest.param("/api/v1/inventory?limit=1e309", 422, id="inf-limit"),
        pytest.param("/api/v1/inventory?limit=99999999999999999999999", 422, id="huge-limit"),
        pytest.param("/api/v1/inventory?limit=-1", 422, id="negative-limit"),
        pytest.param("/api/v1/inventory?free=maybe", 422, id="not-a-bool"),
        pytest.param("/api/v1/inventory?selector=" + "a" * 5000, 422, id="long-selector"),
        # a key no device has: an empty list, as kubectl's parser takes any key text
        pytest.param("/api/v1/inventory?selector=%00%01", 200, id="control-chars"),
        pytest.param("/api/v1/inventory?continue=" + "A" * 1000, 422, id="forged-continue"),
        pytest.param("/api/v1/inventory?continue=eyJyIjogIngiLCAibyI6IC0xLCAicSI6IDF9", 422, id="continue-wrong-types"),
        pytest.param("/api/v1/pending?selector=a%20in%20(b", 400, id="bad-label-selector"),
        pytest.param("/api/v1/runs?state=exploded", 422, id="bad-state"),
        pytest.param("/api/v1/runs?limit=0", 422, id="zero-limit"),
        pytest.param("/api/v1/comparisons?by=gpu", 422, id="bad-by"),
        pytest.param("/api/v1/namespaces/" + "n" * 300 + "/pods/x/explanation", 422, id="long-namespace"),
        pytest.param("/api/v1/namespaces/ns/pods/%2e%2e%2f%2e%2e/explanation", 404, id="dot-dot"),
        pytest.param("/api/v1/simulations/" + "z" * 100, 422, id="long-sim-id"),
        pytest.param("/api/v1/simulations?seed=-1", 422, id="negative-seed"),
    ],
)
def test_hostile_queries(env: tuple[TestClient, dict[str, str]], url: str, status: int) -> None:
    c, headers = env
    method = "POST" if "seed=" in url else "GET"
    got = c.request(method, url, headers=headers)
    assert got.status_code == status, got.text
    if status >= 400:
        assert _refused(got) == [], got.text


@pytest.mark.parametrize("header", [b"Bearer \x00\x01", b"bearer", b"Bearer a b c", b"Token x", b"Bearer " + b"A" * 100_000])
def test_hostile_authorization_headers(env: tuple[TestClient, dict[str, str]], header: bytes) -> None:
    c, _ = env
    got = c.get("/api/v1/runs", headers={"Authorization": header})  # type: ignore[dict-item]
    assert _refused(got) == [] and got.status_code in (400, 401), got.text
