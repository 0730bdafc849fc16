"""Hand-written lexer and recursive-descent parser for the full CEL grammar, plus macros.

cel-go generates its parser with ANTLR; a Python port of that runtime would be slow to load
and heavy, so this is a direct recursive-descent reading of the same grammar (CEL spec
``langdef.md``): precedence ``?:`` < ``||`` < ``&&`` < relations (incl. ``in``) < ``+ -`` <
``* / %`` < unary ``! -`` < member (``.f``, ``.f()``, ``[i]``, ``.?f``, ``[?i]``).

Fidelity points kept from cel-go: negative numeric literals fold (``-9223372036854775808``
is an int literal), ``!!x``/``--x`` collapse, reserved words are rejected, errors are
rendered as ``ERROR: <input>:L:C: Syntax error: ...`` with the source line and a caret, and
nesting is limited to 250 levels of ``expr`` (cel-go's default max recursion depth) so
that deep input is an error, never a crash.

This parser stops at the first parser error; the whole list cel-go reports (ANTLR's error
recovery, then cel-go's visitor over the repaired tree) comes from :mod:`.recovery`, which
runs only on that path.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial

from drakit.selectors.ast import (
    Call,
    Comprehension,
    CreateList,
    CreateMap,
    CreateStruct,
    Expr,
    FieldInit,
    Ident,
    Literal,
    MapEntry,
    Select,
)
from drakit.selectors.types import INT64_MAX, INT64_MIN, UINT64_MAX, Uint

MAX_RECURSION_DEPTH = 250  # cel-go's default parser.MaxRecursionDepth
MAX_CODE_POINTS = 100_000  # cel-go's default parser.ExpressionSizeCodePointLimit
MAX_ERRORS_REPORTED = 100  # cel-go's common.Errors maxErrorsToReport
MAX_SYNTAX_ERRORS = 100  # cel-go's default parser.ErrorReportingLimit
ACCU = "@result"

RESERVED = frozenset(
    [
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ]
)


# ---------------------------------------------------------------------------------------------
# Source and errors


class Source:
    """The expression text with line offsets, for ``<input>:L:C`` locations."""

    def __init__(self, text: str, description: str = "<input>") -> None:
        self.text = text
        self.description = description
        self.line_starts = [0]
        for i, ch in enumerate(text):
            if ch == "\n":
                self.line_starts.append(i + 1)

    def location(self, offset: int) -> tuple[int, int]:
        """(line 1-based, column 0-based) of a code-point offset."""
        line = 1
        lo, hi = 0, len(self.line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        line = lo + 1
        return line, offset - self.line_starts[lo]

    def snippet(self, line: int) -> str:
        start = self.line_starts[line - 1]
        end = self.line_starts[line] - 1 if line < len(self.line_starts) else len(self.text)
        return self.text[start:end]


@dataclass(frozen=True)
class Issue:
    offset: int
    message: str


@dataclass
class Issues:
    """Collected compile errors, rendered the way cel-go's ``Issues.String()`` does."""

    source: Source
    items: list[Issue] = field(default_factory=list)

    def add(self, offset: int, message: str) -> None:
        self.items.append(Issue(offset, message))

    def __bool__(self) -> bool:
        return bool(self.items)

    def render(self) -> str:
        out = []
        seen = set()
        for it in sorted(self.items, key=lambda i: i.offset):
            if (it.offset, it.message) in seen:
                continue
            seen.add((it.offset, it.message))
            out.append(render_error(self.source, it.offset, it.message))
        if len(out) > MAX_ERRORS_REPORTED:  # cel-go's Errors.ToDisplayString
            out[MAX_ERRORS_REPORTED:] = [f"{len(out) - MAX_ERRORS_REPORTED} more errors were truncated"]
        return "\n".join(out)


def render_error(source: Source, offset: int, message: str) -> str:
    if offset < 0:
        return f"ERROR: {source.description}:-1:0: {message}"
    line, col = source.location(offset)
    text = f"ERROR: {source.description}:{line}:{col + 1}: {message}"
    snippet = source.snippet(line).replace("\t", " ")
    if len(snippet.encode("utf-8")) > 16384:  # cel-go leaves out snippets this long
        return text
    # cel-go marks characters that take more than one UTF-8 byte with full-width dots/carets.
    dots = "".join("\uff0e" if ord(ch) > 0x7F else "." for ch in snippet[:col])
    at = snippet[col : col + 1]
    text += "\n | " + snippet + "\n | " + dots + ("\uff3e" if at and ord(at) > 0x7F else "^")
    return text


class ParseError(Exception):
    """A parse that failed: ``offset``/``message`` is the error that stopped it (offset -1: no
    location), ``issues`` every error found, in the order found."""

    def __init__(self, offset: int, message: str, issues: list[Issue] | None = None) -> None:
        super().__init__(message)
        self.offset = offset
        self.message = message
        self.issues = issues if issues is not None else [Issue(offset, message)]


TOO_MANY_SYNTAX_ERRORS = f"More than {MAX_SYNTAX_ERRORS} syntax errors"


class _LimitExceeded(ParseError):
    """ANTLR's parse listener stopped the parse (nesting limit): its visitor never ran."""


# ---------------------------------------------------------------------------------------------
# Lexer

# token kinds
T_INT, T_UINT, T_DOUBLE, T_STRING, T_BYTES, T_IDENT, T_EOF, T_OP = range(8)

_OPS2 = ("==", "!=", "<=", ">=", "&&", "||")
_OPS1 = set("+-*/%!<>?:.,()[]{}")
_SIMPLE_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "?": "?",
    '"': '"',
    "'": "'",
    "`": "`",
}


@dataclass(frozen=True)
class Token:
    kind: int
    text: str
    offset: int
    value: object = None


def _is_ident_start(c: str) -> bool:
    return c == "_" or ("a" <= c <= "z") or ("A" <= c <= "Z")


def _is_ident_char(c: str) -> bool:
    return _is_ident_start(c) or ("0" <= c <= "9")


_DIGITS = frozenset("0123456789")
_HEX = frozenset("0123456789abcdefABCDEF")
_ESC_IDENT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/ ")
_CHAR_ESCAPES = frozenset("abfnrtv\"'\\?`")


class _NoMatch(Exception):
    """Internal: the lexer cannot extend the token at ``at`` (ANTLR's LexerNoViableAlt)."""

    def __init__(self, at: int) -> None:
        self.at = at


def _escape_end(text: str, i: int) -> int:
    """End of the escape sequence whose backslash is at ``i`` (grammar only, not its value)."""
    n = len(text)
    e = text[i + 1] if i + 1 < n else ""
    if e == "":
        raise _NoMatch(n)
    if e in _CHAR_ESCAPES:
        return i + 2
    width = {"x": 2, "X": 2, "u": 4, "U": 8}.get(e)
    if width is not None:
        for j in range(i + 2, i + 2 + width):
            if j >= n or text[j] not in _HEX:
                raise _NoMatch(min(j, n))
        return i + 2 + width
    if e in "0123":
        for j in (i + 2, i + 3):
            if j >= n or not "0" <= text[j] <= "7":
                raise _NoMatch(min(j, n))
        return i + 4
    raise _NoMatch(i + 1)


def _quoted_end(text: str, q: int, raw: bool) -> int:
    """End of the quoted part of a STRING starting at quote ``q`` (CEL.g4's STRING rule).

    A triple-quoted string that never closes falls back to the empty string its first two
    quotes form, as ANTLR's lexer backs up to its last accepting state.
    """
    n = len(text)
    quote = text[q]
    if text.startswith(quote * 3, q):
        j = q + 3
        try:
            while True:
                if j >= n:
                    raise _NoMatch(n)
                if text.startswith(quote * 3, j):
                    return j + 3
                j = _escape_end(text, j) if text[j] == "\\" and not raw else j + 1
        except _NoMatch:
            return q + 2
    j = q + 1
    while True:
        if j >= n:
            raise _NoMatch(n)
        c = text[j]
        if c == quote:
            return j + 1
        if c in "\n\r":
            raise _NoMatch(j)
        j = _escape_end(text, j) if c == "\\" and not raw else j + 1


def _number_end(text: str, i: int) -> tuple[int, int]:
    """(end, kind) of the longest NUM_INT/NUM_UINT/NUM_FLOAT at ``i``."""
    n = len(text)
    if text.startswith("0x", i) and i + 2 < n and text[i + 2] in _HEX:
        j = i + 2
        while j < n and text[j] in _HEX:
            j += 1
        if j < n and text[j] in "uU":
            return j + 1, T_UINT
        return j, T_INT
    j = i
    while j < n and text[j] in _DIGITS:
        j += 1
    kind = T_INT
    if j < n and text[j] == "." and j + 1 < n and text[j + 1] in _DIGITS:
        kind = T_DOUBLE
        j += 1
        while j < n and text[j] in _DIGITS:
            j += 1
    if j < n and text[j] in "eE":
        k = j + 1
        if k < n and text[k] in "+-":
            k += 1
        if k < n and text[k] in _DIGITS:
            kind = T_DOUBLE
            j = k
            while j < n and text[j] in _DIGITS:
                j += 1
    if kind == T_INT and j > i and j < n and text[j] in "uU":
        return j + 1, T_UINT
    return j, kind


def _token_at(text: str, i: int) -> tuple[Token, int]:
    """The token starting at ``i`` and where the next one starts; raises _NoMatch."""
    n = len(text)
    c = text[i]
    # STRING: [rR]? quote ...; BYTES: [bB] STRING.  A prefix that is not followed by a
    # string stays (part of) an identifier.
    j = i
    is_bytes = c in "bB"
    if is_bytes:
        j += 1
    raw = j < n and text[j] in "rR"
    if raw:
        j += 1
    if j < n and text[j] in "\"'" and (j > i or c in "\"'"):
        try:
            end = _quoted_end(text, j, raw)
        except _NoMatch:
            if j == i:
                raise
            return Token(T_IDENT, text[i:j], i), j  # ANTLR backs up to the identifier prefix
        return Token(T_BYTES if is_bytes else T_STRING, text[i:end], i), end
    if c in _DIGITS or (c == "." and i + 1 < n and text[i + 1] in _DIGITS):
        end, kind = _number_end(text, i)
        return Token(kind, text[i:end], i), end
    if _is_ident_start(c):
        j = i + 1
        while j < n and _is_ident_char(text[j]):
            j += 1
        return Token(T_IDENT, text[i:j], i), j
    if c == "`":
        j = i + 1
        while j < n and text[j] in _ESC_IDENT:
            j += 1
        if j == i + 1 or j >= n or text[j] != "`":
            raise _NoMatch(min(j, n))
        return Token(T_IDENT, text[i + 1 : j], i, value="quoted"), j + 1
    two = text[i : i + 2]
    if two in _OPS2:
        return Token(T_OP, two, i), i + 2
    if c in _OPS1:
        return Token(T_OP, c, i), i + 1
    if c in "=&|":  # only the two-character operators start with these
        raise _NoMatch(i + 1 if i + 1 < n else n)
    raise _NoMatch(i)


def tokenize(
    text: str, errors: list[Issue] | None = None, skipped: list[tuple[int, int]] | None = None
) -> list[Token]:
    """The token stream of CEL.g4's lexer.

    An unmatchable character is reported as ANTLR reports it (at the token's start, showing
    the text up to and including the character that failed) and lexing resumes after that
    character, so every lexical error is found.  Without ``errors`` the first one raises.
    """
    toks: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\n\r\f":
            i += 1
            continue
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
            continue
        try:
            tok, i = _token_at(text, i)
        except _NoMatch as e:
            # Go's ANTLR runtime shows the text as it is (newlines included)
            message = f"Syntax error: token recognition error at: '{text[i : e.at + 1]}'"
            if errors is None:
                raise ParseError(i, message) from None
            errors.append(Issue(i, message))
            if skipped is not None:
                skipped.append((i, min(e.at + 1, n)))
            i = e.at + 1 if e.at < n else n
            continue
        toks.append(tok)
    toks.append(Token(T_EOF, "<EOF>", n))
    return toks


_NEWLINES = re.compile("\r\n|\r")


def unescape(literal: str, is_bytes: bool) -> str | bytes:
    """The value of a STRING/BYTES token's text (cel-go ``parser/unescape.go``).

    Raises ValueError with cel-go's message; bytes literals take no ``\\u``/``\\U`` escapes
    and their ``\\x``/octal escapes are byte values.
    """
    value = _NEWLINES.sub("\n", literal[1:] if is_bytes else literal)
    raw = value[:1] in ("r", "R")
    if raw:
        value = value[1:]
    body = value[3:-3] if len(value) >= 6 and value[:3] in ("'''", '"""') else value[1:-1]
    if raw or "\\" not in body:
        return body.encode("utf-8") if is_bytes else body
    out = bytearray()
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        e = body[i + 1]
        if e in _CHAR_ESCAPES:
            out += _SIMPLE_ESCAPES[e].encode()
            i += 2
            continue
        if e in "xXuU":
            width = {"x": 2, "X": 2, "u": 4, "U": 8}[e]
            if is_bytes and e in "uU":
                raise ValueError("unable to unescape string")
            cp = int(body[i + 2 : i + 2 + width], 16)
            i += 2 + width
        else:  # octal
            cp = int(body[i + 1 : i + 4], 8)
            i += 4
        if is_bytes and e not in "uU":
            out.append(cp)
            continue
        if cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
            raise ValueError("invalid unicode code point")
        out += chr(cp).encode("utf-8")
    return bytes(out) if is_bytes else out.decode("utf-8")


# ---------------------------------------------------------------------------------------------
# Parser


MacroExpander = Callable[["Parser", Call], Expr]


@dataclass(frozen=True)
class Macro:
    name: str
    nargs: int  # -1: any number
    receiver: bool
    expand: MacroExpander


# ANTLR's token vocabulary in CEL.g4 order: expected-token sets print in this order.
_VOCAB = (
    *("'=='", "'!='", "'in'", "'<'", "'<='", "'>='", "'>'", "'&&'", "'||'", "'['", "']'", "'{'", "'}'"),
    *("'('", "')'", "'.'", "','", "'-'", "'!'", "'?'", "':'", "'+'", "'*'", "'/'", "'%'", "'true'"),
    *("'false'", "'null'", "NUM_FLOAT", "NUM_INT", "NUM_UINT", "STRING", "BYTES", "IDENTIFIER"),
    "ESC_IDENTIFIER",
)
_EXPR_FIRST = frozenset(
    (
        *("'['", "'{'", "'('", "'.'", "'-'", "'!'", "'true'", "'false'", "'null'"),
        *("NUM_FLOAT", "NUM_INT", "NUM_UINT", "STRING", "BYTES", "IDENTIFIER"),
    )
)
# What may follow a closed primary whatever the context: member suffixes and operators.
_AFTER_PRIMARY = frozenset(
    (
        *("'.'", "'['", "'=='", "'!='", "'in'", "'<'", "'<='", "'>='", "'>'", "'&&'", "'||'", "'+'"),
        *("'-'", "'*'", "'/'", "'%'", "'?'"),
    )
)
_KIND_NAMES = {
    T_INT: "NUM_INT",
    T_UINT: "NUM_UINT",
    T_DOUBLE: "NUM_FLOAT",
    T_STRING: "STRING",
    T_BYTES: "BYTES",
}


def _token_name(t: Token) -> str:
    """The token's vocabulary name (``'('``, ``IDENTIFIER``, ``<EOF>``)."""
    if t.kind == T_OP:
        return f"'{t.text}'"
    if t.kind == T_IDENT:
        if t.value == "quoted":
            return "ESC_IDENTIFIER"
        return f"'{t.text}'" if t.text in ("true", "false", "null", "in") else "IDENTIFIER"
    return _KIND_NAMES.get(t.kind, "<EOF>")


def _token_set(names: frozenset[str] | set[str]) -> str:
    ordered = [n for n in _VOCAB if n in names]
    return ordered[0] if len(ordered) == 1 else "{" + ", ".join(ordered) + "}"


class Parser:
    def __init__(self, text: str, macros: dict[tuple[str, int, bool], Macro] | None = None) -> None:
        self.text = text
        self.macros = STANDARD_MACROS if macros is None else macros
        self.lex_errors: list[Issue] = []
        self.skipped: list[tuple[int, int]] = []  # text the lexer dropped, as (start, end)
        self.toks = tokenize(text, self.lex_errors, self.skipped)
        # Errors cel-go's visitor reports and goes on (literals, macros, reserved names).
        self.errors: list[Issue] = []
        self.pos = 0
        self.next_id = 1
        self.positions: dict[int, int] = {}
        # Nesting as ANTLR's parse listener counts it, per grammar rule: expr, relation, calc.
        self.depth = 0
        self.relation_depth = 0
        self.calc_depth = 0
        # Nesting as cel-go's visitor counts it (ternaries, relations, arithmetic, selects,
        # member calls and indexes), per node id: the deepest chain below and including it.
        self.visit_depth: dict[int, int] = {}
        # Tokens that close each construct being parsed, innermost last (for error reports).
        self.closers: list[frozenset[str]] = []

    # helpers ---------------------------------------------------------------------------------
    def new_id(self, offset: int) -> int:
        i = self.next_id
        self.next_id += 1
        self.positions[i] = offset
        return i

    @property
    def tok(self) -> Token:
        return self.toks[self.pos]

    def peek_op(self, *ops: str) -> bool:
        t = self.toks[self.pos]
        return t.kind == T_OP and t.text in ops

    def advance(self) -> Token:
        t = self.toks[self.pos]
        self.pos += 1
        return t

    def fail(self, expecting: str) -> ParseError:
        t = self.tok
        return ParseError(
            t.offset, f"Syntax error: mismatched input '{self._display(t)}' expecting {expecting}"
        )

    @staticmethod
    def _display(t: Token) -> str:
        if t.kind == T_EOF:
            return "<EOF>"
        return f"`{t.text}`" if t.value == "quoted" else t.text

    def sync_fail(self, expected: frozenset[str] | set[str]) -> ParseError:
        """ANTLR's report at a subrule's decision point: the offending token is extraneous when
        the one after it is expected (single-token deletion), else mismatched."""
        t = self.tok
        nxt = self.toks[min(self.pos + 1, len(self.toks) - 1)]
        form = "extraneous" if t.kind != T_EOF and _token_name(nxt) in expected else "mismatched"
        return ParseError(
            t.offset, f"Syntax error: {form} input '{self._display(t)}' expecting {_token_set(expected)}"
        )

    def expect(self, op: str, follow: frozenset[str] | None = None) -> Token:
        """Match one token as ANTLR's recoverInline reports a miss: extraneous (the next token
        is the one wanted), missing (what follows fits after it), else mismatched."""
        if self.peek_op(op):
            return self.advance()
        t = self.tok
        nxt = self.toks[min(self.pos + 1, len(self.toks) - 1)]
        if t.kind != T_EOF and nxt.kind == T_OP and nxt.text == op:
            raise ParseError(
                t.offset, f"Syntax error: extraneous input '{self._display(t)}' expecting '{op}'"
            )
        after = follow if follow is not None else self._after_close()
        name = "<EOF>" if t.kind == T_EOF else _token_name(t)
        if name in after:
            raise ParseError(t.offset, f"Syntax error: missing '{op}' at '{self._display(t)}'")
        raise self.fail(f"'{op}'")

    def _after_close(self) -> frozenset[str]:
        """Tokens that may follow a closing bracket here: operators, suffixes, and whatever
        closes the enclosing construct (end of input at the top)."""
        return _AFTER_PRIMARY | (self.closers[-1] if self.closers else frozenset(("<EOF>",)))

    @contextmanager
    def inside(self, closers: frozenset[str]) -> Iterator[None]:
        self.closers.append(closers)
        try:
            yield
        finally:
            self.closers.pop()

    def _nested(self, e: Expr, *children: Expr, counted: bool = True) -> Expr:
        """Record ``e``'s visitor depth from its children's (+1 when cel-go counts ``e``)."""
        vd = self.visit_depth
        below = max((vd.get(c.id, 0) for c in children), default=0)
        vd[e.id] = below + 1 if counted else below
        return e

    def _check_syntax_error_count(self) -> None:
        """ANTLR hands every lexer error to cel-go's listener, which gives up after 100."""
        if len(self.lex_errors) > MAX_SYNTAX_ERRORS:
            last = self.lex_errors[MAX_SYNTAX_ERRORS]
            issues = [*self.lex_errors[:MAX_SYNTAX_ERRORS], Issue(last.offset, TOO_MANY_SYNTAX_ERRORS)]
            raise _LimitExceeded(last.offset, TOO_MANY_SYNTAX_ERRORS, issues)

    def _enter(self, depth: int) -> int:
        if depth > MAX_RECURSION_DEPTH:
            raise _LimitExceeded(-1, f"expression recursion limit exceeded: {MAX_RECURSION_DEPTH}")
        return depth

    # grammar ---------------------------------------------------------------------------------
    def parse(self) -> Expr:
        """The whole input; raises ParseError carrying every error found."""
        try:
            if len(self.text) > MAX_CODE_POINTS:
                raise _LimitExceeded(
                    -1,
                    f"expression code point size exceeds limit: size: {len(self.text)}, limit {MAX_CODE_POINTS}",
                )
            self._check_syntax_error_count()
            e = self.expr()
            if self.tok.kind != T_EOF:
                # start: expr EOF; ANTLR deletes the token when end of input follows it
                form = "extraneous" if self.toks[self.pos + 1].kind == T_EOF else "mismatched"
                raise ParseError(
                    self.tok.offset, f"Syntax error: {form} input '{self._display(self.tok)}' expecting <EOF>"
                )
        except _LimitExceeded as stop:
            if stop.issues[-1].message == TOO_MANY_SYNTAX_ERRORS:
                raise ParseError(stop.offset, stop.message, stop.issues) from None
            raise ParseError(
                stop.offset, stop.message, [*self.lex_errors, Issue(stop.offset, stop.message)]
            ) from None
        except ParseError as stop:
            issues = self._recovered_issues()
            if not issues:  # no ANTLR runtime (or it found nothing): the first parser error only
                issues = [*self.lex_errors, *self.errors, *stop.issues]
            first = min(issues, key=lambda i: i.offset)
            raise ParseError(first.offset, first.message, issues) from None
        issues = [*self.lex_errors, *self.errors]
        if self.visit_depth.get(e.id, 0) > MAX_RECURSION_DEPTH:
            issues.append(Issue(-1, "max recursion depth exceeded"))
        if issues:
            raise ParseError(issues[0].offset, issues[0].message, issues)
        return e

    def _recovered_issues(self) -> list[Issue] | None:
        """Every error cel-go reports once its ANTLR parser has met one: the lexer's, those
        ANTLR's recovery reports, and those cel-go's visitor then finds in the repaired tree
        (see ``recovery.py``)."""
        try:
            from drakit.selectors.recovery import TreeVisitor, recover
        except ImportError:
            return None
        tokens = [
            (_token_name(t), f"`{t.text}`" if t.value == "quoted" else t.text, t.offset) for t in self.toks
        ]
        found = recover(self.text, tokens, self.skipped, MAX_SYNTAX_ERRORS - len(self.lex_errors))
        issues = [*self.lex_errors, *(Issue(e.offset, e.message) for e in found.errors)]
        if found.tree is not None:
            visitor = Parser(self.text, self.macros)
            visitor.lex_errors = []
            TreeVisitor(visitor).walk(found.tree)
            issues.extend(visitor.errors)
        return issues

    def expr(self) -> Expr:
        self.depth = self._enter(self.depth + 1)
        try:
            cond = self.binary(0)
            if self.peek_op("?"):
                op = self.advance()
                with self.inside(frozenset(("':'",))):
                    e1 = self.binary(0)
                self.expect(":", follow=_EXPR_FIRST)
                e2 = self.expr()
                call = Call(self.new_id(op.offset), op.offset, "_?_:_", [cond, e1, e2])
                return self._nested(call, cond, e1, e2)
            return cond
        finally:
            self.depth -= 1

    _LEVELS: tuple[dict[str, str], ...] = (
        {"||": "_||_"},
        {"&&": "_&&_"},
        {"==": "_==_", "!=": "_!=_", "<": "_<_", "<=": "_<=_", ">": "_>_", ">=": "_>=_", "in": "@in"},
        {"+": "_+_", "-": "_-_"},
        {"*": "_*_", "/": "_/_", "%": "_%_"},
    )

    def binary(self, level: int) -> Expr:
        """One precedence level.  For the listener's count, level 2 is one invocation of
        ANTLR's ``relation`` rule and level 3 one of ``calc``; the right operand of each
        relational/arithmetic operator is one more invocation while it is parsed."""
        if level == len(self._LEVELS):
            return self.unary()
        if level == 2:
            self.relation_depth = self._enter(self.relation_depth + 1)
        elif level == 3:
            self.calc_depth = self._enter(self.calc_depth + 1)
        try:
            return self._binary(level)
        finally:
            if level == 2:
                self.relation_depth -= 1
            elif level == 3:
                self.calc_depth -= 1

    def _binary(self, level: int) -> Expr:
        ops = self._LEVELS[level]
        lhs = self.binary(level + 1)
        terms: list[tuple[Token, Expr]] = []
        while True:
            t = self.tok
            if (t.kind == T_OP and t.text in ops) or (t.kind == T_IDENT and t.text == "in" and "in" in ops):
                self.advance()
                terms.append((t, self._operand(level)))
            else:
                break
        if not terms:
            return lhs
        if level <= 1:
            # cel-go balances chains of && / || into a tree of minimal depth.
            out = self._balance(ops[terms[0][0].text], [lhs] + [e for _, e in terms], [t for t, _ in terms])
            return self._nested(out, lhs, *(e for _, e in terms), counted=False)
        for t, rhs in terms:
            lhs = self._nested(Call(self.new_id(t.offset), t.offset, ops[t.text], [lhs, rhs]), lhs, rhs)
        return lhs

    def _operand(self, level: int) -> Expr:
        if level < 2:
            return self.binary(level + 1)
        if level == 2:
            self.relation_depth = self._enter(self.relation_depth + 1)
        else:
            self.calc_depth = self._enter(self.calc_depth + 1)
        try:
            return self.binary(level + 1)
        finally:
            if level == 2:
                self.relation_depth -= 1
            else:
                self.calc_depth -= 1

    def _balance(self, fn: str, terms: list[Expr], ops: list[Token]) -> Expr:
        def build(lo: int, hi: int) -> Expr:
            if lo == hi:
                return terms[lo]
            mid = (lo + hi + 1) // 2
            left = build(lo, mid - 1)
            right = build(mid, hi)
            op = ops[mid - 1]
            return Call(self.new_id(op.offset), op.offset, fn, [left, right])

        return build(0, len(terms) - 1)

    def unary(self) -> Expr:
        t = self.tok
        if t.kind == T_OP and t.text in ("!", "-"):
            op = t.text
            ops: list[Token] = []
            while self.peek_op(op):
                ops.append(self.advance())
            if _token_name(self.tok) not in _EXPR_FIRST:
                self._fail_after_unary(ops[-1])
            # A lone sign directly before a number belongs to the literal (ANTLR picks the
            # signed-literal alternative); with two or more, every '-' is an operator and an
            # even count cancels out.
            if op == "-" and len(ops) == 1 and self.tok.kind in (T_INT, T_DOUBLE):
                lit_minus = ops.pop()
                num = self.advance()
                operand = self.member(self._number(num, negative=True, offset=lit_minus.offset))
            else:
                operand = self.member(self.primary())
            if len(ops) % 2 == 0:
                return operand
            fn = "!_" if op == "!" else "-_"
            call = Call(self.new_id(ops[0].offset), ops[0].offset, fn, [operand])
            return self._nested(call, operand, counted=False)
        return self.member(self.primary())

    def _fail_after_unary(self, last: Token) -> None:
        """No operand after '!'s or '-'s: ANTLR reports the '!' loop's unwanted token, and for
        '-' (a sign or an operator) first that it could not decide."""
        t = self.tok
        expecting = _token_set(_EXPR_FIRST)
        if last.text == "!":
            raise ParseError(
                t.offset, f"Syntax error: extraneous input '{self._display(t)}' expecting {expecting}"
            )
        stop = self._no_viable(last)
        stop.issues.append(self.fail(expecting).issues[0])
        raise stop

    def _number(self, tok: Token, *, negative: bool, offset: int) -> Expr:
        """A numeric literal; out of range is an error cel-go reports and parses on."""
        text = tok.text
        v: int | float
        if tok.kind == T_DOUBLE:
            v = float(text)
            if math.isinf(v):
                self.errors.append(Issue(offset, "invalid double literal"))
        else:
            digits = text.rstrip("uU")
            v = int(digits[2:], 16) if digits.startswith("0x") else int(digits)
            if tok.kind == T_UINT:
                if v > UINT64_MAX:
                    self.errors.append(Issue(offset, "invalid uint literal"))
                v = Uint(v)
        if negative:
            v = -v
        if tok.kind == T_INT and not INT64_MIN <= v <= INT64_MAX:
            self.errors.append(Issue(offset, "invalid int literal"))
        return Literal(self.new_id(offset), offset, v)

    def member(self, e: Expr) -> Expr:
        while True:
            t = self.tok
            if t.kind != T_OP:
                return e
            if t.text == ".":
                self.advance()
                if self.peek_op("?"):  # '.' '?' name: optional field selection
                    self.advance()
                    if self.tok.kind != T_IDENT or self.tok.text in ("true", "false", "null", "in"):
                        stop = self.sync_fail(frozenset(("IDENTIFIER", "ESC_IDENTIFIER")))
                        # cel-go's visitor then meets the missing name
                        stop.issues.append(Issue(stop.offset, "unsupported ident kind"))
                        raise stop
                    name = self._field_name()
                    field = Literal(self.new_id(name.offset), name.offset, name.text)
                    e = self._nested(Call(self.new_id(t.offset), t.offset, "_?._", [e, field]), e)
                    continue
                if self.tok.kind != T_IDENT or self.tok.text == "in":
                    raise self._no_viable(t)
                if self.tok.value != "quoted" and self.tok.text in ("true", "false", "null"):
                    # cel-go rewrites ANTLR's "no viable alternative" for these
                    raise self.fail("IDENTIFIER")
                name = self._field_name()
                if self.peek_op("("):
                    # cel-go places a call (and a macro's expansion) at its '(' token.
                    open_offset = self.tok.offset
                    self.advance()
                    args = self._expr_list(")")
                    e = self._call(name.text, name.offset, args, target=e, call_offset=open_offset)
                elif self.peek_op("{") and self._is_qualified(e):
                    e = self._struct(self._qualified_name(e) + "." + name.text, name.offset)
                else:
                    e = self._nested(Select(self.new_id(t.offset), t.offset, e, name.text), e)
            elif t.text == "[":
                self.advance()
                optional = self.peek_op("?")
                if optional:
                    self.advance()
                elif _token_name(self.tok) not in _EXPR_FIRST:
                    raise self.sync_fail(_EXPR_FIRST | {"'?'"})
                with self.inside(frozenset(("']'",))):
                    idx = self.expr()
                self.expect("]")
                fn = "_[?_]" if optional else "_[_]"
                e = self._nested(Call(self.new_id(t.offset), t.offset, fn, [e, idx]), e, idx)
            else:
                return e

    def _field_name(self) -> Token:
        t = self.tok
        if t.kind != T_IDENT:
            raise self.fail("IDENTIFIER")
        return self.advance()

    @staticmethod
    def _is_qualified(e: Expr) -> bool:
        while isinstance(e, Select):
            e = e.operand
        return isinstance(e, Ident)

    @staticmethod
    def _qualified_name(e: Expr) -> str:
        parts = []
        while isinstance(e, Select):
            parts.append(e.field)
            e = e.operand
        assert isinstance(e, Ident)
        parts.append(e.name)
        return ".".join(reversed(parts))

    def _expr_list(self, close: str) -> list[Expr]:
        args: list[Expr] = []
        if self.peek_op(close):
            self.advance()
            return args
        if _token_name(self.tok) not in _EXPR_FIRST:
            raise self.sync_fail(_EXPR_FIRST | {f"'{close}'"})
        while True:
            with self.inside(frozenset((f"'{close}'", "','"))):
                args.append(self.expr())
            if self.peek_op(","):
                self.advance()
                continue
            self.expect(close)
            return args

    def _no_viable(self, start: Token) -> ParseError:
        """ANTLR could not choose an alternative: it shows the input from ``start`` on."""
        nxt = self.tok
        end = (
            len(self.text)
            if nxt.kind == T_EOF
            else nxt.offset + len(nxt.text) + (2 if nxt.value == "quoted" else 0)
        )
        seen, at = [], start.offset
        for lo, hi in self.skipped:  # characters the lexer dropped are no token's text
            if hi <= at or lo >= end:
                continue
            seen.append(self.text[at:lo])
            at = hi
        seen.append(self.text[at:end])
        return ParseError(nxt.offset, f"Syntax error: no viable alternative at input '{''.join(seen)}'")

    def _separator(self, close: str) -> bool:
        """After an element of a list, map or message: True when the closing token ends it
        (a trailing comma is allowed); raises the report ANTLR makes otherwise."""
        if self.peek_op(","):
            self.advance()
            if _token_name(self.tok) not in _EXPR_FIRST | {"'?'"}:
                self.expect(close)  # ANTLR took the comma as the trailing one
                return True
            return False
        if self.peek_op(close):
            self.advance()
            return True
        raise self.sync_fail(frozenset((f"'{close}'", "','")))

    def primary(self) -> Expr:
        t = self.tok
        k = t.kind
        if k in (T_INT, T_UINT, T_DOUBLE):
            self.advance()
            return self._number(t, negative=False, offset=t.offset)
        if k == T_OP and t.text == "-" and self.toks[self.pos + 1].kind in (T_INT, T_DOUBLE):
            self.advance()  # literal: sign=MINUS? NUM_INT|NUM_FLOAT (after '!', for one)
            return self._number(self.advance(), negative=True, offset=t.offset)
        if k == T_OP and t.text == "-":  # a sign without a number (after '!')
            self.advance()
            raise self._no_viable(t)
        if k in (T_STRING, T_BYTES):
            self.advance()
            try:
                value: str | bytes = unescape(t.text, k == T_BYTES)
            except ValueError as err:
                self.errors.append(Issue(t.offset, str(err)))
                value = t.text
            return Literal(self.new_id(t.offset), t.offset, value)
        if k == T_IDENT:
            if t.value != "quoted":
                if t.text == "true" or t.text == "false":
                    self.advance()
                    return Literal(self.new_id(t.offset), t.offset, t.text == "true")
                if t.text == "null":
                    self.advance()
                    return Literal(self.new_id(t.offset), t.offset, None)
                if t.text == "in":
                    raise self.sync_fail(_EXPR_FIRST)
                if t.text in RESERVED:
                    self.errors.append(Issue(t.offset, f"reserved identifier: {t.text}"))
            else:
                raise self.sync_fail(_EXPR_FIRST)
            self.advance()
            if self.peek_op("("):
                open_offset = self.tok.offset
                self.advance()
                args = self._expr_list(")")
                return self._call(t.text, t.offset, args, target=None, call_offset=open_offset)
            if self.peek_op("{"):
                return self._struct(t.text, t.offset)
            return Ident(self.new_id(t.offset), t.offset, t.text)
        if k == T_OP:
            if t.text == ".":
                # leading-dot (root-scoped) identifier
                self.advance()
                if _token_name(self.tok) != "IDENTIFIER":
                    raise self._no_viable(t)  # among the leading-dot alternatives
                name = self._field_name()
                if self.peek_op("("):
                    open_offset = self.tok.offset
                    self.advance()
                    args = self._expr_list(")")
                    return self._call(name.text, name.offset, args, target=None, call_offset=open_offset)
                if self.peek_op("{"):
                    return self._struct("." + name.text, name.offset)
                return Ident(self.new_id(name.offset), name.offset, "." + name.text)
            if t.text == "(":
                self.advance()
                with self.inside(frozenset(("')'",))):
                    e = self.expr()
                self.expect(")")
                return e
            if t.text == "[":
                self.advance()
                return self._list(t.offset)
            if t.text == "{":
                self.advance()
                return self._map(t.offset)
        raise self.sync_fail(_EXPR_FIRST)

    def _list(self, offset: int) -> Expr:
        elems: list[Expr] = []
        optional: set[int] = set()
        lid = self.new_id(offset)
        if _token_name(self.tok) not in _EXPR_FIRST | {"']'", "','", "'?'"}:
            raise self.sync_fail(_EXPR_FIRST | {"']'", "','", "'?'"})
        if self.peek_op(","):  # '[' ','? ']': an empty list may have its comma
            self.advance()
            self.expect("]")
            return CreateList(lid, offset, [], frozenset())
        done = self.peek_op("]")
        if done:
            self.advance()
        while not done:
            if self.peek_op("?"):
                self.advance()
                optional.add(len(elems))
            with self.inside(frozenset(("']'", "','"))):
                elems.append(self.expr())
            done = self._separator("]")
        return self._nested(CreateList(lid, offset, elems, frozenset(optional)), *elems, counted=False)

    def _map(self, offset: int) -> Expr:
        mid = self.new_id(offset)
        entries: list[MapEntry] = []
        if _token_name(self.tok) not in _EXPR_FIRST | {"'}'", "','", "'?'"}:
            raise self.sync_fail(_EXPR_FIRST | {"'}'", "','", "'?'"})
        if self.peek_op(","):
            self.advance()
            self.expect("}")
            return CreateMap(mid, offset, [])
        done = self.peek_op("}")
        if done:
            self.advance()
        while not done:
            opt = False
            if self.peek_op("?"):
                self.advance()
                opt = True
            with self.inside(frozenset(("':'",))):
                key = self.expr()
            colon = self.expect(":", follow=_EXPR_FIRST)
            with self.inside(frozenset(("'}'", "','"))):
                value = self.expr()
            entries.append(MapEntry(self.new_id(colon.offset), colon.offset, key, value, opt))
            done = self._separator("}")
        parts = [x for en in entries for x in (en.key, en.value)]
        return self._nested(CreateMap(mid, offset, entries), *parts, counted=False)

    def _struct(self, name: str, offset: int) -> Expr:
        brace = self.expect("{")
        sid = self.new_id(brace.offset)
        fields: list[FieldInit] = []
        first = frozenset(("'}'", "','", "'?'", "IDENTIFIER", "ESC_IDENTIFIER"))
        if _token_name(self.tok) not in first:
            raise self.sync_fail(first)
        if self.peek_op(","):
            self.advance()
            self.expect("}")
            return CreateStruct(sid, brace.offset, name, [])
        done = self.peek_op("}")
        if done:
            self.advance()
        while not done:
            opt = False
            if self.peek_op("?"):
                self.advance()
                opt = True
            fname = self._field_name()
            colon = self.expect(":", follow=_EXPR_FIRST)
            with self.inside(frozenset(("'}'", "','"))):
                value = self.expr()
            fields.append(FieldInit(self.new_id(colon.offset), colon.offset, fname.text, value, opt))
            done = self._separator("}")
        values = [f.value for f in fields]
        return self._nested(CreateStruct(sid, brace.offset, name, fields), *values, counted=False)

    def _call(
        self, name: str, offset: int, args: list[Expr], *, target: Expr | None, call_offset: int
    ) -> Expr:
        call = Call(self.new_id(call_offset), call_offset, name, args, target)
        parts = [*args] if target is None else [target, *args]
        macro = self.macros.get((name, len(args), target is not None)) or self.macros.get(
            (name, -1, target is not None)
        )
        out: Expr = call
        if macro is not None:
            try:
                out = macro.expand(self, call) or call
            except ParseError as err:  # cel-go reports a malformed macro call and parses on
                self.errors.append(Issue(err.offset, err.message))
        # A member call counts towards cel-go's visitor depth, a global one does not.
        return self._nested(out, *parts, counted=target is not None)

    # what the visitor of ANTLR's repaired tree needs (recovery.py) ------------------------------
    def report(self, offset: int, message: str) -> None:
        self.errors.append(Issue(offset, message))

    @staticmethod
    def reserved(name: str) -> bool:
        return name in RESERVED

    @classmethod
    def binary_function(cls, op: str) -> str | None:
        return next((ops[op] for ops in cls._LEVELS if op in ops), None)

    def number_literal(self, kind: str, text: str, negative: bool, offset: int) -> Expr:
        t = {"int": T_INT, "uint": T_UINT, "double": T_DOUBLE}[kind]
        try:
            return self._number(Token(t, text, offset), negative=negative, offset=offset)
        except ValueError:  # a token ANTLR conjured up ("<missing NUM_INT>") does not parse
            self.report(offset, f"invalid {kind} literal")
            return self.lit(None, offset)

    def text_literal(self, text: str, is_bytes: bool, offset: int) -> Expr:
        try:
            value: str | bytes = unescape(text, is_bytes)
        except ValueError as err:
            self.report(offset, str(err))
            value = text
        return self.lit(value, offset)

    # node builders for macros ------------------------------------------------------------------
    def ident(self, name: str, at: int) -> Ident:
        return Ident(self.new_id(at), at, name)

    def lit(self, value: object, at: int) -> Literal:
        return Literal(self.new_id(at), at, value)

    def call(self, fn: str, at: int, *args: Expr, target: Expr | None = None) -> Call:
        return Call(self.new_id(at), at, fn, list(args), target)


# ---------------------------------------------------------------------------------------------
# Macros (cel-go parser/macro.go, ext/bindings.go, ext/comprehensions.go, cel/optional)


# cel-go's MakeMap/MakeFilter say this; its quantifiers and two-variable macros say
# "argument must be a simple name".
_NOT_AN_IDENTIFIER = "argument is not an identifier"


def _simple_name(e: Expr, what: str = "argument must be a simple name") -> str:
    if not isinstance(e, Ident) or e.name.startswith("."):
        raise ParseError(e.offset, what)
    return e.name


def _has(p: Parser, c: Call) -> Expr:
    arg = c.args[0]
    if not isinstance(arg, Select) or arg.test_only:
        raise ParseError(arg.offset, "invalid argument to has() macro")
    return Select(p.new_id(c.offset), c.offset, arg.operand, arg.field, test_only=True)


def _comp(
    p: Parser, c: Call, v: str, init: Expr, cond: Expr, step: Expr, result: Expr, v2: str = ""
) -> Comprehension:
    assert c.target is not None
    return Comprehension(p.new_id(c.offset), c.offset, v, c.target, ACCU, init, cond, step, result, v2)


def _check_vars(c: Call, v: str, v2: str = "") -> None:
    for name, arg in ((v, c.args[0]), (v2, c.args[1] if v2 else None)):
        if name and name == ACCU:
            assert arg is not None
            raise ParseError(arg.offset, "iteration variable overwrites accumulator variable")
    if v2 and v == v2:
        raise ParseError(c.args[1].offset, f"duplicate variable name: {v}")


def _quantifier_vars(c: Call, n: int) -> tuple[str, str, Expr]:
    """The iteration variable(s) of ``all``/``exists``/``exists_one`` (n = 1 or 2) and the body."""
    v = _simple_name(c.args[0])
    v2 = _simple_name(c.args[1]) if n == 2 else ""
    _check_vars(c, v, v2)
    return v, v2, c.args[n]


def _all(p: Parser, c: Call, n: int = 1) -> Expr:
    at = c.offset
    v, v2, body = _quantifier_vars(c, n)
    return _comp(
        p,
        c,
        v,
        p.lit(True, at),
        p.call("@not_strictly_false", at, p.ident(ACCU, at)),
        p.call("_&&_", at, p.ident(ACCU, at), body),
        p.ident(ACCU, at),
        v2,
    )


def _exists(p: Parser, c: Call, n: int = 1) -> Expr:
    at = c.offset
    v, v2, body = _quantifier_vars(c, n)
    return _comp(
        p,
        c,
        v,
        p.lit(False, at),
        p.call("@not_strictly_false", at, p.call("!_", at, p.ident(ACCU, at))),
        p.call("_||_", at, p.ident(ACCU, at), body),
        p.ident(ACCU, at),
        v2,
    )


def _exists_one(p: Parser, c: Call, n: int = 1) -> Expr:
    at = c.offset
    v, v2, body = _quantifier_vars(c, n)
    return _comp(
        p,
        c,
        v,
        p.lit(0, at),
        p.lit(True, at),
        p.call("_?_:_", at, body, p.call("_+_", at, p.ident(ACCU, at), p.lit(1, at)), p.ident(ACCU, at)),
        p.call("_==_", at, p.ident(ACCU, at), p.lit(1, at)),
        v2,
    )


def _map(p: Parser, c: Call) -> Expr:
    at = c.offset
    v = _simple_name(c.args[0], _NOT_AN_IDENTIFIER)
    _check_vars(c, v)
    fn = c.args[-1]
    step: Expr = p.call("_+_", at, p.ident(ACCU, at), CreateList(p.new_id(at), at, [fn]))
    if len(c.args) == 3:
        step = p.call("_?_:_", at, c.args[1], step, p.ident(ACCU, at))
    return _comp(p, c, v, CreateList(p.new_id(at), at, []), p.lit(True, at), step, p.ident(ACCU, at))


def _filter(p: Parser, c: Call) -> Expr:
    at = c.offset
    v = _simple_name(c.args[0], _NOT_AN_IDENTIFIER)
    _check_vars(c, v)
    step = p.call(
        "_?_:_",
        at,
        c.args[1],
        p.call("_+_", at, p.ident(ACCU, at), CreateList(p.new_id(at), at, [p.ident(v, at)])),
        p.ident(ACCU, at),
    )
    return _comp(p, c, v, CreateList(p.new_id(at), at, []), p.lit(True, at), step, p.ident(ACCU, at))


def _bind(p: Parser, c: Call) -> Expr | None:
    if not (isinstance(c.target, Ident) and c.target.name == "cel"):
        return None
    at = c.offset
    name = _simple_name(c.args[0], "cel.bind() variable names must be simple identifiers")
    return Comprehension(
        p.new_id(at),
        at,
        "#unused",
        CreateList(p.new_id(at), at, []),
        name,
        c.args[1],
        p.lit(False, at),
        p.ident(name, at),
        c.args[2],
    )


def _transform_list(p: Parser, c: Call) -> Expr:
    at = c.offset
    k, v = _simple_name(c.args[0]), _simple_name(c.args[1])
    _check_vars(c, k, v)
    step: Expr = p.call("_+_", at, p.ident(ACCU, at), CreateList(p.new_id(at), at, [c.args[-1]]))
    if len(c.args) == 4:
        step = p.call("_?_:_", at, c.args[2], step, p.ident(ACCU, at))
    return _comp(p, c, k, CreateList(p.new_id(at), at, []), p.lit(True, at), step, p.ident(ACCU, at), v)


def _transform_map(p: Parser, c: Call) -> Expr:
    at = c.offset
    k, v = _simple_name(c.args[0]), _simple_name(c.args[1])
    _check_vars(c, k, v)
    step: Expr = p.call("cel.@mapInsert", at, p.ident(ACCU, at), p.ident(k, at), c.args[-1])
    if len(c.args) == 4:
        step = p.call("_?_:_", at, c.args[2], step, p.ident(ACCU, at))
    return _comp(p, c, k, CreateMap(p.new_id(at), at, []), p.lit(True, at), step, p.ident(ACCU, at), v)


def _transform_map_entry(p: Parser, c: Call) -> Expr:
    at = c.offset
    k, v = _simple_name(c.args[0]), _simple_name(c.args[1])
    _check_vars(c, k, v)
    step: Expr = p.call("cel.@mapInsert", at, p.ident(ACCU, at), c.args[-1])
    if len(c.args) == 4:
        step = p.call("_?_:_", at, c.args[2], step, p.ident(ACCU, at))
    return _comp(p, c, k, CreateMap(p.new_id(at), at, []), p.lit(True, at), step, p.ident(ACCU, at), v)


def _opt_bind(p: Parser, c: Call, macro: str) -> Expr:
    """``opt.optMap(v, e)`` / ``optFlatMap``: bind ``v`` to the optional's value, evaluate ``e``."""
    at = c.offset
    assert c.target is not None
    v = _simple_name(c.args[0], f"{macro}() variable name must be a simple identifier")
    return Comprehension(
        p.new_id(at),
        at,
        "#unused",
        CreateList(p.new_id(at), at, []),
        v,
        p.call("value", at, target=c.target),
        p.lit(False, at),
        p.ident(v, at),
        c.args[1],
    )


def _opt_map(p: Parser, c: Call) -> Expr:
    at = c.offset
    bind = _opt_bind(p, c, "optMap")
    assert c.target is not None
    return p.call(
        "_?_:_",
        at,
        p.call("hasValue", at, target=c.target),
        p.call("optional.of", at, bind),
        p.call("optional.none", at),
    )


def _opt_flat_map(p: Parser, c: Call) -> Expr:
    at = c.offset
    bind = _opt_bind(p, c, "optFlatMap")
    assert c.target is not None
    return p.call("_?_:_", at, p.call("hasValue", at, target=c.target), bind, p.call("optional.none", at))


def _sort_by(p: Parser, c: Call) -> Expr:
    # ext.Lists: list.sortBy(x, key) -> cel.bind(in, list, in.@sortByAssociatedKeys(in.map(x, key)))
    at = c.offset
    assert c.target is not None
    target = c.target
    if not isinstance(target, CreateList | Select | Ident | Comprehension | Call) or (
        isinstance(target, Select) and target.test_only
    ):
        raise ParseError(
            target.offset,
            "sortBy can only be applied to a list, identifier, comprehension, call or select expression",
        )
    v = _simple_name(c.args[0], _NOT_AN_IDENTIFIER)
    bound = "@__sortBy_input__"
    keys = Comprehension(
        p.new_id(at),
        at,
        v,
        p.ident(bound, at),
        ACCU,
        CreateList(p.new_id(at), at, []),
        p.lit(True, at),
        p.call("_+_", at, p.ident(ACCU, at), CreateList(p.new_id(at), at, [c.args[1]])),
        p.ident(ACCU, at),
    )
    return Comprehension(
        p.new_id(at),
        at,
        "#unused",
        CreateList(p.new_id(at), at, []),
        bound,
        target,
        p.lit(False, at),
        p.ident(bound, at),
        p.call("@sortByAssociatedKeys", at, keys, target=p.ident(bound, at)),
    )


def _macros() -> dict[tuple[str, int, bool], Macro]:
    table = [
        Macro("has", 1, False, _has),
        Macro("all", 2, True, _all),
        Macro("exists", 2, True, _exists),
        Macro("exists_one", 2, True, _exists_one),
        Macro("map", 2, True, _map),
        Macro("map", 3, True, _map),
        Macro("filter", 2, True, _filter),
        Macro("bind", 3, True, _bind),  # type: ignore[arg-type]
        Macro("all", 3, True, partial(_all, n=2)),
        Macro("exists", 3, True, partial(_exists, n=2)),
        Macro("existsOne", 3, True, partial(_exists_one, n=2)),
        Macro("exists_one", 3, True, partial(_exists_one, n=2)),
        Macro("transformList", 3, True, _transform_list),
        Macro("transformList", 4, True, _transform_list),
        Macro("transformMap", 3, True, _transform_map),
        Macro("transformMap", 4, True, _transform_map),
        Macro("transformMapEntry", 3, True, _transform_map_entry),
        Macro("transformMapEntry", 4, True, _transform_map_entry),
        Macro("optMap", 2, True, _opt_map),
        Macro("optFlatMap", 2, True, _opt_flat_map),
        Macro("sortBy", 2, True, _sort_by),
    ]
    return {(m.name, m.nargs, m.receiver): m for m in table}


STANDARD_MACROS = _macros()


@dataclass(frozen=True)
class ParsedExpr:
    expr: Expr
    source: Source
    positions: dict[int, int]
    next_id: int


RECURSION_LIMIT = 30_000


@contextmanager
def deep_recursion() -> Iterator[None]:
    """Raise Python's recursion limit while walking deeply nested input.

    Nesting is bounded (250 ``expr`` levels, 10 KiB of text), each level costs a handful of
    Python frames, and Python 3.11 does not use the C stack for Python-to-Python calls, so a
    raised limit is safe; it is restored afterwards.
    """
    old = sys.getrecursionlimit()
    if old < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
    try:
        yield
    finally:
        if old < RECURSION_LIMIT:
            sys.setrecursionlimit(old)


def parse(text: str) -> ParsedExpr:
    """Parse ``text``; raises :class:`ParseError` (the first error by position, and every
    error cel-go would report in ``issues``)."""
    with deep_recursion():
        p = Parser(text)
        e = p.parse()
    return ParsedExpr(e, Source(text), p.positions, p.next_id)
