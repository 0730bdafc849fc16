"""The front door of the offline verbs: manifests → one validated :class:`ClusterSnapshot`.

Every verb that answers on a cluster (allocate, explain, match, lint, trial, profile eligible)
opens its input here, so that validation runs once and an invalid object is refused with the
exact lines ``drakit validate`` prints (exit 1) instead of being answered on.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import ValidationError

from drakit.errors import InvalidInput, ObjectErrors
from drakit.features import Features
from drakit.inventory.snapshot import ClusterSnapshot, Provenance, name_of, namespace_of, with_namespace
from drakit.model import KINDS, validate_report
from drakit.model.load import Document, Entry, LocatedRef, errors_from_validation
from drakit.sources import load_bundle


def refuse_invalid(entries: Iterable[Any], features: Features) -> None:
    """Raise :class:`InvalidInput` with ``validate``'s problems if any object is invalid.

    ``validate``'s warnings (a field its feature gate would drop) go to stderr as it prints them.
    """
    report = validate_report(entries, features)
    if report.errors:
        raise InvalidInput(list(report.errors))
    for w in report.warnings:
        print(f"Warning: {w}", file=sys.stderr)


def refuse_invalid_documents(docs: Iterable[Document], features: Features) -> None:
    """:func:`refuse_invalid` for parsed documents of which only some are drakit's kinds.

    For verbs that read other documents too (lint reads workloads and profiles): objects of a
    kind drakit models are typed and validated with ``validate``'s lines; the rest are left to
    the verb.
    """
    problems: list[ObjectErrors] = []
    entries: list[Entry] = []
    for doc in docs:
        model = KINDS.get((str(doc.data.get("apiVersion")), str(doc.data.get("kind"))))
        if model is None:
            continue
        try:
            obj = model.model_validate(doc.data)
        except ValidationError as e:
            meta = doc.data.get("metadata") if isinstance(doc.data.get("metadata"), dict) else {}
            key = with_namespace({"kind": doc.data["kind"], "metadata": meta})
            ref = LocatedRef(str(doc.data["kind"]), name_of(key), namespace_of(key, ""), doc.source, doc.index,
                             doc.line, doc.item)
            problems.append(ObjectErrors(ref, tuple(errors_from_validation(model, e))))
            continue
        entries.append(Entry(obj, doc, str(doc.data["kind"]), "", ""))
    problems += validate_report(entries, features).errors
    if problems:
        raise InvalidInput(problems)


def open_snapshot(paths: Sequence[str], features: Features, *, as_given: bool = False) -> ClusterSnapshot:
    """Load, validate and snapshot ``paths`` (files, directories, ``-``).

    ``as_given`` is ``allocate --as-given``: the objects exactly as upstream's allocator tests
    feed them — no API validation (the allocator's own checks answer), namespaces as written,
    objects that share a name kept in input order.
    """
    bundle = load_bundle(list(paths), allow_duplicate_names=as_given)
    if not as_given:  # pods made from workload templates are validated like pods
        refuse_invalid((*bundle.entries, *bundle.workload_pods), features)
    return ClusterSnapshot.from_bundle(bundle, provenance=Provenance(", ".join(paths), time.time()), as_given=as_given)
