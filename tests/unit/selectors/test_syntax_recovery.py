"""Every syntax error cel-go reports, not only the first: ANTLR's recovery and cel-go's
visitor over the repaired tree (``drakit/selectors/recovery.py``).

The expected lists are the oracle's (upstream's parser), as position and message; the same
cases are recorded with the oracle's full answers in ``tests/differential/cel_regressions/``.
"""

from __future__ import annotations

import pytest

from drakit.selectors.parser import ParseError, Source, parse

EXPR_START = "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"
IDENT = "{IDENTIFIER, ESC_IDENTIFIER}"


def errors(text: str) -> list[tuple[str, str]]:
    with pytest.raises(ParseError) as raised:
        parse(text)
    source = Source(text)
    out = []
    for issue in sorted(raised.value.issues, key=lambda i: i.offset):
        if issue.offset < 0:
            out.append(("-1:0", issue.message))
            continue
        line, col = source.location(issue.offset)
        out.append((f"{line}:{col + 1}", issue.message))
    return out


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param(
            "1 + + 2 + * 3",
            [
                ("1:5", f"Syntax error: extraneous input '+' expecting {EXPR_START}"),
                ("1:11", f"Syntax error: extraneous input '*' expecting {EXPR_START}"),
            ],
            id="two-deletions",
        ),
        pytest.param(
            "a.?1 + b.? ",
            [
                ("1:4", f"Syntax error: mismatched input '1' expecting {IDENT}"),
                ("1:4", "unsupported ident kind"),
                ("1:12", f"Syntax error: mismatched input '<EOF>' expecting {IDENT}"),
                ("1:12", "unsupported ident kind"),
            ],
            id="visitor-after-each-recovery",
        ),
        pytest.param(
            "[1].all(x.y, true) + )",
            [
                ("1:10", "argument must be a simple name"),
                ("1:22", f"Syntax error: mismatched input ')' expecting {EXPR_START}"),
            ],
            id="macro-error-and-syntax-error",
        ),
        pytest.param(
            "while + (for",
            [
                ("1:1", "reserved identifier: while"),
                ("1:10", "reserved identifier: for"),
                ("1:13", "Syntax error: missing ')' at '<EOF>'"),
            ],
            id="reserved-names-in-repaired-tree",
        ),
        pytest.param(
            "1 + 99999999999999999999 + ) + 0x",
            [
                ("1:5", "invalid int literal"),
                ("1:28", f"Syntax error: mismatched input ')' expecting {EXPR_START}"),
                ("1:33", "Syntax error: extraneous input 'x' expecting <EOF>"),
            ],
            id="literal-error-and-two-syntax-errors",
        ),
        # a loop-back sync: the runtime's cached follow set must not grow between parses
        pytest.param("(4+ !", [("1:6", f"Syntax error: extraneous input '<EOF>' expecting {EXPR_START}")], id="sync"),
        pytest.param("!", [("1:2", f"Syntax error: extraneous input '<EOF>' expecting {EXPR_START}")], id="sync-top"),
        pytest.param("x ? y", [("1:6", "Syntax error: mismatched input '<EOF>' expecting ':'")], id="ternary"),
        pytest.param("[1, 2", [("1:6", "Syntax error: mismatched input '<EOF>' expecting {']', ','}")], id="list"),
        pytest.param("a.b{c: 1, d 2}", [("1:13", "Syntax error: missing ':' at '2'")], id="insertion"),
        pytest.param(".true", [("1:2", "Syntax error: mismatched input 'true' expecting IDENTIFIER")], id="dot-true"),
    ],
)
def test_every_error_is_reported(text: str, want: list[tuple[str, str]]) -> None:
    assert errors(text) == want


def test_recovery_attempts_are_limited() -> None:
    """cel-go's strategy gives up on the 31st recovery attempt, reporting it where it is."""
    got = errors("1 " + "+ * " * 150)
    assert len(got) == 32
    assert got[-1] == ("1:65", "Syntax error: error recovery attempt limit exceeded: 30")
