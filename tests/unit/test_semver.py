"""Semver: blang/semver v4 Parse texts, Kubernetes normalisation, SemVer 2.0 precedence."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drakit.semver import PRVersion, Semver, SemverError, is_valid_version_attribute

U64 = 2**64 - 1

VALID = [
    ("1.2.3", (1, 2, 3), (), ()),
    ("0.0.0", (0, 0, 0), (), ()),
    ("1.0.0-alpha+build", (1, 0, 0), ("alpha",), ("build",)),
    ("1.2.3-beta.1+build.1", (1, 2, 3), ("beta", 1), ("build", "1")),
    ("1.0.0-a-b", (1, 0, 0), ("a-b",), ()),
    ("1.0.0-0", (1, 0, 0), (0,), ()),
    ("1.0.0-0a", (1, 0, 0), ("0a",), ()),
    ("1.0.0+001", (1, 0, 0), (), ("001",)),
    ("1.0.0-rc+a-b+c", None, None, None),  # error: '+' inside build metadata
    (f"{U64}.{U64}.{U64}", (U64, U64, U64), (), ()),
    (f"1.0.0-{U64}", (1, 0, 0), (U64,), ()),
]

ERRORS = [
    ("", "Version string empty"),
    ("v1.0", "No Major.Minor.Patch elements found"),
    ("1.0", "No Major.Minor.Patch elements found"),
    ("v1.0.0", 'Invalid character(s) found in major number "v1"'),
    ("01.0.0", 'Major number must not contain leading zeroes "01"'),
    ("1.01.0", 'Minor number must not contain leading zeroes "01"'),
    ("1.0.01", 'Patch number must not contain leading zeroes "01"'),
    ("1.0.0-01", 'Numeric PreRelease version must not contain leading zeroes "01"'),
    ("1.0.0-alpha..1", "Prerelease is empty"),
    ("1.0.0-", "Prerelease is empty"),
    ("1.0.0+", "Build meta data is empty"),
    ("1.0.0+a..b", "Build meta data is empty"),
    ("1.0.0-rc+a-b+c", 'Invalid character(s) found in build meta data "a-b+c"'),
    ("1.0.0-a_b", 'Invalid character(s) found in prerelease "a_b"'),
    ("1.0.0\n", 'Invalid character(s) found in patch number "0\\n"'),
    (" 1.0.0", 'Invalid character(s) found in major number " 1"'),
    ("1. 0.0", 'Invalid character(s) found in minor number " 0"'),
    ("1.0.0 ", 'Invalid character(s) found in patch number "0 "'),
    ("1.2.3.4", 'Invalid character(s) found in patch number "3.4"'),
    ("1..0", 'strconv.ParseUint: parsing "": invalid syntax'),
    ("1.0.-rc", 'strconv.ParseUint: parsing "": invalid syntax'),
    (f"{U64 + 1}.0.0", f'strconv.ParseUint: parsing "{U64 + 1}": value out of range'),
    (f"1.0.0-{U64 + 1}", f'strconv.ParseUint: parsing "{U64 + 1}": value out of range'),
    ("١.0.0", 'Invalid character(s) found in major number "١"'),  # Arabic-Indic digit
    ("1.0.0-é", 'Invalid character(s) found in prerelease "é"'),
    ("1.0.0-\x00", 'Invalid character(s) found in prerelease "\\x00"'),
]


@pytest.mark.parametrize(("text", "mmp", "pre", "build"), [pytest.param(*c, id=c[0]) for c in VALID if c[1]])
def test_parse_valid(
    text: str, mmp: tuple[int, int, int], pre: tuple[str | int, ...], build: tuple[str, ...]
) -> None:
    v = Semver.parse(text)
    assert (v.major, v.minor, v.patch) == mmp
    assert tuple(p.version_num if p.is_num else p.version_str for p in v.pre) == pre
    assert v.build == build
    assert str(v) == text


@pytest.mark.parametrize(("text", "message"), [pytest.param(*c, id=repr(c[0])) for c in ERRORS])
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(SemverError) as info:
        Semver.parse(text)
    assert str(info.value) == message


NORMALIZED = [
    ("v01.01", "1.1.0"),
    ("1", "1.0.0"),
    ("1.1", "1.1.0"),
    ("01.01.01", "1.1.1"),
    ("v1.0.0", "1.0.0"),
    ("00.0.000", "0.0.0"),
    ("v1.2.03-rc.1+b", "1.2.3-rc.1+b"),
    ("1.2.0-rc", "1.2.0-rc"),
    ("1.2.00-rc", "1.2.0-rc"),  # "00-rc" -> "-rc" -> "0-rc"
]

NORMALIZE_ERRORS = [
    (" 1.0.0", 'Invalid character(s) found in major number "0 1"'),  # no trimming; " 1" gets a "0"
    ("1. 0.0", 'Invalid character(s) found in minor number "0 0"'),
    ("1.0.0 ", 'Invalid character(s) found in patch number "0 "'),
    ("1.0-rc", "short version cannot contain PreRelease/Build meta data"),
    ("1+b", "short version cannot contain PreRelease/Build meta data"),
    ("vv1.0.0", 'Invalid character(s) found in major number "0v1"'),  # one "v" removed; "v1" gets a "0"
    ("1.2.3-rc.01", 'Numeric PreRelease version must not contain leading zeroes "01"'),
    ("", 'strconv.ParseUint: parsing "": invalid syntax'),
]


@pytest.mark.parametrize(("text", "want"), [pytest.param(*c, id=c[0]) for c in NORMALIZED])
def test_parse_normalized(text: str, want: str) -> None:
    assert str(Semver.parse_normalized(text)) == want


@pytest.mark.parametrize(("text", "message"), [pytest.param(*c, id=repr(c[0])) for c in NORMALIZE_ERRORS])
def test_parse_normalized_errors(text: str, message: str) -> None:
    with pytest.raises(SemverError) as info:
        Semver.parse_normalized(text)
    assert str(info.value) == message


# semver.org's precedence example, ascending.
SPEC_ORDER = [
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-beta",
    "1.0.0-beta.2",
    "1.0.0-beta.11",
    "1.0.0-rc.1",
    "1.0.0",
    "1.0.1",
    "1.1.0",
    "2.0.0",
    "10.0.0",
]


def test_spec_precedence_chain() -> None:
    versions = [Semver.parse(s) for s in SPEC_ORDER]
    for i, a in enumerate(versions):
        for j, b in enumerate(versions):
            want = (i > j) - (i < j)
            assert a.compare(b) == want, (a, b)
            assert (a < b) is (want < 0)
            assert (a == b) is (want == 0)


def test_build_metadata_is_ignored() -> None:
    a, b = Semver.parse("1.0.0+a"), Semver.parse("1.0.0+b")
    assert a == b
    assert hash(a) == hash(b)
    assert a.compare(b) == 0
    assert str(a) != str(b)
    assert Semver.parse("1.0.0-rc.1+x") == Semver.parse("1.0.0-rc.1")


def test_numeric_identifiers_compare_numerically_and_below_alphanumerics() -> None:
    assert Semver.parse("1.0.0-2") < Semver.parse("1.0.0-10")
    assert Semver.parse("1.0.0-10") < Semver.parse("1.0.0-1a")
    assert Semver.parse("1.0.0-Z") < Semver.parse("1.0.0-a")  # ASCII order
    assert PRVersion.parse("9").compare(PRVersion.parse("a")) == -1


VERSION_ATTRIBUTES = [
    ("1.2.3", True),
    ("1.2.3-rc.1+build.5", True),
    ("1.0.0-0a.-", True),
    ("0.0.0", True),
    ("v1.2.3", False),
    ("1.2", False),
    ("01.2.3", False),
    ("1.2.3-01", False),
    ("1.2.3-", False),
    ("1.2.3+", False),
    ("1.2.3\n", False),
    ("١.2.3", False),
    (f"{U64 + 1}.0.0", True),  # the regex has no numeric bound; blang then rejects it
]


@pytest.mark.parametrize(("text", "ok"), [pytest.param(*c, id=repr(c[0])) for c in VERSION_ATTRIBUTES])
def test_is_valid_version_attribute(text: str, ok: bool) -> None:
    assert is_valid_version_attribute(text) is ok


# --------------------------------------------------------------------------------------------
# Conformance vectors (library-cases.json), restated as Python calls

CONFORMANCE_DIR = Path(
    os.environ.get(
        "DRAKIT_CONFORMANCE_DIR", Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance"
    )
)
LIBRARY_CASES = CONFORMANCE_DIR / "cel" / "library-cases.json"


def _is_semver(s: str, normalize: bool = False) -> bool:
    try:
        Semver.parse_normalized(s) if normalize else Semver.parse(s)
    except SemverError:
        return False
    return True


def sv(s: str, normalize: bool = False) -> Semver:
    return Semver.parse_normalized(s) if normalize else Semver.parse(s)


SEMVER_CASES = {
    "semver/parse": lambda: sv("1.2.3"),
    "semver/parseInvalidVersion": lambda: sv("v1.0"),
    "semver/isSemver": lambda: _is_semver("1.2.3-beta.1+build.1"),
    "semver/isSemver_v_prefix_false": lambda: _is_semver("v1.0.0"),
    "semver/isSemver_v_leading_whitespace_false": lambda: _is_semver(" 1.0.0"),
    "semver/isSemver_v_contains_whitespace_false": lambda: _is_semver("1. 0.0"),
    "semver/isSemver_v_trailing_whitespace_false": lambda: _is_semver("1.0.0 "),
    "semver/isSemver_leading_zeros_false": lambda: _is_semver("01.01.01"),
    "semver/isSemver_major_minor_only_false": lambda: _is_semver("1.1"),
    "semver/isSemver_v_leading_whitespace_normalize_false": lambda: _is_semver(" 1.0.0", True),
    "semver/isSemver_v_contains_whitespace_normalize_false": lambda: _is_semver("1. 0.0", True),
    "semver/isSemver_v_trailing_whitespace_normalize_false": lambda: _is_semver("1.0.0 ", True),
    "semver/isSemver_v_prefix_normalize_true": lambda: _is_semver("v1.0.0", True),
    "semver/isSemver_leading_zeros_normalize_true": lambda: _is_semver("01.01.01", True),
    "semver/isSemver_major_only_normalize_true": lambda: _is_semver("1", True),
    "semver/isSemver_major_minor_only_normalize_true": lambda: _is_semver("1.1", True),
    "semver/equality_normalize": lambda: sv("v01.01", True) == sv("1.1.0"),
    "semver/inequality": lambda: sv("1.2.3") == sv("1.0.0"),
    "semver/semver_less": lambda: sv("1.0.0").compare(sv("1.2.3")) == -1,
    "semver/semver_greater": lambda: sv("1.2.3").compare(sv("1.0.0")) == 1,
    "semver/semver_greater_false": lambda: sv("1.0.0").compare(sv("1.0.0")) == 1,
    "semver/compare_less": lambda: sv("1.0.0").compare(sv("1.2.3")),
    "semver/major": lambda: sv("1.2.3").major,
}


def _library_cases() -> dict[str, dict[str, Any]]:
    if not LIBRARY_CASES.exists():
        pytest.skip(f"conformance vectors not found at {LIBRARY_CASES}")
    return {c["id"]: c for c in json.loads(LIBRARY_CASES.read_text())}


@pytest.mark.parametrize("case_id", sorted(SEMVER_CASES))
def test_library_conformance(case_id: str) -> None:
    expect = _library_cases()[case_id]["expect"]
    assert isinstance(expect, dict)
    fn = SEMVER_CASES[case_id]
    if "error" in expect:
        with pytest.raises(SemverError) as info:
            fn()
        assert str(expect["error"]).removesuffix(".*") in str(info.value)
        return
    got = fn()
    if expect["type"] == "semver":
        assert got == Semver.parse(str(expect["value"]))
    else:
        assert got == expect["value"]
        assert type(got).__name__ == {"bool": "bool", "int": "int"}[str(expect["type"])]


def test_every_runtime_semver_case_is_covered() -> None:
    runtime = {
        cid
        for cid, c in _library_cases().items()
        if c["library"] == "semver" and c["expect"].get("phase") != "compile"
    }
    assert runtime <= set(SEMVER_CASES)


# --------------------------------------------------------------------------------------------
# Properties

_num = st.one_of(st.integers(0, 20), st.integers(0, U64))
_alnum_id = st.from_regex(r"[0-9]*[A-Za-z-][0-9A-Za-z-]*", fullmatch=True).filter(lambda s: len(s) <= 8)
_pre_id = st.one_of(
    st.integers(0, 30).map(str), _alnum_id, st.sampled_from(["alpha", "beta", "rc", "a", "B"])
)
_build_id = st.from_regex(r"[0-9A-Za-z-]{1,6}", fullmatch=True)


@st.composite
def versions(draw: st.DrawFn) -> str:
    core = f"{draw(_num)}.{draw(_num)}.{draw(_num)}"
    pre = draw(st.lists(_pre_id, max_size=3))
    build = draw(st.lists(_build_id, max_size=2))
    return core + ("-" + ".".join(pre) if pre else "") + ("+" + ".".join(build) if build else "")


def _spec_key(v: Semver) -> tuple[object, ...]:
    """SemVer 2.0 §11 written independently: a release sorts after all its pre-releases."""
    ids = tuple((0, p.version_num, "") if p.is_num else (1, 0, p.version_str) for p in v.pre)
    return (v.major, v.minor, v.patch, 0 if v.pre else 1, ids)


@settings(max_examples=400, deadline=None)
@given(versions())
def test_round_trip_and_validity(text: str) -> None:
    v = Semver.parse(text)
    assert str(v) == text
    assert Semver.parse(str(v)) == v
    assert is_valid_version_attribute(text)


@settings(max_examples=400, deadline=None)
@given(versions(), versions(), versions())
def test_compare_is_a_total_preorder_matching_the_spec(a: str, b: str, c: str) -> None:
    x, y, z = Semver.parse(a), Semver.parse(b), Semver.parse(c)
    kx, ky = _spec_key(x), _spec_key(y)
    assert x.compare(y) == (kx > ky) - (kx < ky)
    assert x.compare(y) == -y.compare(x)
    if x <= y and y <= z:
        assert x <= z
    assert (x == y) is (x.compare(y) == 0)
    if x == y:
        assert hash(x) == hash(y)


@settings(max_examples=200, deadline=None)
@given(versions(), st.lists(_build_id, min_size=1, max_size=2))
def test_build_metadata_never_changes_precedence(text: str, build: list[str]) -> None:
    core = text.split("+", 1)[0]
    v = Semver.parse(core)
    w = Semver.parse(core + "+" + ".".join(build))
    assert v == w
    assert v.compare(w) == 0
    assert hash(v) == hash(w)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789.-+vabc ", max_size=14))
def test_normalize_accepts_a_superset_of_strict(text: str) -> None:
    try:
        strict = Semver.parse(text)
    except SemverError:
        return
    assert Semver.parse_normalized(text) == strict
