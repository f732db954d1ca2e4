"""Authenticated read (GET /partners/self) against a bare hello-JSON route of the same server, same run.

Both go through waitress, as `ptas serve` runs; the difference is the simulator's pipeline: JWT verification,
the rate limiter, the token lookup and lastUsedAt write, the scope check, one SQLite transaction and rendering.
The rate limit is raised for the run so every request does the full work instead of a 429.
Run: `python -m bench.auth [requests]`.
"""

import statistics
import sys
import threading
import time

import requests
from flask import jsonify
from waitress import create_server

from ptas_sandbox.simulator import create_app


def serve(app):
    server = create_server(app, host="127.0.0.1", port=0, threads=4)
    threading.Thread(target=server.run, daemon=True).start()
    return server, f"http://127.0.0.1:{server.effective_port}"


def measure(session, url, headers, n):
    latencies = []
    started = time.perf_counter()
    for _ in range(n):
        t = time.perf_counter()
        response = session.get(url, headers=headers)
        latencies.append(time.perf_counter() - t)
        assert response.status_code == 200, response.text
    elapsed = time.perf_counter() - started
    latencies.sort()
    return {"rps": n / elapsed, "p50": statistics.median(latencies) * 1000,
            "p99": latencies[int(len(latencies) * 0.99) - 1] * 1000}


def main(n=None):
    n = n or (int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 2000)
    app = create_app({"RATE_LIMIT": 10**9, "START_SERVICES": False})
    app.add_url_rule("/_bench/hello", "bench-hello", lambda: jsonify(hello="world"))
    server, base = serve(app)
    session = requests.Session()
    token = session.post(f"{base}/_sandbox/partners", json={"name": "Bench"}).json()["accessToken"]
    auth = {"Authorization": f"Bearer {token}"}
    runs = {"bare hello-JSON route": [], "GET /partners/self": []}
    for _ in range(4):   # interleaved rounds, so machine noise hits both alike
        runs["bare hello-JSON route"].append(measure(session, f"{base}/_bench/hello", {}, n // 4))
        runs["GET /partners/self"].append(measure(session, f"{base}/partner/v2/partners/self", auth, n // 4))
    session.close()
    server.close()
    app.extensions["ptas"].close()
    summary = {}
    for name, rounds in runs.items():
        summary[name] = {k: statistics.median(r[k] for r in rounds) for k in ("rps", "p50", "p99")}
        s = summary[name]
        print(f"{name:24} {s['rps']:8.0f} req/s   p50 {s['p50']:6.2f} ms   p99 {s['p99']:6.2f} ms")
    ratio = summary["GET /partners/self"]["rps"] / summary["bare hello-JSON route"]["rps"]
    print(f"authenticated read / bare route throughput ratio: {ratio:.2f} (aim: >= 0.6)")
    return ratio


if __name__ == "__main__":
    main()
