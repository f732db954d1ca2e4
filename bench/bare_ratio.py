"""The simulator against a bare Flask route on the same server configuration (issue 12's aims): an authenticated
GET /partners/self and a POST /users against a hello-JSON GET and a JSON-echo POST, each server a `waitress`
process with 8 threads, through 8 concurrent keep-alive connections (bench/_load.py: `wrk` when installed, as
`make bench` does); and process start to first 200.

Rounds are interleaved (simulator, bare, simulator, bare) and the medians compared, so the ratios hold on a
shared, noisy machine; absolute figures are printed for context only. The servers' own CPU time per request
(from /proc) is printed too: it states a server's cost whatever the load generator spends on the same cores
(a Python client spends about as much as the server, and its throughput ratios understate the server's cost).
Start-up is timed with bytecode cached (one untimed start first), as an installed package starts.

A third server, the floor, does the least any server must do per request when it keeps the spec's state in a
store that several workers share (issue 12, item 2), with nothing of ours: verify the bearer JWT (PyJWT, one
algorithm), then one SQLite write transaction on a WAL file, as `ptas serve` opens it, that sets the token's
`lastUsedAt` (spec §2: it moves on every request) and counts the request in its world's §8 window (exact across
workers) before it reads the partner, or inserts the user. No journal, scopes, catch-up, ProblemDetails or
validation. Its ratio to the bare route bounds what the simulator could reach on this stack; the simulator's
ratio to the floor is what our own code costs. Not a test.
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
app.add_url_rule("/_sandbox/partners", "world", lambda: {"accessToken": "unused"}, methods=["POST"])
waitress.serve(app, host="127.0.0.1", port=int(sys.argv[1]), threads=8, _quiet=True)
"""

FLOOR = """
import os, sqlite3, sys, tempfile, threading, time, uuid
import flask, jwt, waitress
app = flask.Flask("floor")
secret = os.urandom(32)
path = os.path.join(tempfile.mkdtemp(), "floor.db")
with sqlite3.connect(path, isolation_level=None) as db:
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(
        "CREATE TABLE tokens (id TEXT PRIMARY KEY, partner TEXT NOT NULL, last_used_at INTEGER);"
        "CREATE TABLE windows (world TEXT NOT NULL, start INTEGER NOT NULL, hits INTEGER NOT NULL, "
        "PRIMARY KEY (world, start));"
        "CREATE TABLE partners (id TEXT PRIMARY KEY, name TEXT NOT NULL);"
        "CREATE TABLE users (id TEXT PRIMARY KEY, partner TEXT NOT NULL, name TEXT NOT NULL);"
        "INSERT INTO partners VALUES ('p', 'Bench'); INSERT INTO tokens VALUES ('t', 'p', NULL);")
local, writer = threading.local(), threading.Lock()

def admitted(work):
    claims = jwt.decode(flask.request.headers["Authorization"][7:], secret, algorithms=["HS256"])
    if not hasattr(local, "db"):
        local.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        local.db.execute("PRAGMA synchronous=NORMAL")
    db, now = local.db, time.time_ns() // 1000
    with writer:
        db.execute("BEGIN IMMEDIATE")
        partner = db.execute("UPDATE tokens SET last_used_at = ? WHERE id = ? RETURNING partner",
                             (now, claims["jti"])).fetchone()[0]
        db.execute("INSERT INTO windows VALUES (?, ?, 1) ON CONFLICT (world, start) DO UPDATE SET hits = hits + 1",
                   (claims["wld"], now // 60_000_000))
        answer = work(db, partner)
        db.execute("COMMIT")
    return answer

def read(db, partner):
    return dict(zip(("id", "name"), db.execute("SELECT id, name FROM partners WHERE id = ?", (partner,)).fetchone()))

def create(db, partner):
    user = {"id": str(uuid.uuid4()), "name": flask.request.get_json()["name"]}
    db.execute("INSERT INTO users VALUES (?, ?, ?)", (user["id"], partner, user["name"]))
    return user, 201

app.add_url_rule("/partner/v2/partners/self", "read", lambda: admitted(read))
app.add_url_rule("/partner/v2/users", "create", lambda: admitted(create), methods=["POST"])
app.add_url_rule("/_sandbox/health", "health", lambda: {"ok": True})
app.add_url_rule("/_sandbox/partners", "world", methods=["POST"], view_func=lambda: {
    "accessToken": jwt.encode({"jti": "t", "wld": "w", "exp": int(time.time()) + 86400}, secret, "HS256")})
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


def measure(server):
    process, base, cold = start(server)
    try:
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
        servers = {"simulator": simulator, "floor": lambda n: [sys.executable, "-c", FLOOR],
                   "bare": lambda n: [sys.executable, "-c", BARE]}
        runs = {name: [] for name in servers}
        for command in servers.values():     # bytecode written, not timed
            process, _, _ = start(command("warm"))
            process.terminate()
            process.wait(20)
        for n in range(ROUNDS):
            for name, command in servers.items():
                runs[name].append(measure(command(n)))
    median = {name: {k: statistics.median(r[k] for r in rounds) for k in ("get", "post", "cold", "get_cpu", "post_cpu")}
              for name, rounds in runs.items()}
    sim, floor, base = median["simulator"], median["floor"], median["bare"]
    print(f"load generator: {load.generator()}, {load.CONNECTIONS} connections, {SECONDS:g} s per figure, "
          f"medians of {ROUNDS} interleaved rounds")
    for label, key, aim in (("authenticated GET /partners/self", "get", 0.9), ("POST /users", "post", 0.6)):
        print(f"{label}: {sim[key]:.0f} req/s vs bare {base[key]:.0f}: x{sim[key] / base[key]:.2f} (aim >= {aim}); "
              f"the floor {floor[key]:.0f}: x{floor[key] / base[key]:.2f} of bare, the simulator "
              f"x{sim[key] / floor[key]:.2f} of the floor")
    print(f"server CPU per request: GET {sim['get_cpu']:.2f} ms vs bare {base['get_cpu']:.2f} ms "
          f"(x{base['get_cpu'] / sim['get_cpu']:.2f}), floor {floor['get_cpu']:.2f} ms; POST {sim['post_cpu']:.2f} ms "
          f"vs bare {base['post_cpu']:.2f} ms (x{base['post_cpu'] / sim['post_cpu']:.2f}), floor "
          f"{floor['post_cpu']:.2f} ms")
    print(f"start to first 200: {sim['cold']:.2f} s vs bare {base['cold']:.2f} s: x{sim['cold'] / base['cold']:.2f} "
          "(aim: under 0.3 s)")


if __name__ == "__main__":
    main()
