"""No caller stalls another world (issues 11 and 40): a bystander world's latency while other callers load
`busy-merchant` (a million transactions) and move their worlds a century ahead, against the same probes on a quiet
server. Issue 40's aim: the bystander's p99 busy is at most 1.3x its p99 quiet, in one process and with
`--workers 2`.

Each mode (one `ptas serve` on a SQLite file, `--workers 2` on it, and both on PostgreSQL when it is installed)
takes ROUNDS turns of three phases: quiet; busy (the loaders load the bystander's server); beside (the same load
on a second server of the same kind, next to it). A machine that gets busier or quieter meanwhile weighs on every
phase alike. The beside phase says what the load costs the bystander through the machine alone (its two cores):
what busy costs beyond it is the server's own doing (a shared lock, the store's writer turn, the GIL).

The bystander probes `/_sandbox/health` and a page of its own transactions at a steady pace (a client, not a
saturating loop, whose own requests would be the load). The loaders run back to back, each in a process of its
own at the lowest CPU priority: they stand for other teams' clients on other machines, and neither their threads
(the probe's timing would wait for them) nor their CPU (the server's would) should be the bench's. Prints p50/p99
per probe and phase, the p99 ratios to quiet, busy's to beside (the server's own share), and how many loads and
century advances ran (with their median time). Not a test: the machine's other work moves every figure, so the
load average is printed beside them.

`--pin` puts the servers on the first CPU and the loaders and the probe on the others: the clients then take no
CPU from the server, as on other machines, and busy/quiet is the server's own sharing of a saturated core between
the bystander and the loads.
"""

import argparse
import multiprocessing
import os
import queue
import statistics
import sys
import tempfile
import time

import requests

from bench.workers import launch, stores

SECONDS = float(os.environ.get("PTAS_BENCH_SECONDS", 15))     # of probes in each phase: quiet, busy, beside
CENTURY_S = 100 * 365 * 86400
LOADERS = 2
PACE_S = 0.02       # between the starts of two probe rounds (health, then a read)
ROUNDS = 5          # of the three phases in turn


def p(values, q):
    return statistics.quantiles(values, n=100)[q - 1] * 1000 if len(values) > 1 else float("nan")


def probe(base, token, account_id, seconds):
    """Probe rounds every PACE_S for `seconds`: {name: [seconds, ...]}."""
    session = requests.Session()
    headers = {"Authorization": f"Bearer {token}"}
    probes = {"health": (f"{base}/_sandbox/health", {}),
              "read": (f"{base}/partner/v2/accounts/{account_id}/transactions?pageSize=100", headers)}
    times = {name: [] for name in probes}
    start = time.perf_counter()
    rounds = 0
    while time.perf_counter() < start + seconds:
        for name, (url, h) in probes.items():
            started = time.perf_counter()
            assert session.get(url, headers=h, timeout=60).status_code == 200
            times[name].append(time.perf_counter() - started)
        rounds += 1
        time.sleep(max(0.0, start + rounds * PACE_S - time.perf_counter()))
    return times


def loader(bases, target, go, stop, running, done):
    """Load busy-merchant into the server `bases[target]`, move that world a century ahead; again while `go` is
    set, until `stop` (a process of its own, at the lowest CPU priority: it stands for another team's client,
    which runs on another machine, and its own work would otherwise take the cores from the server it loads)."""
    os.nice(19)
    session = requests.Session()
    while not stop.is_set():
        if not go.wait(0.1):
            continue
        base = bases[target.value]
        with running.get_lock():
            running.value += 1
        try:
            started = time.perf_counter()
            loaded = session.post(f"{base}/_sandbox/scenarios/busy-merchant", timeout=120)
            assert loaded.status_code == 201, loaded.text[:300]
            done.put(("load", time.perf_counter() - started))
            started = time.perf_counter()
            moved = session.post(f"{base}/_sandbox/clock", json={"advance": CENTURY_S}, timeout=120,
                                 headers={"Authorization": f"Bearer {loaded.json()['accessToken']}"})
            assert moved.status_code == 200, moved.text[:300]
            done.put(("advance", time.perf_counter() - started))
        finally:
            with running.get_lock():
                running.value -= 1


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


def extend(phase, times):
    for name, values in times.items():
        phase.setdefault(name, []).extend(values)


def launch_on(cpus, store, workers):
    """`launch`, the server (and its workers, which inherit it) on `cpus` when given."""
    if cpus is None:
        return launch(store, workers)
    mine = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        return launch(store, workers)
    finally:
        os.sched_setaffinity(0, mine)


def measure(store, beside_store, workers, server_cpus=None):
    """({phase: probe times}, {kind: [seconds]} of the loaders) on a fresh server and another beside it: ROUNDS
    of a quiet phase, a busy one (the loaders load the bystander's server) and one beside (the same load on the
    other server), each SECONDS / ROUNDS long, so a machine that got busier or quieter meanwhile weighs on every
    phase alike. What the load beside costs the bystander is the machine's share (its cores), not its server's."""
    mine = os.sched_getaffinity(0)
    process, base, _ = launch_on(server_cpus, store, workers)
    beside, beside_base, _ = launch_on(server_cpus, beside_store, workers)
    if server_cpus:     # the probe, and the loaders spawned below, off the servers' CPUs
        os.sched_setaffinity(0, mine - server_cpus)
    spawn = multiprocessing.get_context("spawn")
    go, stop, running, done = spawn.Event(), spawn.Event(), spawn.Value("i", 0), spawn.Queue()
    target = spawn.Value("i", 0)
    loaders = [spawn.Process(target=loader, args=((base, beside_base), target, go, stop, running, done))
               for _ in range(LOADERS)]
    phases = {"quiet": {}, "busy": {}, "beside": {}}
    ran = {"load": [], "advance": []}
    try:
        token, account_id = reader_world(base)
        for process_ in loaders:
            process_.start()
        go.set()        # warm: the loaders' interpreters and the server's first loads
        probe(base, token, account_id, 1)
        for _ in range(ROUNDS):
            for phase, times in phases.items():
                go.clear()
                while running.value:        # the loads under way end before the next phase starts
                    time.sleep(0.01)
                target.value = int(phase == "beside")
                if phase != "quiet":
                    go.set()
                extend(times, probe(base, token, account_id, SECONDS / ROUNDS))
    finally:
        try:
            stop.set()
            go.clear()
            while any(process_.is_alive() for process_ in loaders) or not done.empty():
                try:        # drained before the join: a loader whose queue is not read never exits
                    kind, seconds = done.get(timeout=0.1)
                    ran[kind].append(seconds)
                except queue.Empty:
                    pass
            for process_ in loaders:
                if process_.pid is not None:       # started (a loader that failed to start is not joined)
                    process_.join()
        finally:        # whatever failed above, no server outlives the bench
            for server in (process, beside):
                server.terminate()
                server.wait(20)
            os.sched_setaffinity(0, mine)
    return phases, ran


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench stall")
    parser.add_argument("--pin", action="store_true", help="the servers on the first CPU, the clients on the others")
    if argv is None:        # `python -m bench stall --pin` hands its options over as bench.stall's argv
        argv = sys.argv[1:] if "stall" in os.path.basename(sys.argv[0]) else []
    pin = parser.parse_args(argv).pin
    cpus = sorted(os.sched_getaffinity(0))
    if pin and len(cpus) < 2:
        raise SystemExit("--pin needs two CPUs")
    server_cpus = {cpus[0]} if pin else None
    print(f"{LOADERS} loader processes back to back (nice 19); a probe round every {PACE_S * 1000:.0f} ms; "
          f"{ROUNDS} rounds of {SECONDS / ROUNDS:g} s each quiet, busy (the load on the bystander's server) and "
          "beside (the same load on another server: the machine's share)"
          + (f"; servers on CPU {cpus[0]}, clients on the others" if pin else ""))
    with tempfile.TemporaryDirectory() as tmp:
        for name, location in stores(tmp):
            for workers in (1, 2):
                load_average = os.getloadavg()[0]
                phases, ran = measure(location(f"stall-{workers}"), location(f"beside-{workers}"), workers,
                                      server_cpus)
                quiet, busy, beside = phases["quiet"], phases["busy"], phases["beside"]
                mode = "one process" if workers == 1 else f"--workers {workers}"
                print(f"{name} {mode} (load average {load_average:.1f} before, {os.getloadavg()[0]:.1f} after):")
                for probe_name in quiet:
                    q99, b99, s99 = (p(phase[probe_name], 99) for phase in (quiet, busy, beside))
                    print(f"  {probe_name:7} quiet p50 {p(quiet[probe_name], 50):5.1f} ms p99 {q99:5.1f} ms | busy "
                          f"p50 {p(busy[probe_name], 50):5.1f} ms p99 {b99:5.1f} ms | p99 busy/quiet x{b99 / q99:.2f}"
                          f" | beside p99 {s99:5.1f} ms x{s99 / q99:.2f} | busy/beside x{b99 / s99:.2f}  "
                          f"({len(busy[probe_name])} probes each)")
                print("  meanwhile " + ", ".join(
                    f"{len(times)} {kind}s (median {statistics.median(times) * 1000:.0f} ms)" if times
                    else f"no {kind}" for kind, times in ran.items()), flush=True)


if __name__ == "__main__":
    main()
