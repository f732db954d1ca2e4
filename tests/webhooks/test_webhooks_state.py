"""Webhook state over time: nothing is lost across a restart, a reset clears a world's webhooks and log, and a
replayed world sends the same bytes under a fresh secret."""

import pytest

from ptas_sandbox.simulator import create_app
from ptas_sandbox.webhooks import InvalidSignature, verify
from tests.support.client import Api
from tests.support.worlds import new_world


def subscribe(world, bin_):
    response = world.api.post("/webhooks", json={"callbackUrl": f"http://localhost/_sandbox/echo/{bin_}",
                                                 "events": ["AccountCreated"]})
    assert response.status_code == 201, response.json
    return response.json


def test_notifications_not_yet_sent_survive_a_restart(durable_store, config):
    state = durable_store
    first = create_app({**config, "STATE": state})
    world = new_world(Api(first.test_client()))
    subscribe(world, "restart")
    world.api.post("/testevents/accountcreated")
    first.extensions["ptas"].close()

    second = create_app({**config, "STATE": state})
    api = Api(second.test_client())
    assert api.as_(world.token).post("/_sandbox/webhooks/flush").json["attempted"] == 1
    assert len(api.as_(world.token).get("/_sandbox/echo/restart").json["captures"]) == 1
    second.extensions["ptas"].close()


def test_an_attempt_cut_off_by_a_stop_goes_out_again_after_the_restart(durable_store, config):
    state = durable_store
    first = create_app({**config, "STATE": state})
    world = new_world(Api(first.test_client()))
    subscribe(world, "cut")
    world.api.post("/testevents/accountcreated")
    sandbox = first.extensions["ptas"]
    sandbox.store.execute("UPDATE webhook_deliveries SET status = 'sending'")   # as if stopped mid-flight
    sandbox.store.close()

    second = create_app({**config, "STATE": state})
    api = Api(second.test_client())
    api.as_(world.token).post("/_sandbox/webhooks/flush")
    [attempt] = api.as_(world.token).get("/_sandbox/deliveries").json["deliveries"]
    assert attempt["status"] == "succeeded"
    second.extensions["ptas"].close()


def test_reset_clears_the_worlds_webhooks_and_delivery_log_only(world, other_world):
    for w in (world, other_world):
        subscribe(w, "reset")
        w.api.post("/testevents/accountcreated")
        w.api.post("/_sandbox/webhooks/flush")
    assert world.api.post("/_sandbox/reset").status_code == 200
    assert world.api.get("/webhooks").json == {"webhooks": []}
    assert world.api.get("/_sandbox/deliveries").json["deliveries"] == []
    assert len(other_world.api.get("/_sandbox/deliveries").json["deliveries"]) == 1


def _replay(config, location):
    app = create_app({**config, "STATE": location, "SEED": 3,
                      "SECRET": "a fixed secret for a byte-for-byte replay test"})
    world = new_world(Api(app.test_client()), seed=11)
    hook = subscribe(world, "replay")
    world.api.post("/testevents/accountcreated")
    world.api.post("/_sandbox/webhooks/flush")
    [attempt] = world.api.get("/_sandbox/deliveries").json["deliveries"]
    app.extensions["ptas"].close()
    return hook["secret"], attempt["request"], attempt["id"]


def test_a_replayed_world_sends_the_same_bytes_signed_with_a_fresh_secret(config, new_store_location):
    """Seeds make data and ids reproducible, never secrets: knowing the seed must not let anyone forge a
    notification that passes `verify` (issue 11 item 4)."""
    (secret_a, sent_a, id_a), (secret_b, sent_b, id_b) = (_replay(config, new_store_location()),
                                                          _replay(config, new_store_location()))
    assert (sent_a["body"], id_a) == (sent_b["body"], id_b)
    assert secret_a != secret_b
    headers_a, headers_b = dict(sent_a["headers"]), dict(sent_b["headers"])
    assert headers_a.pop("webhook-signature") != headers_b.pop("webhook-signature")
    assert headers_a == headers_b
    with pytest.raises(InvalidSignature):
        verify(secret_a, sent_b["headers"], sent_b["body"], tolerance_seconds=None)
