"""The metrics channel and MLflow key hygiene: pure pieces of the run path."""

from __future__ import annotations

import json
import posixpath
import re
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drakit.executors import metrics
from drakit.executors.mlflow import LIMITS, batches, key
from drakit.records.run import MAX_PROBLEMS, MAX_RAW


def test_channel_reads_series_correctness_and_ready() -> None:
    text = "\n".join([
        json.dumps({"ready": True, "at": 100.5}),
        json.dumps({"metric": "loss", "step": 2, "value": 0.5}),
        json.dumps({"metric": "loss", "step": 1, "value": 0.9}),
        json.dumps({"metric": "loss", "step": 2, "value": 0.4}),  # a step logged twice: the last wins
        json.dumps({"correctness": "acc", "value": 0.9}),
        json.dumps({"ready": True, "at": 200.0}),  # only the first ready counts
    ])
    got = metrics.parse(text)
    assert got.ready_at == 100.5 and got.correctness == {"acc": 0.9} and got.problems == ()
    assert [(p.step, p.value) for p in got.series] == [(1, 0.9), (2, 0.4)]


@pytest.mark.parametrize(
    ("line", "why"),
    [
        pytest.param("{not json", "not JSON", id="syntax"),
        pytest.param("[1, 2]", "not a JSON object", id="array"),
        pytest.param('{"metric": "loss", "value": NaN}', "finite value", id="nan"),
        pytest.param('{"metric": "loss", "value": 1e999}', "finite value", id="overflow-to-inf"),
        pytest.param('{"metric": "loss", "value": true}', "finite value", id="bool-value"),
        pytest.param('{"metric": "loss", "value": 1, "step": -1}', "step", id="negative-step"),
        pytest.param('{"metric": "loss", "value": 1, "step": 1.5}', "step", id="float-step"),
        pytest.param('{"metric": "", "value": 1}', "name", id="empty-name"),
        pytest.param('{"metric": "a\\u0000b", "value": 1}', "name", id="nul-in-name"),
        pytest.param(json.dumps({"metric": "x" * 2000, "value": 1}), "name", id="name-too-long"),
        pytest.param('{"correctness": 5, "value": 1}', "name", id="numeric-name"),
        pytest.param('{"ready": true}', "ready without", id="ready-without-time"),
        pytest.param('{"hello": 1}', "none of", id="unknown"),
        pytest.param("[" * 2000 + "]" * 2000, "nested too deeply", id="deep"),
        pytest.param("x" * 5000, "at most 4096", id="long-line"),
    ],
)
def test_bad_lines_are_kept_with_number_reason_and_raw_text(line: str, why: str) -> None:
    got = metrics.parse("\n".join([json.dumps({"correctness": "ok", "value": 1}), line]))
    assert got.correctness == {"ok": 1.0} and got.problem_count == 1
    (problem,) = got.problems
    assert problem.line == 2 and why in problem.reason
    assert problem.raw == (line if len(line) <= MAX_RAW else line[: MAX_RAW - 1] + "…")
    assert got.lines("m.jsonl") == (f"m.jsonl:2: {problem.reason}",)


def test_only_the_first_problems_are_kept_but_all_are_counted() -> None:
    text = "\n".join(["garbage\x00" + str(i) for i in range(MAX_PROBLEMS * 5)] + [json.dumps({"correctness": "ok", "value": 1})])
    got = metrics.parse(text)
    assert got.problem_count == MAX_PROBLEMS * 5 and len(got.problems) == MAX_PROBLEMS
    assert [p.line for p in got.problems] == list(range(1, MAX_PROBLEMS + 1))
    assert "\x00" not in got.problems[0].raw and got.correctness == {"ok": 1.0}


def test_a_line_separator_inside_a_json_string_does_not_split_the_line() -> None:
    got = metrics.parse(json.dumps({"metric": "loss\u2028x", "value": 1}, ensure_ascii=False) + "\n")
    assert got.problems == () and [p.name for p in got.series] == ["loss\u2028x"]


def test_bad_bytes_spoil_only_their_line() -> None:
    good = json.dumps({"metric": "loss", "step": 1, "value": 0.5}).encode()
    got = metrics.parse(good + b"\n\xff\xfe{\n" + good.replace(b"1,", b"2,") + b"\n")
    assert [p.step for p in got.series] == [1, 2]
    assert [(p.line, p.reason.split(" (")[0]) for p in got.problems] == [(2, "not UTF-8")]


def test_a_channel_past_the_limit_keeps_what_came_before(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    lines = [json.dumps({"metric": "loss", "step": s, "value": 1.0}) for s in range(100)]
    path.write_text("\n".join(lines) + "\n")
    cut = len("\n".join(lines[:50])) + 10  # ten characters into line 51
    got = metrics.read(str(path), limit=cut)
    assert len(got.series) == 50 and got.problem_count == 1
    assert got.problems[0].line == 51 and "limit" in got.problems[0].reason


def test_an_unreadable_channel_is_one_problem(tmp_path: Path) -> None:
    (tmp_path / "dir.jsonl").mkdir()
    got = metrics.read(str(tmp_path / "dir.jsonl"))
    assert got.problem_count == 1 and got.problems[0].line == 0 and "directory" in got.problems[0].reason


def test_a_refused_log_metric_call_is_a_problem_of_the_channel(tmp_path: Path) -> None:
    path = str(tmp_path / "m.jsonl")
    metrics.append(path, {"correctness": "ok", "value": 1})
    metrics.rejected(path, "loss: value 'nan' is not a finite number", ["log-metric", "loss", "nan"])
    metrics.rejected(path, "x" * 5000, ["log-metric", "\x01" * 3000])  # too long to keep the call: the reason stays
    got = metrics.read(path)
    assert got.correctness == {"ok": 1.0} and got.problem_count == 2
    assert got.problems[0].line == 2 and got.problems[0].reason.startswith("drakit log-metric refused: loss: value")
    assert '"call":["log-metric","loss","nan"]' in got.problems[0].raw


def test_appends_from_many_threads_never_interleave(tmp_path: Path) -> None:
    path = str(tmp_path / "m.jsonl")

    def write(t: int) -> None:
        for s in range(200):
            metrics.append(path, {"metric": f"w{t}", "step": s, "value": float(s)})

    threads = [threading.Thread(target=write, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got = metrics.read(path)
    assert got.problems == () and len(got.series) == 1600


_MLFLOW_NAME = re.compile(r"^[/\w.\- :]*$")


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_every_key_is_one_mlflow_accepts(name: str) -> None:
    """mlflow's _validate_tag_name: the charset, at most 250, and stable under posixpath.normpath."""
    k = key(name)
    assert _MLFLOW_NAME.match(k) and 0 < len(k) <= LIMITS.key
    norm = posixpath.normpath(k)
    assert norm == k and norm != "." and not norm.startswith(("..", "/"))


@settings(derandomize=True, max_examples=100, deadline=None)
@given(tags=st.integers(0, 400), points=st.integers(0, 3000), value=st.integers(0, 8000))
def test_batches_respect_every_limit(tags: int, points: int, value: int) -> None:
    tag_map = {f"drakit.t{i}": "v" * value for i in range(tags)}
    series = [("loss", 1.0, s) for s in range(points)]
    parts = list(batches(tag_map, series))
    assert sum(len(b.tags) for b in parts) == tags and sum(len(b.metrics) for b in parts) == points
    for b in parts:
        assert len(b.tags) <= LIMITS.tags_per_batch and len(b.metrics) <= LIMITS.metrics_per_batch
        assert len(b.tags) + len(b.metrics) <= LIMITS.entities_per_batch
        assert sum(len(k) + len(v) for k, v in b.tags) < LIMITS.request_bytes
