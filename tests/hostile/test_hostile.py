"""Every command that reads input, on every hostile input: a one-line refusal, never a traceback.

In-process runs (the real error mapping of ``run_guarded``) cover the corpus; real subprocesses
with a timeout and an address-space cap cover what only a process shows: hangs (FIFOs, endless
pipes, ``/dev/zero``), closed stdin and memory (alias bombs).  Every case runs through every
command: a command that shares the strict decoder can still crash after it, on its own path.
"""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest

from tests.hostile.corpus import (
    BASE,
    DEVICE,
    EXTRA,
    PROFILE,
    SCENARIO,
    SCENARIO_CASES,
    SCENARIO_TEMPLATE,
    Case,
    framing_cases,
    more_type_cases,
    profile_value_cases,
    semantic_cases,
    snake_case_cases,
    stream_cases,
    view_cases,
    wrong_type_cases,
)
from tests.hostile.harness import (
    DOCUMENTED_EXITS,
    VERBS,
    Result,
    check_refused,
    endless_stdin,
    run_in_process,
    run_subprocess,
)

# Every case through every command: together minutes, the longest file of the suite, so `make
# test`'s workers start it first (tests/conftest.py).
pytestmark = pytest.mark.slow

VERB_NAMES = list(VERBS)


def _answers(case: Case, folder: Path, verbs: list[str]) -> list[str]:
    path = case.make(folder)
    names = (os.path.basename(path), path)
    wrong: list[str] = []
    size = os.path.getsize(path) if os.path.isfile(path) else 0
    for verb in verbs:
        result = run_in_process(VERBS[verb](path))
        must_refuse = case.refused_by is None or verb in case.refused_by
        if must_refuse:
            wrong += check_refused(result, names, verb, input_size=size)
        elif result.crash or result.code not in {0, *DOCUMENTED_EXITS}:
            wrong.append(f"{verb}: exit {result.code}\n{result.crash[-2000:]}")
    return wrong


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in
                                  [*stream_cases(), *framing_cases(), *semantic_cases(), *snake_case_cases(),
                                   *SCENARIO_CASES, *profile_value_cases(), *view_cases()]])
def test_every_command_answers(case: Case, tmp_path: Path) -> None:
    assert _answers(case, tmp_path, VERB_NAMES) == []


TYPE_CASES = [*wrong_type_cases(), *more_type_cases()]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in TYPE_CASES])
def test_wrong_types_at_every_position(case: Case, tmp_path: Path) -> None:
    assert _answers(case, tmp_path, VERB_NAMES) == []


def test_type_cases_reach_every_kind() -> None:
    kinds = {c.id.split("-")[1] for c in TYPE_CASES}
    assert kinds >= {"ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "Pod", "Node",
                     "Event", "DeviceTaintRule", "Profile", "Scenario", "Device"}
    assert len(TYPE_CASES) > 140


# --------------------------------------------------------------------------- real processes


def _valid_bundle(folder: Path) -> str:
    import yaml

    p = folder / "ok.yaml"
    p.write_text(yaml.safe_dump_all(BASE))
    return str(p)


def _endless_writer(path: Path) -> threading.Thread:
    def write() -> None:
        try:
            with open(path, "wb") as fh:
                chunk = b"a: b\n" * 10000
                while True:
                    fh.write(chunk)
        except (BrokenPipeError, OSError):
            pass

    t = threading.Thread(target=write, daemon=True)
    t.start()
    return t


@pytest.mark.parametrize("verb", ["validate", "cel-eval-device"])
def test_endless_fifo_is_cut_at_the_byte_cap(verb: str, tmp_path: Path) -> None:
    fifo = tmp_path / "endless.yaml"
    os.mkfifo(fifo)
    _endless_writer(fifo)
    r = run_subprocess(VERBS[verb](str(fifo)), timeout=60)
    assert check_refused(r, ("endless.yaml",), verb) == []
    assert "larger than the 64 MiB limit" in r.text


# One real process per reader family proves the exit code and that nothing hangs; the other
# commands share those readers and run in this process (the suite's cost was these processes).
PROCESS_PER_FAMILY = frozenset({"validate", "profile-compile", "simulate", "cel-eval-device"})
assert set(VERB_NAMES) >= PROCESS_PER_FAMILY


@pytest.mark.parametrize("verb", VERB_NAMES)
def test_endless_stdin_is_cut_at_the_byte_cap(verb: str) -> None:
    if verb not in PROCESS_PER_FAMILY:
        r = run_in_process(VERBS[verb]("-"), stdin=endless_stdin())
        assert check_refused(r, ("-:",), verb) == [] and "larger than the 64 MiB limit" in r.text
        return
    yes = subprocess.Popen(["yes", "a: b"], stdout=subprocess.PIPE)
    try:
        r = run_subprocess(VERBS[verb]("-"), stdin=yes.stdout, timeout=60)
    finally:
        yes.kill()
        yes.wait()
    assert check_refused(r, ("-:",), verb) == []


@pytest.mark.parametrize("verb", VERB_NAMES)
def test_closed_stdin_is_an_error_not_a_hang(verb: str) -> None:
    if verb in PROCESS_PER_FAMILY:
        r = run_subprocess(VERBS[verb]("-"), close_stdin=True, timeout=30)
    else:
        r = run_in_process(VERBS[verb]("-"), stdin=None)
    assert check_refused(r, ("-:",), verb) == []


@pytest.mark.parametrize(("source", "verb"), [("/dev/zero", "simulate"), ("/dev/urandom", "match")])
def test_endless_devices(source: str, verb: str) -> None:
    r = run_subprocess(VERBS[verb](source), timeout=60)
    assert check_refused(r, (source,), verb) == []


@pytest.mark.parametrize(("case", "verb"), [("alias-bomb-sequences", "validate"), ("alias-bomb-mappings", "trial"),
                                           ("fifo-without-writer", "profile-compile")])
def test_bounded_in_a_real_process(case: str, verb: str, tmp_path: Path) -> None:
    """Alias bombs and a FIFO nobody writes to, under a 1.5 GiB address-space cap and a timeout."""
    c = next(x for x in stream_cases() if x.id == case)
    path = c.make(tmp_path)
    r = run_subprocess(VERBS[verb](path), timeout=60, memory_mib=1536)
    assert check_refused(r, (os.path.basename(path),), verb) == []


def test_a_valid_bundle_still_works_through_the_harness(tmp_path: Path) -> None:
    """The harness can tell success from refusal (or every check above could pass vacuously)."""
    path = _valid_bundle(tmp_path)
    r: Result = run_in_process(VERBS["validate"](path))
    assert (r.code, r.crash) == (0, ""), r.text
    assert "object(s) valid" in r.out


@pytest.mark.parametrize(("verb", "docs"), [
    pytest.param("validate", [*BASE, *EXTRA], id="manifests"),
    pytest.param("profile-compile", [PROFILE], id="profile"),
    pytest.param("simulate", [SCENARIO, SCENARIO_TEMPLATE], id="scenario"),
    pytest.param("cel-eval-device", [DEVICE], id="device"),
])
def test_the_unbroken_inputs_are_accepted(verb: str, docs: list[object], tmp_path: Path) -> None:
    """Each wrong-type case breaks one position of an input the command accepts, or it proves nothing."""
    import yaml

    p = tmp_path / "ok.yaml"
    p.write_text(yaml.safe_dump_all(docs))
    r = run_in_process(VERBS[verb](str(p)))
    assert (r.code, r.crash) == (0, ""), r.text
