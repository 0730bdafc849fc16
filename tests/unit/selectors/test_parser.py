"""Parser: literals, precedence, macros, error rendering, robustness."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drakit.selectors import compile_any, evaluate_expression
from drakit.selectors.ast import Call, Comprehension, Literal, Select
from drakit.selectors.parser import MAX_RECURSION_DEPTH, ParseError, parse
from drakit.selectors.types import Uint


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param("1", 1, id="int"),
        pytest.param("0x1F", 31, id="hex"),
        pytest.param("1u", Uint(1), id="uint"),
        pytest.param("-9223372036854775808", -(2**63), id="min-int"),
        pytest.param("1.5", 1.5, id="double"),
        pytest.param("1e3", 1000.0, id="exponent"),
        pytest.param(".5", 0.5, id="leading-dot"),
        pytest.param('"a\\nb"', "a\nb", id="escape"),
        pytest.param("'\\x41\\u00e9\\101'", "AéA", id="hex-unicode-octal"),
        pytest.param('r"a\\nb"', "a\\nb", id="raw"),
        pytest.param('"""a\nb"""', "a\nb", id="triple"),
        pytest.param('b"\\xff"', b"\xff", id="bytes"),
        pytest.param("true", True, id="true"),
        pytest.param("null", None, id="null"),
    ],
)
def test_literals(text: str, value: object) -> None:
    e = parse(text).expr
    assert isinstance(e, Literal)
    assert e.value == value
    assert type(e.value) is type(value)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param("1 + 2 * 3", 7, id="mul-before-add"),
        pytest.param("(1 + 2) * 3", 9, id="parens"),
        pytest.param("10 - 2 - 3", 5, id="left-assoc"),
        pytest.param("true || false && false", True, id="and-before-or"),
        pytest.param("1 < 2 == true", True, id="relations-left-assoc"),
        pytest.param("false ? 1 : true ? 2 : 3", 2, id="ternary-right-assoc"),
        pytest.param("!!true", True, id="double-not"),
        pytest.param("--1", 1, id="double-negate"),
        pytest.param("-(1)", -1, id="negate-call"),
        pytest.param("2 in [1, 2]", True, id="in"),
        pytest.param("[1, 2][1]", 2, id="index"),
        pytest.param("{'a': {'b': 1}}.a.b", 1, id="select-chain"),
        pytest.param("'abc'.size() // comment", 3, id="comment"),
    ],
)
def test_precedence_and_evaluation(text: str, value: object) -> None:
    r = evaluate_expression(text)
    assert r.error is None, r.error
    assert r.value == value


def test_macros_expand_to_comprehensions() -> None:
    e = parse("[1].all(x, x > 0)").expr
    assert isinstance(e, Comprehension)
    assert e.iter_var == "x"
    h = parse("has(a.b)").expr
    assert isinstance(h, Select) and h.test_only
    b = parse("cel.bind(v, 1, v)").expr
    assert isinstance(b, Comprehension) and b.accu_var == "v"
    o = parse("a.?b").expr
    assert isinstance(o, Call) and o.function == "_?._"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        pytest.param("?!", "Syntax error: extraneous input '?'", id="bad-start"),
        pytest.param("1 +", "Syntax error: mismatched input '<EOF>'", id="eof"),
        pytest.param("1 2", "Syntax error: extraneous input '2'", id="extraneous"),
        pytest.param("a = 1", "Syntax error: token recognition error at: '= '", id="lex"),
        pytest.param('"abc', "Syntax error: token recognition error", id="unterminated"),
        pytest.param("if", "reserved identifier: if", id="reserved"),
        pytest.param("9223372036854775808", "invalid int literal", id="int-range"),
        pytest.param("[1].all(1, true)", "argument must be a simple name", id="macro-arg"),
        pytest.param("has(a)", "invalid argument to has() macro", id="has"),
    ],
)
def test_syntax_errors(text: str, fragment: str) -> None:
    c = compile_any(text)
    assert c.error is not None
    assert fragment in c.error.message
    assert c.error.message.startswith("compilation failed: ERROR: <input>:")


def test_error_rendering_has_caret() -> None:
    c = compile_any("1 +\n  )")
    assert c.error is not None
    assert "ERROR: <input>:2:3: Syntax error" in c.error.message
    assert c.error.message.endswith(" |   )\n | ..^")


def test_recursion_limit_is_an_error_not_a_crash() -> None:
    deep = "(" * (MAX_RECURSION_DEPTH + 1) + "1" + ")" * (MAX_RECURSION_DEPTH + 1)
    with pytest.raises(ParseError, match="recursion limit exceeded"):
        parse(deep)
    ok = "(" * 200 + "true" + ")" * 200
    assert evaluate_expression(ok).value is True


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from([*"ab1.()[]{}!-+*/%<>=&|?:,'\"\\ xuh_", " in ", ".all(", "has(", "[?"]), max_size=30
    )
)
def test_random_input_never_crashes(parts: list[str]) -> None:
    text = "".join(parts)
    c = compile_any(text)
    if c.error is None:
        evaluate_expression(text)  # may be a runtime error, never an exception


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_arbitrary_unicode_never_crashes(text: str) -> None:
    c = compile_any(text)
    assert c.error is None or c.error.message


# Upstream's exact answers (cel-go v0.29.2 through the oracle), one root cause each.
@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "[1e400, 2e400]",
            "ERROR: <input>:1:2: invalid double literal\n | [1e400, 2e400]\n | .^\n"
            "ERROR: <input>:1:9: invalid double literal\n | [1e400, 2e400]\n | ........^",
            id="double-out-of-range-every-one",
        ),
        pytest.param(
            "-1e400", "ERROR: <input>:1:1: invalid double literal\n | -1e400\n | ^", id="negative-double"
        ),
        pytest.param(
            "b'\\u00ff' == b''",
            "ERROR: <input>:1:1: unable to unescape string\n | b'\\u00ff' == b''\n | ^",
            id="bytes-unicode-escape",
        ),
        pytest.param(
            "'\\ud800'",
            "ERROR: <input>:1:1: invalid unicode code point\n | '\\ud800'\n | ^",
            id="surrogate-escape",
        ),
        pytest.param(
            "'\\400'",
            "ERROR: <input>:1:1: Syntax error: token recognition error at: ''\\4'\n | '\\400'\n | ^\n"
            "ERROR: <input>:1:6: Syntax error: token recognition error at: '''\n | '\\400'\n | .....^",
            id="lexer-recovers",
        ),
        pytest.param(
            "'''abc",
            "ERROR: <input>:1:3: Syntax error: token recognition error at: ''abc'\n | '''abc\n | ..^",
            id="triple-quote-backs-up",
        ),
        pytest.param(
            'b"',
            "ERROR: <input>:1:2: Syntax error: token recognition error at: '\"'\n | b\"\n | .^",
            id="prefix-backs-up",
        ),
        pytest.param(
            "0x",
            "ERROR: <input>:1:2: Syntax error: extraneous input 'x' expecting <EOF>\n | 0x\n | .^",
            id="hex-prefix",
        ),
        pytest.param(
            "(" * 250 + "1" + ")" * 250,
            "ERROR: <input>:-1:0: expression recursion limit exceeded: 250",
            id="listener-limit",
        ),
        pytest.param(
            " + ".join(["1"] * 251) + " > 0",
            "ERROR: <input>:-1:0: max recursion depth exceeded",
            id="visitor-limit",
        ),
        pytest.param(
            "a.b" + ".c" * 300, "ERROR: <input>:-1:0: max recursion depth exceeded", id="select-chain"
        ),
    ],
)
def test_upstream_error_lists(text: str, message: str) -> None:
    c = compile_any(text)
    assert c.error is not None
    assert c.error.message == "compilation failed: " + message


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param("[?optional.of(1), ?optional.none(), 3]", [1, 3], id="optional-first-element"),
        pytest.param("[ ?optional.of(1)]", [1], id="optional-spaced"),
        pytest.param("{?'a': optional.none(), 'b': 2}", {"b": 2}, id="optional-map-entry"),
        pytest.param("{'a': 1}[ ?'a'].value()", 1, id="optional-index-spaced"),
        pytest.param("{'a': 1}. ?a.hasValue()", True, id="optional-select-spaced"),
        pytest.param(" + ".join(["1"] * 250) + " > 0", True, id="chain-at-the-limit"),
        pytest.param("(" * 249 + "1" + ")" * 249 + " > 0", True, id="nesting-at-the-limit"),
        pytest.param("size({[1]: 2})", 1, id="list-map-key"),
    ],
)
def test_upstream_accepts(text: str, value: object) -> None:
    assert evaluate_expression(text).value == value
