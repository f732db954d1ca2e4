"""Page-fetch latency on a 1,000-transaction account against the 1,000,000-transaction one, same run, same server.

Loads the busy-merchant scenario through the control API (timed), then fetches pages of 100 over HTTP
(waitress, as `ptas serve` runs): on the small account its pages in turn, on the big one pages at positions
spread over the whole year (a createdAt search, then nextPageReference from there), so deep pages are measured,
not only the first. Keyset paging should make the ratio close to 1. Also prints the process memory (RSS) with
the scenario loaded. Run: `python -m bench.paging [fetches]`.
"""

import resource
import statistics
import sys
import threading
import time

import requests
from waitress import create_server

from ptas_sandbox.simulator import create_app


def rss_mb():
    """Current resident memory of this process (the simulator runs in it), in MB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def fetch(session, url, headers):
    started = time.perf_counter()
    response = session.get(url, headers=headers)
    elapsed = time.perf_counter() - started
    assert response.status_code == 200, response.text
    return elapsed, response.json()


def walk(session, base, headers, account, n, starts):
    """n page fetches of 100: from each start instant (None: the first page) follow nextPageReference 4 times."""
    path = f"{base}/partner/v2/accounts/{account['id']}/transactions?pageSize=100"
    latencies = []
    i = 0
    while len(latencies) < n:
        start = starts[i % len(starts)]
        i += 1
        search = path + (f"&createdAt={start}" if start else "")
        url = search
        for _ in range(5):
            elapsed, body = fetch(session, url, headers)
            latencies.append(elapsed)
            assert len(body["transactions"]) == 100 or body["nextPageReference"] is None
            if body["nextPageReference"] is None:
                break
            url = f"{search}&pageReference={body['nextPageReference']}"
    return latencies


def summary(latencies):
    latencies = sorted(latencies)
    return {"p50": statistics.median(latencies) * 1000, "p99": latencies[max(0, int(len(latencies) * 0.99) - 1)] * 1000}


def main(n=None):
    n = n or (int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 2000)
    before = rss_mb()
    app = create_app({"RATE_LIMIT": 10**9, "START_SERVICES": False})
    server = create_server(app, host="127.0.0.1", port=0, threads=4)
    threading.Thread(target=server.run, daemon=True).start()
    base = f"http://127.0.0.1:{server.effective_port}"
    session = requests.Session()
    started = time.perf_counter()
    world = session.post(f"{base}/_sandbox/scenarios/busy-merchant").json()
    loaded_in = time.perf_counter() - started
    headers = {"Authorization": f"Bearer {world['accessToken']}"}
    accounts = {a["statistics"]["count"]: a for a in
                session.get(f"{base}/partner/v2/accounts", headers=headers).json()["accounts"]}
    small, big = accounts[1000], accounts[1_000_000]
    # Start instants spread over the big account's year: read them from pages found by createdAt searches.
    first, last = big["statistics"]["first"], big["statistics"]["last"]
    from ptas_sandbox.simulator.timestamps import parse, render
    t0, t1 = parse(first), parse(last)
    starts = [render(t0 + (t1 - t0) * k // 97) for k in range(96)]
    walk(session, base, headers, small, 20, [None])        # warm-up: each account's Faker pool, caches
    walk(session, base, headers, big, 20, starts)
    runs = {"1,000 transactions": [], "1,000,000 transactions": []}
    for _ in range(4):   # interleaved rounds, so machine noise hits both alike
        runs["1,000 transactions"] += walk(session, base, headers, small, n // 4, [None])
        runs["1,000,000 transactions"] += walk(session, base, headers, big, n // 4, starts)
    memory = rss_mb()
    session.close()
    server.task_dispatcher.shutdown()
    app.extensions["ptas"].close()
    figures = {name: summary(latencies) for name, latencies in runs.items()}
    print(f"busy-merchant loaded through the control API in {loaded_in:.1f} s")
    for name, s in figures.items():
        print(f"page of 100, account with {name:24} p50 {s['p50']:6.2f} ms   p99 {s['p99']:6.2f} ms")
    small_s, big_s = figures["1,000 transactions"], figures["1,000,000 transactions"]
    print(f"ratio million/thousand: p50 {big_s['p50'] / small_s['p50']:.2f}   p99 {big_s['p99'] / small_s['p99']:.2f}"
          "   (aim: under 1.5)")
    print(f"process RSS with busy-merchant loaded: {memory:.0f} MB (before the app: {before:.0f} MB; "
          "aim: under 500 MB)")


if __name__ == "__main__":
    main()
