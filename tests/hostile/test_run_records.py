"""The run-record verbs on hostile input: a wrong store, hostile arguments, a workload that spews garbage.

``run``, ``record-env``, ``log-metric`` and ``runs ls|show|compare`` answer a store URL that is
wrong (unsupported, unreachable, not a database, uncreatable) and hostile arguments with one
line and a documented exit code; a workload whose metrics channel holds bombs, NaN, wrong types,
bad bytes or an endless stream still finishes, keeps every good report and stores the bad ones.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from tests.hostile.harness import DOCUMENTED_EXITS, Result, run_in_process


def _one_line(result: Result, code: int, message: str) -> None:
    assert not result.crash, result.crash[-3000:]
    assert result.code == code and code in DOCUMENTED_EXITS, result.text
    assert "Traceback" not in result.text
    errors = [line for line in result.err.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("error: ") and message in errors[0], result.err


def _bad_stores(tmp_path: Path) -> list[tuple[str, str]]:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(bytes(range(256)) * 64)
    (tmp_path / "a-folder").mkdir()
    return [
        ("mysql://db.example/records", "only sqlite and postgresql are supported"),
        ("not a url", "is not a database URL"),
        ("postgresql://nobody@127.0.0.1:1/records", "connection failed"),
        (f"sqlite:///{garbage}", "file is not a database"),
        (f"sqlite:///{tmp_path / 'a-folder'}", "unable to open database file"),
        ("sqlite:////proc/no-such-folder/records.db", "cannot create the folder /proc/no-such-folder"),
    ]


VERBS_ON_A_STORE = [
    pytest.param(["runs", "ls"], id="runs-ls"),
    pytest.param(["runs", "show", "r-1"], id="runs-show"),
    pytest.param(["runs", "compare", "--by", "product"], id="runs-compare"),
    pytest.param(["record-env", "--run", "r-1"], id="record-env"),
    pytest.param(["run", "-p", "evaluation", "--demo", "--executor", "sim", "--", "true"], id="run"),
    pytest.param(["store", "status"], id="store-status"),
]


@pytest.mark.parametrize("verb", VERBS_ON_A_STORE)
def test_a_wrong_store_is_one_line_and_exit_1(verb: list[str], tmp_path: Path) -> None:
    cut = verb.index("--") if "--" in verb else len(verb)  # the store option goes before the command
    for url, message in _bad_stores(tmp_path):
        result = run_in_process([*verb[:cut], "--store", url, *verb[cut:]])
        _one_line(result, 1, message)
        assert "store " in result.err


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path / 'records.db'}"
    monkeypatch.setenv("DRAKIT_STORE", url)
    assert run_in_process(["run", "-p", "evaluation", "--demo", "--run-id", "ok", "--", sys.executable, "-c", "pass"]).code == 0
    return url


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        pytest.param(["runs", "ls", "--limit", str(10**20)], 2, "", id="ls-limit-past-int64"),
        pytest.param(["runs", "ls", "--limit", "-1"], 2, "", id="ls-negative-limit"),
        pytest.param(["runs", "show", "x" * 5000], 2, "not found in the store", id="show-huge-id"),
        pytest.param(["runs", "show", "ok\x1b[31m"], 2, "not found in the store", id="show-escape-id"),
        pytest.param(["runs", "compare", "--by", "x" * 5000], 2, "cannot group runs by", id="compare-huge-by"),
        pytest.param(["runs", "compare", "--chart", "/proc/nope/c.png"], 2, "--chart /proc/nope/c.png", id="chart-unwritable"),
        pytest.param(["run", "-p", "evaluation", "--demo", "--run-id", "x" * 3000, "--", "true"], 2,
                     "id: 3000 characters, at most 1024", id="run-huge-id"),
        pytest.param(["run", "-p", "evaluation", "--demo", "--run-id", "ok", "--", "true"], 2,
                     "run ok is already recorded", id="run-id-taken"),
        pytest.param(["run", "-p", "evaluation", "--demo", "--image", "i" * 3000, "--", "true"], 2,
                     "image: 3000 characters", id="run-huge-image"),
        pytest.param(["run", "-p", "evaluation", "--demo", "--product", "p" * 3000, "--", "true"], 2,
                     "pinnedProduct: 3000 characters", id="run-huge-product"),
        pytest.param(["run", "-p", "evaluation", "--demo", "--", "a" * 70000], 2, "command: 70000 characters",
                     id="run-huge-command"),
        pytest.param(["record-env", "--run", "missing"], 2, "run missing not found", id="record-env-missing-run"),
    ],
)
def test_hostile_arguments_are_one_line(store: str, args: list[str], code: int, message: str) -> None:
    result = run_in_process(args)
    assert not result.crash, result.crash[-3000:]
    assert result.code == code, result.text
    assert "Traceback" not in result.text and message in result.text
    if message:  # usage errors of the option parser have their own few lines
        _one_line(result, code, message)


def test_the_escape_sequence_never_reaches_the_terminal(store: str) -> None:
    result = run_in_process(["runs", "compare", "--metric", "a\x1b[31mb"])
    assert result.code == 0 and "\x1b" not in result.text


# A workload that writes everything a channel should survive, between two good reports.
SPEW = r"""
import json, os
path = os.environ["DRAKIT_METRICS"]
with open(path, "ab") as f:
    f.write(json.dumps({"metric": "loss", "step": 1, "value": 0.5}).encode() + b"\n")
    f.write(b"[" * 100000 + b"\n")                                        # a nesting bomb
    f.write(b'{"metric": "loss", "step": 2, "value": NaN}\n')             # NaN
    f.write(b'{"metric": "loss", "step": 3, "value": "0.1"}\n')           # a number as a string
    f.write(b'{"metric": ["loss"], "step": 4, "value": 1}\n')             # a name of the wrong type
    f.write(b'{"correctness": "acc", "value": 1e999}\n')                  # overflows to infinity
    f.write(b"\xff\xfe\x00garbage\n")                                     # not UTF-8, with a NUL
    f.write(b'{"metric": "' + b"m" * 5_000_000 + b'", "value": 1}\n')    # a five-megabyte line
    for i in range(5000):
        f.write(b"not json at all\n")
    f.write(json.dumps({"correctness": "acc", "value": 0.97}).encode() + b"\n")
"""


def test_a_spewing_workload_keeps_its_good_reports_and_stores_the_bad(store: str) -> None:
    result = run_in_process(["run", "-p", "evaluation", "--demo", "--run-id", "spew", "--", sys.executable, "-c", SPEW])
    assert (result.code, result.crash) == (0, ""), result.text
    shown = run_in_process(["runs", "show", "spew", "-o", "json"])
    assert shown.code == 0
    got = json.loads(shown.out)["result"]
    assert got["series"] == [{"name": "loss", "step": 1, "value": 0.5}] and got["correctness"] == {"acc": 0.97}
    assert got["problemCount"] == 7 + 5000 and len(got["problems"]) == 20
    assert [p["line"] for p in got["problems"]] == list(range(2, 22))
    assert all(len(p["raw"]) <= 240 and "\x00" not in p["raw"] for p in got["problems"])
    assert len(shown.out) < 64_000  # the record is a summary of the garbage, not the garbage
    assert yaml.safe_load(run_in_process(["runs", "show", "spew"]).out)["result"]["problemCount"] == 5007


ENDLESS = r"""
import json, os
with open(os.environ["DRAKIT_METRICS"], "ab") as f:
    f.write(json.dumps({"correctness": "acc", "value": 0.9}).encode() + b"\n")
    chunk = b"y" * (1 << 20)
    for _ in range(66):  # past the 64 MiB the reader takes, without a line end
        f.write(chunk)
"""


def test_a_channel_past_the_reader_limit_keeps_what_came_first(store: str) -> None:
    result = run_in_process(["run", "-p", "evaluation", "--demo", "--run-id", "endless", "--", sys.executable, "-c", ENDLESS])
    assert (result.code, result.crash) == (0, ""), result.text
    got = json.loads(run_in_process(["runs", "show", "endless", "-o", "json"]).out)["result"]
    assert got["correctness"] == {"acc": 0.9} and got["problemCount"] == 1
    assert got["problems"][0]["line"] == 2 and "limit" in got["problems"][0]["reason"]
