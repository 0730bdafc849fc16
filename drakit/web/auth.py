"""Who is asking: bearer tokens mapped to a team and its namespaces, kept only as digests.

A token is 32 random bytes (``secrets.token_urlsafe``) behind a ``drakit_`` prefix, shown once
when created.  The store keeps its SHA-256 digest, not the token.  A plain hash is enough, and a
slow password hash (bcrypt, argon2) is not needed: those exist to stop guessing of low-entropy
passwords, while a 256-bit random token cannot be guessed, so one fast digest per request keeps
lookups O(1) without weakening anything.  The digest is looked up by equality in a dict or by
index in SQL, and then compared again with :func:`hmac.compare_digest`, so no comparison that
decides access stops early on the first differing byte.

Access model (docs/web.md): a platform admin sees every namespace and may change anything; a
team sees and changes only objects in its namespaces; anonymous requests change nothing and,
once any token exists, see no namespaced data (cluster-scoped inventory stays readable when the
server runs ``--open-reads``, the default on loopback without tokens).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from drakit.errors import InvalidArgument, NotFound

__all__ = ["ANONYMOUS", "OPEN_READER", "Auth", "BadToken", "IssuedToken", "MemoryTokenStore", "Principal", "Token", "TokenStore", "digest_of",
           "issue", "new_token"]

PREFIX = "drakit_"
_TOKEN_BYTES = 32
_TEAM = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_MAX_HEADER = 256  # a real token is 50 characters; anything far longer is refused before hashing


def digest_of(token: str) -> str:
    """SHA-256 hex of the token (see the module docstring for why a fast hash is right here)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def new_token() -> str:
    return PREFIX + secrets.token_urlsafe(_TOKEN_BYTES)


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Token:
    """What the store keeps about one token: never the token itself."""

    id: str
    digest: str
    team: str
    namespaces: tuple[str, ...] = ()
    admin: bool = False
    description: str = ""
    created_at: datetime = field(default_factory=_utc_now)
    revoked_at: datetime | None = None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "team": self.team, "namespaces": list(self.namespaces), "admin": self.admin,
                "description": self.description, "createdAt": self.created_at.isoformat(),
                "revokedAt": self.revoked_at.isoformat() if self.revoked_at else None}


@dataclass(frozen=True)
class IssuedToken:
    """A token just created: the secret (shown once) and its record."""

    secret: str
    token: Token


class TokenStore(Protocol):
    def add(self, token: Token) -> None:
        """Keep a new token record (its ID and digest are unique)."""
        ...

    def by_digest(self, digest: str) -> Token | None:
        """The live (unrevoked) token with this digest."""
        ...

    def tokens(self) -> tuple[Token, ...]:
        """Every token record, revoked ones included, oldest first."""
        ...

    def revoke(self, token_id: str, at: datetime) -> Token:
        """Mark a token revoked (idempotent); raises NotFound for an unknown ID."""
        ...


class MemoryTokenStore:
    """The in-memory twin of :class:`drakit.store.tokens.SqlTokenStore`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens: dict[str, Token] = {}

    def add(self, token: Token) -> None:
        with self._lock:
            if token.id in self._tokens or any(t.digest == token.digest for t in self._tokens.values()):
                raise InvalidArgument(f"token {token.id} exists already")
            self._tokens[token.id] = token

    def by_digest(self, digest: str) -> Token | None:
        with self._lock:
            return next((t for t in self._tokens.values() if t.digest == digest and t.revoked_at is None), None)

    def tokens(self) -> tuple[Token, ...]:
        with self._lock:
            return tuple(sorted(self._tokens.values(), key=lambda t: (t.created_at, t.id)))

    def revoke(self, token_id: str, at: datetime) -> Token:
        with self._lock:
            found = self._tokens.get(token_id)
            if found is None:
                raise NotFound(f"token {token_id} not found")
            if found.revoked_at is None:
                found = self._tokens[token_id] = replace(found, revoked_at=at)
            return found


def issue(store: TokenStore, team: str, namespaces: Iterable[str] = (), *, admin: bool = False, description: str = "",
          now: Callable[[], datetime] = _utc_now) -> IssuedToken:
    """Create a token for ``team`` (its namespaces, or every namespace when ``admin``)."""
    if not _TEAM.match(team):
        raise InvalidArgument(f"team {team!r}: want a DNS label (lower-case letters, digits, '-'; at most 63)")
    spaces = tuple(dict.fromkeys(namespaces))
    bad = [ns for ns in spaces if not _TEAM.match(ns)]
    if bad:
        raise InvalidArgument(f"namespace {bad[0]!r}: want a DNS label")
    if not admin and not spaces:
        raise InvalidArgument(f"team {team}: name its namespaces (or make the token an admin's)")
    secret = new_token()
    token = Token(id=secrets.token_hex(6), digest=digest_of(secret), team=team, namespaces=spaces, admin=admin,
                  description=description[:1024], created_at=now())
    store.add(token)
    return IssuedToken(secret, token)


@dataclass(frozen=True)
class Principal:
    """The caller of one request: a team's namespaces, an admin, or nobody."""

    team: str = ""
    namespaces: frozenset[str] = frozenset()
    admin: bool = False
    token_id: str = ""
    read_all: bool = False  # the open demo: an anonymous caller who may read every namespace

    @property
    def anonymous(self) -> bool:
        return not self.token_id

    @property
    def can_write(self) -> bool:
        return not self.anonymous

    def sees(self, namespace: str) -> bool:
        return self.admin or self.read_all or namespace in self.namespaces

    def to_json(self) -> dict[str, Any]:
        return {"team": self.team or None, "admin": self.admin, "anonymous": self.anonymous,
                "readAll": self.admin or self.read_all, "namespaces": sorted(self.namespaces)}


ANONYMOUS = Principal()
OPEN_READER = Principal(read_all=True)
_TOKENS_RECHECK_S = 5.0  # how stale the server's view of the token store may be (a revocation's delay)
_KNOWN_MAX = 10_000  # digests remembered (unknown ones too: a bad token retried reads the store once per recheck)


class BadToken(InvalidArgument):
    """A bearer token was given and is not a live one (401, never 403: the caller is unknown)."""


class Auth:
    """Bearer header → :class:`Principal`, with the team → namespaces mapping of a queue catalog added.

    ``team_namespaces`` (from the QueueCatalog's ``teams``) widens a token of that team to the
    catalog's namespaces too, so a catalog edit reaches existing tokens.
    """

    def __init__(self, store: TokenStore, *, team_namespaces: dict[str, tuple[str, ...]] | None = None,
                 open_reads: bool = False, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self.team_namespaces = dict(team_namespaces or {})
        self.open_reads = open_reads
        self._monotonic = monotonic
        self._checked: tuple[float, bool] | None = None
        self._known: dict[str, tuple[float, Token | None]] = {}
        self._lock = threading.Lock()

    def principal(self, authorization: str | None) -> Principal:
        """The caller; no header is anonymous, a header that is not a live token is :class:`BadToken`."""
        if not authorization:
            return OPEN_READER if self.anonymous_reads() else ANONYMOUS
        scheme, _, secret = authorization.strip().partition(" ")
        secret = secret.strip()
        if scheme.lower() != "bearer" or not secret:
            raise BadToken("Authorization: want 'Bearer <token>'")
        if len(secret) > _MAX_HEADER or not secret.isascii():
            raise BadToken("bearer token is not one this server issued")
        digest = digest_of(secret)
        token = self._token(digest)
        if token is None or not hmac.compare_digest(token.digest, digest):
            raise BadToken("bearer token is unknown or revoked")
        spaces = frozenset(token.namespaces) | frozenset(self.team_namespaces.get(token.team, ()))
        return Principal(team=token.team, namespaces=spaces, admin=token.admin, token_id=token.id)

    def _token(self, digest: str) -> Token | None:
        """The live token of ``digest``, remembered for a few seconds: a store read per request
        would cost more than the answer, and a revocation still takes effect within the recheck."""
        now = self._monotonic()
        with self._lock:
            hit = self._known.get(digest)
            if hit is not None and now - hit[0] <= _TOKENS_RECHECK_S:
                return hit[1]
        token = self.store.by_digest(digest)
        with self._lock:
            if len(self._known) >= _KNOWN_MAX:
                self._known.clear()
            self._known[digest] = (now, token)
        return token

    def anonymous_reads(self) -> bool:
        """Whether a request without a token may read every namespace: the server was started open
        (loopback, ``--open-reads``) and no live token exists yet.  Creating the first token closes
        it within a few seconds, without a restart."""
        if not self.open_reads:
            return False
        now = self._monotonic()
        with self._lock:
            if self._checked is None or now - self._checked[0] > _TOKENS_RECHECK_S:
                live = any(t.revoked_at is None for t in self.store.tokens())
                self._checked = (now, live)
            return not self._checked[1]
