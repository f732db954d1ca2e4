"""Lifecycle events from the domain (spec §6): a scripted account's life notifies the partner's webhooks of
every active kind, signed, with the account, import, report and account-type objects. Deliveries are
concurrent: the order of arrival is not promised, so nothing here depends on it (each notification's
`createdAt` says when its event happened)."""

import json

from ptas_sandbox.simulator import create_app
from ptas_sandbox.simulator.events import ACTIVE
from ptas_sandbox.simulator.timestamps import SECOND_US, parse
from ptas_sandbox.webhooks import verify
from tests.support.client import Api
from tests.support.receivers import Receiver
from tests.support.worlds import new_world


def subscribe(world, bin_):
    response = world.api.post("/webhooks", json={"callbackUrl": f"http://localhost/_sandbox/echo/{bin_}",
                                                 "events": list(ACTIVE)})
    assert response.status_code == 201, response.json
    return response.json


def notifications(api, world, hook, bin_):
    world.api.post("/_sandbox/webhooks/flush")
    now = parse(world.api.get("/_sandbox/clock").json["now"]) / SECOND_US
    return [verify(hook["secret"], c["headers"], c["body"], now=now)
            for c in world.api.get(f"/_sandbox/echo/{bin_}").json["captures"]]


def create_account(world, user, **fields):
    body = {"accountTypeId": "dummy", "name": "Shop", "userId": user["id"],
            "credentials": {"username": "jane", "password": "s3cret"}, **fields}
    response = world.api.post("/accounts", json=body)
    assert response.status_code == 201, response.json
    return response.json


def test_a_scripted_account_life_notifies_every_kind(api, world):
    hook = subscribe(world, "life")
    user, _ = world.user(name="Jane")
    account = create_account(world, user)
    world.api.advance(60)                                                   # the first import completes
    updated = world.api.put(f"/accounts/{account['id']}", json={"credentials": {"password": "wrong"}})
    assert updated.status_code == 200, updated.json
    world.api.advance(2 * 3600)                                             # a poll fails on the credentials
    outage = world.api.post("/_sandbox/accounttypes/dummy", json={"state": "Outage"})
    assert outage.status_code == 200, outage.json
    assert world.api.delete(f"/accounts/{account['id']}").status_code == 204

    sent = sorted(notifications(api, world, hook, "life"), key=lambda n: n["createdAt"])   # stable on ties
    kinds = [n["eventType"] for n in sent]
    assert set(kinds) == set(ACTIVE)
    assert kinds.count("AccountCreated") == kinds.count("AccountDeleted") == 1
    created = {n["eventType"]: n["createdAt"] for n in sent if n["eventType"] in ("AccountCreated", "AccountDeleted")}
    assert all(created["AccountCreated"] <= n["createdAt"] <= created["AccountDeleted"] for n in sent)
    assert all(not n["isTest"] for n in sent)
    by_kind = {}
    for n in sent:
        by_kind.setdefault(n["eventType"], []).append(n["data"])
    assert by_kind["AccountCreated"][0]["account"]["id"] == account["id"]
    assert by_kind["AccountCreated"][0]["userId"] == user["id"]
    first_import = by_kind["TransactionsImported"][0]
    assert first_import["transactionCount"] == first_import["dataImport"]["transactionCount"] > 0
    assert any(e["code"] == "InvalidCredentials" for d in by_kind["AccountUpdated"] for e in d["account"]["errors"]), \
        "a credentials problem reaches the partner as AccountUpdated with the account's errors"
    assert by_kind["AccountTypeUpdated"][0]["accountType"]["state"] == "Outage"
    assert by_kind["AccountDeleted"][0]["account"]["id"] == account["id"]


def test_an_import_with_a_report_carries_it(api, world):
    hook = subscribe(world, "report")
    user, _ = world.user(name="Jane")
    create_account(world, user, accountTypeId="dummy-report")
    world.api.advance(3 * 86400)
    imports = [n["data"] for n in notifications(api, world, hook, "report") if n["eventType"] == "TransactionsImported"]
    reports = [d["report"] for d in imports if d["report"]]
    assert reports and all({"errors", "warnings"} <= r.keys() for r in reports)
    assert all({"errors", "warnings"} <= d["dataImport"].keys() for d in imports)


def test_an_import_finishing_as_the_clock_runs_is_delivered_without_any_request(system_time):
    app = create_app({"SYSTEM_TIME": system_time, "START_SERVICES": True, "WEBHOOK_SETTLE_SECONDS": 0.01,
                      "WEBHOOK_POLL_SECONDS": 0.01})
    receiver = Receiver()
    try:
        world = new_world(Api(app.test_client()))
        world.api.post("/webhooks", json={"callbackUrl": receiver.url, "events": ["TransactionsImported"]})
        user, _ = world.user(name="Jane")
        create_account(world, user)
        system_time.tick(60)                       # real time passes; nobody calls the API
        assert receiver.wait_for(1), "the dispatcher noticed the import on its own"
        assert json.loads(receiver.requests[0]["body"])["eventType"] == "TransactionsImported"
    finally:
        receiver.close()
        app.extensions["ptas"].close()


def test_lifecycle_events_reach_only_the_owning_partners_webhooks(api, world, other_world):
    subscribe(other_world, "other")
    user, _ = world.user(name="Jane")
    create_account(world, user)
    other_world.api.post("/_sandbox/webhooks/flush")
    assert other_world.api.get("/_sandbox/echo/other").json["captures"] == []
