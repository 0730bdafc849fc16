"""Profiles from YAML text: structural validation, ``extends`` resolution, merge and semantic checks.

Every error names the file, the line and the field.  Merging keeps the provenance of each
field, so a contradiction created by inheritance (a child's ``memory.max`` below a parent's
``memory.min``) is reported at the line that introduced it.  Pure apart from
:func:`example_texts` (the bundled library); files are read by ``drakit.sources.load_profile_files``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from pydantic import BaseModel, ValidationError

from drakit.drivers import VENDORS, known_drivers
from drakit.errors import ErrorType, FieldError, InvalidInput, ObjectErrors, ObjectRef
from drakit.gostr import quote
from drakit.profiles.model import API_VERSION, DEFAULT_MERGE_STRATEGY, KIND, MergeStrategy, Profile
from drakit.profiles.source import Document, DuplicateKey, Loc, ParseError, Path, dotted, parse_documents
from drakit.profiles.units import UnitError, normalize_version, parse_memory

Locs = dict[Path, Loc]


@dataclass(frozen=True)
class ResolvedProfile:
    """A profile after ``extends`` and merging, validated; ``locs`` says where each field came from."""

    profile: Profile
    source: Loc
    chain: tuple[str, ...]  # this profile, then its ancestors in resolution order
    locs: Mapping[Path, Loc] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.profile.name

    def loc(self, path: Path) -> Loc:
        p = tuple(path)
        while p and p not in self.locs:
            p = p[:-1]
        return self.locs.get(p, self.source)


@dataclass(frozen=True)
class ProfileSet:
    """Resolved profiles by name, in the order they were given."""

    profiles: Mapping[str, ResolvedProfile]
    given: tuple[str, ...] = ()  # names defined in the user's files (not the bundled library)

    def get(self, name: str) -> ResolvedProfile:
        if name not in self.profiles:
            known = ", ".join(sorted(self.profiles)) or "none"
            raise InvalidInput(f"unknown profile {quote(name)} (known: {known})")
        return self.profiles[name]

    def selected(self) -> list[ResolvedProfile]:
        """The profiles the user named (or every profile when none were given)."""
        names = self.given or tuple(self.profiles)
        return [self.profiles[n] for n in names]


# --- errors ------------------------------------------------------------------------------------


def _problem(loc: Loc, name: str, path: Path, type_: ErrorType, value: Any = None, detail: str = "") -> ObjectErrors:
    from drakit.errors import OMIT

    err = FieldError(dotted(path), type_, OMIT if value is None else value, detail)
    return ObjectErrors(ObjectRef(KIND, name or "<unnamed>", source=str(loc)), (err,))


def _fields_at(model: type[BaseModel], loc: Sequence[Any]) -> list[str]:
    """Aliases a model accepts at ``loc`` (for "did you mean")."""
    current: Any = model
    for part in loc:
        if isinstance(part, int) or not (isinstance(current, type) and issubclass(current, BaseModel)):
            continue
        nxt = None
        for fname, finfo in current.model_fields.items():
            if (finfo.alias or fname) == part:
                nxt = finfo.annotation
        if nxt is None:
            return []
        current = _model_in(nxt)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return [f.alias or n for n, f in current.model_fields.items()]
    return []


def _model_in(annotation: Any) -> Any:
    """The BaseModel inside ``X | None``, ``list[X]`` or ``Annotated[...]``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _model_in(arg)
        if found is not None:
            return found
    origin = getattr(annotation, "__origin__", None)
    return _model_in(origin) if origin is not None and origin is not annotation else None


def _pydantic_problems(exc: ValidationError, doc: Document, name: str, locs: Locs | None = None) -> list[ObjectErrors]:
    out: list[ObjectErrors] = []
    for e in exc.errors():
        path: Path = tuple(p for p in e["loc"] if isinstance(p, str | int))
        loc = _nearest(locs, path) if locs is not None else doc.loc(path)
        kind = e["type"]
        if kind == "extra_forbidden":
            known = _fields_at(Profile, path[:-1])
            close = difflib.get_close_matches(str(path[-1]), known, n=1)
            hint = f" (did you mean {quote(close[0])}?)" if close else (f"; known fields: {', '.join(known)}" if known else "")
            out.append(_problem(loc, name, path, ErrorType.FORBIDDEN, detail=f"unknown field{hint}"))
        elif kind == "missing":
            out.append(_problem(loc, name, path, ErrorType.REQUIRED))
        elif kind == "literal_error":
            expected = e.get("ctx", {}).get("expected", "")
            out.append(_problem(loc, name, path, ErrorType.NOT_SUPPORTED, e.get("input"), f"supported values: {expected}"))
        else:
            msg = e["msg"].removeprefix("Value error, ")
            value = e.get("input")
            out.append(_problem(loc, name, path, ErrorType.INVALID, value if not isinstance(value, dict | list) else None, msg))
    return out


def _nearest(locs: Mapping[Path, Loc] | None, path: Path) -> Loc:
    locs = locs or {}
    p = tuple(path)
    while p and p not in locs:
        p = p[:-1]
    return locs.get(p, next(iter(locs.values()), Loc("<unknown>")))


# --- merging -----------------------------------------------------------------------------------


def _empty(value: Any) -> bool:
    return value is None or value == [] or value == {}


def _subtree(locs: Locs, prefix: Path) -> Locs:
    n = len(prefix)
    return {p: loc for p, loc in locs.items() if p[:n] == prefix}


def merge(base: Any, base_locs: Locs, patch: Any, patch_locs: Locs, strategy: MergeStrategy, at: Path = ()) -> tuple[Any, Locs]:
    """Apply ``patch`` (the extending profile) onto ``base`` (the inherited spec) with ``strategy``.

    Lists are atomic in every strategy: merging tolerations or product lists element-wise has no
    unambiguous meaning, so the winning side's list is taken whole.
    """
    if not isinstance(base, dict) or not isinstance(patch, dict):
        # Leaves (or a dict meeting a non-dict): which side wins depends on the strategy.
        patch_wins = strategy in ("replace", "post_merge") or (strategy in ("isnull", "pre_merge") and _empty(base))
        return (patch, _subtree(patch_locs, at)) if patch_wins else (base, _subtree(base_locs, at))
    out: dict[str, Any] = {}
    locs: Locs = {}
    side_locs = _subtree(base_locs, at) or _subtree(patch_locs, at)
    if at in side_locs:
        locs[at] = side_locs[at]
    for key in [*base, *(k for k in patch if k not in base)]:
        here = (*at, key)
        if key not in patch:
            out[key], sub = base[key], _subtree(base_locs, here)
        elif key not in base or strategy == "replace":
            out[key], sub = patch[key], _subtree(patch_locs, here)
        elif strategy == "isnull":
            out[key], sub = (patch[key], _subtree(patch_locs, here)) if _empty(base[key]) else (base[key], _subtree(base_locs, here))
        else:
            out[key], sub = merge(base[key], base_locs, patch[key], patch_locs, strategy, here)
        locs.update(sub)
    return out, locs


# --- loading -----------------------------------------------------------------------------------


@dataclass
class _Raw:
    doc: Document
    name: str
    value: dict[str, Any]
    locs: Locs
    library: bool


def _is_profile(value: Any) -> bool:
    return isinstance(value, dict) and str(value.get("apiVersion", "")).startswith("drakit.dev/")


def _collect(texts: Iterable[tuple[str, str]], library: bool, problems: list[ObjectErrors]) -> list[_Raw]:
    raws: list[_Raw] = []
    for text, file in texts:
        try:
            docs = parse_documents(text, file)
        except DuplicateKey as e:
            problems.append(_problem(e.loc, "", e.path, ErrorType.DUPLICATE, detail="key written twice"))
            continue
        except ParseError as e:
            problems.append(ObjectErrors(ObjectRef(KIND, "<unparsed>", source=str(e.loc)),
                                         (FieldError(dotted(e.path), ErrorType.INVALID, detail=f"YAML: {e.message}"),)))
            continue
        for doc in docs:
            if not _is_profile(doc.value):
                continue
            value = doc.value
            name = str((value.get("metadata") or {}).get("name", "")) if isinstance(value.get("metadata"), dict) else ""
            before = len(problems)
            if value.get("apiVersion") != API_VERSION:
                problems.append(_problem(doc.loc(("apiVersion",)), name, ("apiVersion",), ErrorType.NOT_SUPPORTED,
                                         value.get("apiVersion"), f"supported values: {quote(API_VERSION)}"))
            try:
                Profile.model_validate(value)
            except ValidationError as exc:
                problems.extend(_pydantic_problems(exc, doc, name))
            if len(problems) == before:
                locs = {p: Loc(file, line) for p, line in doc.lines.items()}
                raws.append(_Raw(doc, name, value, locs, library))
    return raws


def _resolve(name: str, raws: dict[str, _Raw], problems: list[ObjectErrors], stack: tuple[str, ...],
             done: dict[str, tuple[dict[str, Any], Locs, tuple[str, ...]]]) -> tuple[dict[str, Any], Locs, tuple[str, ...]] | None:
    if name in done:
        return done[name]
    raw = raws[name]
    parents = raw.value.get("extends") or []
    parents = [parents] if isinstance(parents, str) else list(parents)
    spec_locs: Locs = {p[1:]: loc for p, loc in raw.locs.items() if p[:1] == ("spec",)}
    own_spec: dict[str, Any] = dict(raw.value.get("spec") or {})
    acc: dict[str, Any] | None = None
    acc_locs: Locs = {}
    chain: tuple[str, ...] = (name,)
    for i, parent in enumerate(parents):
        where = raw.doc.loc(("extends", i)) if isinstance(raw.value.get("extends"), list) else raw.doc.loc(("extends",))
        path: Path = ("extends", i) if isinstance(raw.value.get("extends"), list) else ("extends",)
        if parent in stack or parent == name:
            cycle = [*stack[stack.index(parent):], name, parent] if parent in stack else [name, name]
            problems.append(_problem(where, name, path, ErrorType.INVALID, parent, f"extends cycle: {' -> '.join(cycle)}"))
            return None
        if parent not in raws:
            known = ", ".join(sorted(raws)) or "none"
            problems.append(_problem(where, name, path, ErrorType.NOT_FOUND, parent, f"no profile named {quote(parent)} (known: {known})"))
            return None
        resolved = _resolve(parent, raws, problems, (*stack, name), done)
        if resolved is None:
            return None
        pspec, plocs, pchain = resolved
        if acc is None:
            acc, acc_locs = dict(pspec), dict(plocs)
        else:
            acc, acc_locs = merge(acc, acc_locs, pspec, plocs, "post_merge")
        chain += tuple(c for c in pchain if c not in chain)
    if acc is None:
        result = (own_spec, spec_locs, chain)
    else:
        strategy: MergeStrategy = raw.value.get("mergeStrategy") or DEFAULT_MERGE_STRATEGY
        merged, mlocs = merge(acc, acc_locs, own_spec, spec_locs, strategy)
        result = (merged, mlocs, chain)
    done[name] = result
    return result


def _semantic_checks(rp: ResolvedProfile) -> tuple[list[ObjectErrors], list[str]]:
    """Contradictions and unsupported combinations that the schema alone cannot see."""
    p, name = rp.profile, rp.name
    problems: list[ObjectErrors] = []
    warnings: list[str] = []

    def bad(path: Path, type_: ErrorType, value: Any = None, detail: str = "") -> None:
        problems.append(_problem(rp.loc(path), name, path, type_, value, detail))

    spec = p.spec
    if spec.driver is not None and spec.driver not in known_drivers():
        bad(("spec", "driver"), ErrorType.NOT_SUPPORTED, spec.driver, "supported values: " + ", ".join(known_drivers()))
    if spec.vendor and spec.driver and VENDORS.get(spec.vendor) not in (None, spec.driver):
        bad(("spec", "driver"), ErrorType.INVALID, spec.driver, f"vendor {spec.vendor} publishes through {VENDORS[spec.vendor]}")

    def check_requirements(req: Any, path: Path, inherited_min: Any = None, inherited_max: Any = None) -> None:
        lo = hi = None
        mem = req.memory
        for bound in ("min", "max"):
            text = getattr(mem, bound) if mem else None
            if text is None:
                continue
            try:
                q = parse_memory(text)
            except UnitError as e:
                bad((*path, "memory", bound), ErrorType.INVALID, text, str(e))
                continue
            if bound == "min":
                lo = (q, text, (*path, "memory", "min"))
            else:
                hi = (q, text, (*path, "memory", "max"))
        lo = lo or inherited_min
        hi = hi or inherited_max
        if lo and hi and hi[0] < lo[0]:
            bad(hi[2], ErrorType.INVALID, hi[1], f"must not be less than {dotted(lo[2])} ({lo[1]})")
        for field_name in ("minComputeCapability", "minDriverVersion"):
            text = getattr(req, "min_compute_capability" if field_name == "minComputeCapability" else "min_driver_version")
            if text is not None:
                try:
                    normalize_version(text)
                except UnitError as e:
                    bad((*path, field_name), ErrorType.INVALID, text, str(e))
        for set_name in ("products", "architectures"):
            ns = getattr(req, set_name)
            if ns and ns.allow is not None and ns.exclude:
                both = sorted(set(ns.allow) & set(ns.exclude))
                if both:
                    bad((*path, set_name, "exclude"), ErrorType.INVALID, both, "names both allowed and excluded")
            if ns and ns.allow == []:
                bad((*path, set_name, "allow"), ErrorType.INVALID, [], "an empty allow list matches nothing; omit it instead")
        if inherited_min is None and inherited_max is None:
            base_bounds[0], base_bounds[1] = lo, hi

    base_bounds: list[Any] = [None, None]
    check_requirements(spec, ("spec",))
    if spec.alternatives:
        seen: set[str] = set()
        for i, alt in enumerate(spec.alternatives.options):
            path: Path = ("spec", "alternatives", "options", i)
            if alt.name in seen:
                bad((*path, "name"), ErrorType.DUPLICATE, alt.name)
            seen.add(alt.name)
            # An option's own bound replaces the inherited one of the same side.
            check_requirements(alt, path, base_bounds[0] if not (alt.memory and alt.memory.min) else None,
                               base_bounds[1] if not (alt.memory and alt.memory.max) else None)
        if spec.admin_access:
            bad(("spec", "adminAccess"), ErrorType.FORBIDDEN,
                detail="firstAvailable subrequests cannot carry adminAccess; drop alternatives or adminAccess")
        if spec.queue:
            warnings.append(
                f"{rp.source}: profile {name}: Kueue does not support firstAvailable; a queued workload with "
                "alternatives may be rejected at admission"
            )
    return problems, warnings


def parse_profiles(texts: Iterable[tuple[str, str]], library: Iterable[tuple[str, str]] = (),
                   *, select: Sequence[str] = ()) -> ProfileSet:
    """Profiles from ``(text, filename)`` pairs; ``library`` profiles may be extended but are not selected.

    Raises :class:`InvalidInput` with every problem found (file:line, field, reason).
    """
    problems: list[ObjectErrors] = []
    user = _collect(texts, False, problems)
    lib = _collect(library, True, problems)
    raws: dict[str, _Raw] = {r.name: r for r in lib}
    given: list[str] = []
    for r in user:
        if r.name in given:
            first = raws[r.name]
            problems.append(_problem(r.doc.loc(("metadata", "name")), r.name, ("metadata", "name"), ErrorType.DUPLICATE,
                                     r.name, f"profile already defined at {first.doc.loc(('metadata', 'name'))}"))
            continue
        raws[r.name] = r  # a user profile shadows a library profile of the same name
        given.append(r.name)
    for name in select:
        if name not in raws:
            known = ", ".join(sorted(raws)) or "none"
            problems.append(ObjectErrors(ObjectRef(KIND, name), (FieldError("metadata.name", ErrorType.NOT_FOUND, name,
                                                                               f"no such profile (known: {known})"),)))
    if problems:
        raise InvalidInput(problems)

    out: dict[str, ResolvedProfile] = {}
    done: dict[str, tuple[dict[str, Any], Locs, tuple[str, ...]]] = {}
    for name, raw in raws.items():
        resolved = _resolve(name, raws, problems, (), done)
        if resolved is None:
            continue
        spec, spec_locs, chain = resolved
        value = {k: v for k, v in raw.value.items() if k not in ("spec", "extends", "mergeStrategy")}
        value["spec"] = spec
        locs: Locs = {p: loc for p, loc in raw.locs.items() if p[:1] != ("spec",)}
        locs.update({("spec", *p): loc for p, loc in spec_locs.items()})
        try:
            profile = Profile.model_validate(value)
        except ValidationError as exc:  # a merge can combine fields into something invalid
            problems.extend(_pydantic_problems(exc, raw.doc, name, locs))
            continue
        rp = ResolvedProfile(profile, raw.doc.loc(("metadata", "name")), chain, locs)
        errs, warns = _semantic_checks(rp)
        if errs:
            if not raw.library or name in select:
                problems.extend(errs)
            continue
        out[name] = ResolvedProfile(profile, rp.source, chain, locs, tuple(warns))
    if problems:
        raise InvalidInput(_dedupe(problems))
    chosen = tuple(select) or tuple(given)
    return ProfileSet(out, chosen)


def _dedupe(problems: list[ObjectErrors]) -> list[ObjectErrors]:
    seen: set[tuple[str, ...]] = set()
    out = []
    for p in problems:
        key = tuple(p.lines())
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


# --- edges: files and the bundled library ------------------------------------------------------


def example_texts() -> list[tuple[str, str]]:
    """The bundled example profiles as ``(text, name)`` pairs (the profile library)."""
    root = resources.files("drakit.profiles") / "examples"
    out = []
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.name.endswith((".yaml", ".yml")):
            out.append((entry.read_text(encoding="utf-8"), f"examples/{entry.name}"))
    return out
