"""The front door: every file-like input drakit reads goes through this package.

``read`` turns paths, directories, stdin and pipes into bounded UTF-8 text; ``decode`` turns
text into documents the way kubectl reads them (go-yaml v2 scalars, strict keys, alias budget,
depth limit, JSON numbers); :func:`load_documents` does both and expands ``kind: List``.
Nothing else in drakit opens an input file or reads stdin (``tests/unit/sources`` checks it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Any

from drakit.sources.decode import MAX_DEPTH, DecodeError, Document, Path, Problem, dotted, parse_text
from drakit.sources.progress import Progress, auto_progress
from drakit.sources.read import (
    MANIFEST_SUFFIXES,
    MAX_INPUT_BYTES,
    Inputs,
    ReadError,
    Text,
    read_inputs,
    read_one,
)


@dataclass(frozen=True)
class Loaded:
    """Documents of a set of inputs in order, every problem as one line, and notes."""

    documents: tuple[Document, ...]
    problems: tuple[Problem, ...]
    notes: tuple[str, ...]


def is_list(data: Any) -> bool:
    """``kind: List`` (what ``kubectl get -o yaml`` prints) or a typed ``<Kind>List``."""
    kind = data.get("kind")
    return isinstance(kind, str) and kind.endswith("List") and "items" in data


def split_lists(docs: Sequence[Document], problems: list[Problem]) -> list[Document]:
    """Documents with every List replaced by its items."""
    out: list[Document] = []
    for doc in docs:
        data = doc.data
        if not isinstance(data, dict) or not is_list(data):
            out.append(doc)
            continue
        items = data.get("items")
        if items is None:
            continue
        if not isinstance(items, list):
            problems.append(Problem(doc.source, doc.index, "List items must be a list", doc.line, ("items",)))
            continue
        for j, item in enumerate(items):
            if isinstance(item, dict):
                out.append(doc.with_item(j, item))
            else:
                problems.append(Problem(doc.source, doc.index, "List item is not an object", doc.line, ("items", j)))
    return out


def load_documents(
    paths: Sequence[str],
    *,
    stdin: IO[Any] | None = None,
    suffixes: tuple[str, ...] = MANIFEST_SUFFIXES,
    expand_lists: bool = True,
    progress: Progress | None = None,
) -> Loaded:
    """Read and decode ``paths`` (files, directories, ``-``); problems are returned, not raised."""
    problems: list[Problem] = []
    if not paths:
        return Loaded((), (Problem("", None, "no input given (use -f FILE, a directory, or - for stdin)"),), ())
    bar = progress if progress is not None else auto_progress()
    try:
        inputs = read_inputs(paths, stdin=stdin, suffixes=suffixes, progress=bar.read if bar else None)
        problems += [Problem("", None, e) for e in inputs.errors]
        docs: list[Document] = []
        for t in inputs.texts:
            if bar:
                bar.decode(t.name)
            d, p = parse_text(t.name, t.text)
            docs += d
            problems += p
    finally:
        if bar:
            bar.done()
    if expand_lists:
        docs = split_lists(docs, problems)
    return Loaded(tuple(docs), tuple(problems), inputs.notes)


__all__ = [
    "MANIFEST_SUFFIXES",
    "MAX_DEPTH",
    "MAX_INPUT_BYTES",
    "DecodeError",
    "Document",
    "Inputs",
    "Loaded",
    "Path",
    "Problem",
    "Progress",
    "ReadError",
    "Text",
    "auto_progress",
    "dotted",
    "load_documents",
    "parse_text",
    "read_inputs",
    "read_one",
    "split_lists",
]
