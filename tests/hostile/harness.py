"""Run drakit's commands on hostile input: in-process for speed, as subprocesses for hangs and memory.

In-process runs go through :func:`drakit.cli.console.run_guarded` exactly as ``drakit`` does,
with stdout/stderr captured; an exception that escapes it is what a user would see as a
traceback, so the harness records it instead of raising.
"""

from __future__ import annotations

import contextlib
import io
import os
import resource
import subprocess
import sys
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]

DOCUMENTED_EXITS = frozenset({1, 2, 3, 4})
"""Non-zero exit codes drakit documents (console.py): invalid, usage, unsatisfiable, error."""

# Every command that reads input, with the hostile file in its input position.
VERBS: dict[str, Callable[[str], list[str]]] = {
    "validate": lambda f: ["validate", "-f", f],
    "allocate": lambda f: ["allocate", "-f", f],
    "explain": lambda f: ["explain", "pod/train", "-n", "ml", "-f", f],
    "match": lambda f: ["match", "-f", f, "--selector", "true"],
    "lint": lambda f: ["lint", "-f", f],
    "trial": lambda f: ["trial", "-f", f],
    "simulate": lambda f: ["simulate", f, "--quiet"],
    "profile-compile": lambda f: ["profile", "compile", f],
    "profile-apply-to": lambda f: ["profile", "apply-to", f, "--profile", "training-48g"],
    "profile-eligible": lambda f: ["profile", "eligible", "training-48g", "-f", f],
    "profile-polyaxon": lambda f: ["profile", "polyaxon", f],
    "admission-policy": lambda f: ["admission", "policy", f],
    "cel-eval-device": lambda f: ["cel", "eval", "true", "--device", f],
    "snapshot-kubeconfig": lambda f: ["snapshot", "--kubeconfig", f],  # the input is the kubeconfig
    "run-sim": lambda f: ["run", "-f", f, "--executor", "sim", "-p", "evaluation", "--store", "sqlite:///:memory:",
                          "--", "true"],
    "run-kubernetes": lambda f: ["run", "--executor", "kubernetes", "-p", f, "--image", "busybox", "--store",
                                 "sqlite:///:memory:", "--kubeconfig", "/nonexistent/kubeconfig", "--", "true"],
    "discover-replay": lambda f: ["discover", "--replay", f],
    "describe": lambda f: ["describe", "pod/train", "-n", "ml", "-f", f],
    "describe-class": lambda f: ["describe", "deviceclass/gpu.example.com", "-f", f],
    "get-devices": lambda f: ["get", "devices", "-f", f, "-o", "wide"],
    "queue-compile": lambda f: ["queue", "compile", f],
    "queue-explain": lambda f: ["queue", "explain", "job/train", "-n", "ml", "-f", f],
}


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str
    crash: str = ""  # the traceback text when an exception escaped

    @property
    def text(self) -> str:
        return self.out + self.err


@contextlib.contextmanager
def _swapped(stdin: Any) -> Iterator[tuple[io.StringIO, io.StringIO]]:
    saved = sys.argv, sys.stdin, sys.stdout, sys.stderr
    out, err = io.StringIO(), io.StringIO()
    sys.stdin, sys.stdout, sys.stderr = stdin, out, err
    try:
        yield out, err
    finally:
        sys.argv, sys.stdin, sys.stdout, sys.stderr = saved


class Endless(io.RawIOBase):
    """A standard input that never ends (``yes 'a: b'``), for in-process runs."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = len(buffer)
        buffer[:n] = (b"a: b\n" * (n // 5 + 1))[:n]
        return n


def endless_stdin() -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BufferedReader(Endless()), encoding="utf-8")


def run_in_process(args: list[str], stdin: bytes | io.TextIOBase | None = b"") -> Result:
    """One command in this process; ``stdin=None`` means a closed standard input, a text
    stream (:func:`endless_stdin`) is read as it is."""
    from drakit.cli.console import run_guarded
    from drakit.cli.main import app

    if stdin is None or isinstance(stdin, io.TextIOBase):
        stream: Any = stdin
    else:
        stream = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    with _swapped(stream) as (out, err):
        sys.argv = ["drakit", *args]
        try:
            code = run_guarded(app)
        except BaseException:
            return Result(-1, out.getvalue(), err.getvalue(), traceback.format_exc())
    return Result(code, out.getvalue(), err.getvalue())


def _limits(memory_bytes: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    return apply


def run_subprocess(args: list[str], *, stdin: Any = subprocess.DEVNULL, timeout: float = 30,
                   memory_mib: int = 1536, close_stdin: bool = False) -> Result:
    """``python -m drakit.cli.main ARGS`` with a wall-clock timeout and an address-space cap."""
    cap = _limits(memory_mib * 1024 * 1024)

    def pre() -> None:
        cap()
        if close_stdin:
            os.close(0)

    env = {**os.environ, "PYTHONPATH": str(REPO), "DRAKIT_PROGRESS": "0"}
    try:
        proc = subprocess.run([sys.executable, "-m", "drakit.cli.main", *args], stdin=None if close_stdin else stdin,
                              capture_output=True, timeout=timeout, preexec_fn=pre, env=env, check=False)
    except subprocess.TimeoutExpired:
        return Result(-9, "", "", f"hung: no answer within {timeout} s")
    err = proc.stderr.decode("utf-8", "replace")
    crash = err if "Traceback (most recent call last)" in err or "MemoryError" in err else ""
    return Result(proc.returncode, proc.stdout.decode("utf-8", "replace"), err, crash)


def check_refused(result: Result, names: tuple[str, ...], verb: str, input_size: int = 0) -> list[str]:
    """What is wrong with the answer to a hostile input (empty when it is a proper refusal)."""
    wrong: list[str] = []
    if result.crash:
        return [f"{verb}: crashed:\n{result.crash[-3000:]}"]
    if result.code not in DOCUMENTED_EXITS:
        wrong.append(f"{verb}: exit {result.code}, want one of {sorted(DOCUMENTED_EXITS)}")
    if "Traceback" in result.text:
        wrong.append(f"{verb}: a traceback in the output")
    errors = [line for line in result.err.splitlines() if line.startswith("error:")]
    lines = errors or [line for line in result.out.splitlines() if line.strip()]
    if not any(any(n in line for n in names) for line in lines):
        wrong.append(f"{verb}: no message names the input {names}: {result.text[-600:]!r}")
    if len(result.text) > max(64_000, 8 * input_size):
        wrong.append(f"{verb}: {len(result.text)} characters of output (expanded input echoed?)")
    return wrong
