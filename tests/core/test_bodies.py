"""Sloppy JSON a newcomer (or a fuzzer) sends: a 400 ProblemDetails, never a 500."""

import pytest

from tests.support.problems import assert_problem


@pytest.mark.parametrize("path,raw", [
    ("/_sandbox/clock", '{"advance": NaN}'),
    ("/_sandbox/clock", '{"advance": Infinity}'),
    ("/partner/v2/partners/self/tokens", '{"name": "x", "expiresIn": NaN, "scope": "partner:read"}'),
    ("/partner/v2/users", "[" * 100_000 + "]" * 100_000),
    ("/partner/v2/users", '{"a":' * 50_000 + "1" + "}" * 50_000),
])
def test_non_json_numbers_and_deep_nesting_are_a_400(world, client, path, raw):
    before = world.api.get("/_sandbox/clock").json
    response = client.post(path, data=raw, content_type="application/json",
                           headers={"Authorization": f"Bearer {world.token}"})
    assert_problem(response, 400)
    after = world.api.get("/_sandbox/clock").json
    assert after["frozen"] == before["frozen"] and after["now"] < "2026-01-06"


def test_an_escaped_lone_surrogate_is_a_400_and_creates_nothing(world, client):
    response = client.post("/partner/v2/users", data='{"name": "\\ud800"}', content_type="application/json",
                           headers={"Authorization": f"Bearer {world.token}"})
    assert_problem(response, 400)
    assert world.api.get("/users").json["users"] == []


def test_escaped_characters_that_are_text_still_work(world, client):
    response = client.post("/partner/v2/users", data='{"name": "Caf\\u00e9 \\ud83d\\ude00"}',
                           content_type="application/json", headers={"Authorization": f"Bearer {world.token}"})
    assert response.status_code == 201 and response.json["name"] == "Café 😀"


@pytest.mark.parametrize("moment", ["2099-01-01T00:00:00+99:99", "2099-01-01T00:00:00+05:75"])
def test_an_impossible_utc_offset_is_a_400(world, moment):
    assert_problem(world.api.post("/_sandbox/clock", json={"set": moment}), 400)


def test_a_problem_reported_by_several_schema_branches_is_listed_once(world):
    user, as_user = world.user()
    response = as_user.post("/accounts", json={"accountTypeId": "dummy", "credentials": "x"})
    body = assert_problem(response, 400)
    assert body["errors"] == [{"pointer": "/credentials", "detail": "a string is not of type 'object'"}]
    assert body["detail"] == "a string is not of type 'object'"


def test_a_problem_does_not_repeat_a_long_value_nor_one_put_where_another_type_belongs(world):
    """The answer, and the journal that keeps it, would carry back 500 kB twice over, or a password the client
    sent as a string where the credentials object belongs."""
    user, as_user = world.user()
    response = as_user.post("/accounts", json={"accountTypeId": "dummy", "credentials": "password=hunter2"})
    assert "hunter2" not in response.get_data(as_text=True)
    response = world.api.post("/users", json={"name": "a" * 500_000})
    problem = assert_problem(response, 400)
    assert len(response.get_data()) < 2_000 and problem["detail"] == "a string is too long"
    secret = {"accountTypeId": "dummy", "authReference": "0000", "credentials": {"username": "a", "password": "pw9"}}
    assert "pw9" not in as_user.post("/accounts", json=secret).get_data(as_text=True)


def test_a_wrong_type_is_written_as_the_json_the_client_sent(world):
    problem = assert_problem(world.api.post("/accountui", json={"accountTypeIds": ["dummy"], "redirectUrl": None}),
                             400)
    assert problem["detail"] == "null is not of type 'string'" and "None" not in str(problem)


@pytest.mark.parametrize("path", ["/testevents/accountcreated", "/users"])
def test_a_body_over_the_limit_is_413_whether_or_not_the_operation_reads_it(world, path, caplog):
    """An operation that ignores its body took 600 kB that one reading it refused, and the report's notice wrote
    a traceback to the log for each such call."""
    response = world.api.post(path, data=b'{"name": "' + b"a" * 600_000 + b'"}',
                              headers={"Content-Type": "application/json"})
    assert_problem(response, 413)
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
