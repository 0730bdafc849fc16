"""Kubernetes' URL library (apiserver ``pkg/cel/library/urls.go``) on a port of Go's ``net/url``.

``url()`` accepts what ``url.ParseRequestURI`` accepts (absolute URIs and absolute paths) and
then keeps what ``url.Parse`` makes of it; the accessors return Go's ``Host``, ``Hostname()``,
``Port()``, ``EscapedPath()`` and ``Query()``.  Python's :mod:`urllib.parse` is far more
lenient and escapes differently, so the parts of net/url that decide acceptance, error texts
and escaping are ported here: Go 1.26 with its default strict colons in http(s) hosts.
Escaping works on UTF-8 bytes, as Go's strings are bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from drakit.gostr import quote as go_quote
from drakit.selectors import types as T
from drakit.selectors.checker import Env
from drakit.selectors.library import fn
from drakit.selectors.library.net import _parse_addr, _ParseError
from drakit.selectors.types import EvalError, LibValue

# net/url's encoding modes; _SAFE[mode] holds the bytes that mode leaves unescaped.
PATH, SEGMENT, HOST, ZONE, USERINFO, QUERY, FRAGMENT = range(7)

_ALNUM = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_UNRESERVED = _ALNUM + b"-._~"
_SAFE: dict[int, frozenset[int]] = {
    PATH: frozenset(_UNRESERVED + b"$&+,/:;=@"),
    SEGMENT: frozenset(_UNRESERVED + b"$&+:=@"),
    HOST: frozenset(_UNRESERVED + b"!$&'()*+,;=:[]<>\""),
    ZONE: frozenset(_UNRESERVED + b"!$&'()*+,;=:[]<>\""),
    USERINFO: frozenset(_UNRESERVED + b"$&+,;="),
    QUERY: frozenset(_UNRESERVED),
    FRAGMENT: frozenset(_UNRESERVED + b"!$&'()*+,/:;=?@"),
}
_HEXDIGITS = frozenset(b"0123456789abcdefABCDEF")


class _URLError(Exception):
    pass


def _escape_error(s: bytes) -> _URLError:
    return _URLError(f"invalid URL escape {go_quote(_text(s))}")


def _text(b: bytes) -> str:
    return b.decode("utf-8", "replace")


def _should_escape(c: int, mode: int) -> bool:
    return c not in _SAFE[mode]


def _unescape(s: str, mode: int) -> str:
    """net/url's unescape: validate %XX (and host characters), then decode."""
    b = s.encode("utf-8", "surrogatepass")
    n, plus = 0, False
    i = 0
    while i < len(b):
        c = b[i]
        if c == 0x25:  # %
            n += 1
            if i + 2 >= len(b) or b[i + 1] not in _HEXDIGITS or b[i + 2] not in _HEXDIGITS:
                raise _escape_error(b[i : i + 3])
            v = int(b[i + 1 : i + 3], 16)
            if mode == HOST and v >> 4 < 8 and b[i : i + 3] != b"%25":
                raise _escape_error(b[i : i + 3])
            if mode == ZONE and b[i : i + 3] != b"%25" and v != 0x20 and _should_escape(v, HOST):
                raise _escape_error(b[i : i + 3])
            i += 3
            continue
        if c == 0x2B:  # +
            plus = mode == QUERY
        elif mode in (HOST, ZONE) and c < 0x80 and _should_escape(c, mode):
            raise _URLError(f"invalid character {go_quote(chr(c))} in host name")
        i += 1
    if n == 0 and not plus:
        return s
    out = bytearray()
    i = 0
    while i < len(b):
        c = b[i]
        if c == 0x25:
            out.append(int(b[i + 1 : i + 3], 16))
            i += 3
            continue
        out.append(0x20 if c == 0x2B and mode == QUERY else c)
        i += 1
    return _text(bytes(out))


def _escape(s: str, mode: int) -> str:
    b = s.encode("utf-8", "surrogatepass")
    safe = _SAFE[mode]
    if all(c in safe for c in b):
        return s
    out = []
    for c in b:
        if c == 0x20 and mode == QUERY:
            out.append("+")
        elif c in safe:
            out.append(chr(c))
        else:
            out.append(f"%{c:02X}")
    return "".join(out)


def _scheme(raw: str) -> tuple[str, str]:
    for i, c in enumerate(raw):
        if "a" <= c <= "z" or "A" <= c <= "Z":
            continue
        if "0" <= c <= "9" or c in "+-.":
            if i == 0:
                return "", raw
            continue
        if c == ":":
            if i == 0:
                raise _URLError("missing protocol scheme")
            return raw[:i], raw[i + 1 :]
        return "", raw
    return "", raw


def _valid_port(port: str) -> bool:
    return port == "" or (port[0] == ":" and all("0" <= c <= "9" for c in port[1:]))


def _host(scheme: str, host: str) -> str:
    bracket = host.rfind("[")
    if bracket > 0:
        raise _URLError("invalid IP-literal")
    if bracket == 0:
        close = host.rfind("]")
        if close < 0:
            raise _URLError("missing ']' in host")
        colon_port = host[close + 1 :]
        if not _valid_port(colon_port):
            raise _URLError(f"invalid port {go_quote(colon_port)} after host")
        colon_port = _unescape(colon_port, HOST)
        hostname = host[1:close]
        zone = hostname.find("%25")
        if zone >= 0:
            name = _unescape(hostname[:zone], HOST) + _unescape(hostname[zone:], ZONE)
        else:
            name = _unescape(hostname, HOST)
        try:
            bits, _, _ = _parse_addr(name)
        except _ParseError as e:
            raise _URLError(f"invalid host: {e}") from None
        if bits == 32:
            raise _URLError("invalid IP-literal")
        return f"[{name}]{colon_port}"
    first = host.find(":")
    if first != -1:
        last = host.rfind(":")
        i = first if scheme in ("http", "https") else last
        if not _valid_port(host[i:]):
            raise _URLError(f"invalid port {go_quote(host[i:])} after host")
    return _unescape(host, HOST)


_USERINFO_OK = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._:~!$&'()*+,;=%@")


@dataclass
class _Parts:
    scheme: str = ""
    opaque: str = ""
    user: tuple[str, str | None] | None = None
    host: str = ""
    path: str = ""
    raw_path: str = ""
    raw_query: str = ""
    force_query: bool = False
    omit_host: bool = False
    fragment: str = ""
    raw_fragment: str = ""


def _parse(raw: str, via_request: bool) -> _Parts:
    if any(ord(c) < 0x20 or c == "\x7f" for c in raw):
        raise _URLError("net/url: invalid control character in URL")
    if raw == "" and via_request:
        raise _URLError("empty url")
    u = _Parts()
    if raw == "*":
        u.path = "*"
        return u
    u.scheme, rest = _scheme(raw)
    u.scheme = u.scheme.lower()
    if rest.endswith("?") and rest.count("?") == 1:
        u.force_query, rest = True, rest[:-1]
    else:
        rest, _, u.raw_query = rest.partition("?")
    if not rest.startswith("/"):
        if u.scheme:
            u.opaque = rest
            return u
        if via_request:
            raise _URLError("invalid URI for request")
        if ":" in rest.partition("/")[0]:
            raise _URLError("first path segment in URL cannot contain colon")
    if (u.scheme or (not via_request and not rest.startswith("///"))) and rest.startswith("//"):
        authority, rest = rest[2:], ""
        slash = authority.find("/")
        if slash >= 0:
            authority, rest = authority[:slash], authority[slash:]
        at = authority.rfind("@")
        u.host = _host(u.scheme, authority[at + 1 :])
        if at >= 0:
            info = authority[:at]
            if not all(c in _USERINFO_OK for c in info):
                raise _URLError("net/url: invalid userinfo")
            if ":" not in info:
                u.user = (_unescape(info, USERINFO), None)
            else:
                name, _, password = info.partition(":")
                u.user = (_unescape(name, USERINFO), _unescape(password, USERINFO))
    elif u.scheme and rest.startswith("/"):
        u.omit_host = True
    u.path = _unescape(rest, PATH)
    u.raw_path = "" if _escape(u.path, PATH) == rest else rest
    return u


def _valid_encoded(s: str, mode: int) -> bool:
    return all(c in "!$&'()*+,;=:@[]%" or not _should_escape(b, mode) for c in s for b in c.encode())


def _escaped(value: str, raw: str, mode: int) -> str:
    """Go's EscapedPath/EscapedFragment: the raw form when it is a valid encoding of the value."""
    if raw and _valid_encoded(raw, mode):
        try:
            if _unescape(raw, mode) == value:
                return raw
        except _URLError:
            pass
    return _escape(value, mode)


def _go_error(raw: str, err: _URLError) -> str:
    return f"parse {go_quote(raw)}: {err}"


def parse_request_uri(raw: str) -> _Parts:
    try:
        return _parse(raw, True)
    except _URLError as e:
        raise _URLError(_go_error(raw, e)) from None


def parse_url(raw: str) -> _Parts:
    """``url.Parse``: the fragment is cut off first and unescaped on its own."""
    head, sep, frag = raw.partition("#")
    try:
        u = _parse(head, False)
    except _URLError as e:
        raise _URLError(_go_error(head, e)) from None
    if sep and frag:
        try:
            u.fragment = _unescape(frag, FRAGMENT)
        except _URLError as e:
            raise _URLError(_go_error(raw, e)) from None
        u.raw_fragment = "" if _escape(u.fragment, FRAGMENT) == frag else frag
    return u


def _split_host_port(host_port: str) -> tuple[str, str]:
    host, port = host_port, ""
    colon = host.rfind(":")
    if colon != -1 and _valid_port(host[colon:]):
        host, port = host[:colon], host[colon + 1 :]
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, port


class URL(LibValue):
    """``kubernetes.URL``; equal when Go's ``URL.String()`` is."""

    __slots__ = ("parts",)
    cel_type_name = "kubernetes.URL"

    def __init__(self, parts: _Parts) -> None:
        self.parts = parts

    def cel_equal(self, other: object) -> bool:
        if type(other) is not URL:
            raise EvalError("no such overload")
        return str(self) == str(other)

    def escaped_path(self) -> str:
        u = self.parts
        if u.path == "*" and not u.raw_path:
            return "*"  # not escaped (Go issue 11202)
        return _escaped(u.path, u.raw_path, PATH)

    def query(self) -> dict[str, list[str]]:
        """``URL.Query()``: ``ParseQuery`` with its errors dropped, as Go does."""
        out: dict[str, list[str]] = {}
        q = self.parts.raw_query
        if q.count("&") + 1 > 10000:
            return out
        for key in q.split("&") if q else []:
            if ";" in key or not key:
                continue
            k, _, v = key.partition("=")
            try:
                k, v = _unescape(k, QUERY), _unescape(v, QUERY)
            except _URLError:
                continue
            out.setdefault(k, []).append(v)
        return out

    def __str__(self) -> str:
        u = self.parts
        out = []
        if u.scheme:
            out.append(u.scheme + ":")
        if u.opaque:
            out.append(u.opaque)
        else:
            if (u.scheme or u.host or u.user is not None) and not (
                u.omit_host and not u.host and u.user is None
            ):
                if u.host or u.path or u.user is not None:
                    out.append("//")
                if u.user is not None:
                    name, password = u.user
                    out.append(_escape(name, USERINFO))
                    if password is not None:
                        out.append(":" + _escape(password, USERINFO))
                    out.append("@")
                if u.host:
                    out.append(_escape(u.host, HOST))
            path = self.escaped_path()
            if path and path[0] != "/" and u.host:
                out.append("/")
            if not out and ":" in path.partition("/")[0]:
                out.append("./")
            out.append(path)
        if u.force_query or u.raw_query:
            out.append("?" + u.raw_query)
        if u.fragment:
            out.append("#" + _escaped(u.fragment, u.raw_fragment, FRAGMENT))
        return "".join(out)


def to_url(s: str) -> URL:
    try:
        parse_request_uri(s)
        return URL(parse_url(s))
    except _URLError as e:
        raise EvalError(f"URL parse error during conversion from string: {e}") from None


def is_url(s: str) -> bool:
    try:
        parse_request_uri(s)
    except _URLError:
        return False
    return True


def request_uri_error(s: str) -> str | None:
    """The error text of ``url.ParseRequestURI`` (the ``uri`` format's message), or None."""
    try:
        parse_request_uri(s)
    except _URLError as e:
        return str(e)
    return None


def declare(env: Env) -> None:
    S, U = T.STRING, T.URL
    fn(env, "url", "string_to_url", [S], U, to_url)
    fn(env, "getScheme", "url_get_scheme", [U], S, lambda u: u.parts.scheme, member=True)
    fn(env, "getHost", "url_get_host", [U], S, lambda u: u.parts.host, member=True)
    fn(
        env,
        "getHostname",
        "url_get_hostname",
        [U],
        S,
        lambda u: _split_host_port(u.parts.host)[0],
        member=True,
    )
    fn(env, "getPort", "url_get_port", [U], S, lambda u: _split_host_port(u.parts.host)[1], member=True)
    fn(env, "getEscapedPath", "url_get_escaped_path", [U], S, lambda u: u.escaped_path(), member=True)
    fn(env, "getQuery", "url_get_query", [U], T.map_of(S, T.list_of(S)), lambda u: u.query(), member=True)
    fn(env, "isURL", "is_url_string", [S], T.BOOL, is_url)
