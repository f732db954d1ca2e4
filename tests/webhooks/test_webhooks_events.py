"""From the event outbox to notifications (spec §6, docs/design.md payload and signature): fan-out to subscribed
webhooks, test events, the delivery log and the echo receiver, all in-process through flush."""

import json
import re

import pytest

from ptas_sandbox.simulator.events import ACTIVE
from ptas_sandbox.webhooks import InvalidSignature, verify

SEVEN_DIGITS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7}Z$")
TEST_PATHS = {kind: f"/testevents/{kind.lower()}" for kind in ACTIVE}


def subscribe(world, bin_, events=ACTIVE, **fields):
    response = world.api.post("/webhooks", json={"callbackUrl": f"http://localhost/_sandbox/echo/{bin_}",
                                                 "events": list(events), **fields})
    assert response.status_code == 201, response.json
    return response.json


def emit(app, world, kind, data, partner_id=None):
    """Record a domain event through the real outbox, as the domain areas do (ctx.emit in a transaction)."""
    sandbox = app.extensions["ptas"]
    ctx = sandbox.ctx(sandbox.worlds.get(world.body["world"]["id"]))
    with sandbox.store.transaction():
        return ctx.emit(kind, partner_id or world.partner["id"], data)


def flush(world):
    response = world.api.post("/_sandbox/webhooks/flush")
    assert response.status_code == 200, response.json
    return response.json


def captured(world, bin_):
    """A bin's captures of `world`'s notifications (read with its partner token, docs/design.md)."""
    return world.api.get(f"/_sandbox/echo/{bin_}").json["captures"]


def now_of(world):
    """The world clock in Unix seconds, to check signatures' timestamps against."""
    from ptas_sandbox.simulator.timestamps import SECOND_US, parse
    return parse(world.api.get("/_sandbox/clock").json["now"]) / SECOND_US


def test_an_event_becomes_a_signed_notification_at_each_subscribed_webhook(app, api, world):
    one, two = subscribe(world, "one"), subscribe(world, "two", secret="a-plain-text-secret-1234")
    event = emit(app, world, "AccountCreated", {"account": {"id": "a1", "errors": [], "warnings": []}, "userId": "u1"})
    assert flush(world)["attempted"] == 2
    for hook, bin_ in ((one, "one"), (two, "two")):
        [capture] = captured(world, bin_)
        payload = verify(hook["secret"], capture["headers"], capture["body"], now=now_of(world))
        assert payload["id"] == event["id"] and payload["eventType"] == "AccountCreated"
        assert SEVEN_DIGITS.match(payload["createdAt"]) and payload["isTest"] is False
        assert payload["data"] == {"account": {"id": "a1", "errors": [], "warnings": []}, "userId": "u1"}
        assert capture["headers"]["Webhook-Id"] == event["id"]
        with pytest.raises(InvalidSignature):
            verify(one["secret"] if bin_ == "two" else two["secret"], capture["headers"], capture["body"],
                   now=now_of(world))


def test_only_webhooks_subscribed_to_the_kind_are_notified(app, api, world):
    subscribe(world, "created", events=["AccountCreated"])
    subscribe(world, "deleted", events=["AccountDeleted"])
    emit(app, world, "AccountDeleted", {"account": {"id": "a1"}, "userId": "u1"})
    flush(world)
    assert captured(world, "created") == [] and len(captured(world, "deleted")) == 1


def test_inactive_webhooks_are_not_notified(app, api, world):
    hook = subscribe(world, "paused")
    world.api.patch(f"/webhooks/{hook['id']}", json={"isActive": False})
    emit(app, world, "AccountCreated", {"account": {"id": "a1"}, "userId": "u1"})
    flush(world)
    assert captured(world, "paused") == []


def test_a_webhook_paused_before_its_attempt_gets_nothing_and_the_log_says_so(app, api, world):
    hook = subscribe(world, "late")
    emit(app, world, "AccountCreated", {"account": {"id": "a1"}, "userId": "u1"})
    assert len(world.api.get("/_sandbox/deliveries").json["deliveries"]) == 1     # fanned out, not yet sent
    world.api.delete(f"/webhooks/{hook['id']}")
    flush(world)
    assert captured(world, "late") == []
    [entry] = world.api.get("/_sandbox/deliveries").json["deliveries"]
    assert entry["status"] == "cancelled" and entry["final"] is True


def test_events_of_another_partner_or_world_do_not_reach_a_webhook(app, api, world, other_world):
    subscribe(world, "mine")
    subscribe(other_world, "theirs")
    emit(app, other_world, "AccountCreated", {"account": {"id": "x"}, "userId": "u"})
    child = world.api.post("/partners", json={"name": "Child", "email": "c@acme.example"}).json
    emit(app, world, "AccountCreated", {"account": {"id": "y"}, "userId": "u"}, partner_id=child["id"])
    flush(world)
    flush(other_world)
    assert captured(world, "mine") == [] and len(captured(other_world, "theirs")) == 1
    assert world.api.get("/_sandbox/deliveries").json["deliveries"] == []


def test_retired_kinds_never_fire(app, api, world):
    subscribe(world, "retired", events=["ReportImported", "TransactionsImportError", "AccountError"])
    for kind in ACTIVE:
        emit(app, world, kind, {})
    flush(world)
    assert captured(world, "retired") == []


def test_webhooks_created_after_an_event_do_not_get_it_even_before_fan_out(app, api, world):
    emit(app, world, "AccountCreated", {"account": {"id": "a1"}, "userId": "u1"})
    subscribe(world, "later")
    flush(world)
    assert captured(world, "later") == []


def test_a_reactivated_webhook_gets_nothing_from_while_it_was_paused(app, api, world):
    hook = subscribe(world, "paused-then-back")
    world.api.patch(f"/webhooks/{hook['id']}", json={"isActive": False})
    emit(app, world, "AccountCreated", {"account": {"id": "while-paused"}, "userId": "u1"})
    world.api.patch(f"/webhooks/{hook['id']}", json={"isActive": True})
    emit(app, world, "AccountCreated", {"account": {"id": "after"}, "userId": "u1"})
    flush(world)
    assert [json.loads(c["body"])["data"]["account"]["id"] for c in captured(world, "paused-then-back")] == ["after"]


@pytest.mark.parametrize("kind", ACTIVE)
def test_each_test_event_sends_a_test_notification_of_its_kind(api, world, kind):
    hook = subscribe(world, "tests", events=[kind])
    response = world.api.post(TEST_PATHS[kind])
    assert response.status_code == 202, response.json
    flush(world)
    [capture] = captured(world, "tests")
    payload = verify(hook["secret"], capture["headers"], capture["body"], now=now_of(world))
    assert payload == response.json
    assert payload["eventType"] == kind and payload["isTest"] is True
    data = payload["data"]
    objects = [data["accountType"]] if kind == "AccountTypeUpdated" else [data["account"]]
    if kind == "TransactionsImported":
        objects += [data["dataImport"], data["report"]]
        assert data["transactionCount"] == data["dataImport"]["transactionCount"]
    for thing in objects:
        assert isinstance(thing["errors"], list) and isinstance(thing["warnings"], list)
    if kind == "AccountUpdated":
        assert data["account"]["errors"], "a test AccountUpdated shows an account problem"
    if kind == "AccountTypeUpdated":
        assert data["accountType"]["accountFields"] and data["accountType"]["state"] in ("Degraded", "Outage")


def test_a_test_event_goes_only_to_webhooks_subscribed_to_its_kind(api, world):
    subscribe(world, "imports", events=["TransactionsImported"])
    world.api.post("/testevents/accountcreated")
    flush(world)
    assert captured(world, "imports") == []


def test_test_events_are_deterministic_for_a_world_seed(api):
    from tests.support.worlds import new_world
    payloads = []
    for _ in range(2):
        world = new_world(api, seed=42)
        payloads.append(world.api.post("/testevents/transactionsimported").json["data"])
    assert payloads[0] == payloads[1]


def test_the_delivery_log_shows_request_response_and_timing(app, world):
    subscribe(world, "log")
    event = emit(app, world, "AccountDeleted", {"account": {"id": "a1"}, "userId": "u1"})
    flush(world)
    log = world.api.get("/_sandbox/deliveries").json
    [entry] = log["deliveries"]
    assert entry["eventId"] == event["id"] and entry["attempt"] == 1 and entry["status"] == "succeeded"
    assert entry["response"]["status"] == 200 and entry["error"] is None and entry["final"] is True
    assert entry["durationMs"] >= 0 and entry["nextRetryAt"] is None
    assert json.loads(entry["request"]["body"])["id"] == event["id"]
    assert entry["request"]["headers"]["webhook-signature"].startswith("v1,")
    assert log["backoffSeconds"] == [30, 120, 600, 3600]
    assert world.api.get(f"/_sandbox/deliveries?eventId={event['id']}").json["deliveries"] == [entry]
    assert world.api.get("/_sandbox/deliveries?webhookId=nope").json["deliveries"] == []


def test_a_failing_echo_is_retried_on_the_world_clock(api, world):
    hook = subscribe(world, "flaky?status=503", events=["AccountCreated"])
    world.api.post("/testevents/accountcreated")
    flush(world)
    [first] = world.api.get("/_sandbox/deliveries").json["deliveries"][:1]
    assert first["status"] == "failed" and first["response"]["status"] == 503 and first["final"] is False
    assert flush(world)["attempted"] == 0, "the retry is not due before the backoff has passed"
    world.api.advance(30)
    world.api.patch(f"/webhooks/{hook['id']}", json={"callbackUrl": "http://localhost/_sandbox/echo/flaky"})
    assert flush(world)["attempted"] == 1
    attempts = world.api.get("/_sandbox/deliveries").json["deliveries"]
    assert [(a["attempt"], a["status"]) for a in attempts] == [(1, "failed"), (2, "succeeded")]
    captures = captured(world, "flaky")
    assert len(captures) == 2 and captures[0]["headers"]["Webhook-Id"] == captures[1]["headers"]["Webhook-Id"]


def test_one_flush_delivers_a_backlog_longer_than_the_attempts_allowed_at_once(app, api, world):
    subscribe(world, "backlog")
    for n in range(9):
        emit(app, world, "AccountUpdated", {"account": {"id": f"a{n}"}, "userId": "u1"})
    assert flush(world) == {"attempted": 9, "inFlight": 0, "pending": 0, "nextDueAt": None}
    assert len(captured(world, "backlog")) == 9


def test_flush_needs_a_token_of_the_world(api):
    assert api.post("/_sandbox/webhooks/flush").status_code == 401
    assert api.get("/_sandbox/deliveries").status_code == 401
