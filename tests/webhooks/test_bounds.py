"""No caller of a shared sandbox stalls another through webhooks (issue 11): flushes of one world cannot take
every server thread, and resolving a callback's host is part of the whole-attempt deadline."""

import socket
import threading

import pytest
import requests

from ptas_sandbox.simulator import create_app
from ptas_sandbox.simulator.webhooks.sender import Sender
from tests.support.client import Api
from tests.support.receivers import LONG, Receiver
from tests.support.served import Served
from tests.support.worlds import new_world

THREADS = 8     # as `ptas serve` runs waitress


class Waitress:
    """The app behind waitress with `ptas serve`'s thread count; counts the flushes that reached the dispatcher."""

    def __init__(self, app):
        self.app = app
        self.served = Served(app, threads=THREADS)
        self.base = self.served.base
        dispatcher = app.extensions["ptas.webhooks"]
        real, self.entered = dispatcher.flush, threading.Semaphore(0)

        def counted(world):
            self.entered.release()
            return real(world)
        dispatcher.flush = counted

    def world(self):
        made = requests.post(f"{self.base}/_sandbox/partners", json={}, timeout=LONG).json()
        return {"Authorization": f"Bearer {made['accessToken']}"}

    def close(self):
        self.served.stop(LONG)
        self.app.extensions["ptas"].close()


@pytest.fixture
def waitress(system_time):
    served = Waitress(create_app({"SYSTEM_TIME": system_time, "START_SERVICES": False,
                                  "WEBHOOK_TIMEOUT_SECONDS": LONG}))
    yield served
    served.close()


def flush(base, headers, answers, answered):
    answers.append(requests.post(f"{base}/_sandbox/webhooks/flush", headers=headers, timeout=3 * LONG))
    answered.release()


def test_flushes_of_one_world_waiting_on_a_held_receiver_leave_threads_for_other_worlds(waitress):
    """Eight flushes of world A wait on a receiver that holds its request until released: world B's request
    and health still answer (they waited for all eight threads), and two of A's flushes wait for the outcome
    while the others answer at once with the attempt in flight."""
    held = Receiver(hold=3 * LONG)
    base, a, b = waitress.base, waitress.world(), waitress.world()
    flushes, answers, answered = [], [], threading.Semaphore(0)
    try:
        requests.post(f"{base}/partner/v2/webhooks", headers=a, timeout=LONG, json={
            "callbackUrl": held.url, "events": ["AccountCreated"]}).raise_for_status()
        requests.post(f"{base}/partner/v2/testevents/accountcreated", headers=a, timeout=LONG).raise_for_status()
        for _ in range(THREADS):
            flushes.append(threading.Thread(target=flush, args=(base, a, answers, answered), daemon=True))
            flushes[-1].start()
        assert held.arrived.wait(LONG)
        for _ in range(THREADS):
            assert waitress.entered.acquire(timeout=LONG), "every flush reached the dispatcher"
        assert requests.get(f"{base}/partner/v2/partners/self", headers=b, timeout=LONG).status_code == 200
        assert requests.get(f"{base}/_sandbox/health", timeout=LONG).status_code == 200
        for _ in range(THREADS - 2):    # those beyond the two waiting answer while the receiver still holds
            assert answered.acquire(timeout=LONG)
        assert [r.json()["inFlight"] for r in answers] == [1] * (THREADS - 2)
    finally:
        held.release()
        for thread in flushes:
            thread.join(3 * LONG)
        held.close()
    assert [r.status_code for r in answers] == [200] * THREADS
    assert [r.json()["inFlight"] for r in answers[THREADS - 2:]] == [0, 0], "the two waiting saw the outcome"
    assert len(held.requests) == 1, "one attempt, however many flushes"
    dispatcher = waitress.app.extensions["ptas.webhooks"]
    assert dispatcher._waiting == {} and dispatcher._in_flight == {}, "nothing kept per world once idle"


def test_a_flush_waits_at_most_the_flush_wait_and_says_what_is_still_in_flight(system_time):
    app = create_app({"SYSTEM_TIME": system_time, "START_SERVICES": False, "WEBHOOK_TIMEOUT_SECONDS": LONG,
                      "FLUSH_WAIT_SECONDS": 0.2})
    held = Receiver(hold=3 * LONG)
    try:
        world = new_world(Api(app.test_client()))
        world.api.post("/webhooks", json={"callbackUrl": held.url, "events": ["AccountCreated"]})
        world.api.post("/testevents/accountcreated")
        first = world.api.post("/_sandbox/webhooks/flush")
        assert first.status_code == 200
        assert first.json == {"attempted": 1, "inFlight": 1, "pending": 0, "nextDueAt": None}
        assert held.wait_for(1, timeout=LONG)
        held.release()
        last = {}
        for _ in range(200):        # the held attempt ends once released; each flush waits up to 0.2 s for it
            last = world.api.post("/_sandbox/webhooks/flush").json
            if not last["inFlight"]:
                break
        assert last == {"attempted": 0, "inFlight": 0, "pending": 0, "nextDueAt": None}
        [attempt] = world.api.get("/_sandbox/deliveries").json["deliveries"]
        assert attempt["status"] == "succeeded"
    finally:
        held.close()
        app.extensions["ptas"].close()


# --- resolving a callback's host is part of the attempt ----------------------------------------------------------

class Resolver:
    """socket.getaddrinfo for names under `.example.test`: `slow.example.test` answers only once released,
    others at once with the address given; every other name goes to the real resolver."""

    def __init__(self, real, answers):
        self.real, self.answers = real, answers
        self.released, self.asked = threading.Event(), threading.Event()

    def __call__(self, host, port, *args, **kw):
        if not str(host).endswith(".example.test"):
            return self.real(host, port, *args, **kw)
        self.asked.set()
        if host.startswith("slow."):
            self.released.wait(3 * LONG)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (self.answers.get(host, "127.0.0.1"), port))]


@pytest.fixture
def resolver(monkeypatch):
    resolver = Resolver(socket.getaddrinfo, {})
    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    yield resolver
    resolver.released.set()


def test_a_name_server_that_never_answers_is_cut_off_at_the_attempt_deadline(resolver):
    outcome, sent = {}, threading.Event()

    def send():
        outcome["it"] = Sender(0.2, allow_private=True).send("http://slow.example.test/hook", b"{}", {})
        sent.set()
    threading.Thread(target=send, daemon=True).start()
    assert sent.wait(LONG), "the attempt ended while the name server still had not answered"
    assert not resolver.released.is_set()
    assert outcome["it"].status is None and outcome["it"].error.startswith("timeout")
    assert "slow.example.test" in outcome["it"].error


def test_the_address_a_name_resolves_to_within_the_deadline_is_checked_and_called(resolver, system_time):
    """Resolved in the attempt, refused when private (the check is on what the name resolved to then)."""
    public_only = create_app({"SYSTEM_TIME": system_time, "START_SERVICES": False, "WEBHOOK_TIMEOUT_SECONDS": LONG,
                              "ALLOW_PRIVATE_CALLBACKS": False})
    try:
        world = new_world(Api(public_only.test_client()))
        resolver.answers["meta.example.test"] = "169.254.169.254"
        assert world.api.post("/webhooks", json={"callbackUrl": "http://meta.example.test/latest",
                                                 "events": ["AccountCreated"]}).status_code == 201
        world.api.post("/testevents/accountcreated")
        assert world.api.post("/_sandbox/webhooks/flush").json["inFlight"] == 0
        attempt = world.api.get("/_sandbox/deliveries").json["deliveries"][0]
        assert attempt["status"] == "failed" and attempt["response"] is None
        assert attempt["error"].startswith("refused") and "169.254.169.254" in attempt["error"]
        assert resolver.asked.is_set()
    finally:
        public_only.extensions["ptas"].close()
