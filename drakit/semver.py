"""Semantic versions as Kubernetes sees them: blang/semver v4 ``Parse`` and ``Compare``.

Why hand-written: DRA version attributes become CEL ``Semver`` values parsed by blang/semver, and
selectors compare them.  The ``semver`` package on PyPI agrees on precedence but accepts numbers
above 2^64-1 and words its errors differently; the port is short, so drakit owns it and matches
blang's accept/reject decisions and error texts exactly.  :meth:`Semver.parse_normalized` is the
Kubernetes CEL ``semver(s, true)`` normalisation (library version 1, Kubernetes >= 1.33).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from drakit.gostr import quote

__all__ = [
    "PRVersion",
    "Semver",
    "SemverError",
    "is_valid_version_attribute",
]

_NUMBERS = frozenset("0123456789")
_ALPHANUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789")
_U64_MAX = (1 << 64) - 1


class SemverError(ValueError):
    """A string is not a version (blang/semver's error texts)."""


def _contains_only(s: str, allowed: frozenset[str]) -> bool:
    return all(c in allowed for c in s)


def _has_leading_zeroes(s: str) -> bool:
    return len(s) > 1 and s[0] == "0"


def _parse_uint64(s: str) -> int:
    """strconv.ParseUint(s, 10, 64) for an ASCII-digit string, with Go's error texts."""
    if not s:
        raise SemverError(f"strconv.ParseUint: parsing {quote(s)}: invalid syntax")
    # Go reads digit by digit and stops at overflow; Python's int() refuses strings over 4,300
    # digits with its own message, so a string longer than any uint64 is out of range unread.
    digits = s.lstrip("0")
    if len(digits) > len(str(_U64_MAX)) or int(digits or "0") > _U64_MAX:
        raise SemverError(f"strconv.ParseUint: parsing {quote(s)}: value out of range")
    return int(digits or "0")


@dataclass(frozen=True)
class PRVersion:
    """One dot-separated pre-release identifier: numeric identifiers sort below alphanumeric ones."""

    version_str: str = ""
    version_num: int = 0
    is_num: bool = False

    @classmethod
    def parse(cls, s: str) -> PRVersion:
        if not s:
            raise SemverError("Prerelease is empty")
        if _contains_only(s, _NUMBERS):
            if _has_leading_zeroes(s):
                raise SemverError(
                    f"Numeric PreRelease version must not contain leading zeroes {quote(s)}"
                )
            return cls(version_num=_parse_uint64(s), is_num=True)
        if _contains_only(s, _ALPHANUM):
            return cls(version_str=s)
        raise SemverError(f"Invalid character(s) found in prerelease {quote(s)}")

    def compare(self, other: PRVersion) -> int:
        if self.is_num != other.is_num:
            return -1 if self.is_num else 1
        if self.is_num:
            a: int | str = self.version_num
            b: int | str = other.version_num
        else:
            a, b = self.version_str, other.version_str  # byte order == code point order for ASCII
        return 0 if a == b else (1 if a > b else -1)  # type: ignore[operator]

    def __str__(self) -> str:
        return str(self.version_num) if self.is_num else self.version_str


@dataclass(frozen=True, eq=False)
class Semver:
    """A parsed version; ``==``, ``hash`` and ordering follow SemVer 2.0 precedence (build ignored)."""

    major: int
    minor: int
    patch: int
    pre: tuple[PRVersion, ...] = ()
    build: tuple[str, ...] = ()

    @classmethod
    def parse(cls, s: str) -> Semver:
        """blang/semver v4 ``Parse`` (strict: no ``v`` prefix, no leading zeros, three parts)."""
        if not s:
            raise SemverError("Version string empty")
        parts = s.split(".", 2)
        if len(parts) != 3:
            raise SemverError("No Major.Minor.Patch elements found")
        major = cls._number(parts[0], "major", "Major")
        minor = cls._number(parts[1], "minor", "Minor")
        patch_str = parts[2]
        build: list[str] = []
        prerelease: list[str] = []
        if "+" in patch_str:
            idx = patch_str.index("+")
            build = patch_str[idx + 1 :].split(".")
            patch_str = patch_str[:idx]
        if "-" in patch_str:
            idx = patch_str.index("-")
            prerelease = patch_str[idx + 1 :].split(".")
            patch_str = patch_str[:idx]
        patch = cls._number(patch_str, "patch", "Patch")
        pre = tuple(PRVersion.parse(p) for p in prerelease)
        for b in build:
            if not b:
                raise SemverError("Build meta data is empty")
            if not _contains_only(b, _ALPHANUM):
                raise SemverError(f"Invalid character(s) found in build meta data {quote(b)}")
        return cls(major, minor, patch, pre, tuple(build))

    @staticmethod
    def _number(s: str, lower: str, title: str) -> int:
        if not _contains_only(s, _NUMBERS):
            raise SemverError(f"Invalid character(s) found in {lower} number {quote(s)}")
        if _has_leading_zeroes(s):
            raise SemverError(f"{title} number must not contain leading zeroes {quote(s)}")
        return _parse_uint64(s)

    @classmethod
    def parse_normalized(cls, s: str) -> Semver:
        """Kubernetes CEL ``semver(s, true)``: drop one leading ``v``, strip leading zeros of each
        dot-separated part, fill in a missing minor/patch with 0, then parse strictly.
        Whitespace is not trimmed (unlike blang's ParseTolerant)."""
        if s.startswith("v"):
            s = s[1:]
        parts = s.split(".", 2)
        for i, p in enumerate(parts):
            if len(p) > 1:
                p = p.lstrip("0")
                if not p or p[0] not in _NUMBERS:
                    p = "0" + p
                parts[i] = p
        if len(parts) < 3:
            if any(c in "+-" for c in parts[-1]):
                raise SemverError("short version cannot contain PreRelease/Build meta data")
            parts.extend(["0"] * (3 - len(parts)))
        return cls.parse(".".join(parts))

    def compare(self, other: Semver) -> int:
        """blang ``Compare``: -1, 0 or 1 by SemVer 2.0 precedence; build metadata ignored."""
        for a, b in ((self.major, other.major), (self.minor, other.minor), (self.patch, other.patch)):
            if a != b:
                return 1 if a > b else -1
        if not self.pre or not other.pre:
            if self.pre:
                return -1
            if other.pre:
                return 1
            return 0
        for x, y in zip(self.pre, other.pre, strict=False):
            c = x.compare(y)
            if c:
                return c
        n, m = len(self.pre), len(other.pre)
        return 0 if n == m else (-1 if n < m else 1)

    def _key(self) -> tuple[object, ...]:
        return (
            self.major,
            self.minor,
            self.patch,
            tuple((p.is_num, p.version_num, p.version_str) for p in self.pre),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Semver):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __lt__(self, other: Semver) -> bool:
        if not isinstance(other, Semver):
            return NotImplemented
        return self.compare(other) < 0

    def __le__(self, other: Semver) -> bool:
        if not isinstance(other, Semver):
            return NotImplemented
        return self.compare(other) <= 0

    def __gt__(self, other: Semver) -> bool:
        if not isinstance(other, Semver):
            return NotImplemented
        return self.compare(other) > 0

    def __ge__(self, other: Semver) -> bool:
        if not isinstance(other, Semver):
            return NotImplemented
        return self.compare(other) >= 0

    def __str__(self) -> str:
        s = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            s += "-" + ".".join(str(p) for p in self.pre)
        if self.build:
            s += "+" + ".".join(self.build)
        return s

    def __repr__(self) -> str:
        return f"Semver({str(self)!r})"


# The API server's check for version attributes (semver.org's regular expression, ASCII only).
_N = r"(?:0|[1-9][0-9]*)"
_P = r"(?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)"
_B = r"[0-9a-zA-Z-]+"
_VERSION_ATTRIBUTE_RE = re.compile(rf"{_N}\.{_N}\.{_N}(?:-{_P}(?:\.{_P})*)?(?:\+{_B}(?:\.{_B})*)?", re.ASCII)


def is_valid_version_attribute(s: str) -> bool:
    """Whether the API server accepts ``s`` as a device ``version`` attribute's syntax.

    Only the syntax; the separate 64-byte length limit is the validator's business.
    """
    return _VERSION_ATTRIBUTE_RE.fullmatch(s) is not None
