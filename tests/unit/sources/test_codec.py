"""The decoder reads YAML and JSON as kubectl does (go-yaml v2 under sigs.k8s.io/yaml, strict)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from drakit.model.codec import MAX_DEPTH, KubeDumper, allowed_alias_ratio, parse_text, resolve_plain
from tests.unit.sources.alias_shapes import KUBECTL_VERDICTS, alias_document


@pytest.mark.parametrize(("text", "want"), [
    # go-yaml v2's resolve table: y/Y/n/N and on/off are bools (PyYAML's YAML 1.1 set lacks y/n)
    *[pytest.param(s, True, id=f"true-{s}") for s in ("y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True")],
    *[pytest.param(s, False, id=f"false-{s}") for s in ("n", "N", "no", "NO", "off", "OFF", "false", "FALSE")],
    *[pytest.param(s, None, id=f"null-{s or 'empty'}") for s in ("", "~", "null", "Null", "NULL")],
    pytest.param("yEs", "yEs", id="mixed-case-is-a-string"),
    pytest.param("0x1F", 31, id="hex"), pytest.param("0o17", 15, id="octal-0o"), pytest.param("017", 15, id="octal-0"),
    pytest.param("0b101", 5, id="binary"), pytest.param("1_000", 1000, id="underscores"),
    pytest.param("-42", -42, id="negative"), pytest.param("+7", 7, id="plus"),
    pytest.param("08", 8.0, id="not-octal-is-float"), pytest.param("1e3", 1000.0, id="exponent-without-dot"),
    pytest.param(".5", 0.5, id="leading-dot"), pytest.param("1.", 1.0, id="trailing-dot"),
    pytest.param("1e400", "1e400", id="float-overflow-stays-text"),
    pytest.param("1:30", "1:30", id="no-sexagesimal"), pytest.param("2001-12-14", "2001-12-14", id="timestamp-text"),
    pytest.param("2001-12-14T21:59:43.10-05:00", "2001-12-14T21:59:43.10-05:00", id="datetime-text"),
    pytest.param("9223372036854775807", 2**63 - 1, id="int64-max"),
    pytest.param("18446744073709551615", 2**64 - 1, id="uint64-max"),
    pytest.param("18446744073709551616", 1.8446744073709552e19, id="beyond-uint64-is-float"),
    pytest.param("-9223372036854775809", -9.223372036854775809e18, id="below-int64-is-float"),
    pytest.param("0x", "0x", id="empty-hex"), pytest.param("-", "-", id="dash"), pytest.param(".", ".", id="dot"),
])
def test_plain_scalars_resolve_like_go_yaml_v2(text: str, want: Any) -> None:
    got = resolve_plain(text)
    assert (type(got), got) == (type(want), want)


def test_special_floats_and_quoting() -> None:
    assert math.isnan(resolve_plain(".nan")) and resolve_plain("-.Inf") == -math.inf
    docs, problems = parse_text("x.yaml", "a: 'yes'\nb: \"1\"\nc: !!str 2\nd: !!int '3'\ny: n\n")
    assert problems == []
    assert docs[0].data == {"a": "yes", "b": "1", "c": "2", "d": 3, "true": False}


def _problem(text: str, name: str = "x.yaml") -> str:
    docs, problems = parse_text(name, text)
    assert docs == [] and len(problems) == 1, (docs, problems)
    return str(problems[0])


def _bomb(levels: int) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("text", "want"), [
    pytest.param("a: 1\nb:\n  c: 2\n  c: 3\n", 'x.yaml[0]: b.c: line 4: key "c" already set in map', id="duplicate"),
    pytest.param("y: 1\ntrue: 2\n", "key true already set in map", id="duplicate-after-bool-resolution"),
    pytest.param("a: &a\n  b: *a\n", "anchor value contains itself", id="recursive-anchor"),
    pytest.param(_bomb(6), "document contains excessive aliasing", id="alias-bomb"),
    pytest.param("a: .nan\n", "a: line 1: json: unsupported value: .nan", id="nan"),
    pytest.param("a: [" * 150 + "]" * 150, f"nesting is deeper than {MAX_DEPTH} levels", id="deep-flow"),
    pytest.param("? [a]\n: b\n", "a mapping key must be a scalar", id="non-scalar-key"),
    pytest.param("a: [1,\n", "x.yaml[0]: error parsing YAML at line 2, column 1", id="syntax"),
    pytest.param("a: *nope\n", "found undefined alias", id="undefined-alias"),
])
def test_yaml_refusals(text: str, want: str) -> None:
    assert want in _problem(text)


def test_pyyaml_alone_leaves_go_yaml_bools_bare() -> None:
    """Why KubeDumper exists: PyYAML writes ``y`` unquoted, and kubectl reads it as true."""
    (doc,), _ = parse_text("x.yaml", yaml.safe_dump({"v": "y"}))
    assert doc.data == {"v": True}
    (doc,), _ = parse_text("x.yaml", yaml.dump({"v": "y", "w": "1e3", "x": " a"}, Dumper=KubeDumper))
    assert doc.data == {"v": "y", "w": "1e3", "x": " a"}


def test_a_few_aliases_are_fine() -> None:
    docs, problems = parse_text("x.yaml", _bomb(2))  # 100 expansions: well inside the budget
    assert problems == [] and len(docs[0].data["a2"]) == 10


@pytest.mark.parametrize(("shape", "refused"), [
    pytest.param(shape, refused, id="-".join(map(str, shape))) for shape, refused in KUBECTL_VERDICTS.items()])
def test_alias_budget_is_counted_stepwise_as_kubectl_does(shape: tuple[int, int, int, str], refused: bool) -> None:
    _, problems = parse_text("x.yaml", alias_document(*shape))
    assert any("excessive aliasing" in p.message for p in problems) is refused, problems


def test_alias_ratio_scales_like_go_yaml() -> None:
    assert allowed_alias_ratio(1000) == 0.99 and allowed_alias_ratio(10**7) == 0.10
    assert 0.10 < allowed_alias_ratio(2_000_000) < 0.99


@pytest.mark.parametrize(("text", "want"), [
    pytest.param('{"a": 1, "a": 2}', 'key "a" already set in map', id="duplicate"),
    pytest.param('{"a": {"b": NaN}}', "x.json[0]: a.b: json: unsupported value: NaN", id="nan"),
    pytest.param('{"a": 1e400}', "a: json: unsupported value: 1e400", id="overflow"),
    pytest.param("[" * 2000 + "]" * 2000, f"x.json[0]: line 1: nesting is deeper than {MAX_DEPTH} levels", id="deep"),
    pytest.param("[\n" * 101 + "]" * 101, f"line 101: nesting is deeper than {MAX_DEPTH} levels", id="deep-by-one"),
    pytest.param('{"a":' * 150 + "1" + "}" * 150, "nesting is deeper", id="deep-objects"),
    pytest.param("[" * 100_000, f"nesting is deeper than {MAX_DEPTH} levels", id="deep-unclosed"),
    pytest.param('{"a" : 1, "a" : 2}', 'key "a" already set in map', id="duplicate-spaced-colon"),
    pytest.param(r'{"a\\": 1, "a\\": 2}', "already set in map", id="duplicate-escaped-backslash"),
    pytest.param(r'{"a": "\":", "a": 2}', "already set in map", id="duplicate-escaped-quote-colon"),
    pytest.param('{"a": ', "x.json: error parsing JSON at line 1, column 7", id="syntax"),
])
def test_json_refusals(text: str, want: str) -> None:
    assert want in _problem(text, "x.json")


@pytest.mark.parametrize("text", [
    pytest.param("[" * MAX_DEPTH + "]" * MAX_DEPTH, id="at-the-limit"),
    pytest.param("[" * 60 + '"]]]]]]]]", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["' + "]" * 60, id="brackets-in-strings"),
    pytest.param(r'[{"a\\": "[[[[\"[[["}]', id="escapes-in-strings"),
])
def test_json_depth_counts_structure_only(text: str) -> None:
    docs, problems = parse_text("x.json", text)
    assert problems == [] and len(docs) == 1 and docs[0].data == json.loads(text)


@given(st.lists(st.booleans(), min_size=1, max_size=3 * MAX_DEPTH), st.booleans())
@settings(max_examples=80, derandomize=True, deadline=None)
def test_json_depth_is_exact(levels: list[bool], leaf: bool) -> None:
    """The pre-scan's answer equals the real nesting, however the levels mix arrays and objects
    (a pass may drop one level or two)."""
    depth = len(levels)
    text = "".join('{"k":' if obj else "[" for obj in levels) + ("[]" if leaf else "1")
    text += "".join("}" if obj else "]" for obj in reversed(levels))
    depth += leaf
    _, problems = parse_text("x.json", text)
    assert bool(problems) == (depth > MAX_DEPTH), (depth, problems)


def test_big_integers_are_flagged_for_typing() -> None:
    (doc,), _ = parse_text("x.json", '{"a": 99999999999999999999}')
    assert doc.bigint
    (doc,), _ = parse_text("x.yaml", "a: 9223372036854775808\n")
    assert doc.bigint and doc.data == {"a": 2**63}
    (doc,), _ = parse_text("x.yaml", "a: 1\n")
    assert not doc.bigint


def test_documents_lines_and_separators() -> None:
    text = "# head\na: 1\n--- # c\n\nkind: X\nspec:\n  devices:\n  - name: a\n  - name: b\n--- {c: 3}\n"
    docs, problems = parse_text("x.yaml", text)
    assert problems == []
    assert [(d.index, d.line, d.data) for d in docs][0::2] == [(0, 2, {"a": 1}), (2, 10, {"c": 3})]
    assert docs[1].line == 5 and docs[1].line_of(("spec", "devices", 1, "name")) == 9
    assert docs[1].line_of(("spec", "nope")) == 6  # the nearest written ancestor


def test_one_bad_document_does_not_hide_the_others() -> None:
    docs, problems = parse_text("x.yaml", "a: 1\n---\nb: [\n---\nc: 3\n")
    assert [d.data for d in docs] == [{"a": 1}, {"c": 3}]
    assert [p.index for p in problems] == [1]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=8)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=6), kids, max_size=4),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_what_a_yaml_dumper_writes_reads_back(value: Any) -> None:
    """drakit's YAML output quotes what go-yaml v2 would resolve, so kubectl reads the same values."""
    doc = {"v": value}
    for text, name in ((yaml.dump(doc, Dumper=KubeDumper), "x.yaml"), (json.dumps(doc), "x.json")):
        docs, problems = parse_text(name, text)
        assert problems == []
        assert docs[0].data == doc
