"""The claim-injecting webhook under load, next to a minimal echo endpoint on the same stack.

One uvicorn process serves HTTPS on loopback (a throwaway CA, as the API server would call it)
with two routes of the same FastAPI app: ``/mutate`` (drakit's decision and JSONPatch) and
``/echo`` (parses the AdmissionReview and answers allowed with its uid, nothing else).  A second
process drives N AdmissionReviews from C concurrent keep-alive clients (asyncio, one TLS
connection each) at each route in turn, and prints p50/p99 latency and throughput side by side
with the ratio mutate/echo: the cost of drakit's logic over the server stack's own.  The review is
a labelled pod as the Polyaxon operator creates it (main container with env, a sidecar).

    python benchmarks/bench_webhook.py            # 10,000 reviews, 50 clients, per route
    python benchmarks/bench_webhook.py --quick    # 500 reviews, 10 clients

The issue's target: p99 under 10 ms for /mutate.  Nothing here is asserted by a test.
"""


import argparse
import asyncio
import json
import os
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

TARGET_P99_MS = 10.0


def review(i: int) -> dict[str, Any]:
    env = [{"name": f"POLYAXON_{k}", "value": "x" * 16} for k in range(10)]
    env.append({"name": "NVIDIA_VISIBLE_DEVICES", "value": "none"})
    pod = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"generateName": "plx-operation-", "namespace": "team-a",
                     "labels": {"drakit.dev/profile": "evaluation", "app.kubernetes.io/managed-by": "polyaxon",
                                "operation.polyaxon.com/uuid": f"{i:032x}"},
                     "annotations": {"operation.polyaxon.com/name": "run", "operation.polyaxon.com/kind": "job"}},
        "spec": {"restartPolicy": "Never",
                 "containers": [{"name": "polyaxon-main", "image": "python:3.11", "command": ["python", "train.py"],
                                 "env": env, "resources": {"limits": {"cpu": "4", "memory": "16Gi"}}},
                                {"name": "polyaxon-sidecar", "image": "polyaxon/polyaxon-sidecar:2.18.0",
                                 "resources": {"limits": {"cpu": "1", "memory": "500Mi"}}}]},
    }
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": f"uid-{i}", "kind": {"group": "", "version": "v1", "kind": "Pod"},
                        "resource": {"group": "", "version": "v1", "resource": "pods"},
                        "operation": "CREATE", "namespace": "team-a", "object": pod,
                        "userInfo": {"username": "system:serviceaccount:polyaxon:polyaxon-operator"}}}


# --- server process ---------------------------------------------------------------------------


def serve(port: int, cert: str, key: str) -> None:
    import uvicorn
    from fastapi import Request, Response

    from drakit.profiles import compile_profile, drivers_for, parse_profiles
    from drakit.profiles.loader import example_texts
    from drakit.webhook.mutate import Injector
    from drakit.webhook.server import create_app

    compiled = [compile_profile(rp, drivers_for(rp)[0]) for rp in parse_profiles([], example_texts()).selected()]
    app = create_app(Injector.of(compiled))

    @app.post("/echo")
    async def _echo(request: Request) -> Response:
        body = json.loads(await request.body())
        answer = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                  "response": {"uid": body["request"]["uid"], "allowed": True}}
        return Response(json.dumps(answer, separators=(",", ":")), media_type="application/json")

    uvicorn.run(app, host="127.0.0.1", port=port, ssl_certfile=cert, ssl_keyfile=key, log_level="error",
                access_log=False)


# --- client -----------------------------------------------------------------------------------


async def _client(host: str, port: int, ctx: ssl.SSLContext, path: str, bodies: list[bytes],
                  latencies: list[float], failures: list[str]) -> None:
    reader, writer = await asyncio.open_connection(host, port, ssl=ctx)
    try:
        for body in bodies:
            head = (f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(body)}\r\n\r\n").encode()
            t0 = time.perf_counter()
            writer.write(head + body)
            await writer.drain()
            status = await reader.readline()
            length = 0
            while (line := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            payload = await reader.readexactly(length)
            latencies.append(time.perf_counter() - t0)
            if b" 200 " not in status or b'"allowed":true' not in payload:
                failures.append(status.decode().strip() + " " + payload[:200].decode(errors="replace"))
    finally:
        writer.close()


async def _load(port: int, ca: str, path: str, n: int, clients: int) -> tuple[list[float], float, list[str]]:
    ctx = ssl.create_default_context(cafile=ca)
    bodies = [json.dumps(review(i)).encode() for i in range(n)]
    shares = [bodies[i::clients] for i in range(clients)]
    latencies: list[float] = []
    failures: list[str] = []
    t0 = time.perf_counter()
    await asyncio.gather(*(_client("127.0.0.1", port, ctx, path, s, latencies, failures) for s in shares))
    return latencies, time.perf_counter() - t0, failures


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def _decision_cost(n: int) -> float:
    """Seconds per decision in this process, without the server (for the notes)."""
    from drakit.profiles import compile_profile, drivers_for, parse_profiles
    from drakit.profiles.loader import example_texts
    from drakit.webhook.mutate import Injector, mutate

    inj = Injector.of([compile_profile(rp, drivers_for(rp)[0]) for rp in parse_profiles([], example_texts()).selected()])
    reviews = [review(i) for i in range(n)]
    t0 = time.perf_counter()
    for r in reviews:
        mutate(r, inj)
    return (time.perf_counter() - t0) / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=10_000)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--quick", action="store_true", help="500 reviews from 10 clients")
    ap.add_argument("--serve", nargs=3, metavar=("PORT", "CERT", "KEY"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(int(args.serve[0]), args.serve[1], args.serve[2])
        return
    n, clients = (500, 10) if args.quick else (args.requests, args.clients)
    import trustme

    with tempfile.TemporaryDirectory() as d:
        ca = trustme.CA()
        cert = ca.issue_cert("127.0.0.1")
        ca.cert_pem.write_to_path(f"{d}/ca.pem")
        cert.private_key_pem.write_to_path(f"{d}/key.pem")
        cert.cert_chain_pems[0].write_to_path(f"{d}/cert.pem")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = subprocess.Popen([sys.executable, __file__, "--serve", str(port), f"{d}/cert.pem", f"{d}/key.pem"],
                                  env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
        try:
            deadline = time.monotonic() + 60
            while True:
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", port)) == 0:
                        break
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("the benchmark server did not start")
                time.sleep(0.1)
            asyncio.run(_load(port, f"{d}/ca.pem", "/mutate", min(n, 200), clients))  # warm-up
            rows = {}
            for path in ("/echo", "/mutate"):
                lat, wall, failures = asyncio.run(_load(port, f"{d}/ca.pem", path, n, clients))
                if failures:
                    raise SystemExit(f"{path}: {len(failures)} failed answers, e.g. {failures[0]}")
                rows[path] = (_pct(lat, 0.50) * 1e3, _pct(lat, 0.99) * 1e3, n / wall, statistics.fmean(lat) * 1e3)
        finally:
            server.terminate()
            server.wait(15)
    per_decision = _decision_cost(min(n, 2000))
    echo, mut = rows["/echo"], rows["/mutate"]
    print(f"### bench_webhook: {n:,} AdmissionReviews per route, {clients} concurrent HTTPS clients on loopback\n")
    print("| scenario | p50 | p99 | mean | throughput | ratio p99 mutate/echo | target (p99 < 10 ms) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    print(f"| (echo) minimal endpoint, same FastAPI/uvicorn app | {echo[0]:.2f} ms | {echo[1]:.2f} ms | {echo[3]:.2f} ms "
          f"| {echo[2]:,.0f}/s | 1.00 | — |")
    print(f"| (mutate) drakit decision + JSONPatch | {mut[0]:.2f} ms | {mut[1]:.2f} ms | {mut[3]:.2f} ms | {mut[2]:,.0f}/s "
          f"| {mut[1] / echo[1]:.2f} | {'met' if mut[1] < TARGET_P99_MS else 'not met'} |")
    print(f"\nnotes: the decision alone (no server) takes {per_decision * 1e6:.0f} µs; with {clients} clients on a "
          f"shared machine, queueing in the single server process dominates p99 (latency ≈ clients / throughput).")


if __name__ == "__main__":
    main()
