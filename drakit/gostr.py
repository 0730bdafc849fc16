"""Go's ``strconv.Quote`` (``%q``) and ``strconv.ParseInt``, once each.

Upstream messages quote names and values with ``Quote``; label selectors, taint comparisons
and quantities read integers with ``ParseInt``, which is stricter than Python's ``int()``
(no spaces, no underscores, no non-ASCII digits).

Three things need ``Quote``: error texts that must read as upstream's (blang/semver, cel-go's
``format``), and every message that shows a name taken from the input.  A name holding a
control character (``ESC [31m``) must reach a terminal escaped, never as the raw byte, so
messages show names through :func:`quote` and the CLI's error printer passes whole lines
through :func:`escape`.
"""

from __future__ import annotations

import unicodedata

__all__ = ["INT64_MAX", "INT64_MIN", "escape", "is_print", "parse_int64", "quote"]

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
_DIGITS = frozenset("0123456789")

_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def is_print(ch: str) -> bool:
    """unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.

    Python's ``str.isprintable`` is close but differs in definition (it excludes categories
    instead of including them), so Go's definition is spelled out.
    """
    return ch == " " or unicodedata.category(ch)[0] in "LMNPS"


def _escape_rune(ch: str, out: list[str]) -> None:
    o = ord(ch)
    if ch in _ESCAPES:
        out.append(_ESCAPES[ch])
    elif o < 0x20 or o == 0x7F:
        out.append(f"\\x{o:02x}")
    elif 0xD800 <= o <= 0xDFFF:  # not a valid rune: Go prints utf8.RuneError
        out.append("\\ufffd")
    elif o < 0x10000:
        out.append(f"\\u{o:04x}")
    else:
        out.append(f"\\U{o:08x}")


def quote(s: str) -> str:
    """``strconv.Quote(s)``: double quotes, ``"`` and ``\\`` escaped, non-printable runes escaped."""
    out = ['"']
    for ch in s:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif is_print(ch):
            out.append(ch)
        else:
            _escape_rune(ch, out)
    out.append('"')
    return "".join(out)


def escape(s: str, keep: str = "") -> str:
    """``s`` with every non-printable rune (except those in ``keep``) escaped as ``quote`` would.

    For text that is already worded (a whole message line, a rendered report): quotes and
    backslashes stay as they are, only what a terminal would interpret is neutralised.
    """
    if s.isascii() and s.isprintable():  # the common case, without a per-rune walk
        return s
    out: list[str] = []
    for ch in s:
        if ch in keep or is_print(ch):
            out.append(ch)
        else:
            _escape_rune(ch, out)
    return "".join(out)


def parse_int64(s: str) -> int | None:
    """``strconv.ParseInt(s, 10, 64)``: an optional sign and ASCII digits, in range; else None."""
    body = s[1:] if s[:1] in ("+", "-") else s
    if not body or not _DIGITS.issuperset(body):
        return None
    significant = body.lstrip("0")
    if len(significant) > 19:  # more digits than any int64 (and than int() will read quickly)
        return None
    value = int(significant or "0")
    value = -value if s[0] == "-" else value
    return value if INT64_MIN <= value <= INT64_MAX else None
