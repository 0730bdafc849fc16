"""Fixtures of the browser tests: one Chromium per session, a fresh browser context per test.

Every test's page fails on a console error, an uncaught script error or a response of 400 or
more (a broken link or a missing static file is a bug, not noise), and leaves a full-page
screenshot named by its test id in the artifacts folder (``$DRAKIT_E2E_ARTIFACTS``, by default
``tests/e2e/web/artifacts/``, git-ignored), passed or failed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.e2e.web.browser import ARTIFACTS, CHROMIUM_FLAGS, artifact_name, chromium_path, serve_demo
from tests.integration.gating import unavailable


@dataclass
class Problems:
    """What went wrong in the browser during one test."""

    console: list[str] = field(default_factory=list)
    responses: list[str] = field(default_factory=list)

    def all(self) -> list[str]:
        return self.console + self.responses

    def expected(self, status: int) -> int:
        """Take the responses of ``status`` a test asked for (and Chromium's console line for each) off the
        list; returns how many there were."""
        mine = [r for r in self.responses if r.startswith(f"HTTP {status} ")]
        self.responses = [r for r in self.responses if r not in mine]
        self.console = [c for c in self.console if f"status of {status} " not in c]
        return len(mine)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium per test module, closed with it: Playwright's event loop never outlives the browser tests."""
    path = chromium_path()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the browser tests need Playwright's Python client (pip install 'drakit[e2e]')")
    # Playwright gives every launch a fresh temporary profile (what --user-data-dir would be).
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=path, args=list(CHROMIUM_FLAGS))
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def demo_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``drakit serve --demo`` itself, as a user starts it, on a free loopback port."""
    with serve_demo(tmp_path_factory.mktemp("serve")) as url:
        yield url


@pytest.fixture
def problems() -> Problems:
    return Problems()


@pytest.fixture
def page(browser: Any, problems: Problems, request: pytest.FixtureRequest) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(15_000)
    tab.on("console", lambda m: problems.console.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    tab.on("pageerror", lambda e: problems.console.append(f"script error: {e}"))
    tab.on("response", lambda r: problems.responses.append(f"HTTP {r.status} {r.url}") if r.status >= 400 else None)
    try:
        yield tab
    finally:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        try:
            tab.screenshot(path=str(ARTIFACTS / f"{artifact_name(request.node.nodeid)}.png"), full_page=True)
        finally:
            context.close()
    assert not problems.all(), "the browser reported: " + "; ".join(problems.all())
