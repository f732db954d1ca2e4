"""The webhook dispatcher against real local HTTP receivers: faults, retries on the world clock, concurrency,
the background thread, a real server delivering to its own echo, and a clean shutdown."""

import threading

import pytest
import requests

from ptas_sandbox.simulator import create_app
from tests.support.client import Api
from tests.support.receivers import LONG, Receiver, Served, Silent, refused_url
from tests.support.worlds import new_world

TIMEOUT = 0.5     # for the tests of the deadline itself: their receivers never answer in time




@pytest.fixture
def receivers():
    made = []

    def make(kind="ok"):
        receiver = {"ok": Receiver, "500": lambda: Receiver(status=500), "silent": Silent,
                    "slow": lambda: Receiver(hold=LONG), "held": lambda: Receiver(hold=LONG)}[kind]()
        made.append(receiver)
        return receiver
    yield make
    for receiver in made:
        receiver.close()


def subscribe(world, url, events=("AccountCreated",)):
    response = world.api.post("/webhooks", json={"callbackUrl": url, "events": list(events)})
    assert response.status_code == 201, response.json
    return response.json


def log_of(world, hook=None):
    query = f"?webhookId={hook['id']}" if hook else ""
    return world.api.get("/_sandbox/deliveries" + query).json["deliveries"]


def flush(world):
    response = world.api.post("/_sandbox/webhooks/flush")
    assert response.status_code == 200, response.json
    return response.json


@pytest.mark.parametrize("deadline", [TIMEOUT], indirect=True)
@pytest.mark.parametrize("fault", ["refused", "500", "slow", "silent"])
def test_a_failing_receiver_is_logged_and_retried_until_the_schedule_ends(world, receivers, fault):
    url = refused_url() if fault == "refused" else receivers(fault).url
    hook = subscribe(world, url)
    world.api.post("/testevents/accountcreated")
    assert flush(world) == {"attempted": 1, "inFlight": 0, "pending": 1, "nextDueAt": log_of(world)[0]["nextRetryAt"]}
    for wait in (30, 120, 600, 3600):
        assert flush(world)["attempted"] == 0, "nothing is due before the backoff has passed"
        world.api.advance(wait)
        assert flush(world)["attempted"] == 1
    world.api.advance(86400)
    assert flush(world) == {"attempted": 0, "inFlight": 0, "pending": 0, "nextDueAt": None}
    attempts = log_of(world, hook)
    assert [a["attempt"] for a in attempts] == [1, 2, 3, 4, 5], "each attempt once, in the log"
    assert all(a["status"] == "failed" for a in attempts)
    assert [a["final"] for a in attempts] == [False] * 4 + [True]
    assert attempts[-1]["nextRetryAt"] is None
    first = attempts[0]
    if fault == "500":
        assert first["response"]["status"] == 500 and "500" in first["error"]
    elif fault == "refused":
        assert first["response"] is None and "connection" in first["error"]
    else:
        assert first["response"] is None and "timeout" in first["error"]
        assert first["durationMs"] >= TIMEOUT * 1000 * 0.9


def test_a_receiver_that_recovers_gets_the_retry(world, api, receivers):
    failing = receivers("500")
    hook = subscribe(world, failing.url)
    world.api.post("/testevents/accountcreated")
    flush(world)
    healthy = receivers()
    world.api.patch(f"/webhooks/{hook['id']}", json={"callbackUrl": healthy.url})
    world.api.advance(30)
    flush(world)
    assert [a["status"] for a in log_of(world)] == ["failed", "succeeded"]
    assert failing.requests[0]["body"] == healthy.requests[0]["body"]


def test_only_the_start_of_a_huge_answer_is_kept(world):
    chatty = Receiver(answer="x" * 5_000_000)
    try:
        subscribe(world, chatty.url)
        world.api.post("/testevents/accountcreated")
        flush(world)
        [attempt] = log_of(world)
        assert attempt["status"] == "succeeded" and attempt["response"]["body"] == "x" * 256
    finally:
        chatty.close()


def flushing(world):
    """A flush running in a thread (it answers once every attempt has an outcome): (thread, its answer)."""
    answer = {}
    thread = threading.Thread(target=lambda: answer.update(flush(world)), daemon=True)
    thread.start()
    return thread, answer


def test_a_dead_receiver_does_not_delay_a_live_one_in_a_flush(world, receivers):
    """No timing: the held receiver keeps its request until released, and the live one must get its
    notification before that."""
    held, live = receivers("held"), receivers()
    held_hook = subscribe(world, held.url)
    subscribe(world, live.url)
    world.api.post("/testevents/accountcreated")
    thread, answer = flushing(world)
    assert live.wait_for(1), "the live receiver got its notification while the other was held"
    assert held.wait_for(1) and not answer, "the held attempt was still on the wire"
    held.release()
    thread.join(30)
    assert answer == {"attempted": 2, "inFlight": 0, "pending": 0, "nextDueAt": None}
    assert [a["status"] for a in log_of(world, held_hook)] == ["succeeded"]


def test_one_notification_to_each_of_many_receivers_is_sent_concurrently(world, receivers):
    held = [receivers("held") for _ in range(4)]
    for receiver in held:
        subscribe(world, receiver.url)
    world.api.post("/testevents/accountcreated")
    thread, answer = flushing(world)
    assert all(r.wait_for(1) for r in held), "all four were on the wire at once (none was released yet)"
    for receiver in held:
        receiver.release()
    thread.join(30)
    assert answer["attempted"] == 4 and all(a["status"] == "succeeded" for a in log_of(world))


def test_the_api_call_causing_an_event_does_not_wait_for_delivery(world, receivers):
    silent = receivers("silent")
    subscribe(world, silent.url)
    response = world.api.post("/testevents/accountcreated")
    assert response.status_code == 202
    assert [a["status"] for a in log_of(world)] == ["pending"]


@pytest.fixture
def served(system_time):
    """A simulator behind a real HTTP server, with its background dispatcher running."""
    served = Served(create_app({"SYSTEM_TIME": system_time, "START_SERVICES": True, "WEBHOOK_TIMEOUT_SECONDS": LONG}))
    yield served.app, served.base
    served.close()


def test_the_background_dispatcher_delivers_without_a_flush(served, receivers):
    app, base = served
    live = receivers()
    world = requests.post(f"{base}/_sandbox/partners", json={}).json()
    headers = {"Authorization": f"Bearer {world['accessToken']}"}
    requests.post(f"{base}/partner/v2/webhooks", json={"callbackUrl": live.url, "events": ["AccountDeleted"]},
                  headers=headers).raise_for_status()
    requests.post(f"{base}/partner/v2/testevents/accountdeleted", headers=headers).raise_for_status()
    assert live.arrived.wait(10), "delivered by the background thread alone"
    assert live.requests[0]["headers"]["Webhook-Signature"].startswith("v1,")


def test_a_dead_receiver_does_not_delay_the_background_dispatcher(served, receivers):
    app, base = served
    held, live = receivers("slow"), receivers()
    world = requests.post(f"{base}/_sandbox/partners", json={}).json()
    headers = {"Authorization": f"Bearer {world['accessToken']}"}
    for url, kind in ((held.url, "AccountCreated"), (live.url, "AccountDeleted")):
        requests.post(f"{base}/partner/v2/webhooks", json={"callbackUrl": url, "events": [kind]},
                      headers=headers).raise_for_status()
    requests.post(f"{base}/partner/v2/testevents/accountcreated", headers=headers).raise_for_status()
    assert held.arrived.wait(10)
    requests.post(f"{base}/partner/v2/testevents/accountdeleted", headers=headers).raise_for_status()
    assert live.arrived.wait(10)
    log = requests.get(f"{base}/_sandbox/deliveries", headers=headers).json()["deliveries"]
    assert {d["eventType"]: d["status"] for d in log}["AccountCreated"] == "sending", \
        "the live receiver was served while the held one was still on the wire"


def test_a_burst_to_a_dead_receiver_does_not_take_every_sender(served, receivers):
    app, base = served
    silent, live = receivers("silent"), receivers()
    world = requests.post(f"{base}/_sandbox/partners", json={}).json()
    headers = {"Authorization": f"Bearer {world['accessToken']}"}
    for url in (silent.url, live.url):
        requests.post(f"{base}/partner/v2/webhooks", json={"callbackUrl": url, "events": ["AccountCreated"]},
                      headers=headers).raise_for_status()
    for _ in range(40):
        requests.post(f"{base}/partner/v2/testevents/accountcreated", headers=headers).raise_for_status()
    assert live.wait_for(40), "every notification reached the live receiver"
    log = requests.get(f"{base}/_sandbox/deliveries", headers=headers).json()["deliveries"]
    dead = [d for d in log if d["url"] == silent.url]
    assert sum(d["status"] == "sending" for d in dead) <= 2, "at most two attempts per webhook on the wire"
    assert any(d["status"] == "pending" for d in dead), "the dead receiver's backlog waited its turn"


def test_a_served_sandbox_delivers_to_its_own_echo_over_http(served):
    app, base = served
    world = requests.post(f"{base}/_sandbox/partners", json={}).json()
    headers = {"Authorization": f"Bearer {world['accessToken']}"}
    hook = requests.post(f"{base}/partner/v2/webhooks", headers=headers, json={
        "callbackUrl": f"{base}/_sandbox/echo/own", "events": ["AccountTypeUpdated"]}).json()
    requests.post(f"{base}/partner/v2/testevents/accounttypeupdated", headers=headers).raise_for_status()
    requests.post(f"{base}/_sandbox/webhooks/flush", headers=headers).raise_for_status()
    [capture] = requests.get(f"{base}/_sandbox/echo/own", headers=headers).json()["captures"]
    assert capture["headers"]["Host"] == base.split("//")[1]
    from ptas_sandbox.webhooks import verify
    assert verify(hook["secret"], capture["headers"], capture["body"], tolerance_seconds=None)["eventType"] == \
        "AccountTypeUpdated"


def test_the_dispatcher_shuts_down_cleanly_with_an_attempt_on_the_wire(system_time, receivers):
    app = create_app({"SYSTEM_TIME": system_time, "START_SERVICES": True, "WEBHOOK_TIMEOUT_SECONDS": TIMEOUT})
    world = new_world(Api(app.test_client()))
    silent = receivers("silent")
    subscribe(world, silent.url)
    world.api.post("/testevents/accountcreated")
    dispatcher = app.extensions["ptas.webhooks"]
    app.extensions["ptas"].close()
    assert not dispatcher._thread.is_alive()
    assert not [t for t in threading.enumerate() if t.name.startswith("ptas-webhook")]


def test_the_dispatcher_is_woken_by_the_requests_that_give_it_work_and_by_no_other(app, world, system_time,
                                                                                    monkeypatch):
    """Each wake is a dispatcher round with a write transaction: woken after every read, it cost a busy server
    about a tenth of its throughput. A missed wake would only wait for the next poll; this checks both ways."""
    wakes = []
    monkeypatch.setattr(app.extensions["ptas.webhooks"], "wake", lambda: wakes.append(1))
    user, user_api = world.user(name="Jane")
    assert wakes == [], "creating a user writes no event"
    world.api.get("/partners/self")
    assert wakes == [], "a read gives the dispatcher nothing"
    world.api.post("/testevents/accountcreated")
    assert len(wakes) == 1, "a test event is work"
    user_api.post("/accounts", json={"accountTypeId": "dummy", "credentials": {"username": "jane",
                                                                               "password": "s3cret"}})
    assert len(wakes) == 2, "AccountCreated is work"
    world.api.get("/partners/self")
    assert len(wakes) == 2
    system_time.tick(3600)              # the first import finishes on the running clock ...
    world.api.get("/partners/self")     # ... and this read's catch-up emits its TransactionsImported
    assert len(wakes) == 3, "a read whose catch-up emitted an event is work"
    world.api.post("/_sandbox/clock", json={"advance": 60})
    assert len(wakes) == 4, "steering the world (a clock move makes retries due) is work"
