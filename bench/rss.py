"""Resident memory of a served sandbox under mixed load on a fixed set of worlds (issue 40 item 5: the slope of
the second half under 0.05 MiB/min over 30 minutes).

Starts `ptas serve` on a state file, as a team sandbox runs, makes a fixed set of worlds, and keeps clients busy
with what teams do in them: users made and deleted (each with its token), accounts opened and their
transactions read, webhooks to the sandbox's echo fired and flushed, the clock moved, the journal read; with
`--churn`, a world is also made and deleted now and then. The server's resident memory is sampled from /proc
every few seconds. Prints the slope (least squares, MiB per minute) of the first and the second half: the first
half holds the warm-up (caches filling to their bounds, the allocator's arenas), the second is what a sandbox
running for weeks does.

    python -m bench rss                     # 2 minutes (what `make bench` runs)
    python -m bench rss --minutes 30        # the issue's run
"""

import argparse
import itertools
import os
import sys
import tempfile
import threading
import time

import requests

from bench.fuzz_rss import rss_mb, serve


def slope(points):
    """Least-squares slope of (minute, MiB) points; 0 with fewer than two."""
    if len(points) < 2:
        return 0.0
    n = len(points)
    mean_t = sum(t for t, _ in points) / n
    mean_m = sum(m for _, m in points) / n
    spread = sum((t - mean_t) ** 2 for t, _ in points)
    return sum((t - mean_t) * (m - mean_m) for t, m in points) / spread if spread else 0.0


class Team:
    """One world and what its team does in it, one call after another."""

    def __init__(self, base, name):
        self.base, self.http = base, requests.Session()
        made = self.http.post(f"{base}/_sandbox/partners", json={"name": name}, timeout=30).json()
        self.world = made["world"]["id"]
        self.http.headers["Authorization"] = f"Bearer {made['accessToken']}"
        self.api = f"{base}/partner/v2"
        self.statuses = {}

    def call(self, method, url, **kw):
        answer = self.http.request(method, url, timeout=60, **kw)
        self.statuses[answer.status_code] = self.statuses.get(answer.status_code, 0) + 1
        return answer

    def round(self, n):
        api, base = self.api, self.base
        user = self.call("POST", f"{api}/users", json={"name": f"user {n}"})
        if user.status_code == 201:
            body = user.json()
            as_user = {"Authorization": f"Bearer {body['token']['accessToken']}"}
            account = self.call("POST", f"{api}/accounts", headers=as_user, json={
                "accountTypeId": "dummy", "credentials": {"username": "jane", "password": "s3cret"}})
            if account.status_code == 201:
                self.call("GET", f"{api}/accounts/{account.json()['id']}/transactions", headers=as_user)
            self.call("GET", f"{api}/users", params={"limit": 10})
        hook = self.call("POST", f"{api}/webhooks", json={
            "callbackUrl": f"http://localhost/_sandbox/echo/bench-{self.world[:8]}", "events": ["AccountCreated"]})
        self.call("POST", f"{api}/testevents/accountcreated")
        self.call("POST", f"{base}/_sandbox/webhooks/flush")
        self.call("POST", f"{base}/_sandbox/clock", json={"advance": 10})   # the root token lives a day of world time
        self.call("GET", f"{base}/_sandbox/requests", params={"limit": 20})
        self.call("GET", f"{api}/partners/self")
        if hook.status_code == 201:
            self.call("DELETE", f"{api}/webhooks/{hook.json()['id']}")
        if user.status_code == 201:
            self.call("DELETE", f"{api}/users/{user.json()['id']}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench rss")
    parser.add_argument("--minutes", type=float, default=2, help="how long the load runs (the issue: 30)")
    parser.add_argument("--worlds", type=int, default=20, help="the fixed set of worlds")
    parser.add_argument("--clients", type=int, default=4, help="clients calling at once")
    parser.add_argument("--every", type=float, default=5, help="seconds between samples of the server's RSS")
    parser.add_argument("--churn", action="store_true", help="also make and delete a world every round")
    if argv is None:        # `python -m bench rss --minutes 30` hands its options over as bench.rss's argv
        argv = sys.argv[1:] if "rss" in os.path.basename(sys.argv[0]) else []
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        process, base = serve(os.path.join(folder, "sandbox.db"))
        try:
            teams = [Team(base, f"team {n}") for n in range(args.worlds)]
            stop, samples, rounds = threading.Event(), [], itertools.count()
            start = time.monotonic()
            errors = []

            def client(k):
                for n in itertools.count():
                    if stop.is_set():
                        return
                    next(rounds)
                    try:
                        teams[(k + n * args.clients) % len(teams)].round(n)
                        if args.churn:
                            passing = Team(base, "passing")
                            passing.call("DELETE", f"{base}/_sandbox/world")
                    except requests.RequestException as error:
                        errors.append(error)

            threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(args.clients)]
            for thread in threads:
                thread.start()
            while time.monotonic() - start < args.minutes * 60:
                samples.append(((time.monotonic() - start) / 60, rss_mb(process.pid)[0]))
                time.sleep(args.every)
            stop.set()
            for thread in threads:
                thread.join(120)
            done = next(rounds)
        finally:
            process.terminate()
            process.wait(10)
    statuses = {}
    for team in teams:
        for status, count in team.statuses.items():
            statuses[status] = statuses.get(status, 0) + count
    half = len(samples) // 2
    first, second = slope(samples[:half]), slope(samples[half:])
    print(f"{args.minutes:g} min of mixed load on {args.worlds} worlds by {args.clients} clients"
          f"{' with world churn' if args.churn else ''}: {done} rounds, {sum(statuses.values())} calls "
          f"{dict(sorted(statuses.items()))}, {len(errors)} client errors")
    print(f"RSS {samples[0][1]:.1f} MiB at the start, {max(m for _, m in samples):.1f} peak, "
          f"{samples[-1][1]:.1f} at the end ({len(samples)} samples)")
    print(f"slope: first half {first:+.3f} MiB/min, second half {second:+.3f} MiB/min (target under 0.05)")


if __name__ == "__main__":
    main()
