"""Profile and lint documents with the line of every field, on top of :mod:`drakit.model.codec`.

The one strict YAML reader (go-yaml v2 scalars, duplicate keys refused, bounded) decodes the
text; this module adds the ``file:line`` locations profile errors and lint findings print.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from drakit.errors import DrakitError
from drakit.model.codec import Document as SourceDocument
from drakit.model.codec import dotted, parse_text

Path = tuple[str | int, ...]

__all__ = ["Document", "DuplicateKey", "Loc", "ParseError", "Path", "dotted", "parse_documents"]


@dataclass(frozen=True)
class Loc:
    """Where a value was written: file and 1-based line (0 when unknown)."""

    file: str
    line: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass(frozen=True)
class Document:
    """One YAML document: its value and the location of every path inside it (found on demand)."""

    value: Any
    file: str
    index: int
    source: SourceDocument | None = field(default=None, compare=False, repr=False)

    @property
    def lines(self) -> dict[Path, int]:
        return self.source.lines if self.source is not None else {}

    def loc(self, path: Path) -> Loc:
        """The line of ``path`` or of its nearest written ancestor."""
        line = self.source.line_of(path) if self.source is not None else None
        return Loc(self.file, line or 0)


class ParseError(DrakitError, ValueError):
    """A document that cannot be read; ``str()`` is the one-line message with ``file:line``."""

    def __init__(self, loc: Loc, path: Path, message: str) -> None:
        super().__init__(f"{loc}: {dotted(path) + ': ' if path else ''}{message}")
        self.loc = loc
        self.path = path
        self.message = message


class DuplicateKey(ParseError):
    """A key written twice in one mapping (YAML allows it; kubectl's strict decoding does not)."""


def parse_documents(text: str, file: str) -> list[Document]:
    """Every non-empty document of ``text``; raises :class:`ParseError` (or :class:`DuplicateKey`)."""
    docs, problems = parse_text(file, text)
    if problems:
        p = problems[0]
        cls = DuplicateKey if "already set in map" in p.message else ParseError
        raise cls(Loc(file, p.line or 0), p.path, p.message)
    return [Document(d.data, file, d.index, d) for d in docs]
