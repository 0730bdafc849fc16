"""The front door: every file-like input drakit reads goes through this package (an edge).

:mod:`drakit.sources.read` turns paths, directories, stdin and pipes into bounded UTF-8 text;
:mod:`drakit.model.codec` (pure, below) turns text into documents the way kubectl reads them
(go-yaml v2 scalars, strict keys, alias budget, depth limit, JSON numbers).  The loaders here
combine the two for each kind of input: :func:`load_bundle` (manifests), :func:`load_scenario`,
:func:`load_profile_files`.  Nothing else in drakit opens an input file or reads stdin
(``tests/unit/sources/test_one_door.py`` checks it).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from drakit.errors import InvalidInput, ObjectErrors
from drakit.model.codec import MAX_DEPTH, DecodeError, Document, Path, Problem, dotted, parse_text
from drakit.model.load import Bundle, collector_paused, decode_documents, source_problem
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

if TYPE_CHECKING:
    from drakit.profiles.loader import ProfileSet
    from drakit.sim.scenario import Scenario


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


def load_bundle(
    paths: Sequence[str],
    *,
    stdin: IO[Any] | None = None,
    allow_duplicate_names: bool = False,
    progress: Progress | None = None,
) -> Bundle:
    """Typed objects from manifests; raises :class:`InvalidInput` with all problems at once.

    Reads (:func:`load_documents`), then decodes (:func:`drakit.model.load.decode_documents`).
    Input that holds no object at all is refused, as ``kubectl apply`` refuses it.
    """
    with collector_paused():
        loaded = load_documents(paths, stdin=stdin, progress=progress)
        problems: list[ObjectErrors] = [source_problem(p) for p in loaded.problems]
        bundle, more = decode_documents(loaded.documents, allow_duplicate_names=allow_duplicate_names)
    problems += more
    if not problems and not loaded.documents:
        problems.append(source_problem(Problem("", None, f"{', '.join(paths)}: no objects found (the input is empty)")))
    if problems:
        raise InvalidInput(problems)
    if loaded.notes:
        bundle = Bundle(bundle.entries, bundle.workload_pods, (*loaded.notes, *bundle.notes))
    return bundle


def load_manifest_documents(paths: Sequence[str], *, stdin: IO[Any] | None = None) -> list[Document]:
    """Documents of ``paths`` (Lists expanded); raises :class:`InvalidInput` listing every problem."""
    loaded = load_documents(paths, stdin=stdin)
    if loaded.problems:
        raise InvalidInput([source_problem(p) for p in loaded.problems])
    return list(loaded.documents)


def load_scenario(path: str | os.PathLike[str]) -> Scenario:
    """A scenario file (or ``-``) through the one bounded reader, parsed by :mod:`drakit.sim`."""
    from drakit.sim.scenario import parse_scenario

    try:
        text = read_one(str(path))
    except ReadError as e:
        raise InvalidInput(f"cannot read scenario: {e}") from None
    return parse_scenario(text, str(path))


def load_node_manifests(path: str | os.PathLike[str], scenario: Scenario) -> tuple[dict[str, Any], ...]:
    """``simulate --add-nodes FILE``: read through the one reader, checked by :mod:`drakit.sim`."""
    from drakit.sim.scenario import parse_node_manifests

    try:
        text = read_one(str(path))
    except ReadError as e:
        raise InvalidInput(f"cannot read nodes: {e}") from None
    return parse_node_manifests(text, str(path), scenario)


def load_profile_files(args: Sequence[str], *, library: bool = True) -> ProfileSet:
    """Profiles from files, directories, ``-``, or names of bundled examples (``training-48g``).

    Files that hold no profile at all are refused: a manifest given where a profile belongs
    would otherwise compile to nothing and succeed.
    """
    from drakit.profiles.loader import ProfileSet, example_texts, parse_profiles

    paths: list[str] = []
    select: list[str] = []
    for arg in args:
        if arg != "-" and not os.path.lexists(arg) and "/" not in arg and not arg.endswith((".yaml", ".yml")):
            select.append(arg)
        else:
            paths.append(arg)
    inputs = read_inputs(paths)
    if inputs.errors:
        raise InvalidInput("\n".join(inputs.errors))
    texts = [(t.text, t.name) for t in inputs.texts]
    pset = parse_profiles(texts, example_texts() if library else [], select=select)
    if not texts:
        return pset
    if not pset.given and not select:
        from drakit.profiles.model import API_VERSION, KIND

        # Not "every bundled profile": the user named files, and none holds a profile.  The
        # arguments are named, not every file read: a directory of 10,000 files is one name.
        raise InvalidInput(f"{', '.join(paths)}: no Profile documents "
                           f"(apiVersion: {API_VERSION}, kind: {KIND})")
    # With names selected too, parse_profiles reports only those: add the files' own profiles.
    defined = parse_profiles(texts, example_texts() if library else []).given if select else pset.given
    return ProfileSet(pset.profiles, tuple(dict.fromkeys([*defined, *select])))


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
    "load_bundle",
    "load_documents",
    "load_manifest_documents",
    "load_node_manifests",
    "load_profile_files",
    "load_scenario",
    "parse_text",
    "read_inputs",
    "read_one",
    "split_lists",
]
