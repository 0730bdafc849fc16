"""Output formats, exit codes and the one place where exceptions become messages.

Exit codes: 0 success, 1 invalid input (or "invalid" verdicts), 2 usage (a wrong command line,
an object named on it that is not in the input, a malformed argument), 3 unsatisfiable,
4 allocation error; 5-8 the live cluster's (unreachable, refused, no DRA v1, apply conflict: see
``drakit.live.client.EXIT_CODES``).  No command ever ends in a traceback for bad input, and no message reaches
the terminal with a control character in it.
"""

from __future__ import annotations

import io
import json
import sys
from enum import StrEnum
from typing import Any, TextIO

import typer
import yaml
from rich.console import Console

from drakit.errors import (
    AllocationError,
    DrakitError,
    InvalidArgument,
    InvalidInput,
    NotFound,
    SelectorError,
    UsageError,
)
from drakit.gostr import escape

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2
EXIT_UNSATISFIABLE = 3
EXIT_ERROR = 4

stdout = Console(highlight=False, soft_wrap=True)
stderr = Console(stderr=True, highlight=False, soft_wrap=True)


class Output(StrEnum):
    text = "text"
    json = "json"
    yaml = "yaml"


def dump_json(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False)


def emit(obj: Any, output: str) -> None:
    """Print a JSON-able document as JSON or YAML (text rendering is each verb's own)."""
    if output == "yaml":
        from drakit.model.codec import KubeDumper

        sys.stdout.write(yaml.dump(obj, Dumper=KubeDumper, sort_keys=False, allow_unicode=True))
    else:
        sys.stdout.write(dump_json(obj) + "\n")


def error_line(message: str) -> None:
    """One line on stderr, prefixed like kubectl's errors; control characters arrive escaped."""
    print(f"error: {escape(message)}", file=sys.stderr)


# What a terminal would act on: C0 controls but tab and newline, DEL, and C1 controls (CSI is
# 0x9b) except NEL, which YAML prints as text.  \uXXXX keeps JSON output valid and equal.
_TERMINAL_CONTROLS = {
    c: f"\\u{c:04x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if c not in (0x09, 0x0A, 0x85)
}


class _TerminalSafe(io.TextIOBase):
    """Standard output with every terminal control character from the input neutralised."""

    def __init__(self, target: TextIO) -> None:
        self._target = target

    def write(self, text: str) -> int:
        self._target.write(text.translate(_TERMINAL_CONTROLS))
        return len(text)

    def flush(self) -> None:
        self._target.flush()

    def isatty(self) -> bool:
        return self._target.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._target, "encoding", None) or "utf-8"


def write_plain(text: str) -> None:
    """Write ``text`` that holds no control character at all (ASCII-escaped JSON) past the
    terminal filter: translating a fleet-sized bundle costs seconds and changes nothing."""
    target = sys.stdout._target if isinstance(sys.stdout, _TerminalSafe) else sys.stdout
    target.write(text)


# A bundle of thousands of broken documents gets the first problems and a count, not a
# screenful per document: the first ones are what the user fixes first anyway.
MAX_ERROR_LINES = 200


def run_guarded(app: typer.Typer, args: list[str] | None = None) -> int:
    """Run the typer app on ``args`` (default: ``sys.argv``); map drakit exceptions to exit codes.

    typer itself handles usage errors (exit 2) in standalone mode (with a hint when the
    "unknown option" is a value starting with ``-``, such as the CEL expression ``-1 < x``);
    anything drakit raises on purpose becomes one line on stderr and its exit code.  Names and
    values from the input reach standard output without terminal control characters.
    """
    saved = sys.stdout
    sys.stdout = _TerminalSafe(saved)
    try:
        return _run(app, args)
    finally:
        sys.stdout.flush()
        sys.stdout = saved


def _run(app: typer.Typer, args: list[str] | None) -> int:
    try:
        app(args=args, prog_name="drakit")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if code == EXIT_USAGE:
            _hint_dash_values(args if args is not None else sys.argv[1:])
        return code
    except (UsageError, NotFound, InvalidArgument) as e:
        error_line(str(e))
        return EXIT_USAGE
    except InvalidInput as e:
        lines = str(e).splitlines() or ["invalid input"]
        for line in lines[:MAX_ERROR_LINES]:
            error_line(line)
        if len(lines) > MAX_ERROR_LINES:
            error_line(f"... and {len(lines) - MAX_ERROR_LINES:,} more problems in the same input "
                       f"(the first {MAX_ERROR_LINES} are shown)")
        return EXIT_INVALID
    except SelectorError as e:
        error_line(str(e))
        return EXIT_INVALID
    except AllocationError as e:
        error_line(str(e))
        return EXIT_ERROR
    except DrakitError as e:  # a live cluster's errors carry their own code (docs/live.md)
        error_line(str(e))
        return int(getattr(e, "exit_code", EXIT_INVALID))
    except KeyboardInterrupt:
        return 130
    return EXIT_OK


def _hint_dash_values(argv: list[str]) -> None:
    """After a usage error: a word before ``--`` that starts with ``-`` but is no option name."""
    for word in argv:
        if word == "--":
            return
        body = word.lstrip("-")
        if word.startswith("-") and (not body or not (body[0].isalpha() and body.split("=", 1)[0].replace("-", "").isalnum())):
            error_line(f"{word!r} starts with '-' and is read as an option: put '--' before it to pass it as a value,"
                       f" e.g. drakit cel eval -- {word!r}")
            return
