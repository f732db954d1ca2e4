"""No caller stalls another world (issue 11): the latency of `/_sandbox/health` and of another world's reads while
other callers load `busy-merchant` (a million transactions) and move their worlds a century ahead, against the
same probes on a quiet server. One `ptas serve` on a SQLite file (the default store), waitress, 8 threads.

Prints p50/p99 per probe, quiet and busy, the busy/quiet ratio of p99, and how many loads and century advances
ran meanwhile (with their median time). Issue 11's aim: p99 under 100 ms while the load runs. Not a test.
"""

import os
import statistics
import tempfile
import threading
import time

import requests

from bench.workers import launch

SECONDS = float(os.environ.get("PTAS_BENCH_SECONDS", 5))
CENTURY_S = 100 * 365 * 86400
LOADERS = 2


def p(values, q):
    return statistics.quantiles(values, n=100)[q - 1] * 1000 if len(values) > 1 else float("nan")


def probe(base, token, account_id, until):
    """Sequential probes until `until`: {name: [seconds, ...]}."""
    session = requests.Session()
    headers = {"Authorization": f"Bearer {token}"}
    probes = {"health": (f"{base}/_sandbox/health", {}),
              "read": (f"{base}/partner/v2/accounts/{account_id}/transactions?pageSize=100", headers)}
    times = {name: [] for name in probes}
    while time.perf_counter() < until:
        for name, (url, h) in probes.items():
            started = time.perf_counter()
            assert session.get(url, headers=h, timeout=60).status_code == 200
            times[name].append(time.perf_counter() - started)
    return times


def loader(base, until, done):
    """Load busy-merchant, move that world a century ahead; again until `until`."""
    session = requests.Session()
    while time.perf_counter() < until:
        started = time.perf_counter()
        loaded = session.post(f"{base}/_sandbox/scenarios/busy-merchant", timeout=120)
        assert loaded.status_code == 201, loaded.text[:300]
        done["load"].append(time.perf_counter() - started)
        started = time.perf_counter()
        moved = session.post(f"{base}/_sandbox/clock", json={"advance": CENTURY_S}, timeout=120,
                             headers={"Authorization": f"Bearer {loaded.json()['accessToken']}"})
        assert moved.status_code == 200, moved.text[:300]
        done["advance"].append(time.perf_counter() - started)


def reader_world(base):
    """Another world with an imported account to read (rate limit raised out of the way by the launch)."""
    world = requests.post(f"{base}/_sandbox/partners", json={"name": "Reader"}, timeout=10).json()
    headers = {"Authorization": f"Bearer {world['accessToken']}"}
    user = requests.post(f"{base}/partner/v2/users", json={"name": "Jane"}, headers=headers, timeout=10).json()
    user_headers = {"Authorization": f"Bearer {user['token']['accessToken']}"}
    account = requests.post(f"{base}/partner/v2/accounts", headers=user_headers, timeout=10, json={
        "accountTypeId": "dummy", "credentials": {"username": "jane", "password": "s3cret"}}).json()
    requests.post(f"{base}/_sandbox/clock", json={"advance": 3600}, headers=headers, timeout=10)
    return world["accessToken"], account["id"]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        process, base, _ = launch(os.path.join(tmp, "stall.db"), 1)
        try:
            token, account_id = reader_world(base)
            quiet = probe(base, token, account_id, time.perf_counter() + SECONDS)
            done = {"load": [], "advance": []}
            until = time.perf_counter() + SECONDS
            loaders = [threading.Thread(target=loader, args=(base, until, done)) for _ in range(LOADERS)]
            for thread in loaders:
                thread.start()
            busy = probe(base, token, account_id, until)
            for thread in loaders:
                thread.join()
        finally:
            process.terminate()
            process.wait(20)
    for name in quiet:
        print(f"{name:7} quiet p50 {p(quiet[name], 50):6.1f} ms p99 {p(quiet[name], 99):6.1f} ms | busy p50 "
              f"{p(busy[name], 50):6.1f} ms p99 {p(busy[name], 99):6.1f} ms | p99 busy/quiet "
              f"x{p(busy[name], 99) / p(quiet[name], 99):.2f}  ({len(busy[name])} probes)")
    for kind, times in done.items():
        print(f"meanwhile {len(times)} {kind}s of busy-merchant (median {statistics.median(times) * 1000:.0f} ms)"
              if times else f"meanwhile no {kind} finished")


if __name__ == "__main__":
    main()
