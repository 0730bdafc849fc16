"""``gostr.quote`` is Go's strconv.Quote: upstream's quotetests table (strconv/quote_test.go) plus edges."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drakit.gostr import escape, parse_int64, quote


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        # strconv's quotetests (the invalid-UTF-8 row has no Python str equivalent)
        pytest.param("\a\b\f\r\n\t\v", r'"\a\b\f\r\n\t\v"', id="c-escapes"),
        pytest.param("\\", r'"\\"', id="backslash"),
        pytest.param("\u263a", '"☺"', id="printable-bmp"),
        pytest.param("\U0010ffff", r'"\U0010ffff"', id="unprintable-astral"),
        pytest.param("\x04", r'"\x04"', id="c0"),
        pytest.param("!\u00a0!\u2000!\u3000!", r'"!\u00a0!\u2000!\u3000!"', id="graphic-not-printable"),
        pytest.param("\x7f", r'"\x7f"', id="del"),
        # edges drakit relies on
        pytest.param("", '""', id="empty"),
        pytest.param('say "hi"', r'"say \"hi\""', id="inner-quotes"),
        pytest.param("gpu-\x1b[31mred", r'"gpu-\x1b[31mred"', id="terminal-escape"),
        pytest.param("\x9b", r'"\u009b"', id="c1-csi"),
        pytest.param("\ud800", r'"\ufffd"', id="lone-surrogate"),
        pytest.param("\u00e9\U0001f600", '"é😀"', id="printable-astral"),
    ],
)
def test_quote(raw: str, want: str) -> None:
    assert quote(raw) == want


@pytest.mark.parametrize(
    ("raw", "keep", "want"),
    [
        pytest.param('pod "a/b" not found', "", 'pod "a/b" not found', id="plain-unchanged"),
        pytest.param("pod \x1b]0;x\x07", "", r"pod \x1b]0;x\a", id="osc-title"),
        pytest.param("a\nb\tc", "\n\t", "a\nb\tc", id="keep-layout"),
        pytest.param("a\nb", "", r"a\nb", id="one-line"),
    ],
)
def test_escape(raw: str, keep: str, want: str) -> None:
    assert escape(raw, keep) == want


@given(st.text())
def test_output_is_terminal_safe(s: str) -> None:
    """Whatever the input, the result holds no control or other non-printable character."""
    for out in (quote(s), escape(s)):
        assert out.isprintable(), repr(out)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param("42", 42, id="plain"),
        pytest.param("+7", 7, id="plus"),
        pytest.param("-0012", -12, id="leading-zeros"),
        pytest.param("9223372036854775807", 2**63 - 1, id="max"),
        pytest.param("-9223372036854775808", -(2**63), id="min"),
        pytest.param("9223372036854775808", None, id="overflow"),
        pytest.param("0" * 5000 + "1", 1, id="many-zeros"),
        pytest.param("1" * 5000, None, id="many-digits"),
        pytest.param("1_000", None, id="underscore"),
        pytest.param(" 1", None, id="space"),
        pytest.param("١", None, id="non-ascii-digit"),
        pytest.param("", None, id="empty"),
        pytest.param("-", None, id="sign-only"),
    ],
)
def test_parse_int64(text: str, want: int | None) -> None:
    assert parse_int64(text) == want
