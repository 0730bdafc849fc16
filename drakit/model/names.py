"""Name formats of k8s.io/apimachinery/pkg/util/validation, with the API server's messages.

Hand-written: these few regular expressions and their exact message texts are what users
see from ``kubectl apply``; no Python package reproduces the wording.  Each function
returns the list of problems (empty when valid), like the Go ``Is*`` helpers.
"""

from __future__ import annotations

import re


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    text = msg + " (e.g. "
    for i, ex in enumerate(examples):
        if i:
            text += " or "
        text += f"'{ex}', "
    return text + f"regex used for validation is '{fmt}')"


def max_len_error(n: int) -> str:
    return f"must be no more than {n} characters"


EMPTY_ERROR = "must be non-empty"

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_LABEL_RE = re.compile(f"^{_LABEL_FMT}\\Z")
_SUBDOMAIN_FMT = _LABEL_FMT + "(\\." + _LABEL_FMT + ")*"
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_SUBDOMAIN_RE = re.compile(f"^{_SUBDOMAIN_FMT}\\Z")
_CID_FMT = "[A-Za-z_][A-Za-z0-9_]*"
_CID_MSG = "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_'"
_CID_RE = re.compile(f"^{_CID_FMT}\\Z")
_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
_QNAME_RE = re.compile(f"^{_QNAME_FMT}\\Z")
QUALIFIED_NAME_MAX = 63
_LVALUE_FMT = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"
_LVALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LVALUE_RE = re.compile(f"^{_LVALUE_FMT}\\Z")
LABEL_VALUE_MAX = 63


def dns1123_label(value: str) -> list[str]:
    errs = []
    if len(value) > DNS1123_LABEL_MAX:
        errs.append(max_len_error(DNS1123_LABEL_MAX))
    if not _LABEL_RE.match(value):
        errs.append(_regex_error(_LABEL_MSG, _LABEL_FMT, "my-name", "123-abc"))
    return errs


def dns1123_subdomain(value: str) -> list[str]:
    errs = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX))
    if not _SUBDOMAIN_RE.match(value):
        errs.append(_regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com"))
    return errs


def c_identifier(value: str) -> list[str]:
    if _CID_RE.match(value):
        return []
    return [_regex_error(_CID_MSG, _CID_FMT, "my_name", "MY_NAME", "MyName")]


def qualified_name(value: str) -> list[str]:
    """IsQualifiedName: label keys, taint keys, condition types."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + EMPTY_ERROR)
        else:
            errs.extend("prefix part " + m for m in dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name "
            + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part " + EMPTY_ERROR)
    elif len(name) > QUALIFIED_NAME_MAX:
        errs.append("name part " + max_len_error(QUALIFIED_NAME_MAX))
    if name and not _QNAME_RE.match(name):
        errs.append("name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def label_key(value: str) -> list[str]:
    """IsLabelKey (label selectors): IsQualifiedName's rules, its own wording for a bad shape."""
    parts = value.split("/")
    if len(parts) > 2:
        return [
            "a valid label key "
            + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    errs: list[str] = []
    if len(parts) == 2:
        prefix = parts[0]
        errs += ["prefix part " + m for m in dns1123_subdomain(prefix)] if prefix else ["prefix part " + EMPTY_ERROR]
    name = parts[-1]
    if not name:
        errs.append("name part " + EMPTY_ERROR)
    elif len(name) > QUALIFIED_NAME_MAX:
        errs.append("name part " + max_len_error(QUALIFIED_NAME_MAX))
    if not _QNAME_RE.match(name):
        errs.append("name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def label_value(value: str) -> list[str]:
    errs = []
    if len(value) > LABEL_VALUE_MAX:
        errs.append(max_len_error(LABEL_VALUE_MAX))
    if not _LVALUE_RE.match(value):
        errs.append(_regex_error(_LVALUE_MSG, _LVALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


_SEMVER_NUM = r"(0|[1-9]\d*)"
_SEMVER_PRE = r"(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
_SEMVER_BUILD = r"[0-9a-zA-Z-]+"
SEMVER_RE = re.compile(
    rf"^{_SEMVER_NUM}\.{_SEMVER_NUM}\.{_SEMVER_NUM}"
    rf"(-{_SEMVER_PRE}(\.{_SEMVER_PRE})*)?"
    rf"(\+{_SEMVER_BUILD}(\.{_SEMVER_BUILD})*)?$"
)
