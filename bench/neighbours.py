"""What one world's webhooks cost another world's reads, on `ptas serve` (one process, a SQLite file).

A busy world fires test events (POST /testevents/accountcreated, EVENTS_PER_S of them a second, paced) to a
webhook on the sandbox's own echo receiver, so each is delivered and recorded by the dispatcher; a quiet world
reads (GET /partners/self through `wrk`). The quiet world's reads a second beside the busy world, against the same
reads with the busy world idle, in interleaved rounds. The deliveries take their share of the core whatever the
server does; what the server must not add is a read again of all that the quiet world remembered at each
delivery (requeststate.memory: a write leaves stale only the reads of the tables it wrote). Not a test.
"""

import os
import sys
import tempfile
import threading
import time

import requests

from bench import _load as load
from bench.bare_ratio import start

SECONDS = float(os.environ.get("PTAS_BENCH_SECONDS", 3))
ROUNDS = int(os.environ.get("PTAS_BENCH_ROUNDS", 3))
EVENTS_PER_S = 100


def new_world(base):
    token = requests.post(f"{base}/_sandbox/partners", json={"name": "Bench"}, timeout=10).json()["accessToken"]
    return {"Authorization": f"Bearer {token}"}


def fire(base, headers, stop, fired):
    """Test events of the busy world at EVENTS_PER_S, paced on the system clock, until `stop`."""
    session, period, due = requests.Session(), 1 / EVENTS_PER_S, time.perf_counter()
    while not stop.is_set():
        session.post(f"{base}/partner/v2/testevents/accountcreated", headers=headers, timeout=10).raise_for_status()
        fired.append(1)
        due += period
        stop.wait(max(0.0, due - time.perf_counter()))
    session.close()


def reads(base, headers):
    return load.rate("GET", f"{base}/partner/v2/partners/self", SECONDS, headers)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        process, base, _ = start([sys.executable, "-m", "ptas_sandbox.cli", "serve", "--quiet", "--seed", "1",
                                  "--rate-limit", "1000000000/60", "--state", os.path.join(tmp, "state.db"),
                                  "--port"])
        try:
            busy, quiet = new_world(base), new_world(base)
            requests.post(f"{base}/partner/v2/webhooks", headers=busy, timeout=10, json={
                "callbackUrl": f"{base}/_sandbox/echo/neighbours", "events": ["AccountCreated"]}).raise_for_status()
            alone, beside, fired = [], [], []
            for _ in range(ROUNDS):
                alone.append(reads(base, quiet))
                stop = threading.Event()
                firing = threading.Thread(target=fire, args=(base, busy, stop, fired))
                firing.start()
                try:
                    beside.append(reads(base, quiet))
                finally:
                    stop.set()
                    firing.join()
            delivered = len(requests.get(f"{base}/_sandbox/deliveries", headers=busy, timeout=30).json()["deliveries"])
        finally:
            process.terminate()
            process.wait(20)
    best_alone, best_beside = max(alone), max(beside)
    print(f"load generator: {load.generator()}; best of {ROUNDS} interleaved rounds of {SECONDS:g} s; "
          f"{len(fired)} events fired ({len(fired) / (ROUNDS * SECONDS):.0f} a second beside the reads, paced at "
          f"most {EVENTS_PER_S}), {delivered} attempts recorded")
    print(f"quiet world's GET /partners/self: {best_alone:.0f}/s alone, {best_beside:.0f}/s beside the busy world: "
          f"x{best_beside / best_alone:.2f}")


if __name__ == "__main__":
    main()
