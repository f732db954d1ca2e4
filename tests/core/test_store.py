"""State: a file-backed sandbox survives a restart; worlds are deterministic from their seed."""

import re

from ptas_sandbox.simulator import create_app
from ptas_sandbox.simulator.timestamps import parse, render
from tests.support.client import Api
from tests.support.worlds import new_world


def test_a_file_backed_sandbox_keeps_partners_users_and_tokens_across_a_restart(durable_store, config):
    state = durable_store
    first = create_app({**config, "STATE": state})
    world = new_world(Api(first.test_client()), name="Persistent")
    user, _ = world.user(name="Jane")
    token = world.new_token("partner:read", expires_in=7200)
    world.api.advance(600)
    first.extensions["ptas"].close()

    second = create_app({**config, "STATE": state})
    api = Api(second.test_client())
    assert api.as_(world.token).get("/partners/self").json["name"] == "Persistent"
    assert api.as_(world.token).get(f"/users/{user['id']}").json["name"] == "Jane"
    assert api.as_(token).get("/partners/self").status_code == 200
    assert api.as_(world.token).get("/_sandbox/clock").json["now"] == "2026-01-05T09:10:00.0000000Z"
    second.extensions["ptas"].close()


def _replay(config, seed, location):
    app = create_app({**config, "STATE": location, "SEED": seed,
                      "SECRET": "a fixed secret for a byte-for-byte replay test"})
    world = new_world(Api(app.test_client()), name="Same")
    user, _ = world.user(name="Jane")
    child = world.api.post("/partners", json={"name": "Store"}).json
    result = (world.body, user, child, world.api.get("/partners/self/tokens").json)
    app.extensions["ptas"].close()
    return result


def test_the_same_seed_gives_the_same_sandbox_byte_for_byte(config, new_store_location):
    assert _replay(config, 7, new_store_location()) == _replay(config, 7, new_store_location())
    assert _replay(config, 7, new_store_location())[0]["partner"]["id"] != \
        _replay(config, 8, new_store_location())[0]["partner"]["id"]


def test_timestamps_have_exactly_seven_fractional_digits():
    assert render(0) == "1970-01-01T00:00:00.0000000Z"
    assert render(parse("2026-03-04T05:06:07.123456Z")) == "2026-03-04T05:06:07.1234560Z"
    assert render(parse("2026-03-04T07:06:07+02:00")) == "2026-03-04T05:06:07.0000000Z"
    assert parse("2026-03-04") == parse("2026-03-04T00:00:00.0000000Z")


def _date_times(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _date_times(v)
    elif isinstance(value, list):
        for v in value:
            yield from _date_times(v)
    elif isinstance(value, str) and re.match(r"^\d{4}-\d{2}-\d{2}T", value):
        yield value


def test_every_date_time_of_every_response_has_seven_digits(world):
    user, _ = world.user(name="Jane")
    world.api.delete(f"/users/{user['id']}")
    bodies = [world.body, world.api.get("/partners/self/tokens").json, world.api.get("/users").json,
              world.api.post("/partners", json={"name": "S"}).json, world.api.get("/partners/self").json]
    stamps = [s for body in bodies for s in _date_times(body)]
    assert len(stamps) > 10
    assert all(re.match(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7}Z$", s) for s in stamps), stamps
