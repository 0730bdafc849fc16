"""Typer app; every module in this package that defines ``register(app)`` adds its verb.

Discovery keeps each verb in its own short module (parse options, call the core, render)
without a central list that every new verb has to edit.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import typer

from drakit.cli.console import run_guarded
from drakit.cli.options import plain_help

plain_help()

app = typer.Typer(
    name="drakit",
    help="Request accelerators by capability on Kubernetes DRA (resource.k8s.io/v1).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

_NOT_VERBS = {"main", "console", "options", "testing"}


@app.callback()
def _root() -> None:
    """Request accelerators by capability on Kubernetes DRA (resource.k8s.io/v1)."""
    # A callback keeps typer in multi-command mode even when only one verb is registered.


def _register_verbs() -> None:
    import drakit.cli as pkg

    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        if info.name in _NOT_VERBS or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"drakit.cli.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(app)


_register_verbs()


def main() -> None:
    sys.exit(run_guarded(app))


if __name__ == "__main__":
    main()
