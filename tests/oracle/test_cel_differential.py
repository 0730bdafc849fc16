"""Differential testing: drakit's CEL engine against upstream's DRA CEL (``dra-oracle cel``).

Cases come from ``tests/differential/cel_generator.py``: an expression from a typed grammar
(plus some ill-typed or random text), a device, an environment (stored/new) and the two
gates that change the CEL environment.  drakit answers the way the oracle does in ``auto``
mode: compile as a selector; if that fails only because of the result type, compile and
evaluate as a plain value.  The two answers must agree on

- the outcome: both compile or both fail; both evaluate or both raise a runtime error;
- values and types (quantities and semvers by canonical string, doubles exactly, bytes as
  base64, NaN/±Inf as the oracle's strings);
- runtime error messages, exactly;
- compile error messages, exactly (syntax errors — every one ANTLR's recovery reports —,
  checker, validators, program instantiation, cost limit);
- the estimated cost of selectors (``cost.estimated``).

Known version skew (the oracle is v0.37.2, drakit follows upstream master's vectors) is
listed in ``KNOWN_SKEW`` below and excused explicitly, never by loosening the comparison.

- ``test_generated_cel_agrees``: ``DRAKIT_CEL_DIFF_EXAMPLES`` cases (default 300) with seed
  ``DRAKIT_CEL_DIFF_SEED`` (default 0).  Cases are generated first, then sent through one
  long-lived ``dra-oracle cel eval-batch`` process, pipelined, so bulk runs of 10,000+ are
  quick.  For each kind of disagreement the first example is shrunk by Hypothesis; with
  ``DRAKIT_CEL_DIFF_RECORD=1`` the shrunk cases are written to
  ``tests/differential/cel_regressions/<hash>.yaml`` together with the oracle's answer.
  ``DRAKIT_CEL_DIFF_REPORT=1`` prints the outcome mix and the throughput.
- ``test_cel_regression_replays``: every recorded case against drakit (no Go needed), and
  against the live oracle when it is built, to keep the recording honest.  A file with a
  ``known:`` line is a disagreement not fixed yet (strict xfail).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, seed, settings

from drakit.features import Features
from drakit.model.codec import KubeDumper
from drakit.quantity import Quantity
from drakit.selectors import CelError, CelRuntimeError, compile_any, compile_selector, device_view
from drakit.selectors.library.standard import format_double
from drakit.selectors.types import DYN_T as T_DYN
from drakit.selectors.types import Optional, Uint, unmap_key
from drakit.selectors.values import Semver
from tests.differential.cel_generator import CelCase, cel_cases
from tests.oracle.client import DEFAULT_BINARY, oracle_binary

REGRESSIONS = Path(__file__).resolve().parents[1] / "differential" / "cel_regressions"

UPSTREAM_PANIC = "internal error: "

# Version skew between the oracle (v0.37.2) and the vectors drakit follows (master): the
# estimated cost of includes() differs.  Lists generated here are far below the 48-value
# boundary where includes() itself behaves differently.
KNOWN_SKEW_COST = ("includes(",)

# --- drakit's answer, in the oracle's shape ------------------------------------------------


def _json_value(v: Any) -> Any:
    """A CEL value as the oracle prints it (``celToJSON`` in the Go source)."""
    if v is None or type(v) in (bool, str, int):
        return v
    if type(v) is Uint:
        return int(v)
    if type(v) is float:
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "+Inf" if v > 0 else "-Inf"
        return v
    if type(v) is bytes:
        return base64.b64encode(v).decode("ascii")
    if isinstance(v, Quantity | Semver):
        return str(v)
    if isinstance(v, list | tuple):
        return [_json_value(x) for x in v]
    if isinstance(v, dict):
        return {_go_v(unmap_key(k)): _json_value(x) for k, x in v.items()}
    if type(v) is Optional:
        return _go_v(v)
    return str(v)


def _go_v(v: Any) -> str:
    """Go's ``%v`` of the native value (how the oracle prints map keys and optionals)."""
    if v is None:
        return "<nil>"
    if type(v) is bool:
        return "true" if v else "false"
    if type(v) is float:
        return format_double(v)
    if type(v) is bytes:
        return "[" + " ".join(str(b) for b in v) + "]"
    if type(v) is Optional:
        return _go_v(v.value) if v.present else "<nil>"
    if isinstance(v, list | tuple):
        return "[" + " ".join(_go_v(x) for x in v) + "]"
    if isinstance(v, dict):
        items = sorted((_go_v(unmap_key(k)), _go_v(x)) for k, x in v.items())
        return "map[" + " ".join(f"{k}:{x}" for k, x in items) + "]"
    return str(int(v)) if type(v) is Uint else str(v)


_TYPE_NAMES = {"null_type": "null", "kubernetes.Quantity": "quantity", "kubernetes.Semver": "semver"}


def _type_name(v: Any) -> str:
    from drakit.selectors.values import type_name

    name = type_name(v)
    return _TYPE_NAMES.get(name, name)


def _features(gates: str) -> Features:
    return Features().with_gates(gates)


def drakit_answer(case: CelCase) -> dict[str, Any]:
    """Evaluate like the oracle's ``auto`` mode; any escaping exception is an outcome too."""
    try:
        return _drakit_answer(case)
    except Exception as exc:  # every escape is a disagreement worth recording
        return {"mode": "?", "error": {"phase": "exception", "message": f"{type(exc).__name__}: {exc}"}}


def _drakit_answer(case: CelCase) -> dict[str, Any]:
    features = _features(case.gates)
    view = device_view(str(case.device.get("driver") or ""), case.device)
    selector = compile_selector(case.expression, environment=case.environment, features=features)
    if selector.error is None:
        out: dict[str, Any] = {"mode": "selector", "cost": {"estimated": selector.cost_estimate}}
        try:
            out.update(value=selector.evaluate(view), type="bool")
        except (CelError, CelRuntimeError) as e:
            out["error"] = {"phase": "runtime", "message": str(e)}
        return out
    if not str(selector.error).startswith("must evaluate to "):
        return {"mode": "selector", "error": {"phase": "compile", "message": str(selector.error)}}
    compiled = compile_any(case.expression, environment=case.environment, features=features)
    if compiled.error is not None:
        return {"mode": "value", "error": {"phase": "compile", "message": str(compiled.error)}}
    out = {"mode": "value", "cost": {"estimated": compiled.cost_estimate}}
    try:
        value = compiled.evaluate_value(view)
    except (CelError, CelRuntimeError) as e:
        out["error"] = {"phase": "runtime", "message": str(e)}
        return out
    out.update(value=_json_value(value), type=_type_name(value))
    return out


def upstream_panics(case: CelCase) -> bool:
    """cel-go v0.29.2's homogeneous-aggregate validator indexes the type parameter of every
    optional list element / map value; one typed dyn (or a message) has none, and the Go
    process panics (``validator.go:329``).  Such cases cannot be asked; they are counted."""
    from drakit.selectors.ast import CreateList, CreateMap, walk
    from drakit.selectors.checker import check
    from drakit.selectors.compile import env_key
    from drakit.selectors.env import build_env
    from drakit.selectors.parser import ParseError, parse

    if "?" not in case.expression:
        return False
    try:
        parsed = parse(case.expression)
    except ParseError:
        return False
    checked, errors = check(build_env(env_key(case.environment, _features(case.gates))), parsed)
    if errors:
        return False
    for node in walk(parsed.expr):
        if isinstance(node, CreateList):
            opt = [node.elements[i] for i in node.optional_indices]
        elif isinstance(node, CreateMap):
            opt = [entry.value for entry in node.entries if entry.optional]
        else:
            continue
        if any(not checked.types.get(e.id, T_DYN).params for e in opt):
            return True
    return False


# --- the oracle, pipelined -----------------------------------------------------------------


class CelOracle:
    """One long-lived ``dra-oracle cel eval-batch``; many requests in flight at once.

    A writer thread feeds the requests while this thread reads answers, so neither pipe
    can fill up and stall the other side.
    """

    def __init__(self, binary: Path) -> None:
        self._proc = subprocess.Popen(
            [str(binary), "cel", "eval-batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1 << 16,
        )

    def ask_many(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        stdin = proc.stdin

        def feed() -> None:
            for i, r in enumerate(requests):
                stdin.write(json.dumps({**r, "id": i}) + "\n")
            stdin.flush()

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        answers = []
        for i in range(len(requests)):
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError("dra-oracle cel eval-batch exited unexpectedly")
            answer = json.loads(line)
            assert answer.get("id") == i, f"out-of-order answer {answer.get('id')} for {i}"
            assert "invalid" not in answer, f"oracle rejected the request: {answer['invalid']}"
            answers.append(answer)
        writer.join()
        return answers

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        return self.ask_many([request])[0]

    def close(self) -> None:
        if self._proc.stdin:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout:
            self._proc.stdout.close()


@pytest.fixture(scope="module")
def cel_oracle() -> Any:
    client = CelOracle(oracle_binary())
    yield client
    client.close()


# --- comparison ----------------------------------------------------------------------------

_ERROR_HEAD = re.compile(r"ERROR: <input>:(-?\d+):(\d+): (.*)")


def _phase(answer: dict[str, Any]) -> str:
    return str(answer["error"]["phase"]) if "error" in answer else "ok"


def _compile_errors(message: str) -> list[tuple[str, str]]:
    return [(f"{m[1]}:{m[2]}", m[3]) for m in _ERROR_HEAD.finditer(message)]


_TOO_COMPLEX = re.compile(r"too complex, exceeds cost limit: estimated cost (\d+) exceeds budget of 1000000")


_TOO_LONG = re.compile(r"Too long: may not be more than 10240 bytes \(got (\d+)\)")


def _validation_rejects(case: CelCase, want: dict[str, Any], got: dict[str, Any]) -> bool:
    """drakit refuses a *new* expression over the cost budget or over 10 KiB, as the API
    server's validation does; the oracle's compiler has no such checks.  Same estimate (same
    length) = same decision."""
    message = (got.get("error") or {}).get("message", "")
    m = _TOO_COMPLEX.fullmatch(message)
    if m is not None:
        estimate = (want.get("cost") or {}).get("estimated")
        # includes(): the documented estimate skew (KNOWN_SKEW_COST) reaches this decision too
        skew = (
            any(s in case.expression for s in KNOWN_SKEW_COST)
            and isinstance(estimate, int)
            and estimate > 1_000_000
        )
        return _phase(want) != "compile" and (estimate == int(m[1]) or skew)
    m = _TOO_LONG.fullmatch(message)
    return m is not None and int(m[1]) == len(case.expression.encode("utf-8")) > 10240


_PARSER_ERROR = re.compile(r"Syntax error: (mismatched input|extraneous input|missing|no viable alternative)")


def disagreements(case: CelCase, want: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """Differences between the oracle's answer (``want``) and drakit's (``got``)."""
    if case.environment == "new" and _validation_rejects(case, want, got):
        return []
    wp, gp = _phase(want), _phase(got)
    if wp != gp:
        w = want["error"]["message"] if wp != "ok" else f"{want.get('value')!r} ({want.get('type')})"
        g = got["error"]["message"] if gp != "ok" else f"{got.get('value')!r} ({got.get('type')})"
        return [f"outcome: oracle {wp} {w!r}, drakit {gp} {g!r}"]
    problems = []
    if want.get("mode") != got.get("mode") and wp != "compile":
        problems.append(f"mode: oracle {want.get('mode')}, drakit {got.get('mode')}")
    if wp == "compile":
        wm, gm = want["error"]["message"], got["error"]["message"]
        if wm != gm:
            kind = "syntax errors" if any(_PARSER_ERROR.match(t) for _, t in _compile_errors(wm)) else "compile error"
            problems.append(f"{kind}: oracle {wm!r}, drakit {gm!r}")
    elif wp == "runtime":
        wm, gm = want["error"]["message"], got["error"]["message"]
        # Upstream panics that cel-go recovers into "internal error: ..." (e.g. ext lists'
        # distinct() receiving an error value) are upstream bugs, not behaviour to copy.
        if wm != gm and not wm.startswith(UPSTREAM_PANIC):
            problems.append(f"runtime error: oracle {wm!r}, drakit {gm!r}")
    elif want.get("type") != got.get("type") or not _same(_unpoint(want.get("value")), got.get("value")):
        problems.append(
            f"value: oracle {want.get('value')!r} ({want.get('type')}), "
            f"drakit {got.get('value')!r} ({got.get('type')})"
        )
    if (
        wp != "compile"
        and want.get("mode") == got.get("mode") == "selector"
        and not any(s in case.expression for s in KNOWN_SKEW_COST)
    ):
        we, ge = (want.get("cost") or {}).get("estimated"), (got.get("cost") or {}).get("estimated")
        if we != ge:
            problems.append(f"estimated cost: oracle {we}, drakit {ge}")
    return problems


_GO_STRUCT_WITH_POINTER = re.compile(r"\{(\S+) 0x[0-9a-f]+ \d+\}")


def _unpoint(v: Any) -> Any:
    """The oracle prints a format value (``format.uuid()``) as a Go struct with a function
    pointer, ``{uuid 0xc27520 70}``; only its name is comparable."""
    m = _GO_STRUCT_WITH_POINTER.fullmatch(v) if isinstance(v, str) else None
    return m[1] if m else v


def _same(a: Any, b: Any) -> bool:
    if type(a) is float or type(b) is float:
        return isinstance(a, int | float) and isinstance(b, int | float) and float(a) == float(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b) and type(a) is type(b)


_NOISE = re.compile(r"'[^']*'|\"[^\"]*\"|\d+|[A-Za-z0-9_.-]*\.example\.com")


def signature(problems: list[str]) -> str:
    """A coarse kind of disagreement, so that one example per kind gets shrunk and kept."""
    return _NOISE.sub("_", problems[0])[:90]


def outcome_class(answer: dict[str, Any]) -> str:
    phase = _phase(answer)
    if phase != "ok":
        return f"{phase} error"
    return "bool" if answer.get("type") == "bool" else "value"


# --- the tests -----------------------------------------------------------------------------


def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )


def _generate(examples: int, seed_value: int) -> list[CelCase]:
    cases: list[CelCase] = []

    @seed(seed_value)
    @_settings(examples)
    @given(cel_cases())
    def collect(case: CelCase) -> None:
        cases.append(case)

    collect()
    return cases


def _shrink(oracle: CelOracle, kind: str, examples: int, seed_value: int) -> CelCase | None:
    """The smallest generated case showing disagreement ``kind`` (Hypothesis shrinks it)."""
    smallest: list[CelCase] = []

    @seed(seed_value)
    @_settings(examples)
    @given(cel_cases())
    def hunt(case: CelCase) -> None:
        if upstream_panics(case):
            return
        problems = disagreements(case, oracle.ask(case.request()), drakit_answer(case))
        if problems and signature(problems) == kind:
            smallest.append(case)
            raise AssertionError(kind)

    try:
        hunt()
    except AssertionError:
        return smallest[-1]
    return None


def _record(case: CelCase, want: dict[str, Any], got: dict[str, Any], problems: list[str]) -> Path:
    digest = hashlib.sha256(json.dumps(case.to_json(), sort_keys=True).encode()).hexdigest()[:16]
    document = {
        "problems": problems,
        "case": case.to_json(),
        "oracle": {k: v for k, v in want.items() if k != "id"},
        "drakit": got,
    }
    REGRESSIONS.mkdir(parents=True, exist_ok=True)
    path = REGRESSIONS / f"{digest}.yaml"
    path.write_text(yaml.dump(Dumper=KubeDumper, data=document, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def _chunks(items: list[CelCase], n: int) -> Iterable[list[CelCase]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


@pytest.mark.oracle
def test_generated_cel_agrees(cel_oracle: CelOracle) -> None:
    examples = int(os.environ.get("DRAKIT_CEL_DIFF_EXAMPLES", "300"))
    seed_value = int(os.environ.get("DRAKIT_CEL_DIFF_SEED", "0"))
    record = bool(os.environ.get("DRAKIT_CEL_DIFF_RECORD"))
    report = bool(os.environ.get("DRAKIT_CEL_DIFF_REPORT"))

    t0 = time.perf_counter()
    cases = [c for c in _generate(examples, seed_value) if not upstream_panics(c)]
    t1 = time.perf_counter()
    answers: list[dict[str, Any]] = []
    for chunk in _chunks(cases, 2000):
        answers.extend(cel_oracle.ask_many([c.request() for c in chunk]))
    t2 = time.perf_counter()
    found: dict[str, tuple[CelCase, list[str]]] = {}
    mix: Counter[str] = Counter()
    for case, want in zip(cases, answers, strict=True):
        mix[outcome_class(want)] += 1
        problems = disagreements(case, want, drakit_answer(case))
        if problems:
            found.setdefault(signature(problems), (case, problems))
    t3 = time.perf_counter()
    if report:
        n = len(cases)
        print(
            f"\n{n} cases (seed {seed_value}): generate {t1 - t0:.1f}s, "
            f"oracle {t2 - t1:.1f}s ({n / max(t2 - t1, 1e-9):.0f}/s), drakit {t3 - t2:.1f}s "
            f"({n / max(t3 - t2, 1e-9):.0f}/s); outcomes {dict(mix)}; "
            f"{len(found)} kind(s) of disagreement",
            file=sys.stderr,
        )
    if not found:
        return
    lines = []
    written = []
    for kind, (case, problems) in list(found.items())[:20]:
        # Hunt within the first cases of the same seed (where most kinds show up) and let
        # Hypothesis shrink; a kind seen only later is kept as found.
        smallest = _shrink(cel_oracle, kind, min(examples, 1000), seed_value) or case
        want = cel_oracle.ask(smallest.request())
        got = drakit_answer(smallest)
        problems = disagreements(smallest, want, got) or problems
        lines.append(f"- {problems[0]}\n  case: {json.dumps(smallest.to_json(), ensure_ascii=False)}")
        if record:
            written.append(_record(smallest, want, got, problems))
    message = f"{len(found)} kind(s) of disagreement with the oracle:\n" + "\n".join(lines)
    if written:
        message += "\nrecorded: " + ", ".join(str(p) for p in written)
    pytest.fail(message, pytrace=False)


def _regression_files() -> list[Any]:
    return [pytest.param(p, id=p.stem) for p in sorted(REGRESSIONS.glob("*.yaml"))]


def _oracle_built() -> bool:
    path = Path(os.environ.get("DRAKIT_ORACLE", DEFAULT_BINARY))
    return path.is_file() and os.access(path, os.X_OK)


@pytest.mark.parametrize("path", _regression_files())
def test_cel_regression_replays(path: Path, request: pytest.FixtureRequest) -> None:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    if document.get("known"):
        # A disagreement recorded but not fixed yet: strict, so fixing it turns this red
        # until the "known:" line is removed.
        request.applymarker(pytest.mark.xfail(reason=str(document["known"]), strict=True))
    raw = document["case"]
    case = CelCase(raw["expression"], raw["device"], raw["environment"], raw["featureGates"])
    want: dict[str, Any] = document["oracle"]
    if _oracle_built():
        live = request.getfixturevalue("cel_oracle").ask(case.request())
        live.pop("id", None)
        assert not disagreements(case, want, live), "the recorded oracle answer is stale: re-record this file"
    problems = disagreements(case, want, drakit_answer(case))
    assert not problems, "\n".join(problems)
