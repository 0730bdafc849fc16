"""Kubernetes' IP and CIDR libraries (apiserver ``pkg/cel/library/ip.go``, ``cidr.go``).

Parsing is a port of Go's ``net/netip`` (``ParseAddr``, ``ParsePrefix``) with its exact error
texts, because those texts reach the user through ``ip()``/``cidr()`` runtime errors and
upstream's rules are stricter than Python's :mod:`ipaddress` (no leading zeros in IPv4 octets,
at most four hex digits per group, no zones here, IPv4-mapped IPv6 refused by the library).
Addresses are kept as ``(bits, int)`` so that containment and masking are plain integer
arithmetic, as in netip.
"""

from __future__ import annotations

from collections.abc import Callable

from drakit.gostr import quote as go_quote
from drakit.selectors import types as T
from drakit.selectors.checker import Env
from drakit.selectors.library import fn
from drakit.selectors.types import EvalError, LibValue

_V4_IN_V6 = 0xFFFF << 32


class _ParseError(Exception):
    pass


def _addr_error(raw: str, msg: str, at: str = "") -> _ParseError:
    if at:
        return _ParseError(f"ParseAddr({go_quote(raw)}): {msg} (at {go_quote(at)})")
    return _ParseError(f"ParseAddr({go_quote(raw)}): {msg}")


def _ipv4_fields(raw: str, s: str) -> int:
    """netip's parseIPv4Fields over ``s`` (a suffix of ``raw`` for embedded IPv4)."""
    val = pos = digits = 0
    out = 0
    n = len(s)
    for i, c in enumerate(s):
        if "0" <= c <= "9":
            if digits == 1 and val == 0:
                raise _addr_error(raw, "IPv4 field has octet with leading zero")
            val = val * 10 + ord(c) - 48
            digits += 1
            if val > 255:
                raise _addr_error(raw, "IPv4 field has value >255")
        elif c == ".":
            if i == 0 or i == n - 1 or s[i - 1] == ".":
                raise _addr_error(raw, "IPv4 field must have at least one digit", s[i:])
            if pos == 3:
                raise _addr_error(raw, "IPv4 address too long")
            out = (out << 8) | val
            pos += 1
            val = digits = 0
        else:
            raise _addr_error(raw, "unexpected character", s[i:])
    if pos < 3:
        raise _addr_error(raw, "IPv4 address too short")
    return (out << 8) | val


_HEX = {c: int(c, 16) for c in "0123456789abcdefABCDEF"}


def _ipv6(raw: str) -> tuple[int, str]:
    """netip's parseIPv6: the 128-bit value and the zone."""
    s, zone = raw, ""
    cut = s.find("%")
    if cut != -1:
        s, zone = s[:cut], s[cut + 1 :]
        if not zone:
            raise _addr_error(raw, "zone must be a non-empty string")
    groups = [0] * 16
    ellipsis = -1
    if len(s) >= 2 and s[0] == ":" and s[1] == ":":
        ellipsis = 0
        s = s[2:]
        if not s:
            return 0, zone
    i = 0
    while i < 16:
        off = 0
        acc = 0
        while off < len(s):
            h = _HEX.get(s[off])
            if h is None:
                break
            acc = (acc << 4) + h
            if off > 3:
                raise _addr_error(raw, "each group must have 4 or less digits", s)
            if acc > 0xFFFF:
                raise _addr_error(raw, "IPv6 field has value >=2^16", s)
            off += 1
        if off == 0:
            raise _addr_error(raw, "each colon-separated field must have at least one digit", s)
        if off < len(s) and s[off] == ".":
            if ellipsis < 0 and i != 12:
                raise _addr_error(
                    raw, "embedded IPv4 address must replace the final 2 fields of the address", s
                )
            if i + 4 > 16:
                raise _addr_error(
                    raw, "too many hex fields to fit an embedded IPv4 at the end of the address", s
                )
            v4 = _ipv4_fields(raw, s)
            for k in range(4):
                groups[i + k] = (v4 >> (24 - 8 * k)) & 0xFF
            s = ""
            i += 4
            break
        groups[i], groups[i + 1] = acc >> 8, acc & 0xFF
        i += 2
        s = s[off:]
        if not s:
            break
        if s[0] != ":":
            raise _addr_error(raw, "unexpected character, want colon", s)
        if len(s) == 1:
            raise _addr_error(raw, "colon must be followed by more characters", s)
        s = s[1:]
        if s[0] == ":":
            if ellipsis >= 0:
                raise _addr_error(raw, "multiple :: in address", s)
            ellipsis = i
            s = s[1:]
            if not s:
                break
    if s:
        raise _addr_error(raw, "trailing garbage after address", s)
    if i < 16:
        if ellipsis < 0:
            raise _addr_error(raw, "address string too short")
        n = 16 - i
        groups = groups[:ellipsis] + [0] * n + groups[ellipsis:i]
    elif ellipsis >= 0:
        raise _addr_error(raw, "the :: must expand to at least one field of zeros")
    return int.from_bytes(bytes(groups), "big"), zone


def _parse_addr(raw: str) -> tuple[int, int, str]:
    """netip.ParseAddr: (bit length, value, zone)."""
    for c in raw:
        if c == ".":
            return 32, _ipv4_fields(raw, raw), ""
        if c == ":":
            value, zone = _ipv6(raw)
            return 128, value, zone
        if c == "%":
            raise _addr_error(raw, "missing IPv6 address")
    raise _addr_error(raw, "unable to parse IP")


def _format(bits: int, value: int) -> str:
    """netip's Addr.String (never IPv4-mapped here: the library refuses those)."""
    if bits == 32:
        return ".".join(str((value >> s) & 0xFF) for s in (24, 16, 8, 0))
    words = [(value >> (112 - 16 * k)) & 0xFFFF for k in range(8)]
    start = end = -1
    k = 0
    while k < 8:
        j = k
        while j < 8 and words[j] == 0:
            j += 1
        if j - k >= 2 and j - k > end - start:
            start, end = k, j
        k = j + 1 if j > k else k + 1
    if start < 0:
        return ":".join(f"{w:x}" for w in words)
    return ":".join(f"{w:x}" for w in words[:start]) + "::" + ":".join(f"{w:x}" for w in words[end:])


class IP(LibValue):
    """``net.IP``: an address without zone."""

    __slots__ = ("bits", "value")
    cel_type_name = "net.IP"

    def __init__(self, bits: int, value: int) -> None:
        self.bits = bits
        self.value = value

    @property
    def cel_size(self) -> int:
        return self.bits // 8

    def cel_equal(self, other: object) -> bool:
        if type(other) is not IP:
            raise EvalError("no such overload")
        return self.bits == other.bits and self.value == other.value

    def __str__(self) -> str:
        return _format(self.bits, self.value)


class CIDR(LibValue):
    """``net.CIDR``: an address (not masked) and a prefix length, as netip.Prefix."""

    __slots__ = ("ip", "prefix")
    cel_type_name = "net.CIDR"

    def __init__(self, ip: IP, prefix: int) -> None:
        self.ip = ip
        self.prefix = prefix

    @property
    def cel_size(self) -> int:
        return -(-self.prefix // 8)

    def cel_equal(self, other: object) -> bool:
        if type(other) is not CIDR:
            raise EvalError("no such overload")
        return self.prefix == other.prefix and self.ip.cel_equal(other.ip)

    def mask(self) -> int:
        b = self.ip.bits
        return ((1 << b) - 1) ^ ((1 << (b - self.prefix)) - 1)

    def contains(self, ip: IP) -> bool:
        return ip.bits == self.ip.bits and (ip.value ^ self.ip.value) & self.mask() == 0

    def __str__(self) -> str:
        return f"{self.ip}/{self.prefix}"


def parse_ip(raw: str) -> IP:
    """The library's parseIPAddr: netip plus no zones and no IPv4-mapped IPv6."""
    try:
        bits, value, zone = _parse_addr(raw)
    except _ParseError as e:
        raise EvalError(
            f"IP Address {go_quote(raw)} parse error during conversion from string: {e}"
        ) from None
    if zone:
        raise EvalError(f"IP address {go_quote(raw)} with zone value is not allowed")
    if bits == 128 and value >> 32 == 0xFFFF:
        raise EvalError(f"IPv4-mapped IPv6 address {go_quote(raw)} is not allowed")
    return IP(bits, value)


def _prefix_error(raw: str, msg: str) -> EvalError:
    # stringToCIDR wraps parseCIDR's error, which already carries the same lead-in.
    lead = "network address parse error during conversion from string: "
    return EvalError(f"{lead}{lead}netip.ParsePrefix({go_quote(raw)}): {msg}")


def parse_cidr(raw: str) -> CIDR:
    """netip.ParsePrefix, then the library's IPv4-mapped check."""
    cut = raw.rfind("/")
    if cut < 0:
        raise _prefix_error(raw, "no '/'")
    try:
        bits, value, zone = _parse_addr(raw[:cut])
    except _ParseError as e:
        raise _prefix_error(raw, str(e)) from None
    if bits == 128 and zone:
        raise _prefix_error(raw, "IPv6 zones cannot be present in a prefix")
    text = raw[cut + 1 :]
    # No sign, no leading zero, and what strconv.Atoi accepts (digits within int64).
    digits = bool(text) and all("0" <= c <= "9" for c in text)
    if not digits or (len(text) > 1 and text[0] == "0") or int(text) > T.INT64_MAX:
        raise _prefix_error(raw, f"bad bits after slash: {go_quote(text)}")
    n = int(text)
    if n > bits:
        raise _prefix_error(raw, "prefix length out of range")
    if bits == 128 and value >> 32 == 0xFFFF:
        raise EvalError(
            f"network address parse error during conversion from string: "
            f"IPv4-mapped IPv6 address {go_quote(raw)} is not allowed"
        )
    return CIDR(IP(bits, value), n)


def _is(parse: Callable[[str], object], raw: str) -> bool:
    try:
        parse(raw)
    except EvalError:
        return False
    return True


def _is_canonical(raw: str) -> bool:
    return str(parse_ip(raw)) == raw


def _is_loopback(ip: IP) -> bool:
    return ip.value >> 24 == 127 if ip.bits == 32 else ip.value == 1


def _is_multicast(ip: IP) -> bool:
    return ip.value >> 28 == 0xE if ip.bits == 32 else ip.value >> 120 == 0xFF


def _is_link_local_unicast(ip: IP) -> bool:
    return ip.value >> 16 == 0xA9FE if ip.bits == 32 else (ip.value >> 112) & 0xFFC0 == 0xFE80


def _is_link_local_multicast(ip: IP) -> bool:
    return ip.value >> 8 == 0xE00000 if ip.bits == 32 else (ip.value >> 112) & 0xFF0F == 0xFF02


def _is_global_unicast(ip: IP) -> bool:
    if ip.bits == 32 and ip.value in (0, 0xFFFFFFFF):
        return False
    return ip.value != 0 and not _is_loopback(ip) and not _is_multicast(ip) and not _is_link_local_unicast(ip)


def _contains_cidr(c: CIDR, other: CIDR) -> bool:
    """Overlaps and not shorter, as upstream writes it (the same as containment)."""
    if c.ip.bits != other.ip.bits or c.prefix > other.prefix:
        return False
    return c.contains(other.ip)


def _contains_ip_string(c: CIDR, s: str) -> bool:
    """Upstream hands the parse error to the IP overload, which answers "no such overload"."""
    try:
        ip = parse_ip(s)
    except EvalError:
        raise EvalError("no such overload") from None
    return c.contains(ip)


def _masked(c: CIDR) -> CIDR:
    return CIDR(IP(c.ip.bits, c.ip.value & c.mask()), c.prefix)


def declare(env: Env) -> None:
    S, B, N, IPT, CT = T.STRING, T.BOOL, T.INT, T.IP, T.CIDR
    fn(env, "ip", "string_to_ip", [S], IPT, parse_ip)
    fn(env, "family", "ip_family", [IPT], N, lambda ip: 4 if ip.bits == 32 else 6, member=True)
    fn(env, "ip.isCanonical", "ip_is_canonical", [S], B, _is_canonical)
    fn(env, "isUnspecified", "ip_is_unspecified", [IPT], B, lambda ip: ip.value == 0, member=True)
    fn(env, "isLoopback", "ip_is_loopback", [IPT], B, _is_loopback, member=True)
    fn(
        env,
        "isLinkLocalMulticast",
        "ip_is_link_local_multicast",
        [IPT],
        B,
        _is_link_local_multicast,
        member=True,
    )
    fn(env, "isLinkLocalUnicast", "ip_is_link_local_unicast", [IPT], B, _is_link_local_unicast, member=True)
    fn(env, "isGlobalUnicast", "ip_is_global_unicast", [IPT], B, _is_global_unicast, member=True)
    fn(env, "isIP", "is_ip", [S], B, lambda s: _is(parse_ip, s))
    fn(env, "string", "ip_to_string", [IPT], S, str)

    fn(env, "cidr", "string_to_cidr", [S], CT, parse_cidr)
    fn(env, "containsIP", "cidr_contains_ip_string", [CT, S], B, _contains_ip_string, member=True)
    fn(env, "containsIP", "cidr_contains_ip_ip", [CT, IPT], B, lambda c, ip: c.contains(ip), member=True)
    fn(
        env,
        "containsCIDR",
        "cidr_contains_cidr_string",
        [CT, S],
        B,
        lambda c, s: _contains_cidr(c, parse_cidr(s)),
        member=True,
    )
    fn(env, "containsCIDR", "cidr_contains_cidr", [CT, CT], B, _contains_cidr, member=True)
    fn(env, "ip", "cidr_ip", [CT], IPT, lambda c: c.ip, member=True)
    fn(env, "prefixLength", "cidr_prefix_length", [CT], N, lambda c: c.prefix, member=True)
    fn(env, "masked", "cidr_masked", [CT], CT, _masked, member=True)
    fn(env, "isCIDR", "is_cidr", [S], B, lambda s: _is(parse_cidr, s))
    fn(env, "string", "cidr_to_string", [CT], S, str)
