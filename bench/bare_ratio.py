"""The simulator against a bare Flask route on the same server configuration (issues 12 and 25): an authenticated
GET /partners/self and a POST /users against a hello-JSON GET and a JSON-echo POST, through CONNECTIONS
concurrent keep-alive connections (bench/_load.py: `wrk` when installed, as `make bench` does), in one run:

- one process (`ptas serve`, waitress with 8 threads, a SQLite file): the default, whose per-request state is in
  memory (requeststate.memory), and the same process on the store-exact path (SHARED_STORE, as each of several workers
  runs), against the bare route on the same HTTP front (serving.create_server, 8 threads);
- `ptas serve --workers 2` (gunicorn, 8 threads each) on a SQLite file and on PostgreSQL (a throw-away cluster
  on the same machine; its own CPU is not counted), against the bare route under the same gunicorn settings and
  worker;
- the floor (issue 12): JWT verify and one SQLite write transaction per request, nothing of ours.

Rounds are interleaved (every server once, then again) and the medians compared, so the ratios hold on a shared,
noisy machine; absolute figures are printed for context only. The servers' own CPU time per request (from
/proc, the workers included) is printed too: it states a server's cost whatever the load generator spends on
the same cores. Start to first 200 is timed with bytecode cached (one untimed start first); RSS is read per
process after the load. Not a test.
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
from bench.workers import free_port, server_env

SECONDS = float(os.environ.get("PTAS_BENCH_SECONDS", 3))
ROUNDS = int(os.environ.get("PTAS_BENCH_ROUNDS", 2))

BARE_APP = """
import sys, flask
app = flask.Flask("bare")
app.add_url_rule("/partner/v2/partners/self", "read", lambda: {"id": "p", "name": "Bench"})
app.add_url_rule("/partner/v2/users", "create", lambda: (flask.request.get_json(), 201), methods=["POST"])
app.add_url_rule("/_sandbox/health", "health", lambda: {"ok": True})
app.add_url_rule("/_sandbox/partners", "world", lambda: {"accessToken": "unused"}, methods=["POST"])
"""
# The same HTTP front as `ptas serve` (serving.create_server: waitress, 8 threads, the simulator's channel), so
# a ratio is the cost of the app alone.
FRONT = """
from ptas_sandbox.simulator.serving import create_server
create_server(app, host="127.0.0.1", port=int(sys.argv[1]), threads=8).run()
"""
BARE = BARE_APP + FRONT
# The settings `ptas serve --workers 2` gives gunicorn (cli/_workers.py), with its worker (waitress in each).
BARE_WORKERS = BARE_APP + """
from gunicorn.app.base import BaseApplication
from ptas_sandbox.simulator.gunicorn_worker import WaitressWorker
class Bare(BaseApplication):
    def load_config(self):
        for key, value in {"bind": f"127.0.0.1:{sys.argv[1]}", "workers": 2, "worker_class": WaitressWorker,
                           "threads": 8, "accesslog": None, "loglevel": "warning", "keepalive": 5}.items():
            self.cfg.set(key, value)
    def load(self):
        return app
Bare().run()
"""
# One process on the store-exact path, as each of several workers runs: `ptas serve` told its store is shared.
EXACT = """
import sys
import ptas_sandbox.simulator as simulator
made = simulator.create_app
simulator.create_app = lambda config=None: made({**(config or {}), "SHARED_STORE": True})
from ptas_sandbox.cli import main
sys.argv = ["ptas", *sys.argv[1:]]
main()
"""

FLOOR = """
import os, sqlite3, sys, tempfile, threading, time, uuid
import flask, jwt
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
""" + FRONT


CONNECTIONS = 32      # several per worker thread, so connections spread over two workers (bench/workers.py)


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


def processes(pid):
    """A server's process and its children (gunicorn's workers)."""
    return [pid] + [int(p) for p in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True,
                                                   text=True).stdout.split()]


def cpu_seconds(pid):
    """User + system CPU time of a server so far, its workers included (Linux /proc; clock ticks of 10 ms)."""
    total = 0.0
    for p in processes(pid):
        try:
            with open(f"/proc/{p}/stat") as stat:
                fields = stat.read().rpartition(")")[2].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def rss_mib(pid):
    """Resident memory of each process of a server: the workers alone when there are workers."""
    pids = processes(pid)
    sizes = []
    for p in pids[1:] or pids:
        try:
            with open(f"/proc/{p}/status") as status:
                sizes.append(int(re.search(r"VmRSS:\s+(\d+)", status.read()).group(1)) / 1024)
        except (OSError, AttributeError):
            pass
    return max(sizes) if sizes else 0.0


def measure(server):
    process, base, cold = start(server)
    try:
        token = requests.post(f"{base}/_sandbox/partners", json={"name": "Bench"}, timeout=10).json()["accessToken"]
        headers = {"Authorization": f"Bearer {token}"}
        before = cpu_seconds(process.pid)
        get = load.rate("GET", f"{base}/partner/v2/partners/self", SECONDS, headers, connections=CONNECTIONS)
        between = cpu_seconds(process.pid)
        post = load.rate("POST", f"{base}/partner/v2/users", SECONDS, headers, {"name": "Jane"},
                         connections=CONNECTIONS)
        after = cpu_seconds(process.pid)
        return {"get": get, "post": post, "cold": cold, "rss": rss_mib(process.pid),
                "get_cpu": (between - before) / max(get * SECONDS, 1) * 1000,
                "post_cpu": (after - between) / max(post * SECONDS, 1) * 1000}
    finally:
        process.terminate()
        process.wait(20)


KEYS = ("get", "post", "cold", "rss", "get_cpu", "post_cpu")


def servers(tmp, postgres):
    """name: (a command given a round number, the bare server it is compared with)."""
    def ptas(n, *options):
        return [sys.executable, "-m", "ptas_sandbox.cli", "serve", "--quiet", "--seed", "1", "--rate-limit",
                "1000000000/60", *options, "--port"]

    def state(name, n):
        return os.path.join(tmp, f"{name}{n}.db")
    found = {
        "bare": (lambda n: [sys.executable, "-c", BARE], None),
        "one process": (lambda n: ptas(n, "--state", state("memory", n)), "bare"),
        "one process, store-exact": (
            lambda n: [sys.executable, "-c", EXACT, *ptas(n, "--state", state("exact", n))[3:]], "bare"),
        "floor": (lambda n: [sys.executable, "-c", FLOOR], "bare"),
        "bare, 2 workers": (lambda n: [sys.executable, "-c", BARE_WORKERS], None),
        "2 workers, SQLite": (lambda n: ptas(n, "--workers", "2", "--store", state("workers", n)), "bare, 2 workers"),
    }
    if postgres is not None:
        found["2 workers, PostgreSQL"] = (lambda n: ptas(n, "--workers", "2", "--store", postgres.database()),
                                          "bare, 2 workers")
    return found


def postgres_cluster():
    try:
        from tests.support.pgcluster import Cluster
        return Cluster().start()
    except Exception as error:      # no PostgreSQL installed: SQLite figures only
        print(f"(PostgreSQL skipped: {error})")
        return None


def stolen():
    """(steal, total) CPU ticks of the machine so far (/proc/stat): a virtual machine's CPU time its host gave
    to others. Much steal during a run makes its ratios noise, whatever the rounds."""
    with open("/proc/stat") as stat:
        ticks = [int(t) for t in stat.readline().split()[1:]]
    return ticks[7], sum(ticks)


def main():
    cluster = postgres_cluster()
    steal_before = stolen()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            table = servers(tmp, cluster)
            runs = {name: [] for name in table}
            for command, _ in table.values():     # bytecode written, not timed
                process, _, _ = start(command("warm"))
                process.terminate()
                process.wait(20)
            for n in range(ROUNDS):
                for name, (command, _) in table.items():
                    runs[name].append(measure(command(n)))
    finally:
        if cluster is not None:
            cluster.stop()
    steal_after = stolen()
    median = {name: {k: statistics.median(r[k] for r in rounds) for k in KEYS} for name, rounds in runs.items()}
    steal = (steal_after[0] - steal_before[0]) / max(steal_after[1] - steal_before[1], 1)
    print(f"steal: {steal:.0%} of the machine's CPU time went to other guests during the run")
    print(f"load generator: {load.generator()}, {CONNECTIONS} connections, {SECONDS:g} s per figure, "
          f"medians of {ROUNDS} interleaved rounds; ratios to the bare route of the same server configuration")
    print(f"{'server':26} {'GET req/s':>9} {'x bare':>6} {'POST req/s':>10} {'x bare':>6}  "
          f"{'CPU ms GET/POST':>15} {'x bare':>11}  {'start s':>7} {'RSS MiB':>7}")
    for name, (_, bare) in table.items():
        m, b = median[name], median[bare or name]
        print(f"{name:26} {m['get']:9.0f} {m['get'] / b['get']:6.2f} {m['post']:10.0f} {m['post'] / b['post']:6.2f}  "
              f"{m['get_cpu']:7.2f}/{m['post_cpu']:<7.2f} {b['get_cpu'] / m['get_cpu']:5.2f}/"
              f"{b['post_cpu'] / m['post_cpu']:<5.2f}  {m['cold']:7.2f} {m['rss']:7.0f}")
    one, exact, two = median["one process"], median["one process, store-exact"], median["2 workers, SQLite"]
    print(f"aims: one process GET x{one['get'] / median['bare']['get']:.2f} of bare (>= 0.6), POST "
          f"x{one['post'] / median['bare']['post']:.2f} (>= 0.3); 2 workers on SQLite x{two['get'] / exact['get']:.2f}"
          f" GET, x{two['post'] / exact['post']:.2f} POST of one store-exact process (>= 1.5; of the one-process "
          f"default: x{two['get'] / one['get']:.2f}, x{two['post'] / one['post']:.2f}); start "
          f"{one['cold']:.2f} s (< 0.3); RSS {one['rss']:.0f} MiB (<= 80)")


if __name__ == "__main__":
    main()
