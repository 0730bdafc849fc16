"""The claim-injecting webhook under load, next to a minimal echo endpoint on the same server stack.

The server (``drakit.webhook.server.serve``, the code ``drakit webhook serve`` runs) listens on
HTTPS on loopback with a throwaway CA, in its own process, with two routes of one app: ``/mutate``
(drakit's decision and JSONPatch) and ``/echo`` (parses the AdmissionReview and answers allowed
with its uid, nothing else).  The ratio mutate/echo is the cost of drakit's logic over the stack's.

The load comes from a separate process, one keep-alive TLS connection per client, rotating over a
set of AdmissionReviews as the API server sends them (objects after defaulting: a Polyaxon
operator pod with env and a sidecar, the golden pods of the admission tests, a Kueue Job):

* ``closed``: C connections as fast as they are answered (saturation; latency ≈ C / throughput);
  ``wrk`` (Debian's package, C, a Lua script for the bodies and the count) when it is installed,
  else the Python client below;
* ``open R/s``: a constant arrival rate over the same C connections, as an API server sends
  reviews: each review has a due time and its latency counts from then (not from when a free
  connection sent it), so a stalled server is not hidden (wrk2's correction for coordinated
  omission).  The Python client (uvloop when installed).

Each row prints p50/p99/p99.9, the throughput reached, errors, and the CPU the server and the
load generator spent per review (from /proc and wait4), with the load average at the time.

    python benchmarks/bench_webhook.py                      # 10,000 reviews per row, 50 connections
    python benchmarks/bench_webhook.py --quick              # 500 reviews, 10 connections, one rate
    python benchmarks/bench_webhook.py --config fastapi --config asgi-asyncio --config asgi-w2
    python benchmarks/bench_webhook.py --server-cpus 0 --client-cpus 1   # taskset pinning

Configurations (``--config``, repeatable; default ``asgi``): ``asgi`` (the shipped server: bare
ASGI app, uvicorn on uvloop + httptools, one worker), ``asgi-w2`` (two workers), ``asgi-asyncio``
(the same app on asyncio + h11), ``fastapi`` (the same routes as FastAPI routes on asyncio + h11,
the previous server).  The issue's target: p99 under 10 ms for /mutate.  Nothing here is asserted
by a test.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

TARGET_P99_MS = 10.0
ROUTES = ("/echo", "/mutate")
CONFIGS = {  # name: (app, uvicorn loop, uvicorn http, workers, joined writes)
    "asgi": ("asgi", "auto", "auto", 1, True),
    "asgi-w2": ("asgi", "auto", "auto", 2, True),
    "asgi-2writes": ("asgi", "auto", "auto", 1, False),
    "asgi-asyncio": ("asgi", "asyncio", "h11", 1, False),
    "fastapi-uvloop": ("fastapi", "auto", "auto", 1, False),
    "fastapi": ("fastapi", "asyncio", "h11", 1, False),
}


# --- the reviews --------------------------------------------------------------------------------


def _defaulted_pod(pod: dict[str, Any], i: int) -> dict[str, Any]:
    """``pod`` as the API server hands it to a mutating webhook: defaulted, the service-account
    volume and the default tolerations already added by the built-in admission plugins."""
    pod = copy.deepcopy(pod)
    meta = pod.setdefault("metadata", {})
    meta.setdefault("namespace", "team-a")
    spec = pod["spec"]
    for c in spec["containers"]:
        c.setdefault("imagePullPolicy", "IfNotPresent")
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
        c.setdefault("volumeMounts", []).append({"name": f"kube-api-access-{i % 99999:05d}", "readOnly": True,
                                                 "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"})
    spec.setdefault("restartPolicy", "Always")
    spec.update({"dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler", "securityContext": {},
                 "serviceAccountName": "default", "serviceAccount": "default", "enableServiceLinks": True,
                 "preemptionPolicy": "PreemptLowerPriority", "priority": 0})
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("tolerations", []).extend(
        {"key": f"node.kubernetes.io/{t}", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
        for t in ("not-ready", "unreachable"))
    spec.setdefault("volumes", []).append({"name": f"kube-api-access-{i % 99999:05d}", "projected": {
        "defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                          "fieldPath": "metadata.namespace"}}]}}]}})
    return pod


def _objects(i: int) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(group, kind, resource, object): one of each shape the injector sees."""
    env = [{"name": f"POLYAXON_{k}", "value": "x" * 16} for k in range(10)]
    env.append({"name": "NVIDIA_VISIBLE_DEVICES", "value": "none"})
    polyaxon = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"generateName": "plx-operation-",
                     "labels": {"drakit.dev/profile": "evaluation", "app.kubernetes.io/managed-by": "polyaxon",
                                "operation.polyaxon.com/uuid": f"{i:032x}"},
                     "annotations": {"operation.polyaxon.com/name": "run", "operation.polyaxon.com/kind": "job"}},
        "spec": {"restartPolicy": "Never",
                 "containers": [{"name": "polyaxon-main", "image": "python:3.11", "command": ["python", "train.py"],
                                 "env": env, "resources": {"limits": {"cpu": "4", "memory": "16Gi"}}},
                                {"name": "polyaxon-sidecar", "image": "polyaxon/polyaxon-sidecar:2.18.0",
                                 "resources": {"limits": {"cpu": "1", "memory": "500Mi"}}}]},
    }
    labels = {"drakit.dev/profile": "evaluation"}
    bare = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"g-bare-{i}", "labels": labels},
            "spec": {"containers": [{"name": "main", "image": "registry.example/job:1"}]}}
    annotated = {"apiVersion": "v1", "kind": "Pod",
                 "metadata": {"name": f"g-ann-{i}", "labels": labels, "annotations": {"a/b": "c"}},
                 "spec": {"containers": [{"name": "main", "image": "registry.example/job:1",
                                          "resources": {"limits": {"cpu": "1"}}}]}}
    job_pod = _defaulted_pod({"spec": {"restartPolicy": "Never", "containers": [
        {"name": "sidecar", "image": "registry.example/job:1"}, {"name": "trainer", "image": "registry.example/job:1"}]}}, i)
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": f"g-job-{i}", "namespace": "team-a", "annotations": {"drakit.dev/container": "trainer"},
                        "labels": {"drakit.dev/profile": "training-48g", "kueue.x-k8s.io/queue-name": "training"}},
           "spec": {"parallelism": 1, "completions": 1, "backoffLimit": 6, "completionMode": "NonIndexed",
                    "suspend": False, "manualSelector": False, "podReplacementPolicy": "TerminatingOrFailed",
                    "template": {"metadata": {}, "spec": job_pod["spec"]}}}
    return [("", "Pod", "pods", _defaulted_pod(p, i)) for p in (polyaxon, bare, annotated)] + [
        ("batch", "Job", "jobs", job)]


def reviews(n: int) -> list[bytes]:
    """``n`` AdmissionReview bodies, rotating over the shapes of :func:`_objects`."""
    out = []
    for i in range(n):
        group, kind, resource, obj = _objects(i)[i % 4]
        gvk = {"group": group, "version": "v1", "kind": kind}
        gvr = {"group": group, "version": "v1", "resource": resource}
        out.append(json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
            "uid": f"{i:08x}-0000-4000-8000-000000000000", "kind": gvk, "resource": gvr, "requestKind": gvk,
            "requestResource": gvr, "name": obj["metadata"].get("name", ""), "namespace": "team-a",
            "operation": "CREATE", "object": obj, "oldObject": None, "dryRun": False,
            "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"},
            "userInfo": {"username": "system:serviceaccount:polyaxon:polyaxon-operator",
                         "uid": "5c1e2f6a-0000-4000-8000-000000000000",
                         "groups": ["system:serviceaccounts", "system:serviceaccounts:polyaxon", "system:authenticated"]}},
        }, separators=(",", ":")).encode())
    return out


# --- server process -----------------------------------------------------------------------------


@dataclass(frozen=True)
class EchoRoute:
    """The reference: parse the review, answer allowed with its uid."""

    def __call__(self, body: bytes) -> tuple[int, bytes]:
        from drakit.webhook.server import _dumps, _loads

        uid = _loads(body)["request"]["uid"]
        return 200, _dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                            "response": {"uid": uid, "allowed": True}})


def _fastapi_app(injector: Any) -> Any:
    """The same two routes as FastAPI routes (the server before the bare ASGI app)."""
    from fastapi import FastAPI, Request, Response

    from drakit.webhook.server import MutateRoute

    def endpoint(route: Any) -> Any:
        async def handler(request: Request) -> Response:
            status, payload = route(await request.body())
            return Response(payload, status_code=status, media_type="application/json")
        handler.__annotations__ = {"request": Request, "return": Response}  # this module's annotations are strings
        return handler

    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    app.add_api_route("/mutate", endpoint(MutateRoute(injector)), methods=["POST"])
    app.add_api_route("/echo", endpoint(EchoRoute()), methods=["POST"])
    return app


def serve(port: int, cert: str, key: str, config: str) -> None:
    from drakit.profiles import compile_profile, drivers_for, parse_profiles
    from drakit.profiles.loader import example_texts
    from drakit.webhook import server
    from drakit.webhook.mutate import Injector

    app_kind, loop, http, workers, joined = CONFIGS[config]
    compiled = [compile_profile(rp, drivers_for(rp)[0]) for rp in parse_profiles([], example_texts()).selected()]
    injector = Injector.of(compiled)
    app = _fastapi_app(injector) if app_kind == "fastapi" else server.create_app(injector, {("POST", "/echo"): EchoRoute()})
    server.serve(injector, cert=cert, key=key, host="127.0.0.1", port=port, workers=workers, app=app, loop=loop, http=http,
                 join_writes=joined)


# --- the Python load generator (a process of its own) --------------------------------------------


async def _connection(port: int, ctx: ssl.SSLContext, requests: list[bytes], state: dict[str, Any],
                      start: asyncio.Event, lat: list[float], failures: list[str]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=ctx)
    state["ready"] += 1
    await start.wait()
    n, rate, t0 = state["n"], state["rate"], state["t0"]
    try:
        while (i := state["next"]) < n:
            state["next"] = i + 1
            due = t0 + i / rate if rate else None
            if due is not None and (delay := due - time.perf_counter()) > 0.001:
                await asyncio.sleep(delay - 0.001)  # the loop's timers are ms-coarse: wake early, never late
            sent = time.perf_counter()
            writer.write(requests[i % len(requests)])
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            body = await reader.readexactly(length)
            # From the due time when the review waited for a connection (open loop), else from sending.
            lat.append(time.perf_counter() - (min(sent, due) if due is not None else sent))
            if not head.startswith(b"HTTP/1.1 200") or b'"allowed":true' not in body:
                failures.append(head.split(b"\r\n")[0].decode() + " " + body[:200].decode(errors="replace"))
    finally:
        writer.close()


async def _drive(port: int, ca: str, path: str, n: int, conns: int, rate: float) -> dict[str, Any]:
    ctx = ssl.create_default_context(cafile=ca)
    requests = [f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(b)}\r\n\r\n".encode() + b for b in reviews(200)]
    lat: list[float] = []
    failures: list[str] = []
    state: dict[str, Any] = {"n": n, "rate": rate, "next": 0, "t0": 0.0, "ready": 0}
    start = asyncio.Event()
    tasks = [asyncio.create_task(_connection(port, ctx, requests, state, start, lat, failures)) for _ in range(conns)]
    while state["ready"] < conns and not any(t.done() for t in tasks):  # every TLS handshake before the clock
        await asyncio.sleep(0.01)
    state["t0"] = time.perf_counter()
    cpu0 = time.process_time()
    start.set()
    await asyncio.gather(*tasks)
    return {"lat": lat, "wall": time.perf_counter() - state["t0"], "cpu": time.process_time() - cpu0,
            "errors": len(failures), "example": failures[0] if failures else ""}


def _client_main(port: int, ca: str, path: str, n: int, conns: int, rate: float) -> None:
    try:
        import uvloop
        run: Any = uvloop.run
    except ImportError:
        run = asyncio.run
    result = run(_drive(port, ca, path, n, conns, rate))
    json.dump(result, sys.stdout)


# --- wrk --------------------------------------------------------------------------------------

WRK_SCRIPT = """
local threads, bodies, limit = {}, {}, tonumber(os.getenv("BENCH_N_PER_THREAD"))
function setup(thread) table.insert(threads, thread) end
function init(args)
  count, failed, at = 0, 0, 0
  for i = 1, tonumber(os.getenv("BENCH_BODIES")) do
    local f = assert(io.open(os.getenv("BENCH_DIR") .. "/review-" .. i .. ".json", "rb"))
    bodies[i] = wrk.format("POST", nil, {["Content-Type"] = "application/json"}, f:read("*a"))
    f:close()
  end
end
function request() at = at % #bodies + 1; return bodies[at] end
function response(status, headers, body)
  count = count + 1
  if status ~= 200 or not string.find(body, '"allowed":true', 1, true) then failed = failed + 1 end
  if count == limit then io.stderr:write("DONE\\n"); io.stderr:flush(); wrk.thread:stop() end
end
function done(summary, latency, requests)
  local failed = 0
  for _, t in ipairs(threads) do failed = failed + t:get("failed") end
  local e = summary.errors
  io.write(string.format("RESULT %d %d\\n", summary.duration, failed + e.connect + e.read + e.write + e.timeout))
  for i = 1, #latency do  -- the histogram: each occupied µs bucket and its count
    local us, n = latency(i)
    io.write(us, " ", n, "\\n")
  end
end
"""


# --- driver -----------------------------------------------------------------------------------


def _proc_cpu(pid: int) -> float:
    """CPU seconds of ``pid`` and its live descendants (uvicorn's workers) from /proc."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError, IndexError):
            continue
    return total


def _wrk(port: int, d: str, path: str, n: int, conns: int, pin: list[str],
         env: dict[str, str]) -> tuple[list[float], float, int, float]:
    """wrk for ``n`` reviews: latencies (s), wall seconds, errors, its CPU seconds.  wrk runs for a
    duration, so each thread says DONE at its share and the SIGINT that follows makes wrk print
    its summary (the Lua ``done``: its latency histogram) at once."""
    threads = min(2, conns)
    bound = max(20, n // 100)  # seconds: a server slower than 100 reviews/s stops the run early
    proc = subprocess.Popen([*pin, "wrk", "-t", str(threads), "-c", str(conns), "-d", f"{bound}s", "--timeout", "10s",
                             "-s", f"{d}/bench.lua", f"https://127.0.0.1:{port}{path}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**env, "BENCH_N_PER_THREAD": str(n // threads), "BENCH_BODIES": "40", "BENCH_DIR": d})
    assert proc.stdout is not None and proc.stderr is not None
    finished, said = 0, []
    for line in proc.stderr:
        if line.strip() != "DONE":
            said.append(line.strip())
            proc.kill()  # a Lua error: wrk would go on without the script
        elif (finished := finished + 1) == threads:
            proc.send_signal(signal.SIGINT)
            break
    out = proc.stdout.read().splitlines()
    _, status, usage = os.wait4(proc.pid, 0)
    at = next((i for i, line in enumerate(out) if line.startswith("RESULT ")), None)
    result = [out[at].split()[1:]] if at is not None else []
    if not result or said:
        raise SystemExit(f"wrk failed (exit {os.waitstatus_to_exitcode(status)}): {' '.join(said) or out}")
    lat = [int(us) / 1e6 for line in out[at + 1:] for us, n in [line.split()] for _ in range(int(n))] if at is not None else []
    return lat, int(result[0][0]) / 1e6, int(result[0][1]), usage.ru_utime + usage.ru_stime


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


@dataclass
class Sample:
    """One route under one load, summed over the rounds."""

    lat: list[float] = field(default_factory=list)
    wall: float = 0.0
    errors: int = 0
    server_cpu: float = 0.0
    client_cpu: float = 0.0
    loads: list[float] = field(default_factory=list)

    def cell(self, q: float) -> str:
        ms = _pct(self.lat, q) * 1e3
        return f"{ms:.2f} ms" if ms < 100 else f"{ms:.0f} ms"


def _measure(into: Sample, port: int, d: str, server_pid: int, rate: float, path: str, n: int, conns: int,
             client: str, pin: list[str]) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    cpu0 = _proc_cpu(server_pid)
    if client == "wrk":
        lat, wall, errors, client_cpu = _wrk(port, d, path, n, conns, pin, env)
    else:
        proc = subprocess.run([*pin, sys.executable, __file__, "--client", str(port), f"{d}/ca.pem", path, str(n),
                               str(conns), str(rate)], stdout=subprocess.PIPE, env=env, text=True, check=False)
        if proc.returncode != 0:
            raise SystemExit(f"the load generator failed (exit {proc.returncode})")
        got = json.loads(proc.stdout)
        lat, wall, errors, client_cpu = got["lat"], got["wall"], got["errors"], got["cpu"]  # CPU from the first review
        if got["example"]:
            print(f"{path}: {errors} failed answers, e.g. {got['example']}", file=sys.stderr)
    into.server_cpu += _proc_cpu(server_pid) - cpu0
    into.lat += lat
    into.wall += wall
    into.errors += errors
    into.client_cpu += client_cpu
    into.loads.append(os.getloadavg()[0])


def _start_server(d: str, config: str, pin: list[str]) -> tuple[subprocess.Popen[bytes], int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    server = subprocess.Popen([*pin, sys.executable, __file__, "--serve", str(port), f"{d}/cert.pem", f"{d}/key.pem",
                               config], env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    deadline = time.monotonic() + 60
    while True:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return server, port
        if server.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the benchmark server ({config}) did not start")
        time.sleep(0.1)


def _decision_cost(n: int) -> float:
    """Seconds per decision in this process, without the server (for the notes)."""
    from drakit.profiles import compile_profile, drivers_for, parse_profiles
    from drakit.profiles.loader import example_texts
    from drakit.webhook.mutate import Injector, mutate
    from drakit.webhook.server import _loads

    inj = Injector.of([compile_profile(rp, drivers_for(rp)[0]) for rp in parse_profiles([], example_texts()).selected()])
    bodies = reviews(n)
    t0 = time.perf_counter()
    for b in bodies:
        mutate(_loads(b), inj).response()
    return (time.perf_counter() - t0) / n


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--requests", type=int, default=10_000, help="reviews per row")
    ap.add_argument("--clients", type=int, default=50, help="keep-alive connections")
    ap.add_argument("--rate", type=float, action="append", help="open-loop rows, reviews/s (default 1000 and 2000)")
    ap.add_argument("--config", action="append", choices=sorted(CONFIGS), help="server configuration (default asgi)")
    ap.add_argument("--load-generator", choices=("auto", "wrk", "python"), default="auto",
                    help="closed-loop client (auto: wrk when installed)")
    ap.add_argument("--server-cpus", metavar="LIST", help="taskset CPU list for the server")
    ap.add_argument("--client-cpus", metavar="LIST", help="taskset CPU list for the load generator")
    ap.add_argument("--rounds", type=int, default=5, help="each row's reviews in this many runs, echo and mutate in turn")
    ap.add_argument("--quick", action="store_true", help="500 reviews, 10 connections, one rate of 200/s, one round")
    ap.add_argument("--serve", nargs=4, metavar=("PORT", "CERT", "KEY", "CONFIG"), help=argparse.SUPPRESS)
    ap.add_argument("--client", nargs=6, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(int(args.serve[0]), args.serve[1], args.serve[2], args.serve[3])
        return
    if args.client:
        port, ca, path, n, conns, rate = args.client
        _client_main(int(port), ca, path, int(n), int(conns), float(rate))
        return
    n, conns = (500, 10) if args.quick else (args.requests, args.clients)
    rates = [200.0] if args.quick else (args.rate or [1000.0, 2000.0])
    configs = args.config or ["asgi"]
    closed = "wrk" if args.load_generator == "wrk" or (args.load_generator == "auto" and shutil.which("wrk")) else "python"
    server_pin = ["taskset", "-c", args.server_cpus] if args.server_cpus else []
    client_pin = ["taskset", "-c", args.client_cpus] if args.client_cpus else []
    import trustme

    scenarios = [(f"closed, {conns} connections ({closed})", 0.0, closed)] + [
        (f"open {rate:,.0f}/s, {conns} connections", rate, "python") for rate in rates]
    rounds = 1 if args.quick else args.rounds
    results: dict[tuple[str, str, str], Sample] = {}
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as d:
        ca = trustme.CA()
        cert = ca.issue_cert("127.0.0.1")
        ca.cert_pem.write_to_path(f"{d}/ca.pem")
        cert.private_key_pem.write_to_path(f"{d}/key.pem")
        cert.cert_chain_pems[0].write_to_path(f"{d}/cert.pem")
        for i, body in enumerate(reviews(40), 1):
            Path(f"{d}/review-{i}.json").write_bytes(body)
        Path(f"{d}/bench.lua").write_text(WRK_SCRIPT)
        for config in configs:
            server, port = _start_server(d, config, server_pin)
            try:
                _measure(Sample(), port, d, server.pid, 0, "/mutate", min(n, 500), conns, "python", client_pin)  # warm-up
                for scenario, rate, client in scenarios:
                    for _ in range(rounds):  # echo and mutate in turn, so that the machine's load drifts onto both
                        for route in ROUTES:
                            sample = results.setdefault((config, scenario, route), Sample())
                            _measure(sample, port, d, server.pid, rate, route, n // rounds, conns, client, client_pin)
            finally:
                server.terminate()
                server.wait(30)
    per_decision = _decision_cost(min(n, 2000))
    pins = (f"server on CPUs {args.server_cpus or 'any'}, load generator on CPUs {args.client_cpus or 'any'}")
    print(f"### bench_webhook: {n:,} AdmissionReviews per row, {conns} keep-alive HTTPS connections on loopback; "
          f"{os.cpu_count()} CPUs, load average {load0[0]:.2f} at the start; {pins}\n")
    print("| scenario | p50 | p99 | p99.9 | throughput | errors | server CPU/review | client CPU/review "
          "| load avg | ratio p99 mutate/echo | target (p99 < 10 ms) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for (config, scenario, route), r in results.items():
        echo = results[config, scenario, "/echo"]
        done = len(r.lat)
        verdict = ("met" if _pct(r.lat, 0.99) < TARGET_P99_MS / 1e3 and not r.errors else "not met") if route == "/mutate" else "—"
        print(f"| ({route[1:]}) {config}, {scenario} | {r.cell(0.50)} | {r.cell(0.99)} | {r.cell(0.999)} "
              f"| {done / r.wall:,.0f}/s | {r.errors} | {r.server_cpu / done * 1e6:.0f} µs | {r.client_cpu / done * 1e6:.0f} µs "
              f"| {min(r.loads):.1f}–{max(r.loads):.1f} | {_pct(r.lat, 0.99) / _pct(echo.lat, 0.99):.2f} | {verdict} |")
    print(f"\nnotes: the decision alone (parse, decide, encode; no server) takes {per_decision * 1e6:.0f} µs. "
          "Closed loop saturates the server, so its latency is about connections / throughput; the open-loop rows "
          "count latency from each review's due time.")


if __name__ == "__main__":
    main()
