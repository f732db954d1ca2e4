"""The integration report (issue 14): each rule finds what it names, with evidence and a fix, and stays quiet
when the partner does the right thing."""

import dataclasses
import xml.etree.ElementTree as ET

import pytest

from ptas_sandbox.simulator.tools.integration import render
from ptas_sandbox.simulator.tools.integration import rules as report_rules
from ptas_sandbox.simulator.tools.integration.rules import webhooks
from tests.support.accounts import connect, imported, long_lived_user
from tests.support.problems import assert_problem

# The user tokens of these tests live as long as their clock jumps need (a day and a bit at most), as a careful
# client's do: the report tells a user token that far outlives its use (lifetime-beyond-use).
USER_TOKEN_LIFETIME = 2 * 86400


def harness(world):
    """The world as its harness steers it: with the world key, whatever became of the partner's tokens."""
    return world.api.as_(world.body["worldKey"])


def report(world, **query):
    response = harness(world).get("/_sandbox/report", query_string=query)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.json


def rules(world):
    return [f["rule"] for f in report(world)["findings"]]


def long_lived(world, scope="partner:all user:all user.token:all"):
    """The well-behaved start: a long-lived token (the scopes it needs), then the initial one revoked with it
    (spec §5)."""
    created = world.api.post("/partners/self/tokens", json={"name": "backend", "expiresIn": 31536000,
                                                            "scope": scope}).json
    api = world.api.as_(created["accessToken"])
    [initial] = [t for t in api.get("/partners/self/tokens").json["tokens"] if t["name"] == "initial token"]
    assert api.delete(f"/partners/self/tokens/{initial['id']}").status_code == 200
    return dataclasses.replace(world, api=api, token=created["accessToken"])


def test_a_fresh_world_has_no_findings_and_lists_every_rule(world):
    body = report(world)
    assert body["findings"] == [] and body["summary"] == {"info": 0, "warning": 0, "error": 0}
    assert {r["id"] for r in body["rules"]} == set(report_rules.RULES)


def test_the_initial_token_used_without_a_long_lived_one(world):
    world.api.get("/users")
    [found] = report(world)["findings"]
    assert found["rule"] == "initial-token-in-use" and found["evidence"][0]["operationId"] == "GetUsers"
    assert found["fix"] and found["severity"] == "warning"


def test_the_initial_token_kept_and_used_after_a_long_lived_one_exists(world):
    world.api.post("/partners/self/tokens", json={"name": "backend", "expiresIn": 31536000, "scope": "partner:all"})
    world.api.get("/users")
    assert sorted(rules(world)) == ["created-unused", "initial-token-in-use", "initial-token-not-revoked"]


def test_a_partner_that_moves_to_a_long_lived_token_has_no_token_findings(world):
    world = long_lived(world)
    api = world.api
    api.get("/users")
    assert rules(world) == []


def test_removed_paths_and_deprecated_operations(world):
    world = long_lived(world)
    api = world.api
    assert_problem(api.get("/users/someone/token"), 404)
    user, user_api = long_lived_user(world, lifetime=USER_TOKEN_LIFETIME)
    account = connect(user_api)
    user_api.get(f"/transactions/{account['id']}")
    found = {f["rule"]: f for f in report(world)["findings"]}
    assert found["removed-path"]["evidence"][0]["path"] == "/partner/v2/users/someone/token"
    assert found["deprecated-operation"]["operationId"] == "GetTransactionsDeprecated"


def test_deprecated_fields_and_their_replacement(world):
    world = long_lived(world)
    user, user_api = long_lived_user(world, lifetime=USER_TOKEN_LIFETIME)
    assert user_api.post("/accountui", json={"accountTypeId": "dummy"}).status_code == 201
    assert user_api.post("/accountui", json={"accountTypeIds": ["dummy"]}).status_code == 201
    [found] = report(world)["findings"]
    assert (found["rule"], found["field"], found["count"]) == ("deprecated-field", "accountTypeId", 1)


def test_requests_before_retry_after_passed(world, app):
    world = long_lived(world)
    api = world.api
    app.extensions["ptas"].limiter.global_rule = (3, 60)
    statuses = [api.get("/users").status_code for _ in range(5)]
    assert statuses[-2:] == [429, 429]
    [found] = report(world)["findings"]
    assert found["rule"] == "retry-after-ignored" and found["severity"] == "error"
    assert found["evidence"][0]["status"] == 429 and found["evidence"][0]["retryAfter"] > 0


def test_waiting_out_retry_after_is_no_finding(world):
    world = long_lived(world)
    api = world.api
    world.api.post("/_sandbox/faults", json={"effect": {"type": "status", "status": 503, "retryAfter": 20}})
    assert api.get("/users").status_code == 503
    world.api.advance(20)
    assert api.get("/users").status_code == 200
    assert rules(world) == []


def test_an_injected_503_ignored_is_found_and_marked_injected(world):
    world = long_lived(world)
    api = world.api
    world.api.post("/_sandbox/faults", json={"effect": {"type": "status", "status": 503, "retryAfter": 20}})
    api.get("/users")
    api.get("/users")
    [found] = report(world)["findings"]
    assert found["rule"] == "retry-after-ignored" and found["evidence"][0]["injected"] is True


def test_a_create_repeated_after_a_500_without_looking(world):
    world = long_lived(world)
    api = world.api
    world.api.post("/_sandbox/faults", json={"match": {"operationId": "CreateUser"},
                                             "effect": {"type": "success-then-500"}})
    api.post("/users", json={"name": "Jane"})
    api.post("/users", json={"name": "Jane"})
    [found] = report(world)["findings"]
    assert found["rule"] == "blind-retry" and [e["status"] for e in found["evidence"]] == [500, 201]


def test_a_create_repeated_after_checking_is_no_finding(world):
    world = long_lived(world)
    api = world.api
    world.api.post("/_sandbox/faults", json={"match": {"operationId": "CreateUser"},
                                             "effect": {"type": "status", "status": 502}})
    api.post("/users", json={"name": "Jane"})
    assert api.get("/users").json["users"] == []
    api.post("/users", json={"name": "Jane"})
    assert rules(world) == []


def test_a_partner_token_in_an_end_user_page_url(world, client):
    world = long_lived(world, "partner:all user:all user.token:all account:all")
    api = world.api
    user, _ = long_lived_user(world, lifetime=USER_TOKEN_LIFETIME)
    session = api.post("/accountui", json={"userId": user["id"], "accountTypeIds": ["dummy"],
                                           "redirectUrl": f"https://app.example/done?token={world.token}"}).json
    client.get(session["url"] + f"?token={world.token}")
    found = [f for f in report(world)["findings"] if f["rule"] == "partner-token-exposed"]
    assert found and found[0]["count"] == 2


def test_the_report_never_repeats_the_token_it_finds_exposed(world, client):
    """A finding quotes what the client sent; a token in it is masked, or the report CI keeps is a second leak."""
    world = long_lived(world, "partner:all user:all user.token:all account:all")
    user, _ = long_lived_user(world, lifetime=USER_TOKEN_LIFETIME)
    session = world.api.post("/accountui", json={"userId": user["id"], "accountTypeIds": ["dummy"],
                                                 "redirectUrl": f"https://app.example/done?token={world.token}"}).json
    client.get(session["url"] + f"?token={world.token}")
    world.api.post("/webhooks", json={"callbackUrl": f"http://localhost/_sandbox/echo/down?status=500&t={world.token}",
                                      "events": ["AccountCreated"]})
    world.api.post("/testevents/accountcreated")
    world.api.post("/_sandbox/webhooks/flush")
    body = harness(world).get("/_sandbox/report").get_data(as_text=True)
    junit = harness(world).get("/_sandbox/report", query_string={"format": "junit"}).get_data(as_text=True)
    assert "partner-token-exposed" in body and "webhook-receiver-failed" in body
    assert world.token not in body and world.token.split(".")[1] not in body and world.token not in junit


def test_a_user_token_in_the_page_is_fine(world, client):
    world = long_lived(world)
    api = world.api
    user, user_api = long_lived_user(world, lifetime=USER_TOKEN_LIFETIME)
    session = user_api.post("/accountui", json={"accountTypeIds": ["dummy"]}).json
    client.get(session["url"] + f"?token={user_api.token}")
    assert "partner-token-exposed" not in rules(world)
    del api


def test_user_tokens_used_after_expiry(world):
    world = long_lived(world)
    api = world.api
    user = api.post("/users", json={"name": "Jane"}).json
    user_api = api.as_(user["token"]["accessToken"])
    world.api.advance(86400 + 1)
    assert user_api.get("/accounts").status_code == 401
    assert user_api.get("/accounts").status_code == 401
    [found] = report(world)["findings"]
    assert found["rule"] == "expired-user-token" and found["count"] == 2


def test_renewing_a_user_token_at_the_first_401_is_fine(world):
    world = long_lived(world)
    api = world.api
    user = api.post("/users", json={"name": "Jane"}).json
    world.api.advance(86400 + 1)
    assert api.as_(user["token"]["accessToken"]).get("/accounts").status_code == 401
    fresh = api.post(f"/users/{user['id']}/tokens", json={"expiresIn": 86400}).json
    assert api.as_(fresh["accessToken"]).get("/accounts").status_code == 200
    assert rules(world) == []


def test_an_expired_partner_token_used_on_and_on(world):
    """A job's short partner token outlived by the job: every call after its expiry a 401, none renewed."""
    world = long_lived(world)
    sync = world.api.as_(world.api.post("/partners/self/tokens", json={
        "name": "sync", "expiresIn": 3600, "scope": "user:read"}).json["accessToken"])
    statuses = []
    for _ in range(8):
        statuses.append(sync.get("/users").status_code)
        world.api.advance(1200)
    assert statuses == [200] * 3 + [401] * 5
    [found] = report(world)["findings"]
    assert (found["rule"], found["count"]) == ("expired-partner-token", 5)
    assert "no new partner token" in found["message"]


def test_renewing_a_partner_token_at_the_first_401_is_fine(world):
    world = long_lived(world)
    body = {"name": "sync", "expiresIn": 3600, "scope": "user:read"}
    sync = world.api.as_(world.api.post("/partners/self/tokens", json=body).json["accessToken"])
    world.api.advance(3600)
    assert sync.get("/users").status_code == 401
    sync = world.api.as_(world.api.post("/partners/self/tokens", json=body).json["accessToken"])
    assert sync.get("/users").status_code == 200
    assert rules(world) == []


def test_polling_transactions_while_a_webhook_says_when(world):
    world = long_lived(world)
    api = world.api
    api.post("/webhooks", json={"callbackUrl": "http://localhost/_sandbox/echo/imports",
                                "events": ["TransactionsImported"]})
    _, user_api = long_lived_user(world, lifetime=USER_TOKEN_LIFETIME)
    account = imported(world.api, user_api, seconds=5)
    poll(world, user_api, f"/accounts/{account['id']}/transactions?pageSize=1000", times=6, every=60)
    found = [f for f in report(world)["findings"] if f["rule"] == "polling-instead-of-webhook"]
    assert found and found[0]["paths"] == [f"/partner/v2/accounts/{account['id']}/transactions"]
    assert found[0]["count"] == 6


def hooked(world, *kinds):
    assert world.api.post("/webhooks", json={"callbackUrl": "http://localhost/_sandbox/echo/hooks",
                                             "events": list(kinds)}).status_code == 201


def polled(world):
    return [f for f in report(world)["findings"] if f["rule"] == "polling-instead-of-webhook"]


def poll(world, api, path, times, every):
    """`times` reads of `path`, the world clock moving `every` seconds after each."""
    for _ in range(times):
        assert api.get(path).status_code == 200
        world.api.advance(every)


def test_polling_an_accounts_statistics_while_transactions_imported_says_when(world):
    """GetAccount's statistics tell whether new transactions exist (spec §1 capability 5): a TransactionsImported
    webhook says when they changed, so reading them on a timer is polling."""
    world = long_lived(world)
    hooked(world, "TransactionsImported")
    _, user_api = long_lived_user(world, lifetime=USER_TOKEN_LIFETIME)
    account = imported(world.api, user_api, seconds=5)
    poll(world, user_api, f"/accounts/{account['id']}", times=12, every=600)
    [found] = polled(world)
    assert found["paths"] == [f"/partner/v2/accounts/{account['id']}"] and found["count"] == 12


def test_reading_an_account_once_per_transactions_imported_is_no_polling(world):
    world = long_lived(world)
    hooked(world, "TransactionsImported", "AccountUpdated")
    _, user_api = long_lived_user(world, lifetime=USER_TOKEN_LIFETIME)
    account = connect(user_api)
    for _ in range(5):                  # an import an hour: one read of the statistics per notification
        world.api.advance(3600)
        assert user_api.get(f"/accounts/{account['id']}").status_code == 200
    assert polled(world) == []


def test_other_accounts_imports_do_not_excuse_polling_one_account(world):
    """Only changes to what the read shows count: the account in its path, not the world's other accounts."""
    world = long_lived(world)
    hooked(world, "TransactionsImported")
    _, user_api = long_lived_user(world, lifetime=USER_TOKEN_LIFETIME)
    accounts = [connect(user_api)] + [connect(world.user(name=f"Shop {n}")[1]) for n in range(3)]
    world.api.advance(5)
    poll(world, user_api, f"/accounts/{accounts[0]['id']}/transactions?pageSize=1000", times=10, every=1200)
    [found] = polled(world)
    assert found["paths"] == [f"/partner/v2/accounts/{accounts[0]['id']}/transactions"] and found["count"] == 10


def test_a_list_filtered_to_one_user_is_polled_whatever_other_users_accounts_do(world):
    world = long_lived(world, "partner:all user:all user.token:all account:all")
    hooked(world, "TransactionsImported", "AccountCreated", "AccountUpdated", "AccountDeleted")
    jane, jane_api = long_lived_user(world, lifetime=USER_TOKEN_LIFETIME)
    connect(jane_api)
    for n in range(3):
        connect(world.user(name=f"Shop {n}")[1])
    world.api.advance(5)
    poll(world, world.api, f"/accounts?userId={jane['id']}", times=10, every=1200)
    [found] = polled(world)
    assert found["paths"] == ["/partner/v2/accounts"] and found["count"] == 10


def test_another_partners_webhook_does_not_make_polling_of_a_child_partner(world):
    """A webhook is told only its own partner's events: the root's tells a child partner's software nothing,
    so the child reading its transactions on a timer is no polling until it has a webhook of its own."""
    world = long_lived(world, "partner:all user:all user.token:all account:all")
    hooked(world, "TransactionsImported")
    child = world.api.post("/partners", json={"name": "Store 7"}).json
    as_child = world.api.as_(world.api.post(f"/partners/{child['id']}/tokens", json={"expiresIn": 31536000})
                             .json["accessToken"])
    assert as_child.put("/partners/self", json={"userTokenExpirySeconds": 31536000}).status_code == 200
    user_api = world.api.as_(as_child.post("/users", json={"name": "Shop"}).json["token"]["accessToken"])
    account = imported(world.api, user_api, seconds=5)
    transactions = f"/accounts/{account['id']}/transactions?pageSize=1000"
    poll(world, user_api, transactions, times=6, every=1200)
    assert polled(world) == []
    assert as_child.post("/webhooks", json={"callbackUrl": "http://localhost/_sandbox/echo/child",
                                            "events": ["TransactionsImported"]}).status_code == 201
    poll(world, user_api, transactions, times=6, every=1200)
    [found] = polled(world)
    assert found["count"] == 6


def test_pagination_ignored(world):
    world = long_lived(world)
    _, user_api = long_lived_user(world, lifetime=USER_TOKEN_LIFETIME)
    account = imported(world.api, user_api, seconds=3600)
    assert user_api.get(f"/accounts/{account['id']}/transactions?pageSize=1").json["nextPageReference"]
    [found] = [f for f in report(world)["findings"] if f["rule"] == "pagination-ignored"]
    assert found["evidence"][0]["operationId"] == "GetTransactions"


def test_pagination_followed_to_the_end_is_fine(world):
    world = long_lived(world)
    _, user_api = long_lived_user(world, lifetime=USER_TOKEN_LIFETIME)
    assert user_api.get("/accounttypes/dummy").status_code == 200       # its fields, not hard-coded
    account = imported(world.api, user_api, seconds=3600)
    reference, pages = "", 0
    while reference is not None:
        page = user_api.get(f"/accounts/{account['id']}/transactions?pageSize=50"
                            + (f"&pageReference={reference}" if reference else "")).json
        reference, pages = page["nextPageReference"], pages + 1
    assert pages > 1 and rules(world) == []


def test_a_failing_webhook_receiver(world):
    world = long_lived(world)
    api = world.api
    api.post("/webhooks", json={"callbackUrl": "http://localhost/_sandbox/echo/down?status=500",
                                "events": ["AccountCreated"]})
    api.post("/testevents/accountcreated")
    world.api.post("/_sandbox/webhooks/flush")
    [found] = report(world)["findings"]
    assert found["rule"] == "webhook-receiver-failed" and found["evidence"][0]["status"] == 500


def test_a_receiver_acknowledging_a_bad_signature(world):
    world = long_lived(world)
    api = world.api
    api.post("/webhooks", json={"callbackUrl": "http://localhost/_sandbox/echo/naive", "events": ["AccountCreated"]})
    world.api.post("/_sandbox/faults", json={"effect": {"type": "bad-signature"}})
    api.post("/testevents/accountcreated")
    world.api.post("/_sandbox/webhooks/flush")
    [found] = report(world)["findings"]
    assert found["rule"] == "bad-signature-accepted" and found["severity"] == "error"


def test_a_receiver_refusing_a_bad_signature_is_not_blamed_for_it(world):
    world = long_lived(world)
    api = world.api
    api.post("/webhooks", json={"callbackUrl": "http://localhost/_sandbox/echo/strict?status=401",
                                "events": ["AccountCreated"]})
    world.api.post("/_sandbox/faults", json={"effect": {"type": "bad-signature"}})
    api.post("/testevents/accountcreated")
    world.api.post("/_sandbox/webhooks/flush")
    assert "bad-signature-accepted" not in rules(world)


def test_slow_receivers_are_found_by_their_measured_duration():
    row = {"id": "d1", "attempted_at": 0, "status": "succeeded", "response_status": 200, "duration_ms": 1500.0,
           "webhook_id": "w1", "url": "http://x", "error": None, "event_type": "AccountCreated", "attempt": 1}
    traffic = report_rules.Traffic([], [], {}, {}, set(), {}, None, [], [],
                                   [row, {**row, "id": "d2", "duration_ms": 20.0}], {}, report_rules.SLOW_MS)
    [found] = list(webhooks.webhook_receivers(traffic))
    assert found["rule"] == "webhook-receiver-slow" and found["count"] == 1


def test_text_and_junit_formats(world, app):
    app.extensions["ptas"].limiter.global_rule = (1, 60)
    for _ in range(3):
        world.api.get("/users")
    text = world.api.get("/_sandbox/report?format=text").get_data(as_text=True)
    assert "retry-after-ignored" in text and "fix:" in text
    xml = ET.fromstring(world.api.get("/_sandbox/report?format=junit&failOn=error").get_data())
    failed = [c.get("name") for c in xml.iter("testcase") if c.find("failure") is not None]
    assert failed == ["retry-after-ignored"]          # the warning (initial token) does not fail at failOn=error
    xml = ET.fromstring(world.api.get("/_sandbox/report?format=junit").get_data())
    assert {c.get("name") for c in xml.iter("testcase") if c.find("failure") is not None} == {
        "retry-after-ignored", "initial-token-in-use"}


@pytest.mark.parametrize("query", ["format=yaml", "failOn=fatal", "since=yesterday", "slowMs=0"])
def test_bad_report_parameters(world, query):
    assert_problem(world.api.get(f"/_sandbox/report?{query}"), 400)


def test_only_the_world_sees_its_report(world, other_world):
    world.api.get("/users")
    assert report(other_world)["findings"] == []


def receiver_answered(status):
    return {"id": f"d{status}", "attempted_at": 0, "status": "failed", "response_status": status, "duration_ms": 5.0,
            "webhook_id": "w1", "url": "http://x", "error": None, "event_type": "AccountCreated", "attempt": 1}


def test_a_receiver_answering_a_redirect_is_not_called_a_server_error():
    traffic = report_rules.Traffic([], [], {}, {}, set(), {}, None, [], [],
                                   [receiver_answered(308), receiver_answered(502)], {}, report_rules.SLOW_MS)
    found = {f["rule"]: f for f in webhooks.webhook_receivers(traffic)}
    assert sorted(found) == ["webhook-receiver-failed", "webhook-receiver-redirected"]
    assert [e["status"] for e in found["webhook-receiver-redirected"]["evidence"]] == [308]
    assert [e["status"] for e in found["webhook-receiver-failed"]["evidence"]] == [502]


def test_two_findings_of_one_rule_are_one_junit_failure_counting_and_naming_both(world):
    body = report(world)
    two = [{"rule": "expired-user-token", "severity": "warning", "title": "t", "message": m, "fix": "f",
            "count": 1, "evidence": []} for m in ("first cause", "second cause")]
    xml = ET.fromstring(render.junit({**body, "findings": two}))
    [failure] = [c.find("failure") for c in xml.iter("testcase") if c.find("failure") is not None]
    assert failure.get("message") == "2 findings: (1) first cause (2) second cause"
    assert "first cause" in failure.text and "second cause" in failure.text


def test_refusals_the_spec_tells_how_to_avoid_are_told_once_per_cause_with_what_to_do(world):
    world = long_lived(world)
    narrow = world.api.as_(world.api.post("/partners/self/tokens", json={
        "name": "settings", "expiresIn": 31536000, "scope": "partner:update"}).json["accessToken"])
    assert_problem(narrow.get("/partners/self/tokens"), 403)                 # no partner:read
    assert_problem(narrow.get("/partners/self/tokens?pageSize=5"), 403)      # the same cause, another request
    jane, jane_api = long_lived_user(world, lifetime=USER_TOKEN_LIFETIME)
    _, joe_api = long_lived_user(world, name="Joe")
    account = connect(jane_api)
    assert_problem(joe_api.get(f"/accounts/{account['id']}"), 404)          # Jane's account, Joe's token
    assert_problem(joe_api.get("/accounts/no-such-account"), 404)           # not the client's own: not judged
    assert jane_api.post("/accounts", data="{}", headers={"Content-Type": "text/plain"}).status_code == 415
    found = [f for f in report(world)["findings"] if f["rule"] == "refusal-avoidable"]
    by_status = {f["status"]: f for f in found}
    assert sorted(by_status) == [403, 404, 415] and len(found) == 3
    assert by_status[403]["count"] == 2 and "scope" in by_status[403]["fix"]
    assert "§5" in by_status[404]["fix"] and by_status[404]["count"] == 1
    assert "application/json" in by_status[415]["fix"] and by_status[415]["severity"] == "warning"


def test_creating_what_already_exists_is_told_once_and_a_recreation_after_a_delete_is_not(world):
    world = long_lived(world)
    api = world.api
    hook = {"callbackUrl": "http://localhost/_sandbox/echo/hooks", "events": ["AccountCreated"]}
    assert api.post("/webhooks", json=hook).status_code == 201
    assert api.post("/webhooks", json=hook).status_code == 201                 # every event now comes twice
    for _ in range(2):
        assert api.post("/users", json={"name": "Jane", "email": "Jane@shop.example"}).status_code == 201
    other = api.post("/webhooks", json={**hook, "callbackUrl": "http://localhost/_sandbox/echo/other"}).json
    assert api.delete(f"/webhooks/{other['id']}").status_code in (200, 204)
    assert api.post("/webhooks", json={**hook, "callbackUrl": "http://localhost/_sandbox/echo/other"}).status_code \
        == 201
    [found] = [f for f in report(world)["findings"] if f["rule"] == "created-again"]
    assert found["count"] == 2 and found["severity"] == "warning" and "GET /webhooks" in found["fix"]
    assert {e["operationId"] for e in found["evidence"]} == {"CreateWebhook", "CreateUser"}


def test_a_read_repeated_at_once_with_nothing_changed_is_wasted_and_one_after_a_write_is_not(world):
    world = long_lived(world)
    api = world.api
    api.get("/users")
    api.get("/users")                                                           # the answer was held
    api.post("/users", json={"name": "Jane"})
    api.get("/users")                                                           # a write came between
    api.advance(120)
    api.get("/users")                                                           # minutes later: a refresh
    [found] = [f for f in report(world)["findings"] if f["rule"] == "read-repeated"]
    assert found["count"] == 1 and found["severity"] == "info" and "§6" in found["fix"]


def test_a_client_that_stops_after_a_cut_answer_has_not_handled_it(world):
    world = long_lived(world)
    response = harness(world).post("/_sandbox/faults", json={"match": {"operationId": "GetUsers"},
                                                             "effect": {"type": "truncate"}, "times": 1})
    assert response.status_code == 201
    world.api.get("/users")
    [found] = [f for f in report(world)["findings"] if f["rule"] == "stopped-after-failure"]
    assert "whose body was cut" in found["message"]


def test_an_update_sent_again_at_once_unchanged_is_done_twice_and_one_minutes_later_or_changed_is_not(world):
    world = long_lived(world)
    api = world.api
    user = api.post("/users", json={"name": "Jane"}).json
    for _ in range(2):                                  # each copy of a notification handled
        assert api.put(f"/users/{user['id']}", json={"name": "Jane Doe"}).status_code == 200
    [found] = [f for f in report(world)["findings"] if f["rule"] == "updated-again"]
    assert found["count"] == 1 and found["severity"] == "warning" and "webhook-id" in found["fix"]
    api.advance(120)                                    # its settings stated again at the next start
    assert api.put(f"/users/{user['id']}", json={"name": "Jane Doe"}).status_code == 200
    assert api.put(f"/users/{user['id']}", json={"name": "Jane Roe"}).status_code == 200     # a change
    [found] = [f for f in report(world)["findings"] if f["rule"] == "updated-again"]
    assert found["count"] == 1


def test_a_cut_fault_on_an_answer_without_a_body_leaves_nothing_to_handle(world):
    """Half of a 204's empty body is the same empty body: the client got its answer whole (the third blind pair's
    careful reseller ended on DeleteChildPartner so, and was told it had stopped after a failure)."""
    world = long_lived(world)
    api = world.api
    hook = api.post("/webhooks", json={"callbackUrl": "https://receiver.example/ptas", "events": ["AccountCreated"]})
    response = harness(world).post("/_sandbox/faults", json={"match": {"operationId": "DeleteWebhook"},
                                                             "effect": {"type": "truncate"}, "times": 1})
    assert response.status_code == 201
    assert api.delete(f"/webhooks/{hook.json['id']}").status_code == 204
    assert [f for f in report(world)["findings"] if f["rule"] == "stopped-after-failure"] == []


def test_a_token_in_the_query_string_beside_a_valid_header_is_misplaced_though_served(world):
    world = long_lived(world)
    assert world.api.get("/users", query_string={"access_token": world.token}).status_code == 200
    [found] = [f for f in report(world)["findings"] if f["rule"] == "credentials-misplaced"]
    assert found["where"] == "the query string, beside the Authorization header" and "every log" in found["message"]


def test_a_partner_token_and_a_child_partner_created_and_never_used(world):
    world = long_lived(world)
    api = world.api
    assert api.post("/partners/self/tokens", json={"name": "spare", "expiresIn": 31536000,
                                                   "scope": "partner:all user:all"}).status_code == 201
    assert api.post("/partners", json={"name": "Globex"}).status_code == 201
    used = api.post("/partners", json={"name": "Initech"}).json
    assert api.post(f"/partners/{used['id']}/tokens", json={"name": "deploy", "expiresIn": 31536000,
                                                            "scope": "partner:create"}).status_code == 201
    [found] = [f for f in report(world)["findings"] if f["rule"] == "created-unused"]
    assert found["count"] == 2 and found["severity"] == "info"
    assert "child partner" in found["message"] and "partner:all user:all" in found["message"]


def test_an_account_deleted_and_created_again_instead_of_refreshed(world):
    world = long_lived(world)
    _, user_api = long_lived_user(world, lifetime=USER_TOKEN_LIFETIME)
    user_api.get("/accounttypes")
    account = connect(user_api)
    assert user_api.delete(f"/accounts/{account['id']}").status_code in (200, 204)
    connect(user_api)
    [found] = [f for f in report(world)["findings"] if f["rule"] == "recreated-instead-of-updated"]
    assert found["count"] == 1 and "TriggerAccountRefresh" in found["fix"]
    assert [e["operationId"] for e in found["evidence"]] == ["DeleteAccount", "CreateAccount"]


def test_items_a_list_just_showed_read_one_by_one_are_wasted(world):
    world = long_lived(world)
    api = world.api
    for name in ("Jane", "Joe"):
        api.post("/users", json={"name": name})
    listed = api.get("/users").json["users"]
    for user in listed:
        assert api.get(f"/users/{user['id']}").status_code == 200
    [found] = [f for f in report(world)["findings"] if f["rule"] == "read-repeated"]
    assert found["count"] == 2 and {e["operationId"] for e in found["evidence"]} == {"GetUser"}
