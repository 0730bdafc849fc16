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
"""

from __future__ import annotations

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

MAX_RECURSION_DEPTH = 250
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
    def __init__(self, offset: int, message: str) -> None:
        super().__init__(message)
        self.offset = offset
        self.message = message


# ---------------------------------------------------------------------------------------------
# Lexer

# token kinds
T_INT, T_UINT, T_DOUBLE, T_STRING, T_BYTES, T_IDENT, T_EOF, T_OP = range(8)

_OPS3 = ("...",)
_OPS2 = ("==", "!=", "<=", ">=", "&&", "||", ".?", "[?")
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


def tokenize(text: str) -> list[Token]:
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
        start = i
        # string / bytes literals with optional r/b prefixes
        prefix_end = i
        while prefix_end < n and prefix_end - i < 2 and text[prefix_end] in "rRbB":
            prefix_end += 1
        if prefix_end < n and text[prefix_end] in "\"'" and prefix_end > i:
            prefix = text[i:prefix_end].lower()
            if prefix in ("r", "b", "rb", "br"):
                tok, i = _lex_string(text, prefix_end, start, raw="r" in prefix, is_bytes="b" in prefix)
                toks.append(tok)
                continue
        if c in "\"'":
            tok, i = _lex_string(text, i, start, raw=False, is_bytes=False)
            toks.append(tok)
            continue
        if (c.isdigit() and c.isascii()) or (
            c == "." and i + 1 < n and text[i + 1].isascii() and text[i + 1].isdigit()
        ):
            tok, i = _lex_number(text, i)
            toks.append(tok)
            continue
        if _is_ident_start(c):
            j = i + 1
            while j < n and _is_ident_char(text[j]):
                j += 1
            toks.append(Token(T_IDENT, text[i:j], i))
            i = j
            continue
        if c == "`":
            j = text.find("`", i + 1)
            if j < 0:
                raise ParseError(i, f"Syntax error: token recognition error at: '{text[i:]}'")
            toks.append(Token(T_IDENT, text[i + 1 : j], i, value="quoted"))
            i = j + 1
            continue
        two = text[i : i + 2]
        if two in _OPS2:
            toks.append(Token(T_OP, two, i))
            i += 2
            continue
        if c in _OPS1 or c == "=" or c == "&" or c == "|":
            if c in "=&|":
                raise ParseError(i, f"Syntax error: token recognition error at: '{c}'")
            toks.append(Token(T_OP, c, i))
            i += 1
            continue
        raise ParseError(i, f"Syntax error: token recognition error at: '{c}'")
    toks.append(Token(T_EOF, "<EOF>", n))
    return toks


def _lex_number(text: str, i: int) -> tuple[Token, int]:
    n = len(text)
    start = i
    if text.startswith(("0x", "0X"), i):
        j = i + 2
        while j < n and text[j] in "0123456789abcdefABCDEF":
            j += 1
        if j == i + 2:
            raise ParseError(i, f"Syntax error: token recognition error at: '{text[i:j]}'")
        digits = text[i + 2 : j]
        if j < n and text[j] in "uU":
            return Token(T_UINT, text[start : j + 1], start, int(digits, 16)), j + 1
        return Token(T_INT, text[start:j], start, int(digits, 16)), j
    j = i
    while j < n and text[j].isascii() and text[j].isdigit():
        j += 1
    is_float = False
    if j < n and text[j] == "." and j + 1 < n and text[j + 1].isascii() and text[j + 1].isdigit():
        is_float = True
        j += 1
        while j < n and text[j].isascii() and text[j].isdigit():
            j += 1
    if j < n and text[j] in "eE":
        k = j + 1
        if k < n and text[k] in "+-":
            k += 1
        if k < n and text[k].isascii() and text[k].isdigit():
            is_float = True
            j = k
            while j < n and text[j].isascii() and text[j].isdigit():
                j += 1
    lit = text[start:j]
    if is_float:
        return Token(T_DOUBLE, lit, start, float(lit)), j
    if j < n and text[j] in "uU":
        return Token(T_UINT, text[start : j + 1], start, int(lit)), j + 1
    return Token(T_INT, lit, start, int(lit)), j


def _lex_string(text: str, q: int, start: int, *, raw: bool, is_bytes: bool) -> tuple[Token, int]:
    n = len(text)
    quote = text[q]
    triple = text.startswith(quote * 3, q)
    delim = quote * 3 if triple else quote
    i = q + len(delim)
    parts: list[str] = []
    bparts: list[bytes] = []

    def put_char(s: str) -> None:
        if is_bytes:
            bparts.append(s.encode("utf-8"))
        else:
            parts.append(s)

    while True:
        if i >= n:
            raise ParseError(start, f"Syntax error: token recognition error at: '{text[start:]}'")
        if text.startswith(delim, i):
            i += len(delim)
            break
        c = text[i]
        if not triple and c in "\n\r":
            raise ParseError(start, f"Syntax error: token recognition error at: '{text[start : i + 1]}'")
        if c == "\\" and not raw:
            if i + 1 >= n:
                raise ParseError(start, f"Syntax error: token recognition error at: '{text[start:]}'")
            e = text[i + 1]
            if e in _SIMPLE_ESCAPES:
                put_char(_SIMPLE_ESCAPES[e])
                i += 2
            elif e in "xX":
                h = text[i + 2 : i + 4]
                if len(h) != 2 or any(ch not in "0123456789abcdefABCDEF" for ch in h):
                    raise ParseError(i, f"Syntax error: token recognition error at: '{text[start : i + 2]}'")
                if is_bytes:
                    bparts.append(bytes([int(h, 16)]))
                else:
                    parts.append(chr(int(h, 16)))
                i += 4
            elif e in "uU":
                width = 4 if e == "u" else 8
                h = text[i + 2 : i + 2 + width]
                if len(h) != width or any(ch not in "0123456789abcdefABCDEF" for ch in h):
                    raise ParseError(i, f"Syntax error: token recognition error at: '{text[start : i + 2]}'")
                cp = int(h, 16)
                if cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
                    raise ParseError(i, "Syntax error: invalid unicode code point")
                put_char(chr(cp))
                i += 2 + width
            elif e in "0123":
                o = text[i + 1 : i + 4]
                if len(o) != 3 or any(ch not in "01234567" for ch in o):
                    raise ParseError(i, f"Syntax error: token recognition error at: '{text[start : i + 2]}'")
                if is_bytes:
                    bparts.append(bytes([int(o, 8)]))
                else:
                    parts.append(chr(int(o, 8)))
                i += 4
            else:
                raise ParseError(i, f"Syntax error: token recognition error at: '{text[start : i + 2]}'")
            continue
        put_char(c)
        i += 1
    lit = text[start:i]
    if is_bytes:
        return Token(T_BYTES, lit, start, b"".join(bparts)), i
    return Token(T_STRING, lit, start, "".join(parts)), i


# ---------------------------------------------------------------------------------------------
# Parser


MacroExpander = Callable[["Parser", Call], Expr]


@dataclass(frozen=True)
class Macro:
    name: str
    nargs: int  # -1: any number
    receiver: bool
    expand: MacroExpander


class Parser:
    def __init__(self, text: str, macros: dict[tuple[str, int, bool], Macro] | None = None) -> None:
        self.text = text
        self.macros = STANDARD_MACROS if macros is None else macros
        self.toks = tokenize(text)
        self.pos = 0
        self.next_id = 1
        self.depth = 0
        self.positions: dict[int, int] = {}

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
        text = t.text
        if t.kind == T_EOF:
            return ParseError(t.offset, f"Syntax error: mismatched input '<EOF>' expecting {expecting}")
        return ParseError(t.offset, f"Syntax error: mismatched input '{text}' expecting {expecting}")

    def expect(self, op: str) -> Token:
        if not self.peek_op(op):
            raise self.fail(f"'{op}'")
        return self.advance()

    # grammar ---------------------------------------------------------------------------------
    def parse(self) -> Expr:
        e = self.expr()
        if self.tok.kind != T_EOF:
            raise ParseError(
                self.tok.offset, f"Syntax error: extraneous input '{self.tok.text}' expecting <EOF>"
            )
        return e

    def expr(self) -> Expr:
        self.depth += 1
        if self.depth > MAX_RECURSION_DEPTH:
            raise ParseError(self.tok.offset, f"expression recursion limit exceeded: {MAX_RECURSION_DEPTH}")
        try:
            cond = self.binary(0)
            if self.peek_op("?"):
                op = self.advance()
                e1 = self.binary(0)
                self.expect(":")
                e2 = self.expr()
                return Call(self.new_id(op.offset), op.offset, "_?_:_", [cond, e1, e2])
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
        if level == len(self._LEVELS):
            return self.unary()
        ops = self._LEVELS[level]
        lhs = self.binary(level + 1)
        terms: list[tuple[Token, Expr]] = []
        while True:
            t = self.tok
            if (t.kind == T_OP and t.text in ops) or (t.kind == T_IDENT and t.text == "in" and "in" in ops):
                self.advance()
                terms.append((t, self.binary(level + 1)))
            else:
                break
        if not terms:
            return lhs
        if level <= 1:
            # cel-go balances chains of && / || into a tree of minimal depth.
            return self._balance(ops[terms[0][0].text], [lhs] + [e for _, e in terms], [t for t, _ in terms])
        for t, rhs in terms:
            lhs = Call(self.new_id(t.offset), t.offset, ops[t.text], [lhs, rhs])
        return lhs

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
            return Call(self.new_id(ops[0].offset), ops[0].offset, fn, [operand])
        return self.member(self.primary())

    def _number(self, tok: Token, *, negative: bool, offset: int) -> Expr:
        v = tok.value
        assert isinstance(v, int | float)
        if negative:
            v = -v
        if tok.kind == T_INT:
            assert isinstance(v, int)
            if not INT64_MIN <= v <= INT64_MAX:
                raise ParseError(offset, "invalid int literal")
        elif tok.kind == T_UINT:
            assert isinstance(v, int)
            if v > UINT64_MAX:
                raise ParseError(offset, "invalid uint literal")
            v = Uint(v)
        return Literal(self.new_id(offset), offset, v)

    def member(self, e: Expr) -> Expr:
        while True:
            t = self.tok
            if t.kind != T_OP:
                return e
            if t.text == ".":
                self.advance()
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
                    e = Select(self.new_id(t.offset), t.offset, e, name.text)
            elif t.text == ".?":
                self.advance()
                name = self._field_name()
                e = Call(
                    self.new_id(t.offset),
                    t.offset,
                    "_?._",
                    [e, Literal(self.new_id(name.offset), name.offset, name.text)],
                )
            elif t.text in ("[", "[?"):
                self.advance()
                idx = self.expr()
                self.expect("]")
                fn = "_[_]" if t.text == "[" else "_[?_]"
                e = Call(self.new_id(t.offset), t.offset, fn, [e, idx])
            else:
                return e

    def _field_name(self) -> Token:
        t = self.tok
        if t.kind != T_IDENT:
            raise self.fail("IDENTIFIER")
        if t.value != "quoted" and t.text in RESERVED:
            raise ParseError(t.offset, f"reserved identifier: {t.text}")
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
        while True:
            args.append(self.expr())
            if self.peek_op(","):
                self.advance()
                continue
            self.expect(close)
            return args

    def primary(self) -> Expr:
        t = self.tok
        k = t.kind
        if k in (T_INT, T_UINT, T_DOUBLE):
            self.advance()
            return self._number(t, negative=False, offset=t.offset)
        if k in (T_STRING, T_BYTES):
            self.advance()
            return Literal(self.new_id(t.offset), t.offset, t.value)
        if k == T_IDENT:
            if t.value != "quoted":
                if t.text == "true" or t.text == "false":
                    self.advance()
                    return Literal(self.new_id(t.offset), t.offset, t.text == "true")
                if t.text == "null":
                    self.advance()
                    return Literal(self.new_id(t.offset), t.offset, None)
                if t.text == "in":
                    raise self.fail(_PRIMARY_EXPECTING)
                if t.text in RESERVED:
                    raise ParseError(t.offset, f"reserved identifier: {t.text}")
            else:
                raise self.fail(_PRIMARY_EXPECTING)
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
                name = self._field_name()
                if self.peek_op("("):
                    open_offset = self.tok.offset
                    self.advance()
                    args = self._expr_list(")")
                    return self._call(name.text, name.offset, args, target=None, call_offset=open_offset)
                if self.peek_op("{"):
                    return self._struct("." + name.text, name.offset)
                return Ident(self.new_id(t.offset), t.offset, "." + name.text)
            if t.text == "(":
                self.advance()
                e = self.expr()
                self.expect(")")
                return e
            if t.text == "[":
                self.advance()
                return self._list(t.offset)
            if t.text == "{":
                self.advance()
                return self._map(t.offset)
        raise self.fail(_PRIMARY_EXPECTING)

    def _list(self, offset: int) -> Expr:
        elems: list[Expr] = []
        optional: set[int] = set()
        lid = self.new_id(offset)
        while not self.peek_op("]"):
            if self.peek_op("?"):
                self.advance()
                optional.add(len(elems))
            elems.append(self.expr())
            if self.peek_op(","):
                self.advance()
                continue
            if not self.peek_op("]"):
                raise self.fail("{',', ']'}")
        self.advance()
        return CreateList(lid, offset, elems, frozenset(optional))

    def _map(self, offset: int) -> Expr:
        mid = self.new_id(offset)
        entries: list[MapEntry] = []
        while not self.peek_op("}"):
            opt = False
            if self.peek_op("?"):
                self.advance()
                opt = True
            key = self.expr()
            colon = self.expect(":")
            value = self.expr()
            entries.append(MapEntry(self.new_id(colon.offset), colon.offset, key, value, opt))
            if self.peek_op(","):
                self.advance()
                continue
            if not self.peek_op("}"):
                raise self.fail("{',', '}'}")
        self.advance()
        return CreateMap(mid, offset, entries)

    def _struct(self, name: str, offset: int) -> Expr:
        brace = self.expect("{")
        sid = self.new_id(brace.offset)
        fields: list[FieldInit] = []
        while not self.peek_op("}"):
            opt = False
            if self.peek_op("?"):
                self.advance()
                opt = True
            fname = self._field_name()
            colon = self.expect(":")
            value = self.expr()
            fields.append(FieldInit(self.new_id(colon.offset), colon.offset, fname.text, value, opt))
            if self.peek_op(","):
                self.advance()
                continue
            if not self.peek_op("}"):
                raise self.fail("{',', '}'}")
        self.advance()
        return CreateStruct(sid, brace.offset, name, fields)

    def _call(
        self, name: str, offset: int, args: list[Expr], *, target: Expr | None, call_offset: int
    ) -> Expr:
        call = Call(self.new_id(call_offset), call_offset, name, args, target)
        macro = self.macros.get((name, len(args), target is not None)) or self.macros.get(
            (name, -1, target is not None)
        )
        if macro is not None:
            out = macro.expand(self, call)
            if out is not None:
                return out
        return call

    # node builders for macros ------------------------------------------------------------------
    def ident(self, name: str, at: int) -> Ident:
        return Ident(self.new_id(at), at, name)

    def lit(self, value: object, at: int) -> Literal:
        return Literal(self.new_id(at), at, value)

    def call(self, fn: str, at: int, *args: Expr, target: Expr | None = None) -> Call:
        return Call(self.new_id(at), at, fn, list(args), target)


_PRIMARY_EXPECTING = "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"


# ---------------------------------------------------------------------------------------------
# Macros (cel-go parser/macro.go, ext/bindings.go, ext/comprehensions.go, cel/optional)


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
    v = _simple_name(c.args[0])
    _check_vars(c, v)
    fn = c.args[-1]
    step: Expr = p.call("_+_", at, p.ident(ACCU, at), CreateList(p.new_id(at), at, [fn]))
    if len(c.args) == 3:
        step = p.call("_?_:_", at, c.args[1], step, p.ident(ACCU, at))
    return _comp(p, c, v, CreateList(p.new_id(at), at, []), p.lit(True, at), step, p.ident(ACCU, at))


def _filter(p: Parser, c: Call) -> Expr:
    at = c.offset
    v = _simple_name(c.args[0])
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
    # ext.Lists: list.sortBy(x, key) -> @sortByAssociatedKeys(list, list.map(x, key))
    at = c.offset
    assert c.target is not None
    v = _simple_name(c.args[0], "sortBy(var, ...) variable name must be a simple identifier")
    target = c.target
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
        p.call("@sortByAssociatedKeys", at, p.ident(bound, at), keys),
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
    """Parse ``text``; raises :class:`ParseError` (offset + message) on the first syntax error."""
    with deep_recursion():
        p = Parser(text)
        e = p.parse()
    return ParsedExpr(e, Source(text), p.positions, p.next_id)
