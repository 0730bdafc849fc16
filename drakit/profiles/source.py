"""YAML documents with the line of every field, so profile errors can say file, line and field.

PyYAML's ``safe_load`` drops positions; composing the node graph keeps them.  We construct the
values with the same SafeLoader and record ``path -> line`` while walking the nodes, and we
reject duplicate keys (YAML allows them silently; the last one would win unnoticed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Loc:
    """Where a value was written: file and 1-based line (0 when unknown)."""

    file: str
    line: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass(frozen=True)
class Document:
    """One YAML document: its value and the location of every path inside it."""

    value: Any
    file: str
    index: int
    lines: dict[Path, int] = field(default_factory=dict)

    def loc(self, path: Path) -> Loc:
        """The line of ``path`` or of its nearest written ancestor."""
        p = tuple(path)
        while p and p not in self.lines:
            p = p[:-1]
        return Loc(self.file, self.lines.get(p, self.lines.get((), 0)))


class DuplicateKey(ValueError):
    def __init__(self, loc: Loc, path: Path) -> None:
        super().__init__(f"{loc}: {dotted(path)}: Duplicate value: key written twice")
        self.loc = loc
        self.path = path


def dotted(path: Path) -> str:
    """``("spec", "memory", "min")`` -> ``spec.memory.min``; list indices as ``[i]``."""
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _walk(node: yaml.Node, path: Path, lines: dict[Path, int], file: str) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for k, v in node.value:
            key = k.value if isinstance(k, yaml.ScalarNode) else str(k.start_mark)
            if key in seen:
                raise DuplicateKey(Loc(file, k.start_mark.line + 1), (*path, key))
            seen.add(key)
            lines[(*path, key)] = k.start_mark.line + 1
            _walk(v, (*path, key), lines, file)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, (*path, i), lines, file)


def parse_documents(text: str, file: str) -> list[Document]:
    """Every non-empty document of ``text``; raises ``yaml.YAMLError`` or :class:`DuplicateKey`."""
    loader = yaml.SafeLoader(text)
    docs: list[Document] = []
    try:
        index = 0
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            lines: dict[Path, int] = {}
            _walk(node, (), lines, file)
            value = loader.construct_document(node)
            if value is not None:
                docs.append(Document(value, file, index, lines))
            index += 1
    finally:
        loader.dispose()
    return docs
