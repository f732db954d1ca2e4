"""Throughput with 1, 2 and 4 workers (`ptas serve --workers N`) on SQLite and PostgreSQL, RSS per worker and cold
start, through 32 concurrent keep-alive connections (bench/_load.py: `wrk` when installed, which leaves the cores
to the servers; the load generator, and PostgreSQL, still run on the same machine: ratios only).

Each round: GET /partners/self with a root token (rate limit raised out of the way) for a fixed wall time, on one
world and then on WORLDS worlds; the rounds of 1, 2 and 4 workers are interleaved and the medians compared.
Prints requests/s per configuration and the ratio to one worker on the same store; not a test. One worker is
`ptas serve` without `--workers`: on a SQLite file it owns its store and keeps per-request state in memory
(simulator/requeststate/), while N workers take the store-exact path, so on SQLite the ratio compares the two
paths too; `bench.bare_ratio` sets 2 workers beside one store-exact process as well.
"""

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import requests

from bench import _load as load

SECONDS = float(os.environ.get("PTAS_BENCH_SECONDS", 4))
# Several per worker thread: each gunicorn worker accepts what it can and keeps its keep-alive connections, so 8
# connections could all land on one worker of two (two workers measured 0.8x one in a run, 1.4x in the next).
CONNECTIONS = 32
# A world's requests take its exact §8 counter in turn (spec §8 counts per partner); a team sandbox serves many
# worlds. So the figures are for one world and for WORLDS worlds, one token of each taken in turn.
WORLDS = 8
ROUNDS = int(os.environ.get("PTAS_BENCH_ROUNDS", 2))


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env():
    """The servers' environment: bytecode cached as an installed package has it (PYTHONDONTWRITEBYTECODE, set
    on some machines, would make every start compile the sources again and the start-up figures meaningless)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONUNBUFFERED": "1"}


def launch(store, workers):
    port = free_port()
    started = time.perf_counter()
    # --quiet: gunicorn's workers keep no access log either, so one and several workers do the same work. The
    # output goes to a file: a pipe nobody reads fills up and stalls the server (and its exit) mid-round.
    output = tempfile.TemporaryFile("w+")
    process = subprocess.Popen([sys.executable, "-m", "ptas_sandbox.cli", "serve", "--port", str(port), "--store",
                                store, "--workers", str(workers), "--rate-limit", "1000000000/60", "--seed", "1",
                                "--quiet"], stdout=output, stderr=subprocess.STDOUT, text=True, env=server_env())
    base = f"http://127.0.0.1:{port}"
    while True:
        try:
            if requests.get(f"{base}/_sandbox/health", timeout=2).status_code == 200:
                break
        except requests.ConnectionError:
            if process.poll() is not None:
                output.seek(0)
                raise RuntimeError(output.read())
            time.sleep(0.01)
    return process, base, time.perf_counter() - started


def rss_mib(pid):
    """Resident memory of a process and its children (the gunicorn workers), per process."""
    pids = [pid] + [int(p) for p in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True,
                                                   text=True).stdout.split()]
    sizes = []
    for p in pids:
        try:
            with open(f"/proc/{p}/status") as status:
                sizes.append(int(re.search(r"VmRSS:\s+(\d+)", status.read()).group(1)) / 1024)
        except (OSError, AttributeError):
            pass
    return sizes


def round_(store, workers):
    """(req/s on one world, req/s spread over WORLDS worlds, start to first 200, RSS per process)."""
    process, base, cold = launch(store, workers)
    try:
        tokens = [requests.post(f"{base}/_sandbox/partners", json={"name": "Bench"}, timeout=10).json()["accessToken"]
                  for _ in range(WORLDS)]
        url = f"{base}/partner/v2/partners/self"
        one = load.rate("GET", url, SECONDS, {"Authorization": f"Bearer {tokens[0]}"}, connections=CONNECTIONS)
        spread = load.rate("GET", url, SECONDS, connections=CONNECTIONS,
                           authorizations=[f"Bearer {token}" for token in tokens])
        return one, spread, cold, rss_mib(process.pid)
    finally:
        process.terminate()
        process.wait(20)


def stores(tmp):
    yield "sqlite", lambda n: os.path.join(tmp, f"bench-{n}.db")
    try:
        from tests.support.pgcluster import Cluster
        cluster = Cluster().start()
    except Exception as error:      # no PostgreSQL installed: SQLite figures only
        print(f"(PostgreSQL skipped: {error})")
        return
    try:
        counter = iter(range(100))
        yield "postgresql", lambda n: cluster.database() if next(counter) >= 0 else None
    finally:
        cluster.stop()


def main():
    print(f"load generator: {load.generator()}, {CONNECTIONS} connections, {SECONDS:g} s per round, "
          f"medians of {ROUNDS} interleaved rounds")
    with tempfile.TemporaryDirectory() as tmp:
        for name, location in stores(tmp):
            rounds = {workers: [] for workers in (1, 2, 4)}
            for _ in range(ROUNDS):
                for workers in rounds:
                    rounds[workers].append(round_(location(workers), workers))
            base = [statistics.median(r[k] for r in rounds[1]) or 1.0 for k in (0, 1)]
            for workers, results in rounds.items():
                one, spread = (statistics.median(r[k] for r in results) for k in (0, 1))
                cold = statistics.median(r[2] for r in results)
                rss = results[-1][3]
                per_worker = ", ".join(f"{r:.0f}" for r in rss[1:] or rss)
                print(f"{name:10} workers={workers}: GET /partners/self {one:5.0f} req/s on one world "
                      f"x{one / base[0]:.2f}, {spread:5.0f} on {WORLDS} worlds x{spread / base[1]:.2f} of one worker;  "
                      "start to first 200 "
                      f"{cold:.2f} s;  RSS per process MiB: {per_worker}", flush=True)


if __name__ == "__main__":
    main()
