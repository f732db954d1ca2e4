"""Ten worlds whose receivers hang, each flushing again and again, in both modes of `ptas serve` (issue 24):
health and another world's healthy receiver on the same host are still served. Flushes held server threads
(health took up to 29.9 s) and the per-host cap shared by every world let one world's hanging receiver take
another's turn. Outcomes only; latency figures are bench/slow_clients.py's."""

import time
from concurrent.futures import ThreadPoolExecutor

import requests

from tests.support.receivers import Receiver


def new_world(base):
    made = requests.post(f"{base}/_sandbox/partners", json={}, timeout=30)
    assert made.status_code == 201
    return {"Authorization": f"Bearer {made.json()['accessToken']}"}


def subscribe(base, auth, url):
    requests.post(f"{base}/partner/v2/webhooks", headers=auth, json={
        "callbackUrl": url, "events": ["AccountCreated"]}, timeout=30).raise_for_status()


def test_ten_worlds_flushing_to_hanging_receivers_leave_health_and_a_healthy_world_served(launched):
    server = launched("--webhook-timeout", "30")
    base = server.base
    hanging = [Receiver(hold=60) for _ in range(10)]
    healthy = Receiver()
    flushes = ThreadPoolExecutor(30)
    try:
        for receiver in hanging:
            auth = new_world(base)
            subscribe(base, auth, receiver.url)
            for _ in range(3):
                requests.post(f"{base}/partner/v2/testevents/accountcreated", headers=auth,
                              timeout=30).raise_for_status()
            for _ in range(3):
                flushes.submit(requests.post, f"{base}/_sandbox/webhooks/flush", headers=auth, timeout=120)
        assert all(receiver.arrived.wait(30) for receiver in hanging[:2])
        for _ in range(20):
            assert requests.get(f"{base}/_sandbox/health", timeout=30).status_code == 200
        auth = new_world(base)
        subscribe(base, auth, healthy.url)      # the same host as the hanging ones
        requests.post(f"{base}/partner/v2/testevents/accountcreated", headers=auth, timeout=30).raise_for_status()
        assert requests.post(f"{base}/_sandbox/webhooks/flush", headers=auth, timeout=30).status_code == 200
        deadline = time.monotonic() + 30
        while not healthy.arrived.is_set() and time.monotonic() < deadline:     # a flush that could not wait
            requests.post(f"{base}/_sandbox/webhooks/flush", headers=auth, timeout=30)
            healthy.arrived.wait(0.2)
        assert healthy.arrived.is_set(), "the healthy receiver was not served beside the hanging ones"
    finally:
        for receiver in hanging + [healthy]:
            receiver.close()
        flushes.shutdown(wait=False, cancel_futures=True)
