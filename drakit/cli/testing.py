"""Run a verb in-process exactly as the ``drakit`` command does, for tests.

typer's ``CliRunner`` stops at the exception a verb raises, so a test could see that
*something* failed but not the exit code and the one-line message the user gets.  This runs
the real entry point (:func:`~drakit.cli.console.run_guarded`, the one place where exceptions
become messages) with stdin, stdout and stderr captured.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterator
from dataclasses import dataclass

from drakit.cli.console import run_guarded

__all__ = ["Result", "run"]


@dataclass(frozen=True)
class Result:
    """What a shell would see: the exit code and both streams."""

    exit_code: int
    stdout: str
    stderr: str


def run(*args: str, stdin: str | bytes = b"") -> Result:
    """``drakit ARGS...`` with ``stdin`` on standard input."""
    from drakit.cli.main import app

    out, err = io.StringIO(), io.StringIO()
    with _stdin(stdin), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run_guarded(app, list(args))
    return Result(code, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _stdin(data: str | bytes) -> Iterator[None]:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")
    try:
        yield
    finally:
        sys.stdin = saved
