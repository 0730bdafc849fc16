"""The durable TokenStore of ``drakit serve``: token digests in the store's database (revision 0004)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Engine, insert, select, update
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from drakit.errors import InvalidArgument, NotFound
from drakit.store.engine import StoreError, first_line, make_engine, shown, upgrade
from drakit.store.tables import TokenRow
from drakit.web.auth import Token

__all__ = ["SqlTokenStore", "open_tokens"]


def open_tokens(url: str | None = None) -> SqlTokenStore:
    """The tokens in the store at ``url`` (or ``$DRAKIT_STORE``), migrated to the newest schema."""
    engine = make_engine(url)
    upgrade(engine)
    return SqlTokenStore(engine)


def _utc(at: datetime | None) -> datetime | None:
    if at is None:
        return None
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


def _token(row: TokenRow) -> Token:
    created = _utc(row.created_at)
    assert created is not None
    return Token(id=row.id, digest=row.digest, team=row.team, namespaces=tuple(row.namespaces), admin=row.admin,
                 description=row.description, created_at=created, revoked_at=_utc(row.revoked_at))


class SqlTokenStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def _fail(self, e: SQLAlchemyError) -> StoreError:
        return StoreError(f"store {shown(self.engine.url)}: {first_line(e)}")

    def add(self, token: Token) -> None:
        values = {"id": token.id, "digest": token.digest, "team": token.team, "namespaces": list(token.namespaces),
                  "admin": token.admin, "description": token.description, "created_at": token.created_at,
                  "revoked_at": token.revoked_at}
        try:
            with self.engine.begin() as connection:
                connection.execute(insert(TokenRow), values)
        except IntegrityError:
            raise InvalidArgument(f"token {token.id} exists already") from None
        except SQLAlchemyError as e:
            raise self._fail(e) from None

    def by_digest(self, digest: str) -> Token | None:
        try:
            with self.engine.connect() as connection:
                row = connection.execute(
                    select(TokenRow).where(TokenRow.digest == digest, TokenRow.revoked_at.is_(None))).first()
        except SQLAlchemyError as e:
            raise self._fail(e) from None
        return _token(TokenRow(**row._asdict())) if row is not None else None

    def tokens(self) -> tuple[Token, ...]:
        try:
            with self.engine.connect() as connection:
                rows = connection.execute(select(TokenRow).order_by(TokenRow.created_at, TokenRow.id)).all()
        except SQLAlchemyError as e:
            raise self._fail(e) from None
        return tuple(_token(TokenRow(**r._asdict())) for r in rows)

    def revoke(self, token_id: str, at: datetime) -> Token:
        try:
            with self.engine.begin() as connection:
                connection.execute(update(TokenRow).where(TokenRow.id == token_id, TokenRow.revoked_at.is_(None))
                                   .values(revoked_at=at))
                row = connection.execute(select(TokenRow).where(TokenRow.id == token_id)).first()
        except SQLAlchemyError as e:
            raise self._fail(e) from None
        if row is None:
            raise NotFound(f"token {token_id} not found in the store")
        return _token(TokenRow(**row._asdict()))
