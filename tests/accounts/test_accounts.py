"""Accounts (spec §1 capability 3, §2, §4.3): credentials against accountFields, ownership, one per provider."""

import base64
import json

import pytest

from tests.support.accounts import CARD_CREDENTIALS, DUMMY_CREDENTIALS, connect
from tests.support.problems import assert_problem


@pytest.fixture
def jane(world):
    return world.user(name="Jane")


def events(app, kind):
    rows = app.extensions["ptas"].store.all("SELECT data FROM events WHERE kind = ? ORDER BY seq", (kind,))
    return [json.loads(r["data"]) for r in rows]


def test_user_creates_an_account_and_reads_it_back(jane):
    user, api = jane
    created = connect(api, name="Jane's shop")
    assert created["userId"] == user["id"] and created["accountTypeId"] == "dummy"
    assert created["errors"] == [] and created["warningDetails"] == [] and created["warnings"] == []
    read = api.get(f"/accounts/{created['id']}").json
    assert read["name"] == "Jane's shop" and read["statistics"] == {"count": 0, "first": None, "last": None}
    assert [a["id"] for a in api.get("/accounts").json["accounts"]] == [created["id"]]


def test_secrets_and_files_are_never_returned(world, jane):
    _, api = jane
    account = connect(api, "sample-card-acquirer", CARD_CREDENTIALS)
    assert account["credentials"] == {"merchantId": "M-1001"}
    assert "password" not in json.dumps(api.get(f"/accounts/{account['id']}").json["credentials"])


def test_partner_creates_an_account_for_its_user(world, jane):
    user, _ = jane
    created = connect(world.api, userId=user["id"])
    assert created["userId"] == user["id"]
    listed = world.api.get(f"/accounts?userId={user['id']}").json["accounts"]
    assert [a["id"] for a in listed] == [created["id"]]


def test_partner_must_name_the_user(world):
    response = world.api.post("/accounts", json={"accountTypeId": "dummy", "credentials": DUMMY_CREDENTIALS})
    assert "userId" in assert_problem(response, 404)["detail"]


def test_partner_cannot_create_for_another_partners_user(world, other_world):
    stranger, _ = other_world.user(name="Stranger")
    response = world.api.post("/accounts", json={"accountTypeId": "dummy", "userId": stranger["id"],
                                                 "credentials": DUMMY_CREDENTIALS})
    assert_problem(response, 404)


def test_second_account_of_the_same_type_is_a_conflict(jane):
    _, api = jane
    connect(api)
    assert_problem(api.post("/accounts", json={"accountTypeId": "dummy", "credentials": DUMMY_CREDENTIALS}),
                   409, "conflict")
    assert len(api.get("/accounts").json["accounts"]) == 1


def test_two_users_may_each_have_a_dummy_account(world, jane):
    _, api = jane
    _, joe = world.user(name="Joe")
    assert connect(api)["id"] != connect(joe)["id"]


@pytest.mark.parametrize("body, slug", [
    ({"accountTypeId": "no-such-provider", "credentials": DUMMY_CREDENTIALS}, "invalid-body"),
    ({"accountTypeId": "dummy", "credentials": {"username": "jane"}}, "invalid-body"),
    ({"accountTypeId": "dummy", "credentials": {"username": 42, "password": "x"}}, "invalid-body"),
    ({"accountTypeId": "dummy", "credentials": {"username": "  ", "password": "x"}}, "invalid-body"),
    ({"accountTypeId": "dummy-report", "credentials": {**DUMMY_CREDENTIALS, "reportFormat": "pdf"}},
     "invalid-body"),
    ({"accountTypeId": "sample-card-acquirer", "credentials": {**CARD_CREDENTIALS, "terminalCount": "three"}},
     "invalid-body"),
    ({"accountTypeId": "sample-card-acquirer", "credentials": {**CARD_CREDENTIALS, "certificate": "not base64!"}},
     "invalid-body"),
    ({"accountTypeId": "sample-card-acquirer",
      "credentials": {**CARD_CREDENTIALS, "certificate": base64.b64encode(b"x" * 20000).decode()}},
     "invalid-body"),
    ({"accountTypeId": "dummy", "credentials": DUMMY_CREDENTIALS, "authReference": "abc"}, "invalid-body"),
    ({"accountTypeId": "dummy-auth", "credentials": {}}, "invalid-body"),
    ({"accountTypeId": "dummy-auth", "credentials": {"authorization": "token"}}, "invalid-body"),
    ({"credentials": DUMMY_CREDENTIALS}, "invalid-body"),
])
def test_bad_account_input_is_refused_and_writes_nothing(app, jane, body, slug):
    _, api = jane
    assert_problem(api.post("/accounts", json=body), 400, slug)
    assert api.get("/accounts").json["accounts"] == []
    assert events(app, "AccountCreated") == []


def test_credential_problems_name_each_field(jane):
    _, api = jane
    problem = assert_problem(api.post("/accounts", json={"accountTypeId": "dummy", "credentials": {"pin": 1}}), 400)
    assert {e["pointer"] for e in problem["errors"]} == {"/credentials"}
    details = " ".join(e["detail"] for e in problem["errors"])
    assert all(name in details for name in ("username", "password"))


def test_a_credential_the_type_does_not_name_is_ignored_with_a_warning(jane):
    """Spec §9 rule 2 (2.9.0): schemas have no additionalProperties restriction, credentials included."""
    _, api = jane
    reply = api.post("/accounts", json={"accountTypeId": "dummy", "credentials": {**DUMMY_CREDENTIALS, "pin": "1"}})
    assert reply.status_code == 201, reply.json
    assert "UnknownField" in {w["code"] for w in reply.json["warningDetails"]}
    assert "pin" not in api.get(f"/accounts/{reply.json['id']}").json.get("credentials", {})


@pytest.mark.parametrize("type_id, credentials, code", [
    ("dummy", {"username": "jane"}, "Required"),
    ("dummy", {"username": 42, "password": "x"}, "InvalidValue"),
    ("sample-card-acquirer", {**CARD_CREDENTIALS, "certificate": "not base64!"}, "InvalidValue"),
    ("sample-card-acquirer", {**CARD_CREDENTIALS, "certificate": base64.b64encode(b"x" * 20000).decode()},
     "InvalidValue"),
    ("dummy-auth", {"authorization": "t"}, "UseAuthReference"),
])
def test_models_check_credentials_for_direct_callers(app, world, jane, type_id, credentials, code):
    """The Account UI calls accounts.models.create directly: the same rules hold without the HTTP schema."""
    from ptas_sandbox.simulator.accounts import models
    from ptas_sandbox.simulator.problems import BadRequest
    user, _ = jane
    sandbox = app.extensions["ptas"]
    ctx = sandbox.ctx(sandbox.worlds.get(world.body["world"]["id"]))
    with pytest.raises(BadRequest) as raised:
        with sandbox.store.transaction():
            models.create(ctx, partner_id=world.partner["id"], user_id=user["id"],
                          values={"accountTypeId": type_id, "credentials": credentials, "authReference": "r"})
    assert code in {e["code"] for e in raised.value.extensions.get("errors", [])} or code == "UseAuthReference"
    assert sandbox.store.one("SELECT count(*) AS c FROM accounts")["c"] == 0


def test_models_create_returns_the_public_record(app, world, jane):
    from ptas_sandbox.simulator.accounts import models
    user, api = jane
    sandbox = app.extensions["ptas"]
    ctx = sandbox.ctx(sandbox.worlds.get(world.body["world"]["id"]))
    with sandbox.store.transaction():
        created = models.create(ctx, partner_id=world.partner["id"], user_id=user["id"],
                                values={"accountTypeId": "dummy", "credentials": DUMMY_CREDENTIALS})
    assert api.get(f"/accounts/{created['id']}").json["id"] == created["id"]


def test_discontinued_type_takes_no_new_accounts(jane):
    _, api = jane
    response = api.post("/accounts", json={"accountTypeId": "sample-legacy-gateway",
                                           "credentials": {"login": "a", "password": "b"}})
    assert_problem(response, 403, "account-type-not-available")


def test_creating_needs_account_create_scope(world, jane):
    user, _ = jane
    token = world.new_token("account:read")
    response = world.api.as_(token).post("/accounts", json={"accountTypeId": "dummy", "userId": user["id"],
                                                            "credentials": DUMMY_CREDENTIALS})
    assert_problem(response, 403, "forbidden")


def test_deprecated_credential_field_gives_a_warning_in_both_forms(jane):
    _, api = jane
    account = connect(api, "sample-card-acquirer", {**CARD_CREDENTIALS, "password": "old"})
    assert account["warningDetails"][0]["code"] == "DeprecatedField"
    assert account["warnings"] == [account["warningDetails"][0]["message"]]
    assert api.get(f"/accounts/{account['id']}").json["warnings"] == account["warningDetails"]


def test_another_users_account_is_not_found(world, jane):
    _, api = jane
    account = connect(api)
    _, joe = world.user(name="Joe")
    for response in (joe.get(f"/accounts/{account['id']}"), joe.delete(f"/accounts/{account['id']}"),
                     joe.put(f"/accounts/{account['id']}", json={"name": "mine"}),
                     joe.get(f"/accounts/{account['id']}/transactions")):
        assert_problem(response, 404, "not-found")
    assert joe.get("/accounts").json["accounts"] == []


def test_another_worlds_account_is_not_found(other_world, jane):
    _, api = jane
    account = connect(api)
    assert_problem(other_world.api.get(f"/accounts/{account['id']}"), 404)


def test_child_partner_does_not_see_parent_users_accounts(world, jane):
    _, api = jane
    account = connect(api)
    child = world.api.post("/partners", json={"name": "Child"}).json
    token = world.api.post(f"/partners/{child['id']}/tokens", json={"scope": "account:all", "expiresIn": 7200})
    child_api = world.api.as_(token.json["accessToken"])
    assert_problem(child_api.get(f"/accounts/{account['id']}"), 404)
    assert child_api.get("/accounts").json["accounts"] == []


def test_user_filter_of_another_user_shows_nothing_to_a_user(world, jane):
    _, api = jane
    joe, _ = world.user(name="Joe")
    connect(api)
    assert api.get(f"/accounts?userId={joe['id']}").json["accounts"] == []


def test_update_renames_and_merges_credentials(app, jane):
    _, api = jane
    account = connect(api, "dummy-report", {**DUMMY_CREDENTIALS, "reportFormat": "csv"})
    response = api.put(f"/accounts/{account['id']}", json={"name": "Renamed", "credentials": {"reportFormat": "xml"}})
    assert response.status_code == 200
    assert response.json["name"] == "Renamed" and response.json["credentials"]["reportFormat"] == "xml"
    assert response.json["credentials"]["username"] == "jane" and "warningDetails" in response.json
    assert events(app, "AccountUpdated")[-1]["account"]["name"] == "Renamed"


def test_update_with_bad_credentials_changes_nothing(app, jane):
    _, api = jane
    account = connect(api)
    assert_problem(api.put(f"/accounts/{account['id']}", json={"name": "X", "credentials": {"username": 42}}), 400)
    assert api.get(f"/accounts/{account['id']}").json["name"] == account["name"]
    assert events(app, "AccountUpdated") == []


def test_delete_twice_is_not_found_the_second_time(app, jane):
    user, api = jane
    account = connect(api)
    assert api.delete(f"/accounts/{account['id']}").status_code == 204
    assert_problem(api.delete(f"/accounts/{account['id']}"), 404)
    assert_problem(api.get(f"/accounts/{account['id']}"), 404)
    deleted = events(app, "AccountDeleted")
    assert len(deleted) == 1 and deleted[0]["account"]["id"] == account["id"] and deleted[0]["userId"] == user["id"]


def test_deleted_account_frees_its_type_for_the_user(jane):
    _, api = jane
    api.delete(f"/accounts/{connect(api)['id']}")
    connect(api)


def test_account_created_event_carries_the_account_and_user(app, jane):
    user, api = jane
    account = connect(api)
    [event] = events(app, "AccountCreated")
    assert event["userId"] == user["id"] and event["account"]["id"] == account["id"]
    assert event["account"]["errors"] == [] and event["account"]["warnings"] == []


def test_accounts_of_a_deleted_user_disappear(world, jane):
    user, api = jane
    account = connect(api)
    world.api.delete(f"/users/{user['id']}")
    assert_problem(world.api.get(f"/accounts/{account['id']}"), 404)
    assert world.api.get("/accounts").json["accounts"] == []


def test_validate_credentials_reports_form_and_provider_problems(jane):
    _, api = jane
    good = api.post("/accounttypes/dummy/validate", json={"credentials": DUMMY_CREDENTIALS}).json
    assert good == {"isValid": True, "errors": [], "warnings": []}
    rejected = api.post("/accounttypes/dummy/validate",
                        json={"credentials": {"username": "a", "password": "wrong"}}).json
    assert not rejected["isValid"] and rejected["errors"][0]["code"] == "InvalidCredentials"
    missing = api.post("/accounttypes/dummy/validate", json={"credentials": {}}).json
    assert not missing["isValid"] and {e["code"] for e in missing["errors"]} == {"Required"}
    assert api.get("/accounts").json["accounts"] == []


def test_validate_credentials_agrees_with_create_on_a_null_field(jane):
    """A partner who validates first must not get a green light for credentials CreateAccount then refuses."""
    user, api = jane
    credentials = {"username": "a", "password": "b", "reportFormat": None}
    checked = api.post("/accounttypes/dummy-report/validate", json={"credentials": credentials}).json
    assert not checked["isValid"] and [e["field"] for e in checked["errors"]] == ["reportFormat"]
    created = api.post("/accounts", json={"accountTypeId": "dummy-report", "credentials": credentials})
    assert_problem(created, 400)
    del credentials["reportFormat"]
    assert api.post("/accounttypes/dummy-report/validate", json={"credentials": credentials}).json["isValid"]
    assert api.post("/accounts", json={"accountTypeId": "dummy-report", "credentials": credentials}).status_code == 201


def test_validate_credentials_of_an_unknown_type_is_not_found(jane):
    _, api = jane
    assert_problem(api.post("/accounttypes/nope/validate", json={"credentials": {}}), 404)


def test_validate_stored_credentials_with_changes_saves_nothing(jane):
    _, api = jane
    account = connect(api)
    assert api.post(f"/accounts/{account['id']}/validate").json["isValid"]
    trial = api.post(f"/accounts/{account['id']}/validate", json={"credentials": {"password": "wrong"}}).json
    assert not trial["isValid"]
    assert api.post(f"/accounts/{account['id']}/validate", json={}).json["isValid"]
