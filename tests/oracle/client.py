"""Talking to ``dra-oracle`` (the upstream allocator and CEL, built by ``make oracle``).

The oracle is a Go program; tests reach it through its batch modes (one JSON line in, one
out) so that hundreds of cases share a single process.  Without the binary the oracle tests
skip with a reason, except under CI, where a missing oracle is a failure: CI must never go
green by not running them.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_BINARY = REPO_ROOT / "oracle" / "bin" / "dra-oracle"

# The allocator implementations the oracle may pick for differential work.  Upstream's
# "stable" one, chosen when only AdminAccess/PrioritizedList/PartitionableDevices/DeviceTaints
# are on, walks pools in Go map order (random); the other two sort pools and slices by
# name, which is the order drakit follows.
DETERMINISTIC_ALLOCATORS = "incubating,experimental"


def oracle_binary() -> Path:
    """The oracle binary, or skip (fail under CI) when it has not been built."""
    path = Path(os.environ.get("DRAKIT_ORACLE", DEFAULT_BINARY))
    if path.is_file() and os.access(path, os.X_OK):
        return path
    message = f"dra-oracle not found at {path}: run `make oracle` (needs Go)"
    if os.environ.get("CI"):
        pytest.fail(message + " — CI must run the oracle tests", pytrace=False)
    pytest.skip(message)


class BatchProcess:
    """A long-running ``dra-oracle <mode>`` answering one JSON line per request line."""

    def __init__(self, binary: Path, *args: str) -> None:
        self._proc = subprocess.Popen(
            [str(binary), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )

    def ask(self, request: Mapping[str, Any]) -> dict[str, Any]:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            stderr = self._proc.stderr.read() if self._proc.stderr else ""
            raise RuntimeError(f"dra-oracle exited unexpectedly: {stderr.strip()}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> None:
        if self._proc.stdin:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        for stream in (self._proc.stdout, self._proc.stderr):
            if stream:
                stream.close()


class Oracle:
    """Allocation and CEL questions for the upstream implementation."""

    def __init__(self, binary: Path) -> None:
        self.binary = binary
        self._allocate: BatchProcess | None = None
        self._cel: BatchProcess | None = None

    def allocate(
        self, objects: list[dict[str, Any]], *, gates: str, node: str = "", allocators: str = ""
    ) -> dict[str, Any]:
        if self._allocate is None:
            self._allocate = BatchProcess(self.binary, "allocate-batch")
        request = {"objects": objects, "featureGates": gates, "node": node, "allocators": allocators}
        return self._allocate.ask(request)

    def cel(self, request: Mapping[str, Any]) -> dict[str, Any]:
        if self._cel is None:
            self._cel = BatchProcess(self.binary, "cel", "eval-batch")
        return self._cel.ask(request)

    def close(self) -> None:
        for proc in (self._allocate, self._cel):
            if proc is not None:
                proc.close()
