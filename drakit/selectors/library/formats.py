"""Kubernetes' named-format library (apiserver ``pkg/cel/library/format.go``).

``format.<name>()`` and ``format.named(name)`` give a ``kubernetes.NamedFormat``;
``f.validate(s)`` is ``optional.none()`` when ``s`` is valid, else the list of messages the
apimachinery validators (or kube-openapi's strfmt checks) would give.  The messages are
upstream's word for word, including the two spellings of the length limit ("characters" from
``util/validation``, "bytes" from ``api/validate/content``), and lengths count UTF-8 bytes,
as Go's ``len`` does.  Go's regexp ``$`` only matches at the very end, hence ``fullmatch``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from drakit.selectors import types as T
from drakit.selectors.checker import Env
from drakit.selectors.library import fn
from drakit.selectors.library.urls import request_uri_error
from drakit.selectors.types import OPTIONAL_NONE, EvalError, LibValue, Optional

_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = _LABEL + "(\\." + _LABEL + ")*"
_DNS1035 = "[a-z]([-a-z0-9]*[a-z0-9])?"
_KEY = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = "(" + _KEY + ")?"
_UUID = "(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"
_BASE64 = "^(?:[A-Za-z0-9+\\/]{4})*(?:[A-Za-z0-9+\\/]{2}==|[A-Za-z0-9+\\/]{3}=|[A-Za-z0-9+\\/]{4})$"
_DATE_TIME = "^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$"

_LABEL_RE, _SUBDOMAIN_RE, _DNS1035_RE, _KEY_RE, _LABEL_VALUE_RE = (
    re.compile(p) for p in (_LABEL, _SUBDOMAIN, _DNS1035, _KEY, _LABEL_VALUE)
)
_UUID_RE = re.compile(_UUID[4:-1], re.IGNORECASE)
_BASE64_RE = re.compile(_BASE64[1:-1])
_DATE_TIME_RE = re.compile(_DATE_TIME[1:-1])


def _regex_error(msg: str, pattern: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{pattern}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{pattern}')"


def _blen(s: str) -> int:
    return len(s.encode("utf-8", "surrogatepass"))


def _dns1123_label(s: str) -> list[str]:
    errs = []
    if _blen(s) > 63:
        errs.append("must be no more than 63 characters")
    if not _LABEL_RE.fullmatch(s):
        if _SUBDOMAIN_RE.fullmatch(s):
            errs.append("must not contain dots")
        else:
            errs.append(
                _regex_error(
                    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                    "and must start and end with an alphanumeric character",
                    _LABEL,
                    "my-name",
                    "123-abc",
                )
            )
    return errs


def _dns1123_subdomain(s: str, unit: str = "characters") -> list[str]:
    errs = []
    if _blen(s) > 253:
        errs.append(f"must be no more than 253 {unit}")
    if not _SUBDOMAIN_RE.fullmatch(s):
        errs.append(
            _regex_error(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                "and must start and end with an alphanumeric character",
                _SUBDOMAIN,
                "example.com",
            )
        )
    return errs


def _dns1035_label(s: str) -> list[str]:
    errs = []
    if _blen(s) > 63:
        errs.append("must be no more than 63 characters")
    if not _DNS1035_RE.fullmatch(s):
        errs.append(
            _regex_error(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                "alphabetic character, and end with an alphanumeric character",
                _DNS1035,
                "my-name",
                "abc-123",
            )
        )
    return errs


_KEY_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"


def _qualified_name(s: str) -> list[str]:
    """content.IsLabelKey."""
    errs: list[str] = []
    parts = s.split("/")
    if len(parts) > 2:
        return [
            "a valid label key "
            + _regex_error(_KEY_MSG, _KEY, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    name = parts[-1]
    if len(parts) == 2:
        if not parts[0]:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in _dns1123_subdomain(parts[0], "bytes"))
    if not name:
        errs.append("name part must be non-empty")
    elif _blen(name) > 63:
        errs.append("name part must be no more than 63 bytes")
    if not _KEY_RE.fullmatch(name):
        errs.append("name part " + _regex_error(_KEY_MSG, _KEY, "MyName", "my.name", "123-abc"))
    return errs


def _label_value(s: str) -> list[str]:
    errs = []
    if _blen(s) > 63:
        errs.append("must be no more than 63 bytes")
    if not _LABEL_VALUE_RE.fullmatch(s):
        errs.append(
            _regex_error(
                "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                "and must start and end with an alphanumeric character",
                _LABEL_VALUE,
                "MyValue",
                "my_value",
                "12345",
            )
        )
    return errs


def _mask_trailing_dash(s: str) -> str:
    """apimachinery's maskTrailingDash: it drops two bytes, not one, before appending "a"."""
    b = s.encode("utf-8", "surrogatepass")
    if len(b) > 1 and b.endswith(b"-"):
        return (b[:-2] + b"a").decode("utf-8", "surrogateescape")
    return s


def _prefixed(check: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    return lambda s: check(_mask_trailing_dash(s))


_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _is_date(s: str) -> bool:
    """``time.Parse("2006-01-02", s)`` succeeds (Go: 4-digit year, 2-digit month and day)."""
    if len(s) != 10 or s[4] != "-" or s[7] != "-":
        return False
    digits = s[:4] + s[5:7] + s[8:]
    if not all("0" <= c <= "9" for c in digits):
        return False
    year, month, day = int(s[:4]), int(s[5:7]), int(s[8:])
    if not 1 <= month <= 12:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return 1 <= day <= _DAYS[month - 1] + (1 if month == 2 and leap else 0)


def _is_date_time(s: str) -> bool:
    """strfmt.IsDateTime: the date before the first "t", the time pattern on what follows it."""
    if len(s) < 4:
        return False
    parts = s.lower().split("t")
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    m = _DATE_TIME_RE.fullmatch(parts[1])
    return m is not None and m[1] <= "23" and m[2] <= "59" and m[3] <= "59"


def _uri(s: str) -> list[str]:
    err = request_uri_error(s)
    return [err] if err is not None else []


def _matcher(rx: re.Pattern[str]) -> Callable[[str], bool]:
    return lambda s: rx.fullmatch(s) is not None


def _check(ok: Callable[[str], bool], message: str) -> Callable[[str], list[str]]:
    return lambda s: [] if ok(s) else [message]


class NamedFormat(LibValue):
    """``kubernetes.NamedFormat``: a validator, equal to another of the same name."""

    __slots__ = ("max_regex_size", "name", "validate")
    cel_type_name = "kubernetes.NamedFormat"

    def __init__(self, name: str, validate: Callable[[str], list[str]], max_regex_size: int) -> None:
        self.name = name
        self.validate = validate
        self.max_regex_size = max_regex_size

    def cel_equal(self, other: object) -> bool:
        if type(other) is not NamedFormat:
            raise EvalError("no such overload")
        return self.name == other.name

    def __str__(self) -> str:
        return self.name


_URL_REGEX_SIZE = 1103  # govalidator's URL pattern, upstream's estimate for "uri"
_BASE64_REGEX_SIZE = 84

FORMATS: dict[str, NamedFormat] = {
    "dns1123Label": NamedFormat("DNS1123Label", _dns1123_label, 30),
    "dns1123Subdomain": NamedFormat("DNS1123Subdomain", _dns1123_subdomain, 60),
    "dns1035Label": NamedFormat("DNS1035Label", _dns1035_label, 30),
    "qualifiedName": NamedFormat("QualifiedName", _qualified_name, 60),
    "dns1123LabelPrefix": NamedFormat("DNS1123LabelPrefix", _prefixed(_dns1123_label), 30),
    "dns1123SubdomainPrefix": NamedFormat("DNS1123SubdomainPrefix", _prefixed(_dns1123_subdomain), 60),
    "dns1035LabelPrefix": NamedFormat("DNS1035LabelPrefix", _prefixed(_dns1035_label), 30),
    "labelValue": NamedFormat("LabelValue", _label_value, 40),
    "uri": NamedFormat("URI", _uri, _URL_REGEX_SIZE),
    "uuid": NamedFormat("uuid", _check(_matcher(_UUID_RE), "does not match the UUID format"), len(_UUID)),
    "byte": NamedFormat("byte", _check(_matcher(_BASE64_RE), "invalid base64"), _BASE64_REGEX_SIZE),
    "date": NamedFormat("date", _check(_is_date, "invalid date"), len(_DATE_TIME)),
    "datetime": NamedFormat("datetime", _check(_is_date_time, "invalid datetime"), len(_DATE_TIME)),
}


def _validate(f: NamedFormat, s: str) -> Optional:
    errs = f.validate(s)
    return Optional(errs) if errs else OPTIONAL_NONE


def _named(name: str) -> Optional:
    f = FORMATS.get(name)
    return Optional(f) if f is not None else OPTIONAL_NONE


def declare(env: Env) -> None:
    F = T.NAMED_FORMAT
    fn(
        env,
        "validate",
        "format-validate",
        [F, T.STRING],
        T.optional_of(T.list_of(T.STRING)),
        _validate,
        member=True,
    )
    fn(env, "format.named", "format-named", [T.STRING], T.optional_of(F), _named)
    for key, f in FORMATS.items():
        fn(env, f"format.{key}", f"format.{key}", [], F, lambda f=f: f)
