"""The journal holds every request that reaches the server and can be tied to a world (issue 21): unknown and
removed paths, wrong methods, refusals (401/403/404/405/413/429), dropped connections as dropped, tokens in the
wrong place, and the Authorization header read by the pipeline's own parser."""

import pytest
import requests

from ptas_sandbox.cli import main
from tests.support.problems import assert_problem


def entries(world, **query):
    response = world.api.get("/_sandbox/requests", query_string=query)
    assert response.status_code == 200, response.json
    return response.json["requests"]


def test_unknown_and_removed_paths_and_wrong_methods_are_journaled(world):
    assert world.api.get("/no/such/thing").status_code == 404
    assert_problem(world.api.get("/users/someone/token"), 404)          # removed (spec §4.2 note 6)
    assert world.api.delete("/users").status_code == 405
    [wrong, removed, unknown] = entries(world, status="4xx")
    assert (unknown["operationId"], unknown["status"]) == ("UnknownPath", 404)
    assert (removed["operationId"], removed["path"]) == ("RemovedPath", "/partner/v2/users/someone/token")
    assert (wrong["operationId"], wrong["status"], wrong["method"]) == ("MethodNotAllowed", 405, "DELETE")
    assert len(entries(world, status="404")) == 2


def test_refusals_are_journaled(world, app):
    user = world.user()[0]
    user_token = world.api.post(f"/users/{user['id']}/tokens", json={"expiresIn": 3600}).json["accessToken"]
    assert world.api.as_(user_token).get("/users").status_code == 403
    assert world.api.get("/accounts/nope").status_code in (403, 404)
    app.extensions["ptas"].limiter.global_rule = (1, 60)
    assert world.api.get("/users").status_code == 429
    statuses = {e["status"] for e in entries(world)}
    assert {403, 429} <= statuses
    [limited] = entries(world, status="429")
    assert limited["marks"]["retryAfter"] > 0


def test_a_body_too_large_is_journaled_without_reading_it(world):
    response = world.api.post("/users", data=b"{" + b" " * (600 * 1024) + b"}",
                              headers={"Content-Type": "application/json"})
    assert response.status_code == 413
    [entry] = entries(world, status="413")
    assert entry["request"]["body"] is None and entry["request"]["bytes"] > 512 * 1024


def test_a_revoked_token_is_journaled_under_its_world(world):
    token = world.api.post("/partners/self/tokens",
                           json={"name": "reader", "expiresIn": 7200, "scope": "user:read"}).json
    world.api.delete(f"/partners/self/tokens/{token['id']}")
    assert world.api.as_(token["accessToken"]).get("/users").status_code == 401
    [refused] = entries(world, status="401")
    assert refused["token"]["id"] == token["id"]


@pytest.mark.parametrize("header", ["Bearer\t{}", "bearer {}", "BEARER  {}"])
def test_every_authorization_the_service_takes_is_journaled(world, header):
    answer = world.api.get("/users", headers={"Authorization": header.format(world.token)})
    assert answer.status_code == 200
    assert entries(world, operationId="GetUsers")[0]["status"] == 200


@pytest.mark.parametrize("where", ["query", "scheme", "header"])
def test_a_token_in_the_wrong_place_is_journaled_and_marked(world, client, where):
    kw = {"query": {"query_string": {"access_token": world.token}},
          "scheme": {"headers": {"Authorization": f"Token {world.token}"}},
          "header": {"headers": {"X-Api-Key": world.token}}}[where]
    assert client.get("/partner/v2/users", **kw).status_code == 401
    [entry] = entries(world, marked="credentials")
    assert entry["status"] == 401 and entry["operationId"] == "GetUsers" and entry["token"]["kind"] == "partner"
    assert "access_token=[redacted]" in entry["query"] or where != "query"


def test_a_dropped_connection_is_journaled_as_dropped_and_injected_calls_are_filtered(live):
    world = requests.post(f"{live}/_sandbox/partners", json={}, timeout=10).json()
    key = {"Authorization": f"Bearer {world['worldKey']}"}
    auth = {"Authorization": f"Bearer {world['accessToken']}"}
    requests.post(f"{live}/_sandbox/faults", headers=key, timeout=10, json={
        "match": {"operationId": "GetUsers"}, "effect": {"type": "drop"}}).raise_for_status()
    with pytest.raises(requests.RequestException):
        requests.get(f"{live}/partner/v2/users", headers=auth, timeout=10)
    assert requests.get(f"{live}/partner/v2/users", headers=auth, timeout=10).status_code == 200
    journal = requests.get(f"{live}/_sandbox/requests", headers=key, timeout=10,
                           params={"marked": "injected"}).json()["requests"]
    [dropped] = journal
    assert dropped["status"] is None and dropped["marks"]["dropped"] is True
    assert dropped["marks"]["injected"]["type"] == "drop"
    assert requests.get(f"{live}/_sandbox/requests", headers=key, timeout=10,
                        params={"status": "200", "operationId": "GetUsers"}).json()["requests"][0]["id"] > dropped["id"]


def test_ptas_requests_shows_and_filters_injected_calls(live, capsys):
    world = requests.post(f"{live}/_sandbox/partners", json={}, timeout=10).json()
    key = {"Authorization": f"Bearer {world['worldKey']}"}
    requests.post(f"{live}/_sandbox/faults", headers=key, timeout=10, json={
        "match": {"operationId": "GetUsers"}, "effect": {"type": "status", "status": 503}}).raise_for_status()
    for _ in range(2):
        requests.get(f"{live}/partner/v2/users", headers={"Authorization": f"Bearer {world['accessToken']}"},
                     timeout=10)
    assert main(["requests", "--url", live, "--token", world["worldKey"], "--injected"]) == 0
    [line] = [x for x in capsys.readouterr().out.splitlines() if "GetUsers" in x]
    assert " 503 " in line and "[injected status]" in line
