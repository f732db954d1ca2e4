"""Slow clients and noisy worlds against a bystander (issue 24), in both modes of `ptas serve` (one waitress
process; `--workers 2`, waitress in each gunicorn worker), on a SQLite file.

Three rounds per mode, interleaved probes of a bystander (`/_sandbox/health` and a partner read) from 127.0.0.1:
- quiet: nothing else runs;
- slow: 200 connections from 127.0.0.2-5 (50 each) that sent half a request and trickle a header byte now
  and then;
- noisy: ten worlds whose receivers hang, each flushing three times at once (flushes wait up to 30 s).
Prints p50/p99 per round and the slow/quiet and noisy/quiet ratios of p99. Issue 24's aim: bystander p99
under 100 ms in every round. Not a test: the reliability suite asserts "served", this prints how fast.
"""

import os
import socket
import statistics
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import requests

from bench.workers import launch

SECONDS = float(os.environ.get("PTAS_BENCH_SECONDS", 4))


def p(values, q):
    return statistics.quantiles(values, n=100)[q - 1] * 1000 if len(values) > 1 else float("nan")


def probe(base, auth, seconds):
    session = requests.Session()
    times = []
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        for url, headers in ((f"{base}/_sandbox/health", {}), (f"{base}/partner/v2/partners/self", auth)):
            started = time.perf_counter()
            assert session.get(url, headers=headers, timeout=60).status_code == 200
            times.append(time.perf_counter() - started)
    return times


def world(base):
    token = requests.post(f"{base}/_sandbox/partners", json={}, timeout=30).json()["accessToken"]
    return {"Authorization": f"Bearer {token}"}


def slow_round(base, port, auth):
    held, stop = [], threading.Event()
    for n in range(200):
        sock = socket.create_connection(("127.0.0.1", port), source_address=(f"127.0.0.{2 + n % 4}", 0))
        sock.sendall(b"POST /partner/v2/users HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nX-Slow: ")
        held.append(sock)

    def trickle():
        while not stop.wait(0.5):
            for sock in held:
                try:
                    sock.sendall(b"x")
                except OSError:
                    pass
    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    try:
        return probe(base, auth, SECONDS)
    finally:
        stop.set()
        thread.join()
        for sock in held:
            sock.close()


class Hanging:
    """A receiver that takes connections into its backlog and never answers."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0), backlog=128)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/hook"

    def close(self):
        self.sock.close()


def noisy_round(base, auth):
    hanging = [Hanging() for _ in range(10)]
    flushes = ThreadPoolExecutor(30)
    try:
        for receiver in hanging:
            headers = world(base)
            requests.post(f"{base}/partner/v2/webhooks", headers=headers, json={
                "callbackUrl": receiver.url, "events": ["AccountCreated"]}, timeout=30).raise_for_status()
            for _ in range(3):
                requests.post(f"{base}/partner/v2/testevents/accountcreated", headers=headers, timeout=30)
                flushes.submit(requests.post, f"{base}/_sandbox/webhooks/flush", headers=headers, timeout=120)
        time.sleep(1)           # the flushes are in and their attempts on the wire
        return probe(base, auth, SECONDS)
    finally:
        for receiver in hanging:
            receiver.close()
        flushes.shutdown(wait=False, cancel_futures=True)


def main():
    print("bystander latency (health + a partner read from 127.0.0.1); machine shared, ratios only", flush=True)
    for workers in (1, 2):
        with_dir = tempfile.TemporaryDirectory()
        process, base, _ = launch(os.path.join(with_dir.name, "sandbox.db"), workers)
        try:
            port = int(base.rsplit(":", 1)[1])
            auth = world(base)
            rounds = {"quiet": probe(base, auth, SECONDS), "slow": slow_round(base, port, auth),
                      "noisy": noisy_round(base, auth)}
            mode = "one process" if workers == 1 else f"--workers {workers}"
            quiet = p(rounds["quiet"], 99)
            for name, times in rounds.items():
                print(f"{mode:12} {name:6} n={len(times):5}  p50 {p(times, 50):7.1f} ms  p99 {p(times, 99):7.1f} ms"
                      f"  p99/quiet {p(times, 99) / quiet:5.2f}", flush=True)
        finally:
            process.terminate()
            process.wait(30)
            with_dir.cleanup()


if __name__ == "__main__":
    main()
