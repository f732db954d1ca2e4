"""The report judges each call against the state of its time (issue 21): tokens as the client held them,
webhooks that existed then, the Retry-After window of the operation that asked for it; and the rules for the
server-visible mistakes, one finding per rule and cause with a count."""

import pytest
import requests

from ptas_sandbox.simulator import create_app
from ptas_sandbox.simulator.tools.integration import rules as report_rules
from ptas_sandbox.simulator.tools.integration.rules import retries, tokens
from tests.integration.test_report import USER_TOKEN_LIFETIME, harness, long_lived, report, rules
from tests.support.accounts import connect, imported, long_lived_user
from tests.support.served import Served

FAULTS = "/_sandbox/faults"


def fault(world, operation, effect, **extra):
    response = harness(world).post(FAULTS, json={"match": {"operationId": operation}, "effect": effect, **extra})
    assert response.status_code == 201, response.json


def found(world, rule):
    return [f for f in report(world)["findings"] if f["rule"] == rule]


def test_recovering_from_a_500_after_the_token_was_made_is_clean(world):
    fault(world, "CreateOwnPartnerToken", {"type": "success-then-500"})
    body = {"name": "backend", "expiresIn": 31536000, "scope": "partner:all user:all"}
    api = world.api
    assert api.post("/partners/self/tokens", json=body).status_code == 500
    for orphan in api.get("/partners/self/tokens").json["tokens"]:        # read what the write did
        if orphan["name"] == "backend":
            assert api.delete(f"/partners/self/tokens/{orphan['id']}").status_code == 200
    created = api.post("/partners/self/tokens", json=body).json
    backend = api.as_(created["accessToken"])
    [initial] = [t for t in backend.get("/partners/self/tokens").json["tokens"] if t["name"] == "initial token"]
    assert backend.delete(f"/partners/self/tokens/{initial['id']}").status_code == 200
    assert backend.get("/users").status_code == 200
    assert rules(world) == []


def test_a_token_never_delivered_is_no_replacement(world):
    fault(world, "CreateOwnPartnerToken", {"type": "success-then-500"})
    world.api.post("/partners/self/tokens", json={"name": "backend", "expiresIn": 31536000, "scope": "partner:all"})
    world.api.get("/users")
    [finding] = report(world)["findings"]
    assert finding["rule"] == "initial-token-in-use" and "no long-lived token" not in finding["message"]
    assert "its answer never reached the client" in finding["message"]


def test_a_post_sent_again_after_waiting_out_a_503_is_fine(world):
    world = long_lived(world)
    fault(world, "CreateUser", {"type": "status", "status": 503, "retryAfter": 20})
    assert world.api.post("/users", json={"name": "Jane"}).status_code == 503
    world.api.advance(20)
    assert world.api.post("/users", json={"name": "Jane"}).status_code == 201
    assert rules(world) == []


@pytest.mark.parametrize("effect", [{"type": "success-then-500"}, {"type": "drop", "after": True}],
                         ids=["success-then-500", "drop-after"])
def test_a_create_the_rate_limit_refused_under_a_fault_after_the_work_did_not_run(world, app, effect):
    """The fault shapes the answer of an operation that ran; the limit refused this one first, so the client got
    a 429, and sending it again after Retry-After repeats nothing."""
    world = long_lived(world)
    world.api.advance(60)                                               # the set-up's calls leave the window
    fault(world, "CreateUser", effect, times=1)
    app.extensions["ptas"].limiter.global_rule = (1, 60)
    assert world.api.get("/users").status_code == 200
    assert world.api.post("/users", json={"name": "Jane"}).status_code == 429
    world.api.advance(60)
    assert world.api.post("/users", json={"name": "Jane"}).status_code == 201
    assert rules(world) == []


def test_retry_after_is_per_operation(world):
    world = long_lived(world)
    fault(world, "GetUsers", {"type": "status", "status": 503, "retryAfter": 30})
    assert world.api.get("/users").status_code == 503
    assert world.api.get("/partners/self").status_code == 200         # another operation: not asked to wait
    assert rules(world) == []
    assert world.api.get("/users").status_code == 200                 # the same one, too early
    [finding] = found(world, "retry-after-ignored")
    assert finding["count"] == 1 and finding["evidence"][0]["retryAfter"] == 30


def call(seq, operation, at, started, answered, status=200, path="/p", **marks):
    entry = {"id": seq, "at": "", "operationId": operation, "method": "GET", "path": path, "status": status,
             "query": "", "token": {"id": "t", "kind": "partner"}, "request": {}, "response": {}, "marks": marks,
             "monotonic": (started, answered)}
    return report_rules.Entry(entry, at, "partner")


def test_a_request_arriving_over_http_within_a_round_trip_of_a_refusal_could_not_have_heeded_it():
    """Over HTTP a request may arrive (the front's stamp) after the refusal was ready and still have been written
    before the client read it (another thread's, held up on a loaded machine); in process nothing travels, so
    there is no such grace. Within it, the refused request sent again, or a request repeated once an answer
    given after the refusal was back, was sent by a client going straight on."""
    ms = 1_000_000
    refused = call(1, "GetUsers", 0, 0, 1 * ms, status=429, retryAfter=5)
    crossing = call(2, "GetUsers", 0, 200 * ms, 201 * ms, path="/q", arrival="http")     # within ROUND_TRIP_NS
    late = call(3, "GetUsers", 0, 700 * ms, 701 * ms, path="/r", arrival="http")
    in_process = call(4, "GetUsers", 0, 20 * ms, 21 * ms, path="/q")
    assert crossing.in_flight_at(refused) and not late.in_flight_at(refused)
    assert not in_process.in_flight_at(refused)
    slept = call(5, "GetUsers", 5 * 10**6, 20 * ms, 21 * ms, arrival="http")    # the frozen clock moved on 5 s
    assert not slept.in_flight_at(refused)
    again = call(6, "GetUsers", 0, 5 * ms, 6 * ms, arrival="http")               # the refused request, at once
    looped = [call(7, "GetUsers", 0, 30 * ms, 31 * ms, path="/s", arrival="http"),
              call(8, "GetUsers", 0, 40 * ms, 41 * ms, path="/s", arrival="http")]  # answered, then sent again
    traffic = report_rules.Traffic([refused, again, crossing, *looped, late], [], {}, {}, set(), {}, None, [], [],
                                   [], {}, report_rules.SLOW_MS)
    [finding] = retries.retry_after_ignored(traffic)
    assert [e["requestId"] for e in finding["evidence"]] == [1, 6, 8, 3]


def test_calls_in_flight_and_real_waits_on_a_frozen_world_clock():
    refused = call(1, "GetUsers", 0, 0, 1000, status=503, retryAfter=5)
    in_flight = call(2, "GetUsers", 0, 500, 2000)                       # sent before the 503 went out
    early = call(3, "GetUsers", 0, 3000, 4000)
    other = call(4, "GetPartner", 0, 5000, 6000)
    waited = call(5, "GetUsers", 0, 5 * 10**9 + 1000, 5 * 10**9 + 2000)  # the world clock stood still; 5 s passed
    traffic = report_rules.Traffic([refused, in_flight, early, other, waited], [], {}, {}, set(), {}, None, [], [], [],
                             {}, report_rules.SLOW_MS)
    [finding] = retries.retry_after_ignored(traffic)
    assert finding["count"] == 1 and [e["requestId"] for e in finding["evidence"]] == [1, 3]


def user_token(token_id, created_at):
    return {"id": token_id, "kind": "user", "user_id": "u", "partner_id": "p", "name": None, "scope": "account:all",
            "created_at": created_at, "expires_in": 86400, "expires_at": created_at + 86400 * 10**6,
            "revoked_at": None}


def test_an_old_user_token_is_late_only_once_it_arrived_a_round_trip_after_the_new_one_was_handed_over():
    """Workers that had requests with the old token in flight when CreateUserToken's answer came are not late,
    judged by arrival as the in-flight rules judge a refusal; one that arrived a round trip later is."""
    ms = 1_000_000
    made = call(2, "CreateUserToken", 10, 0, 10 * ms, status=201, arrival="http")
    first = call(1, "GetAccounts", 0, 0, 1, arrival="http")
    running = call(3, "GetAccounts", 10, 5 * ms, 12 * ms, path="/a", arrival="http")      # sent before the answer
    crossing = call(4, "GetAccounts", 10, 300 * ms, 301 * ms, path="/b", arrival="http")  # within ROUND_TRIP_NS
    late = call(5, "GetAccounts", 10, 900 * ms, 901 * ms, path="/c", arrival="http")
    fresh = call(6, "GetAccounts", 10, 950 * ms, 951 * ms, path="/d", arrival="http")
    for entry, token_id in ((first, "old"), (running, "old"), (crossing, "old"), (late, "old"), (fresh, "new")):
        entry.token_id = token_id
    calls = [first, made, running, crossing, late, fresh]
    traffic = report_rules.Traffic(calls, calls, {}, {}, set(), {"old": user_token("old", 0),
                                                                 "new": user_token("new", 10)},
                                   None, [], [], [], {}, report_rules.SLOW_MS, made={2: "new"})
    [finding] = tokens.superseded_user_tokens(traffic)
    assert finding["rule"] == "superseded-user-token-used" and [e["requestId"] for e in finding["evidence"]] == [5]


def test_a_user_token_kept_after_a_new_one_is_told_and_switching_at_once_is_not(world):
    world = long_lived(world)
    user = world.api.post("/users", json={"name": "Jane"}).json
    old = world.api.as_(user["token"]["accessToken"])
    fresh = world.api.post(f"/users/{user['id']}/tokens", json={"expiresIn": 86400}).json
    assert world.api.as_(fresh["accessToken"]).get("/accounts").status_code == 200
    assert rules(world) == []
    assert old.get("/accounts").status_code == 200                     # still valid, yet no longer the one to use
    [finding] = found(world, "superseded-user-token-used")
    assert finding["severity"] == "warning" and finding["count"] == 1 and "capability 2" in finding["message"]


def test_a_retired_or_unknown_body_field_accepted_and_ignored_is_told_with_its_replacement(world):
    world = long_lived(world)
    api = world.api
    assert api.put("/partners/self", json={"redirectUrls": ["https://app.example/done"]}).status_code == 200
    assert rules(world) == []
    assert api.put("/partners/self", json={"redirectUrl": "https://app.example/done"}).status_code == 200
    assert api.put("/partners/self", json={"emial": "ops@app.example"}).status_code == 200
    [retired] = found(world, "ignored-field")
    assert retired["field"] == "redirectUrl" and retired["severity"] == "warning"
    assert "`redirectUrls`" in retired["message"] and "spec §2" in retired["message"]
    [unknown] = found(world, "unknown-field")       # perhaps a field of the real service the spec does not show
    assert unknown["field"] == "emial" and unknown["severity"] == "info"


def test_polling_is_judged_against_the_webhooks_of_its_time(world):
    world = long_lived(world)
    hook = world.api.post("/webhooks", json={"callbackUrl": "http://localhost/_sandbox/echo/imports",
                                             "events": ["TransactionsImported"]}).json
    _, user_api = long_lived_user(world, lifetime=USER_TOKEN_LIFETIME)
    user_api.get("/accounttypes")
    account = imported(world.api, user_api, seconds=5)
    for _ in range(5):
        user_api.get(f"/accounts/{account['id']}/transactions?pageSize=1000")
        world.api.advance(60)
    assert world.api.delete(f"/webhooks/{hook['id']}").status_code in (200, 204)    # a test's teardown
    [finding] = found(world, "polling-instead-of-webhook")
    assert finding["count"] == 5


def test_polling_before_any_webhook_is_fine(world):
    world = long_lived(world)
    _, user_api = long_lived_user(world, lifetime=USER_TOKEN_LIFETIME)
    user_api.get("/accounttypes")
    account = imported(world.api, user_api, seconds=5)
    for _ in range(5):
        user_api.get(f"/accounts/{account['id']}/transactions?pageSize=1000")
        world.api.advance(60)
    world.api.post("/webhooks", json={"callbackUrl": "http://localhost/_sandbox/echo/imports",
                                      "events": ["TransactionsImported"]})
    assert found(world, "polling-instead-of-webhook") == []


def test_a_new_token_per_request_does_not_hide_a_blind_retry(world):
    world = long_lived(world)
    fault(world, "CreateUser", {"type": "success-then-500"})
    for _ in range(2):
        token = world.api.post("/partners/self/tokens", json={"name": "one-off", "expiresIn": 7200,
                                                              "scope": "user:all"}).json["accessToken"]
        world.api.as_(token).post("/users", json={"name": "Jane"})
    [finding] = found(world, "blind-retry")
    assert finding["count"] == 1 and finding["causes"] == ["answered 500 after the operation completed"]


def test_an_injected_status_on_a_post_is_no_blind_retry(world):
    world = long_lived(world)
    fault(world, "CreateUser", {"type": "status", "status": 502})
    world.api.post("/users", json={"name": "Jane"})
    world.api.post("/users", json={"name": "Jane"})
    assert found(world, "blind-retry") == []


def test_refused_requests_sent_again_unchanged(world):
    world = long_lived(world)
    for _ in range(3):
        assert world.api.post("/users", json={"name": 7}).status_code == 400
    assert world.api.get("/users/nobody").status_code == 404
    [finding] = found(world, "refused-repeated")
    assert (finding["status"], finding["count"]) == (400, 2)


def refusals(world):
    return harness(world).get("/_sandbox/requests", query_string={"status": 429, "order": "asc"}).json["requests"]


def test_a_refusal_of_the_global_limit_holds_for_every_operation(world, app):
    """Spec §8's limit counts every request: after its 429, any request before Retry-After ignores it (RFC 9110:
    how long to wait before a follow-up request), not only the refused operation sent again."""
    world = long_lived(world)
    world.api.advance(60)                                               # the set-up's calls leave the window
    app.extensions["ptas"].limiter.global_rule = (2, 60)
    assert [world.api.get("/users").status_code for _ in range(3)] == [200, 200, 429]
    assert world.api.get("/webhooks").status_code == 429                # another operation, as refused
    [refused, _] = refusals(world)
    assert refused["marks"]["rateLimit"] == "global" and refused["operationId"] == "GetUsers"
    [finding] = found(world, "retry-after-ignored")
    assert finding["count"] == 1 and finding["evidence"][1]["operationId"] == "GetWebhooks"
    assert "global rate limit" in finding["message"]


def test_a_refusal_of_an_operations_own_limit_holds_for_that_operation(world, app):
    world = long_lived(world)
    app.extensions["ptas"].limiter.per_operation = {"GetUsers": (1, 60)}
    assert [world.api.get("/users").status_code for _ in range(2)] == [200, 429]
    assert world.api.get("/webhooks").status_code == 200
    [refused] = refusals(world)
    assert refused["marks"]["rateLimit"] == "GetUsers"
    assert found(world, "retry-after-ignored") == []


def test_tokens_used_after_the_client_revoked_them(world):
    world = long_lived(world)
    token = world.api.post("/partners/self/tokens", json={"name": "old", "expiresIn": 7200,
                                                          "scope": "user:read"}).json
    assert world.api.as_(token["accessToken"]).get("/users").status_code == 200
    world.api.delete(f"/partners/self/tokens/{token['id']}")
    for _ in range(2):
        assert world.api.as_(token["accessToken"]).get("/users").status_code == 401
    [finding] = found(world, "revoked-token-used")
    assert finding["count"] == 2
    assert found(world, "refused-repeated") == []                         # one cause, one rule


def test_a_new_user_token_for_every_request(world):
    world = long_lived(world)
    user, _ = world.user(name="Jane")
    for _ in range(3):
        token = world.api.post(f"/users/{user['id']}/tokens", json={"expiresIn": 7200}).json["accessToken"]
        world.api.as_(token).get("/accounts")
    [finding] = found(world, "token-per-request")
    assert finding["count"] == 2


def test_renewing_a_user_token_about_to_expire_is_no_token_per_request(world):
    """Spec §1 capability 2: CreateUserToken gives a new token when the previous one is about to expire. An hourly
    token renewed with 15 minutes left, used twice (an event-driven client), is renewed, not made needlessly."""
    world = long_lived(world)
    user, _ = world.user(name="Jane")
    for _ in range(4):
        token = world.api.post(f"/users/{user['id']}/tokens", json={"expiresIn": 3600}).json["accessToken"]
        for wait in (1200, 1500):
            world.api.advance(wait)
            assert world.api.as_(token).get("/accounts").status_code == 200
        world.api.advance(600)
    assert found(world, "token-per-request") == []


def test_short_lived_tokens_made_seconds_apart_are_still_one_per_request(world):
    """The last stretch of a 10-minute token is its last 5 minutes (never more than half its life): a new one
    made seconds after the last is no renewal."""
    world = long_lived(world)
    user, _ = world.user(name="Jane")
    for _ in range(3):
        token = world.api.post(f"/users/{user['id']}/tokens", json={"expiresIn": 600}).json["accessToken"]
        world.api.as_(token).get("/accounts")
        world.api.advance(5)
    [finding] = found(world, "token-per-request")
    assert finding["count"] == 2


def test_a_token_asking_for_every_scope(world):
    everything = "partner:all user:all user.token:all account:all transaction:all"
    world = long_lived(world, everything)
    wide = world.api.post("/partners/self/tokens", json={"name": "everything", "expiresIn": 7200,
                                                         "scope": everything}).json
    for _ in range(2):
        world.api.as_(wide["accessToken"]).get("/users")
    [finding] = found(world, "scope-too-wide")
    [evidence] = [e for e in finding["evidence"] if e["tokenId"] == wide["id"]]
    assert {"account", "transaction"} <= set(evidence["unused"])


def test_accounts_made_without_reading_the_account_types(world):
    world = long_lived(world)
    _, user_api = long_lived_user(world, lifetime=USER_TOKEN_LIFETIME)
    imported(world.api, user_api)
    [finding] = found(world, "account-types-hardcoded")
    assert finding["count"] == 1 and finding["evidence"][0]["operationId"] == "CreateAccount"
    assert "refused" not in finding["message"]


def test_a_refused_read_of_the_account_types_is_said_to_give_no_fields(world):
    world = long_lived(world)
    _, user_api = long_lived_user(world, lifetime=USER_TOKEN_LIFETIME)
    assert user_api.get("/accounttypes/no-such-type").status_code == 404
    imported(world.api, user_api)
    [finding] = found(world, "account-types-hardcoded")
    assert finding["count"] == 1 and "1 of them after reads that were refused" in finding["message"]


def test_metadata_read_again_and_again(world):
    world = long_lived(world)
    _, user_api = long_lived_user(world, lifetime=USER_TOKEN_LIFETIME)
    for _ in range(5):
        user_api.get("/accounttypes")
    [finding] = found(world, "metadata-reread")
    assert finding["count"] == 5 and finding["severity"] == "info"


def test_a_client_that_stops_after_a_failure(world):
    world = long_lived(world)
    fault(world, "GetUsers", {"type": "status", "status": 502})
    world.api.get("/users")
    [finding] = found(world, "stopped-after-failure")
    assert finding["evidence"][0]["status"] == 502
    world.api.get("/users")
    assert found(world, "stopped-after-failure") == []


def test_subscriptions_to_retired_event_kinds(world):
    world = long_lived(world)
    world.api.post("/webhooks", json={"callbackUrl": "http://localhost/_sandbox/echo/x",
                                      "events": ["AccountCreated", "ReportImported"]})
    [finding] = found(world, "retired-event-subscribed")
    assert "ReportImported" in finding["message"]


def test_an_unreachable_receiver_gets_a_fix_that_fits(world):
    world = long_lived(world)
    world.api.post("/webhooks", json={"callbackUrl": "http://127.0.0.1:9/gone", "events": ["AccountCreated"]})
    world.api.post("/testevents/accountcreated")
    world.api.post("/_sandbox/webhooks/flush")
    [finding] = found(world, "webhook-receiver-unreachable")
    assert "reachable" in finding["fix"] and found(world, "webhook-receiver-failed") == []


def test_pages_not_followed_are_one_finding(world):
    world = long_lived(world)
    _, user_api = long_lived_user(world, lifetime=USER_TOKEN_LIFETIME)
    user_api.get("/accounttypes")
    account = imported(world.api, user_api, seconds=3600)
    for _ in range(2):
        assert user_api.get(f"/accounts/{account['id']}/transactions?pageSize=1").json["nextPageReference"]
    [finding] = found(world, "pagination-ignored")
    assert finding["count"] == 2


def test_a_token_per_worker_used_on_is_no_token_per_request(world):
    world = long_lived(world)
    user, _ = world.user(name="Jane")
    workers = [world.api.post(f"/users/{user['id']}/tokens", json={"expiresIn": 7200}).json["accessToken"]
               for _ in range(3)]
    for _ in range(3):
        for token in workers:
            world.api.as_(token).get("/accounts")
    assert found(world, "token-per-request") == []


def test_a_second_account_ui_session_after_a_500_is_no_blind_retry(world):
    world = long_lived(world, "partner:all user:all user.token:all account:all")
    user, _ = world.user(name="Jane")
    fault(world, "CreateAccountUiSession", {"type": "success-then-500"})
    body = {"userId": user["id"], "accountTypeIds": ["dummy"]}
    assert world.api.post("/accountui", json=body).status_code == 500
    assert world.api.post("/accountui", json=body).status_code == 201     # nothing to look up; no harm done
    assert found(world, "blind-retry") == []


def test_the_old_user_token_used_after_its_renewal(world):
    world = long_lived(world)
    user = world.api.post("/users", json={"name": "Jane"}).json
    old = world.api.as_(user["token"]["accessToken"])
    world.api.advance(86400 + 1)
    assert old.get("/accounts").status_code == 401
    fresh = world.api.post(f"/users/{user['id']}/tokens", json={"expiresIn": 86400}).json
    assert world.api.as_(fresh["accessToken"]).get("/accounts").status_code == 200
    assert found(world, "expired-user-token") == []
    assert old.get("/accounts").status_code == 401                  # the old one again, a fresh one in hand
    [finding] = found(world, "expired-user-token")
    assert finding["count"] == 2


def test_the_http_front_stamps_when_a_request_arrived_and_the_journal_keeps_it(system_time):
    served = Served(create_app({"SYSTEM_TIME": system_time, "START_SERVICES": False}))
    try:
        world = requests.post(f"{served.base}/_sandbox/partners", json={}, timeout=10).json()
        requests.get(f"{served.base}/partner/v2/users", headers={"Authorization": f"Bearer {world['accessToken']}"},
                     timeout=10)
        [entry] = requests.get(f"{served.base}/_sandbox/requests", params={"operationId": "GetUsers"},
                               headers={"Authorization": f"Bearer {world['worldKey']}"}, timeout=10).json()["requests"]
        assert entry["marks"]["arrival"] == "http"
    finally:
        served.stop()


def test_the_first_late_use_of_a_user_token_is_not_excused_when_a_fresh_one_was_already_in_hand(world):
    world = long_lived(world)
    user = world.api.post("/users", json={"name": "Jane"}).json
    old = world.api.as_(user["token"]["accessToken"])
    world.api.advance(86400 + 1)
    world.api.post(f"/users/{user['id']}/tokens", json={"expiresIn": 86400})     # renewed, but not switched to
    assert old.get("/accounts").status_code == 401
    [finding] = found(world, "expired-user-token")
    assert finding["count"] == 1


def test_user_tokens_set_to_live_a_year_and_used_for_hours_are_risky(world):
    world = long_lived(world)
    assert world.api.put("/partners/self", json={"userTokenExpirySeconds": 365 * 86400}).status_code == 200
    user = world.api.post("/users", json={"name": "Jane"}).json
    user_api = world.api.as_(user["token"]["accessToken"])
    assert user_api.get("/accounts").status_code == 200
    world.api.advance(3 * 3600)
    assert user_api.get("/accounts").status_code == 200
    [finding] = found(world, "lifetime-beyond-use")
    assert finding["severity"] == "warning" and finding["count"] == 1
    assert "userTokenExpirySeconds 31536000, set by UpdatePartner" in finding["message"]


@pytest.mark.parametrize("lifetime, used_days", [(USER_TOKEN_LIFETIME, 0), (90 * 86400, 30)],
                         ids=["a-lifetime-its-jumps-need", "a-long-lifetime-used-through"])
def test_a_user_token_living_as_long_as_it_is_used_is_no_risk(world, lifetime, used_days):
    world = long_lived(world)
    _, user_api = long_lived_user(world, lifetime=lifetime)
    for _ in range(used_days):
        world.api.advance(86400)
        assert user_api.get("/accounts").status_code == 200
    assert "lifetime-beyond-use" not in rules(world)


def test_an_id_a_failed_create_never_gave_used_as_if_it_had_succeeded(world):
    world = long_lived(world)
    _, user_api = long_lived_user(world, lifetime=USER_TOKEN_LIFETIME)
    account = connect(user_api)
    refused = user_api.post("/accounts", json={"accountTypeId": "dummy", "credentials": {"username": "j"}})
    assert refused.status_code in (400, 409)
    assert user_api.delete(f"/accounts/{account['id']}").status_code in (200, 204)
    assert user_api.get(f"/accounts/{account['id']}").status_code == 404     # an id an answer gave: not this rule
    assert "carried-on-after-failure" not in rules(world)
    assert user_api.get("/accounts/None/transactions").status_code == 404    # what the failed create "returned"
    [finding] = found(world, "carried-on-after-failure")
    assert finding["severity"] == "warning" and finding["count"] == 1 and "None" in finding["message"]
    assert [e["operationId"] for e in finding["evidence"]] == ["GetTransactions", "GetAccount"]
