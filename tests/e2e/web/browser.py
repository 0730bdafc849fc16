"""The real pieces of the browser tests: an app served on a loopback port, and Debian's Chromium.

The app runs in-process under uvicorn on a thread (one socket bound to port 0, so parallel runs
never collide), which lets a test serve a snapshot it built (hostile names, 5,000 nodes) through
the same factory ``drakit serve`` uses.  Chromium is driven by Playwright's Python client with
Debian's binary as the executable: Playwright's own browser download is never used.  Without a
browser the tests skip locally and fail under ``CI``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn

from tests.integration.gating import unavailable

# A closed network: nothing may reach out (updates, safe browsing, QUIC probes) or wait on it.
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
)
ARTIFACTS = Path(os.environ.get("DRAKIT_E2E_ARTIFACTS") or Path(__file__).parent / "artifacts")


def chromium_path() -> str:
    """``$DRAKIT_CHROMIUM`` (set by ``.ci/run`` from ``.ci/chromium``), else Debian's binary on PATH."""
    for candidate in (os.environ.get("DRAKIT_CHROMIUM"), shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    unavailable("no Chromium for the browser tests (.ci/chromium installs Debian's chromium)")


@contextmanager
def served(app: Any) -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1 (a free port) for the block; yields the base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the app did not start under uvicorn")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@contextmanager
def serve_demo(workdir: Path) -> Iterator[str]:
    """``drakit serve --demo`` in a subprocess (its own store under ``workdir``); yields the base URL."""
    with socket.socket() as probe:  # a free port; the server binds it a moment later
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = (workdir / "serve.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "drakit.cli.main", "serve", "--demo", "--port", str(port),
         "--store", f"sqlite:///{workdir / 'store.db'}"], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("drakit serve --demo did not start: "
                                       + (workdir / "serve.log").read_text(errors="replace")[-2000:]) from None
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def artifact_name(nodeid: str) -> str:
    """A test id as a file name: ``test_pages.py::test_x[fleet]`` → ``test_pages.py--test_x-fleet-``."""
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in nodeid.replace("::", "--"))
