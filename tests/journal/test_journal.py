"""The request journal: what is recorded, redacted and kept, how it is read, filtered and verified."""

import json

import pytest

from ptas_sandbox.simulator import create_app
from ptas_sandbox.simulator.tools.journal import models as journal
from tests.support.client import Api
from tests.support.problems import assert_problem
from tests.support.worlds import new_world


def requests_of(world, **query):
    response = world.api.get("/_sandbox/requests", query_string=query)
    assert response.status_code == 200, response.json
    return response.json


def test_every_call_of_the_world_is_recorded_with_its_outcome(world, system_time):
    world.api.post("/users", json={"name": "Jane"})
    system_time.tick(2)
    world.api.get("/users/nobody")
    [missing, created, creation] = requests_of(world)["requests"]
    assert (missing["operationId"], missing["status"], missing["method"]) == ("GetUser", 404, "GET")
    assert missing["path"] == "/partner/v2/users/nobody"
    assert missing["response"]["body"]["status"] == 404
    assert created["operationId"] == "CreateUser" and created["status"] == 201
    assert created["request"]["body"] == {"name": "Jane"}
    assert created["token"]["kind"] == "partner" and created["token"]["id"]
    assert creation["operationId"] == "SandboxCreatePartner" and creation["token"] is None
    assert missing["at"] > created["at"] and missing["wallAt"] > created["wallAt"]
    assert missing["id"] > created["id"] > creation["id"]
    assert isinstance(missing["latencyMs"], float)


def test_the_world_clock_time_is_the_worlds_not_the_walls(world):
    world.api.advance(86400)
    world.api.get("/partners/self")
    latest = requests_of(world)["requests"][0]
    assert latest["at"][:10] != latest["wallAt"][:10]


def test_tokens_secrets_and_credentials_never_reach_the_journal(world):
    user = world.api.post("/users", json={"name": "Jane"}).json
    user_api = world.api.as_(user["token"]["accessToken"])
    user_api.post("/accounts", json={"accountTypeId": "dummy",
                                     "credentials": {"username": "jane", "password": "hunter2"}})
    world.api.post("/webhooks", json={"callbackUrl": "https://example.com/hook", "events": ["AccountCreated"],
                                      "secret": "whsec_abcdefghijklmnopqrstuvwxyz012345"})
    text = world.api.get("/_sandbox/requests").get_data(as_text=True)
    for secret in (world.token, user["token"]["accessToken"], "hunter2", "whsec_abcdefghijklmnopqrstuvwxyz012345",
                   "jane"):
        assert secret not in text
    assert "[redacted]" in text


def test_a_secret_in_a_body_that_is_no_json_or_in_a_misplaced_field_never_reaches_the_journal(world):
    """Refused bodies are journaled too: one that does not parse cannot be redacted field by field, and an error
    answer must not carry back what the client sent where a field of another type belongs."""
    user = world.api.post("/users", json={"name": "Jane"}).json
    headers = {"Content-Type": "application/json"}
    for raw in ('{"userId": "%s", "accountTypeId": "dummy", "credentials": {"password": "pw-comma"},}',
                "{'accountTypeId': 'dummy', 'credentials': {'password': 'pw-quotes'}}"):
        assert world.api.post("/accounts", data=raw % user["id"] if "%s" in raw else raw,
                              headers=headers).status_code == 400
    world.api.post("/accounts", json={"userId": user["id"], "accountTypeId": "dummy",
                                      "credentials": [{"password": "pw-array"}]})
    world.api.post("/webhooks", json={"callbackUrl": "https://example.com/hook", "events": ["AccountCreated"],
                                      "secret": ["whsec-in-an-array"]})
    text = world.api.get("/_sandbox/requests").get_data(as_text=True)
    for secret in ("pw-comma", "pw-quotes", "pw-array", "whsec-in-an-array"):
        assert secret not in text
    assert '"withheld": true' in text


def test_bodies_are_truncated(app, world):
    app.config["JOURNAL_BODY_LIMIT"] = 50
    world.api.post("/users", json={"name": "J" * 200})
    created = requests_of(world, operationId="CreateUser")["requests"][0]
    assert created["request"]["truncated"] and len(created["request"]["body"]) == 50


def test_retention_keeps_the_newest_entries_of_a_world(app, world):
    app.config["JOURNAL_LIMIT"] = 5
    for _ in range(8):
        world.api.get("/partners/self")
    ids = [e["id"] for e in requests_of(world)["requests"]]
    assert len(ids) == 5 and ids == sorted(ids, reverse=True)


def test_retention_drops_entries_older_than_the_window_on_the_world_clock(app, world):
    app.config["JOURNAL_RETENTION_SECONDS"] = 3600
    world.api.get("/partners/self")
    world.api.advance(7200)
    world.api.get("/partners/self")
    operations = [e["operationId"] for e in requests_of(world)["requests"]]
    assert operations == ["GetOwnPartner", "SandboxSetClock"] or "SandboxCreatePartner" not in operations
    assert "SandboxCreatePartner" not in operations


def test_filters_by_operation_status_token_and_time(world, system_time):
    other_token = world.new_token("partner:read")
    system_time.tick(10)
    world.api.get("/users/nobody")
    world.api.as_(other_token).get("/partners/self")
    assert [e["operationId"] for e in requests_of(world, status="4xx")["requests"]] == ["GetUser"]
    assert [e["status"] for e in requests_of(world, status="404")["requests"]] == [404]
    [mine] = requests_of(world, tokenId=requests_of(world)["requests"][0]["token"]["id"])["requests"]
    assert mine["operationId"] == "GetOwnPartner"
    first = requests_of(world, order="asc")["requests"][0]
    assert first["operationId"] == "SandboxCreatePartner"
    later = requests_of(world, since=requests_of(world)["requests"][1]["at"])["requests"]
    assert [e["operationId"] for e in later] == ["GetOwnPartner", "GetUser"]
    assert requests_of(world, until=first["at"], operationId="GetUser")["requests"] == []


def test_pages_through_the_journal(world):
    for _ in range(5):
        world.api.get("/partners/self")
    page = requests_of(world, pageSize=2)
    assert len(page["requests"]) == 2 and page["hasMore"]
    seen = [e["id"] for e in page["requests"]]
    while page["hasMore"]:
        page = requests_of(world, pageSize=2, before=seen[-1])
        seen += [e["id"] for e in page["requests"]]
    assert seen == sorted(seen, reverse=True) and len(seen) == len(set(seen)) == 6
    tail = requests_of(world, order="asc", after=seen[2])
    assert [e["id"] for e in tail["requests"]] == sorted(seen)[4:]


def test_foreign_worlds_entries_are_not_found_by_the_python_api(app, world, other_world):
    entry = requests_of(world)["requests"][0]
    store = app.extensions["ptas"].store
    assert journal.get(store, world.body["world"]["id"], entry["id"]) == entry
    assert journal.get(store, other_world.body["world"]["id"], 999) is None


def test_verify_counts_calls_matching_a_pattern(world):
    world.api.post("/users", json={"name": "Jane", "email": "jane@example.com"})
    world.api.post("/users", json={"name": "Joe"})
    world.api.post("/users", json={"name": 5})
    count = lambda **pattern: world.api.post("/_sandbox/requests/count", json=pattern).json["count"]  # noqa: E731
    assert count(operationId="CreateUser") == 3
    assert count(operationId="CreateUser", status="2xx") == 2
    assert count(operationId="CreateUser", status=201) == count(operationId="CreateUser", status=201.0) == 2
    assert count(operationId="CreateUser", requestBody={"name": "Jane"}) == 1
    assert count(method="POST", pathPattern="/users$") == 3
    assert count(operationId="DeleteUser") == 0
    assert count() == len(requests_of(world, pageSize=1000)["requests"])


def test_verify_refuses_a_bad_pattern(world):
    assert_problem(world.api.post("/_sandbox/requests/count", json={"pathPattern": "("}), 400)
    assert_problem(world.api.post("/_sandbox/requests/count", json={"status": "teapot"}), 400)
    assert_problem(world.api.post("/_sandbox/requests/count", json={"nope": 1}), 400)
    assert_problem(world.api.get("/_sandbox/requests", query_string={"status": "99"}), 400)


@pytest.mark.parametrize("pattern", ["^/partner/v2/users/(a|aa)*$", "(a+)+$", "([a-z]*)*$", r"(u)\1",
                                     "(?=users).*", "(ab|cd)*x", "a" * 257])
def test_verify_refuses_a_pattern_that_could_backtrack_without_end(world, pattern):
    """Python's `re` holds the interpreter while it backtracks: `(a|aa)*$` on a path of 34 a's held every
    request of every world for seconds, and each further character multiplies that (issue 11)."""
    world.api.get("/users/" + "a" * 20 + "!")     # on a longer path the patterns below run for hours
    response = world.api.post("/_sandbox/requests/count", json={"pathPattern": pattern})
    assert_problem(response, 400)
    assert "pathPattern" in response.json["detail"] or "too long" in response.json["detail"]


def test_verify_refuses_a_pattern_too_costly_for_the_paths_it_would_search(world):
    world.api.get("/users/" + "a" * 2000)
    assert world.api.post("/_sandbox/requests/count", json={"pathPattern": "/users/a*$"}).json["count"] == 1
    response = world.api.post("/_sandbox/requests/count", json={"pathPattern": "/users/.*a.*a.*b$"})
    assert_problem(response, 400)
    assert "too costly on a path of 2018 characters" in response.json["detail"]


@pytest.mark.parametrize("pattern", ["/users/[^/]+$", "^/partner/v2/(users|accounts)/", "/users/(ab)*", "(?i)/USERS$",
                                     r"/users/\w{1,40}$", "[ab]*"])
def test_verify_takes_patterns_that_match_in_bounded_time(world, pattern):
    assert world.api.post("/_sandbox/requests/count", json={"pathPattern": pattern}).status_code == 200


def test_a_body_too_large_to_redact_cheaply_is_not_kept(world):
    """Redacting means parsing: eight 1 MiB bodies of `{},` at once, journaled, took the server to 300 MB."""
    world.api.post("/users", json={"name": "Jane", "note": "x" * 100_000, "password": "hunter2"})
    [entry] = requests_of(world, operationId="CreateUser")["requests"]
    assert entry["request"]["body"] is None and entry["request"]["truncated"] is True
    assert "hunter2" not in json.dumps(entry)


def test_a_body_of_more_json_objects_than_any_request_needs_is_refused_unparsed(world):
    response = world.api.post("/users", data="[" + "{}," * 20_000 + "{}]", content_type="application/json")
    assert_problem(response, 400)
    assert "20000 JSON objects" in response.json["detail"]


@pytest.mark.parametrize("depth", [100, 3000])
def test_a_deeply_nested_body_is_kept_as_text_and_costs_no_other_world_its_entries(world, other_world, depth):
    """A body nested beyond what json's decoder parses failed the write-behind batch, and with it every world's
    entries and lastUsedAt of the last half second. It is kept as text now, and an item the store refuses is
    dropped alone."""
    token = world.new_token("user:read")
    for _ in range(3):
        assert world.api.as_(token).get("/users").status_code == 200
    nested = "[" * depth + "]" * depth
    assert_problem(other_world.api.post("/users", data=nested, content_type="application/json"), 400)
    assert [e["operationId"] for e in requests_of(world)["requests"]][:3] == ["GetUsers"] * 3
    assert world.api.get("/partners/self/tokens").json["tokens"][-1]["lastUsedAt"] is not None
    [entry] = requests_of(other_world, operationId="CreateUser")["requests"]
    assert entry["request"]["body"] == nested[:len(entry["request"]["body"])] and entry["status"] == 400


def test_a_world_sees_only_its_own_journal(world, other_world):
    world.api.post("/users", json={"name": "Jane"})
    assert [e["operationId"] for e in requests_of(other_world)["requests"]] == ["SandboxCreatePartner"]
    assert_problem(world.api.as_(None).get("/_sandbox/requests"), 401)


def test_reading_the_journal_is_not_journaled(world):
    for _ in range(3):
        requests_of(world)
    world.api.post("/_sandbox/requests/count", json={})
    assert [e["operationId"] for e in requests_of(world)["requests"]] == ["SandboxCreatePartner"]


def test_refused_calls_with_a_token_of_the_world_are_recorded(world):
    user = world.api.post("/users", json={"name": "Jane"}).json
    world.api.as_(user["token"]["accessToken"]).get("/partners/self")
    refused = requests_of(world, status="403")["requests"]
    assert refused[0]["token"]["kind"] == "user"


def test_a_reset_clears_the_journal_but_ids_never_repeat(world):
    world.api.get("/partners/self")
    before = requests_of(world)["requests"][0]["id"]
    world.api.post("/_sandbox/reset")
    [reset] = requests_of(world)["requests"]
    assert reset["operationId"] == "SandboxReset" and reset["id"] > before


def test_marks_from_other_areas_reach_the_entry(app, world):
    entry = requests_of(world)["requests"][0]
    store = app.extensions["ptas"].store
    world_id = world.body["world"]["id"]
    assert journal.mark(store, world_id, entry["id"], "injected", {"fault": "timeout"})
    assert journal.get(store, world_id, entry["id"])["marks"] == {"injected": {"fault": "timeout"}}
    assert not journal.mark(store, "another world", entry["id"], "injected", {})
    assert journal.count(store, world_id, marked="injected") == 1
    assert world.api.post("/_sandbox/requests/count", json={"marked": "injected"}).json == {"count": 1}


def test_annotate_marks_the_entry_of_the_request_in_flight(config):
    app = create_app(config)

    @app.before_request
    def inject():
        journal.annotate("injected", {"fault": "latency"})
    world = new_world(Api(app.test_client()))
    world.api.get("/partners/self")
    assert requests_of(world)["requests"][0]["marks"] == {"injected": {"fault": "latency"}}
    journal.annotate("ignored", True)      # outside a request: a no-op
    app.extensions["ptas"].close()


@pytest.mark.parametrize("value,expected", [
    ({"accessToken": "abc", "tokenId": "t1"}, {"accessToken": "[redacted]", "tokenId": "t1"}),
    ({"credentials": {"username": "u", "n": 3, "ok": True}}, {"credentials": {"username": "[redacted]",
                                                                               "n": "[redacted]", "ok": True}}),
    ({"token": {"id": "t", "accessToken": "x"}}, {"token": {"id": "t", "accessToken": "[redacted]"}}),
    (["see eyJhbGciOi.eyJzdWIiOi.sig here"], ["see [redacted] here"]),
])
def test_redaction_rules(value, expected):
    assert journal.redact(value) == expected


@pytest.mark.parametrize("raw", [
    b'{"id": "u1", "name": "Jane", "tags": ["a", "b"], "n": 3}',          # nothing secret-shaped: kept verbatim
    b'{"accessToken": "abc", "tokenId": "t1"}',
    b'{"\\u0074oken": "abc", "name": "Jane"}',                             # an escape spelling a secret key
    b'{"Code": "123456", "pinned": true}',
    b'{"note": "see eyJhbGciOi.eyJzdWIiOi.sig here"}',
    b'{"credentials": {"username": "u"}}',
    b'{"name": "' + b"x" * 5000 + b'"}',                                       # over the limit: cut
    b'{not json',
    b'',
])
def test_a_body_kept_as_it_came_is_the_body_redaction_would_keep(raw):
    assert json.loads(journal.body_text("application/json", raw)) == journal.body_record("application/json", raw)


def test_a_body_with_a_secret_in_an_escaped_key_is_redacted():
    kept = json.loads(journal.body_text("application/json", b'{"\\u0074oken": "abc"}'))
    assert kept["body"] == {"token": "[redacted]"}


def test_the_query_string_is_redacted():
    assert journal.redact_query("a=1&token=abc&code=xyz") == "a=1&token=[redacted]&code=[redacted]"


def test_a_new_world_starts_its_journal_with_its_creation(api):
    world = new_world(api, name="Initech")
    [creation] = requests_of(world)["requests"]
    assert creation["response"]["body"]["accessToken"] == "[redacted]"
    assert creation["status"] == 201


@pytest.mark.parametrize("body_limit", [4096, 200])      # a page the journal keeps, and one too large to keep
def test_a_page_with_a_next_page_is_marked_for_the_report(config, body_limit):
    from tests.support.accounts import imported, long_lived_user
    app = create_app({**config, "JOURNAL_BODY_LIMIT": body_limit})
    world = new_world(Api(app.test_client()))
    _, api = long_lived_user(world)
    account = imported(world.api, api, seconds=5)
    first = api.get(f"/accounts/{account['id']}/transactions?pageSize=10").json
    api.get(f"/accounts/{account['id']}/transactions?pageSize=600&pageReference={first['nextPageReference']}")
    last, page = [r for r in requests_of(world)["requests"] if r["operationId"] == "GetTransactions"][:2]
    assert page["marks"].get("nextPageReference") is True
    assert "nextPageReference" not in last["marks"]           # the last page has none to follow
    app.extensions["ptas"].close()
