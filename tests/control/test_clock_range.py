"""A newcomer's clock jumps to the far future: refused with a 400, never a world that answers 500 ever after."""

import pytest

from tests.support.problems import assert_problem


def test_setting_the_clock_past_the_renderable_range_is_refused_and_the_world_still_works(world, system_time):
    before = world.api.get("/_sandbox/clock").json
    assert_problem(world.api.post("/_sandbox/clock", json={"set": "9999-12-31T23:59:59Z"}), 400)
    system_time.tick(5)
    assert world.api.get("/_sandbox/clock").status_code == 200
    assert world.api.get("/_sandbox/clock").json["now"] > before["now"]


def test_repeated_century_jumps_stop_at_the_ceiling_with_a_400(world):
    status = 200
    for _ in range(90):
        status = world.api.post("/_sandbox/clock", json={"advance": 3_153_600_000}).status_code
        if status != 200:
            break
    assert status == 400
    clock = world.api.get("/_sandbox/clock")
    assert clock.status_code == 200 and clock.json["now"] < "9990-01-02"


@pytest.mark.parametrize("start", ["9999-12-31T23:59:59Z", "9995-01-01T00:00:00Z"])
def test_a_world_cannot_start_beyond_the_ceiling(api, start):
    assert_problem(api.post("/_sandbox/partners", json={"name": "Far", "start": start}), 400)


def test_a_world_may_start_at_the_ceiling(api):
    response = api.post("/_sandbox/partners", json={"name": "Far", "start": "9989-12-31T00:00:00Z", "frozen": True})
    assert response.status_code == 201
    assert response.json["token"]["expiresAt"].startswith("9990-01-07")


def test_the_inspector_survives_a_refused_far_jump(world, client):
    world.api.post("/_sandbox/clock", json={"set": "9999-12-31T23:59:59Z"})
    for tab in ("requests", "clock"):
        bearer = {"Authorization": f"Bearer {world.token}"}
        assert client.get(f"/_sandbox/inspect/{tab}", headers=bearer).status_code == 200


@pytest.mark.parametrize("start", ["0001-01-01T00:00:00Z", "1969-12-31T23:59:59Z"])
def test_a_world_cannot_start_before_the_unix_epoch(api, start):
    assert_problem(api.post("/_sandbox/partners", json={"name": "Old", "start": start}), 400)


def test_a_world_starting_at_the_epoch_imports_its_history(api):
    response = api.post("/_sandbox/partners", json={"name": "Epoch", "start": "1970-01-01T00:00:00Z"})
    assert response.status_code == 201
    token = response.json["accessToken"]
    partner = api.as_(token)
    user = partner.post("/users", json={"name": "Jane"}).json
    created = partner.post("/accounts", json={"userId": user["id"], "accountTypeId": "dummy-report",
                                              "credentials": {"username": "a", "password": "b"}})
    assert created.status_code == 201
    partner.post("/_sandbox/clock", json={"advance": 86400})
    accounts = partner.get("/accounts")
    assert accounts.status_code == 200 and accounts.json["accounts"][0]["statistics"]["count"] > 0
    assert accounts.json["accounts"][0]["statistics"]["first"].startswith("1969-")
