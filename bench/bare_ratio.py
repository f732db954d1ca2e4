"""The simulator against a bare Flask route on the same server configuration (issue 12's aims): an authenticated
GET /partners/self and a POST /users against a hello-JSON GET and a JSON-echo POST, each server a `waitress`
process with 8 threads, through 8 concurrent keep-alive connections (bench/_load.py: `wrk` when installed, as
`make bench` does); and process start to first 200.

Rounds are interleaved (simulator, bare, simulator, bare) and the medians compared, so the ratios hold on a
shared, noisy machine; absolute figures are printed for context only. The servers' own CPU time per request
(from /proc) is printed too: it states a server's cost whatever the load generator spends on the same cores
(a Python client spends about as much as the server, and its throughput ratios understate the server's cost).
Start-up is timed with bytecode cached (one untimed start first), as an installed package starts. Not a test.
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time

import requests

from bench import _load as load
from bench.workers import free_port, server_env

SECONDS = float(os.environ.get("PTAS_BENCH_SECONDS", 3))
ROUNDS = int(os.environ.get("PTAS_BENCH_ROUNDS", 2))

BARE = """
import sys, flask, waitress
app = flask.Flask("bare")
app.add_url_rule("/partner/v2/partners/self", "read", lambda: {"id": "p", "name": "Bench"})
app.add_url_rule("/partner/v2/users", "create", lambda: (flask.request.get_json(), 201), methods=["POST"])
app.add_url_rule("/_sandbox/health", "health", lambda: {"ok": True})
waitress.serve(app, host="127.0.0.1", port=int(sys.argv[1]), threads=8, _quiet=True)
"""


def start(command):
    """Start a server; (process, base URL, seconds from start to the first 200 of its health route)."""
    port = free_port()
    started = time.perf_counter()
    process = subprocess.Popen([*command, str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=server_env())
    base = f"http://127.0.0.1:{port}"
    while True:
        try:
            if requests.get(f"{base}/_sandbox/health", timeout=2).status_code == 200:
                return process, base, time.perf_counter() - started
        except requests.ConnectionError:
            if process.poll() is not None:
                raise RuntimeError(f"{command[:4]} exited") from None
            time.sleep(0.005)


def cpu_seconds(pid):
    """User + system CPU time of a process so far (Linux /proc; clock ticks of 10 ms)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(server, simulator):
    process, base, cold = start(server)
    try:
        headers = {}
        if simulator:
            token = requests.post(f"{base}/_sandbox/partners", json={"name": "Bench"}, timeout=10).json()["accessToken"]
            headers = {"Authorization": f"Bearer {token}"}
        before = cpu_seconds(process.pid)
        get = load.rate("GET", f"{base}/partner/v2/partners/self", SECONDS, headers)
        between = cpu_seconds(process.pid)
        post = load.rate("POST", f"{base}/partner/v2/users", SECONDS, headers, {"name": "Jane"})
        after = cpu_seconds(process.pid)
        return {"get": get, "post": post, "cold": cold, "get_cpu": (between - before) / (get * SECONDS) * 1000,
                "post_cpu": (after - between) / (post * SECONDS) * 1000}
    finally:
        process.terminate()
        process.wait(20)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        def simulator(n):
            return [sys.executable, "-m", "ptas_sandbox.cli", "serve", "--quiet", "--seed", "1", "--rate-limit",
                    "1000000000/60", "--state", os.path.join(tmp, f"bench{n}.db"), "--port"]
        runs = {"simulator": [], "bare": []}
        for command in (simulator("warm"), [sys.executable, "-c", BARE]):     # bytecode written, not timed
            process, _, _ = start(command)
            process.terminate()
            process.wait(20)
        for n in range(ROUNDS):
            runs["simulator"].append(measure(simulator(n), True))
            runs["bare"].append(measure([sys.executable, "-c", BARE], False))
    median = {name: {k: statistics.median(r[k] for r in rounds) for k in ("get", "post", "cold", "get_cpu", "post_cpu")}
              for name, rounds in runs.items()}
    sim, base = median["simulator"], median["bare"]
    print(f"load generator: {load.generator()}, {load.CONNECTIONS} connections, {SECONDS:g} s per figure, "
          f"medians of {ROUNDS} interleaved rounds")
    print(f"authenticated GET /partners/self: {sim['get']:.0f} req/s vs bare {base['get']:.0f}: "
          f"x{sim['get'] / base['get']:.2f} (aim >= 0.9)")
    print(f"POST /users: {sim['post']:.0f} req/s vs bare {base['post']:.0f}: x{sim['post'] / base['post']:.2f} "
          "(aim >= 0.6)")
    print(f"server CPU per request: GET {sim['get_cpu']:.2f} ms vs bare {base['get_cpu']:.2f} ms "
          f"(x{base['get_cpu'] / sim['get_cpu']:.2f}); POST {sim['post_cpu']:.2f} ms vs bare "
          f"{base['post_cpu']:.2f} ms (x{base['post_cpu'] / sim['post_cpu']:.2f})")
    print(f"start to first 200: {sim['cold']:.2f} s vs bare {base['cold']:.2f} s: x{sim['cold'] / base['cold']:.2f} "
          "(aim: under 0.3 s)")


if __name__ == "__main__":
    main()
