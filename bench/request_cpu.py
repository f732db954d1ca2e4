"""CPU per request of the simulator's own work, in-process: GET /partners/self and POST /users through the WSGI
test client on a SQLite file, the one-process default (requeststate.memory, its batches written behind included) and the
store-exact path, against a bare Flask route through the same client (what the client itself costs). On the
store-exact path it also prints the share of a request's time spent holding the writers' turn (a top-level
`SqliteStore.transaction`): several workers on one SQLite file take that turn one at a time, so the share bounds
what `--workers` can add (Amdahl: at most 1/share times one worker's requests).

Thread CPU time of one thread, so other processes on a shared machine change it little: the figure to compare
a change of the request path with (`PTAS_BENCH_SRC=/other/src python -m bench request_cpu` measures another
checkout the same way). The served ratios are bench/bare_ratio.py's. Not a test.
"""

import json
import os
import statistics
import subprocess
import sys

from bench.bare_ratio import BARE_APP  # the same bare routes as the served comparison

N = int(os.environ.get("PTAS_BENCH_REQUESTS", 2000))
ROUNDS = int(os.environ.get("PTAS_BENCH_ROUNDS", 3))

BARE = BARE_APP + """
client, headers, settle = app.test_client(), {"Authorization": "Bearer x"}, lambda: None
held = [0.0]
"""
SIMULATOR = """
import os, tempfile
from ptas_sandbox.simulator import create_app
app = create_app({"STATE": os.path.join(tempfile.mkdtemp(), "s.db"), "RATE_LIMIT": 10**9, "START_SERVICES": False,
                  "SHARED_STORE": SHARED_STORE})
client = app.test_client()
token = client.post("/_sandbox/partners", json={"name": "Bench"}).json["accessToken"]
headers, settle = {"Authorization": f"Bearer {token}"}, app.extensions["ptas"].state.settle
held = [0.0]
"""
# The writers' turn timed (wall clock: one thread here, so it never waits for it).
TURN = """
import time
from contextlib import contextmanager
from ptas_sandbox.simulator.store.sqlite import SqliteStore
plain = SqliteStore.transaction
@contextmanager
def timed(self, read_only=False):
    outer, started = not self._local().depth, time.perf_counter()
    with plain(self, read_only) as store:
        yield store
    if outer:
        held[0] += time.perf_counter() - started
SqliteStore.transaction = timed
"""
MEASURE = """
import json, sys, time
def run(kind, n):
    held[0], wall, started = 0.0, time.perf_counter(), time.thread_time()
    for i in range(n):
        if kind == "get":
            status = client.get("/partner/v2/partners/self", headers=headers).status_code
        else:
            status = client.post("/partner/v2/users", headers=headers, json={"name": f"u{i}"}).status_code
        assert status in (200, 201), status
        if i % 500 == 499:
            settle()        # what the write-behind thread does while serving, counted here
    settle()
    return (time.thread_time() - started) / n, held[0] / (time.perf_counter() - wall)
run("get", 200), run("post", 200)
(get, get_turn), (post, post_turn) = run("get", N), run("post", N)
print(json.dumps({"get": get, "post": post, "get_turn": get_turn, "post_turn": post_turn}))
"""


def measure(setup):
    env = dict(os.environ)
    if os.environ.get("PTAS_BENCH_SRC"):
        env["PYTHONPATH"] = os.environ["PTAS_BENCH_SRC"] + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", setup + MEASURE.replace("N)", f"{N})")], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    cases = {"bare route": BARE, "one process": SIMULATOR.replace("SHARED_STORE})", "False})"),
             "store-exact": SIMULATOR.replace("SHARED_STORE})", "True})") + TURN}
    runs = {name: [] for name in cases}
    for _ in range(ROUNDS):
        for name, setup in cases.items():
            runs[name].append(measure(setup))
    bare = {k: statistics.median(r[k] for r in runs["bare route"]) for k in ("get", "post")}
    print(f"thread CPU per request in-process (test client), median of {ROUNDS} interleaved rounds of {N}; "
          "'own' is less the bare route's (the client's and Flask's share)")
    for name in cases:
        m = {k: statistics.median(r[k] for r in runs[name]) for k in ("get", "post")}
        print(f"{name:12} GET {m['get'] * 1e6:6.0f} us (own {(m['get'] - bare['get']) * 1e6:5.0f})   "
              f"POST {m['post'] * 1e6:6.0f} us (own {(m['post'] - bare['post']) * 1e6:5.0f})")
    turn = {k: statistics.median(r[f"{k}_turn"] for r in runs["store-exact"]) for k in ("get", "post")}
    print(f"store-exact: the writers' turn is held {turn['get']:.0%} of a GET's time and {turn['post']:.0%} of a "
          f"POST's: workers on one SQLite file serve at most {1 / turn['get']:.1f}x the GETs and "
          f"{1 / turn['post']:.1f}x the POSTs of one (served, the HTTP front's share outside the turn lifts it)")


if __name__ == "__main__":
    main()
