"""The issue's "done when", as a partner developer would script it against a served sandbox: a local receiver
and the sandbox's own echo both get every test event, signed and verifiable with the public helper."""

import json

import pytest

from ptas_sandbox.simulator import create_app
from ptas_sandbox.simulator.events import ACTIVE
from ptas_sandbox.simulator.timestamps import SECOND_US, parse
from ptas_sandbox.webhooks import verify
from tests.support.client import Api, Http
from tests.support.receivers import Receiver, Served


@pytest.fixture
def sandbox(system_time):
    served = Served(create_app({"SYSTEM_TIME": system_time, "START_SERVICES": True}))
    yield served.base
    served.close()


@pytest.fixture
def receiver():
    receiver = Receiver()
    yield receiver
    receiver.close()


class Partner:
    """A partner script over HTTP that expects every call to succeed."""

    def __init__(self, base):
        api = Api(Http(base))
        self.api = api.as_(api.post("/_sandbox/partners", json={"name": "Script"}).json()["accessToken"])

    def call(self, method, path, **kw):
        response = self.api.call(method, path, **kw)
        assert response.status_code < 300, response.text
        return response.json() if response.content else None

    def now(self):
        return parse(self.call("GET", "/_sandbox/clock")["now"]) / SECOND_US


def test_a_script_gets_every_test_event_signed_at_its_receiver_and_in_the_echo(sandbox, receiver):
    partner = Partner(sandbox)
    mine = partner.call("POST", "/webhooks", json={"callbackUrl": receiver.url, "events": list(ACTIVE)})
    echo = partner.call("POST", "/webhooks", json={"callbackUrl": f"{sandbox}/_sandbox/echo/script",
                                                   "events": list(ACTIVE), "name": "echo"})
    sent = [partner.call("POST", f"/testevents/{kind.lower()}") for kind in ACTIVE]
    partner.call("POST", "/_sandbox/webhooks/flush")
    assert receiver.wait_for(len(ACTIVE))

    at_receiver = [verify(mine["secret"], r["headers"], r["body"], now=partner.now()) for r in receiver.requests]
    captures = partner.call("GET", "/_sandbox/echo/script")["captures"]
    in_echo = [verify(echo["secret"], c["headers"], c["body"], now=partner.now()) for c in captures]
    by_id = lambda payloads: sorted(payloads, key=lambda p: p["id"])   # noqa: E731 (delivery order is free)
    assert by_id(at_receiver) == by_id(in_echo) == by_id(sent)
    assert {p["eventType"] for p in at_receiver} == set(ACTIVE)

    log = partner.call("GET", "/_sandbox/deliveries")["deliveries"]
    assert len(log) == 2 * len(ACTIVE) and all(d["status"] == "succeeded" for d in log)
    assert sorted(json.loads(d["request"]["body"])["id"] for d in log) == sorted(2 * [p["id"] for p in sent])


def test_a_script_gets_every_lifecycle_event_of_an_account_at_its_receiver_and_in_the_echo(sandbox, receiver):
    partner = Partner(sandbox)
    mine = partner.call("POST", "/webhooks", json={"callbackUrl": receiver.url, "events": list(ACTIVE)})
    echo = partner.call("POST", "/webhooks", json={"callbackUrl": f"{sandbox}/_sandbox/echo/life",
                                                   "events": list(ACTIVE)})
    user = partner.call("POST", "/users", json={"name": "Jane"})
    account = partner.call("POST", "/accounts", json={"accountTypeId": "dummy", "name": "Shop", "userId": user["id"],
                                                      "credentials": {"username": "jane", "password": "s3cret"}})
    partner.call("POST", "/_sandbox/clock", json={"advance": 60})
    partner.call("PUT", f"/accounts/{account['id']}", json={"credentials": {"password": "wrong"}})
    partner.call("POST", "/_sandbox/clock", json={"advance": 7200})
    partner.call("POST", "/_sandbox/accounttypes/dummy", json={"state": "Degraded"})
    partner.call("DELETE", f"/accounts/{account['id']}")
    partner.call("POST", "/_sandbox/webhooks/flush")

    log = partner.call("GET", "/_sandbox/deliveries")["deliveries"]
    assert all(d["status"] == "succeeded" for d in log)
    assert receiver.wait_for(len(log) // 2)
    # Checked after the fact, hours of world time after the first ones were sent: signatures only, no age.
    at_receiver = [verify(mine["secret"], r["headers"], r["body"], tolerance_seconds=None) for r in receiver.requests]
    captures = partner.call("GET", "/_sandbox/echo/life")["captures"]
    in_echo = [verify(echo["secret"], c["headers"], c["body"], tolerance_seconds=None) for c in captures]
    by_id = lambda payloads: sorted(payloads, key=lambda p: p["id"])   # noqa: E731
    assert by_id(at_receiver) == by_id(in_echo)
    assert {p["eventType"] for p in at_receiver} == set(ACTIVE)
    assert all(p["isTest"] is False for p in at_receiver)
