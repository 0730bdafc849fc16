"""The web's token store over the in-memory twin, SQLite and PostgreSQL: one contract."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest

from drakit.errors import InvalidArgument, NotFound
from drakit.store.engine import make_engine, upgrade
from drakit.store.tokens import SqlTokenStore
from drakit.web.auth import Auth, BadToken, MemoryTokenStore, Token, TokenStore, digest_of, issue
from tests.integration.store.conftest import DIALECTS

T0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


@pytest.fixture(params=DIALECTS)
def tokens(request: pytest.FixtureRequest, empty_url: Callable[[str], str]) -> Iterator[TokenStore]:
    if request.param == "memory":
        yield MemoryTokenStore()
        return
    engine = make_engine(empty_url(request.param))
    upgrade(engine)
    yield SqlTokenStore(engine)
    engine.dispose()


def test_issue_look_up_list_revoke(tokens: TokenStore) -> None:
    a = issue(tokens, "vision", ["team-vision", "shared"], description="ci", now=lambda: T0)
    b = issue(tokens, "platform", admin=True, now=lambda: T0 + timedelta(seconds=1))
    assert tokens.by_digest(digest_of(a.secret)) == a.token
    assert a.token.namespaces == ("team-vision", "shared") and a.token.created_at == T0
    assert [t.id for t in tokens.tokens()] == [a.token.id, b.token.id]
    revoked = tokens.revoke(a.token.id, T0 + timedelta(hours=1))
    assert revoked.revoked_at == T0 + timedelta(hours=1)
    assert tokens.revoke(a.token.id, T0 + timedelta(hours=2)).revoked_at == T0 + timedelta(hours=1)  # idempotent
    assert tokens.by_digest(digest_of(a.secret)) is None
    assert tokens.by_digest(digest_of(b.secret)) == b.token
    with pytest.raises(NotFound, match="token nope not found"):
        tokens.revoke("nope", T0)


def test_ids_and_digests_are_unique(tokens: TokenStore) -> None:
    first = Token(id="t1", digest="d" * 64, team="a", namespaces=("a",), created_at=T0)
    tokens.add(first)
    for clash in (Token(id="t1", digest="e" * 64, team="b", created_at=T0),
                  Token(id="t2", digest="d" * 64, team="b", created_at=T0)):
        with pytest.raises(InvalidArgument, match="exists already"):
            tokens.add(clash)
    assert tokens.tokens() == (first,)


def test_auth_over_the_store(tokens: TokenStore) -> None:
    issued = issue(tokens, "nlp", ["team-nlp"])
    auth = Auth(tokens, team_namespaces={"nlp": ("team-nlp-2",)})
    who = auth.principal(f"Bearer {issued.secret}")
    assert (who.team, sorted(who.namespaces), who.admin) == ("nlp", ["team-nlp", "team-nlp-2"], False)
    with pytest.raises(BadToken):
        auth.principal(f"Bearer {issued.secret}x")


def test_concurrent_issuers_all_land(tokens: TokenStore) -> None:
    errors: list[BaseException] = []

    def issuer(i: int) -> None:
        try:
            for j in range(5):
                issue(tokens, f"team-{i}", [f"ns-{i}-{j}"])
        except BaseException as e:  # reported by the test
            errors.append(e)

    threads = [threading.Thread(target=issuer, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    assert len(tokens.tokens()) == 20
