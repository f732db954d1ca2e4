"""CPU per request of the simulator's own work, in-process: GET /partners/self and POST /users through the WSGI
test client on a SQLite file, the one-process default (hotstate, its batches written behind included) and the
store-exact path, against a bare Flask route through the same client (what the client itself costs).

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
"""
SIMULATOR = """
import os, tempfile
from ptas_sandbox.simulator import create_app
app = create_app({"STATE": os.path.join(tempfile.mkdtemp(), "s.db"), "RATE_LIMIT": 10**9, "START_SERVICES": False,
                  "SHARED_STORE": SHARED})
client = app.test_client()
token = client.post("/_sandbox/partners", json={"name": "Bench"}).json["accessToken"]
headers, settle = {"Authorization": f"Bearer {token}"}, app.extensions["ptas"].state.settle
"""
MEASURE = """
import json, sys, time
def run(kind, n):
    started = time.thread_time()
    for i in range(n):
        if kind == "get":
            status = client.get("/partner/v2/partners/self", headers=headers).status_code
        else:
            status = client.post("/partner/v2/users", headers=headers, json={"name": f"u{i}"}).status_code
        assert status in (200, 201), status
        if i % 500 == 499:
            settle()        # what the write-behind thread does while serving, counted here
    settle()
    return (time.thread_time() - started) / n
run("get", 200), run("post", 200)
print(json.dumps({"get": run("get", N), "post": run("post", N)}))
"""


def measure(setup):
    env = dict(os.environ)
    if os.environ.get("PTAS_BENCH_SRC"):
        env["PYTHONPATH"] = os.environ["PTAS_BENCH_SRC"] + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", setup + MEASURE.replace("N)", f"{N})")], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    cases = {"bare route": BARE, "one process": SIMULATOR.replace("SHARED", "False"),
             "store-exact": SIMULATOR.replace("SHARED", "True")}
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


if __name__ == "__main__":
    main()
