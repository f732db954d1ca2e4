"""The world clock of the control API: read, freeze, unfreeze, advance, set; per world; never backwards."""

import re

import pytest

from tests.support.problems import assert_problem

SEVEN_DIGITS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7}Z$")


def test_a_new_world_runs_on_the_system_clock(world, system_time):
    before = world.api.get("/_sandbox/clock").json
    assert SEVEN_DIGITS.match(before["now"]) and before["frozen"] is False
    system_time.tick(2.5)
    assert world.api.get("/_sandbox/clock").json["now"] == "2026-01-05T09:00:02.5000000Z"


def test_freeze_stops_it_and_unfreeze_resumes_from_there(world, system_time):
    frozen = world.api.post("/_sandbox/clock", json={"freeze": True}).json
    system_time.tick(100)
    assert world.api.get("/_sandbox/clock").json == frozen == {"now": frozen["now"], "frozen": True}
    world.api.post("/_sandbox/clock", json={"freeze": False})
    system_time.tick(1)
    assert world.api.get("/_sandbox/clock").json["now"] == "2026-01-05T09:00:01.0000000Z"


def test_advance_and_set(world):
    assert world.api.advance(3600)["now"] == "2026-01-05T10:00:00.0000000Z"
    set_to = world.api.post("/_sandbox/clock", json={"set": "2026-07-01T00:00:00Z", "freeze": True}).json
    assert set_to == {"now": "2026-07-01T00:00:00.0000000Z", "frozen": True}
    assert world.api.advance(0.25)["now"] == "2026-07-01T00:00:00.2500000Z"


@pytest.mark.parametrize("body,status", [
    ({"set": "2025-01-01T00:00:00Z"}, 409), ({"advance": -1}, 400), ({"advance": "60"}, 400),
    ({"set": "yesterday"}, 400), ({}, 400), ({"advance": 1, "set": "2027-01-01T00:00:00Z"}, 400),
])
def test_the_clock_never_runs_backwards_or_on_nonsense(world, body, status):
    before = world.api.get("/_sandbox/clock").json
    assert_problem(world.api.post("/_sandbox/clock", json=body), status)
    assert world.api.get("/_sandbox/clock").json == before


def test_each_world_has_its_own_clock(world, other_world):
    world.api.advance(86400)
    assert world.api.get("/_sandbox/clock").json["now"] != other_world.api.get("/_sandbox/clock").json["now"]


def test_the_clock_needs_a_partner_token_of_the_world(api, world):
    assert_problem(api.get("/_sandbox/clock"), 401)
    _, as_user = world.user()
    assert_problem(as_user.get("/_sandbox/clock"), 403)


def test_the_clock_still_answers_an_expired_token(world):
    short = world.api.as_(world.new_token("partner:update", expires_in=60))
    short.advance(61)
    assert_problem(short.get("/partners/self"), 401)
    assert short.get("/_sandbox/clock").status_code == 200


def test_a_world_can_start_frozen_at_a_chosen_instant(api):
    body = api.post("/_sandbox/partners", json={"start": "2030-02-03T04:05:06.123Z", "frozen": True}).json
    assert body["world"]["clock"] == {"now": "2030-02-03T04:05:06.1230000Z", "frozen": True}
    assert body["token"]["createdAt"] == "2030-02-03T04:05:06.1230000Z"


def test_reset_wipes_the_world_but_keeps_its_root_partner_and_tokens(world, other_world):
    world.user(name="Jane")
    world.api.post("/partners", json={"name": "Store"})
    theirs, _ = other_world.user(name="Theirs")
    assert world.api.post("/_sandbox/reset").json == {"reset": world.body["world"]["id"]}
    assert world.api.get("/users").json["users"] == [] and world.api.get("/partners").json["partners"] == []
    assert world.api.get("/partners/self").json["id"] == world.partner["id"]
    assert other_world.api.get(f"/users/{theirs['id']}").status_code == 200


def test_reset_of_everything_needs_the_admin_key(config):
    from ptas_sandbox.simulator import create_app
    from tests.support.client import Api
    from tests.support.worlds import new_world
    app = create_app({**config, "ADMIN_KEY": "let-me-in", "OPEN": True})
    api = Api(app.test_client())
    world = new_world(api)
    assert_problem(api.post("/_sandbox/reset", headers={"X-Sandbox-Admin-Key": "guess"}), 401)
    assert api.post("/_sandbox/reset", headers={"X-Sandbox-Admin-Key": "let-me-in"}).json == {"reset": "everything"}
    assert_problem(world.api.get("/partners/self"), 401)


def test_only_the_root_partner_resets_a_world(world):
    child = world.api.post("/partners", json={"name": "Store"}).json
    as_child = world.api.as_(world.api.post(f"/partners/{child['id']}/tokens", json={}).json["accessToken"])
    assert_problem(as_child.post("/_sandbox/reset"), 403)
    assert world.api.get(f"/partners/{child['id']}").status_code == 200


@pytest.mark.parametrize("body", [{"advnce": 3600}, {"advance": 60, "frezee": True}])
def test_a_word_the_clock_does_not_know_is_a_400_that_moves_nothing(world, body):
    before = world.api.post("/_sandbox/clock", json={"freeze": True}).json
    problem = assert_problem(world.api.post("/_sandbox/clock", json=body), 400)
    assert "was unexpected" in problem["detail"]
    assert world.api.get("/_sandbox/clock").json == before
