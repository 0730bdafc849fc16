"""``drakit store``: where run records are kept, and its schema.

The store upgrades itself whenever drakit opens it; ``upgrade`` does it ahead of time (say,
before many submitters start at once) and ``status`` shows where a store stands.
"""

from __future__ import annotations

from types import ModuleType
from typing import Annotated

import typer

from drakit.errors import DrakitError

store_app = typer.Typer(help="The run-record store (SQLite by default, PostgreSQL by URL).", no_args_is_help=True)

StoreOption = Annotated[
    str | None,
    typer.Option("--store", envvar="DRAKIT_STORE", show_envvar=True,
                 help="Database URL: sqlite:///FILE or postgresql://USER@HOST/DB (default: a file in the data directory)."),
]


def _engine_module() -> ModuleType:
    try:
        from drakit.store import engine
    except ImportError as e:
        raise DrakitError(f"the store needs SQLAlchemy and Alembic ({e.name} is missing); install drakit[store]") from None
    return engine


@store_app.command("upgrade")
def upgrade(
    store: StoreOption = None,
    revision: Annotated[str, typer.Option(help="Schema revision to migrate to.")] = "head",
) -> None:
    """Create or migrate the store's schema; safe to run again."""
    engine = _engine_module()
    db = engine.make_engine(store)
    before = engine.current_revision(db)
    after = engine.upgrade(db, revision)
    print(f"store {engine.shown(db.url)}: schema {before or '(empty)'} -> {after}")
    db.dispose()


@store_app.command("status")
def status(store: StoreOption = None) -> None:
    """Show the store's URL (password hidden), its schema revision and the newest one this drakit knows."""
    engine = _engine_module()
    db = engine.make_engine(store)
    print(f"store {engine.shown(db.url)}: schema {engine.current_revision(db) or '(empty)'}, "
          f"newest {engine.head_revision()}")
    db.dispose()


def register(app: typer.Typer) -> None:
    app.add_typer(store_app, name="store")
