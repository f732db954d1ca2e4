"""The operation resolver and the body builder: the spec finds operations, the target's document shapes bodies."""

import pytest

from ptas_sandbox.conformance import checks
from ptas_sandbox.conformance.bodies import Bodies, NoSchema, identifier
from ptas_sandbox.conformance.resolver import NotOffered, Operations, UnknownOperation, parse_override


def op(operation_id, schema=None, method="post"):
    spec = {"operationId": operation_id}
    if schema is not None:
        spec["requestBody"] = {"content": {"application/json": {"schema": schema}}}
    return {method: spec}


DOCUMENT = {
    "paths": {
        "/_sandbox/partners": op("CreatePartner"),          # a control API that reuses the name: never chosen
        "/api/v9/partners": op("NewChild", {"properties": {"displayName": {"type": "string"},
                                                           "contactEmail": {"type": "string"}},
                                            "required": ["displayName"]}),
        "/api/v9/accounts": {**op("AddAccount", {
            "properties": {"accountType": {"type": "string", "enum": ["dummy", "dummy-auth"]},
                           "ownerId": {"type": "string"}, "settings": {"type": "object"},
                           "region": {"type": "string", "enum": ["eu", "us"]}},
            "required": ["accountType", "settings", "region"]}), **op("ListAccounts", method="get")},
        "/api/v9/accounts/{accountId}": {"get": {"operationId": "GetAccount"}},
        "/api/v9/accounts/{accountId}/transactions/{txId}": {"get": {"operationId": "GetTransaction"}},
        "/api/v9/oauth": op("StartOauth", {"type": "object"}),
    },
}


def test_an_operation_the_spec_gives_a_path_is_found_by_it_and_never_in_the_control_api():
    ops = Operations(DOCUMENT)
    assert ops.resolve("CreatePartner") == ("POST", "/api/v9/partners")
    assert ops.resolve("CreateOauthRedirectUrl") == ("POST", "/api/v9/oauth")       # §4.2 note 5: POST /oauth


def test_a_pathless_operation_is_found_by_its_operationid_then_by_an_override():
    ops = Operations(DOCUMENT, dict([parse_override("GetAccounts=GET /api/v9/accounts")]))
    assert ops.resolve("GetAccount", {"id": "a1"}) == ("GET", "/api/v9/accounts/a1")
    assert ops.resolve("GetAccounts") == ("GET", "/api/v9/accounts")
    assert ops.resolve("GetTransaction", {"id": "a1", "transactionId": "t1"}) == (
        "GET", "/api/v9/accounts/a1/transactions/t1")
    with pytest.raises(UnknownOperation, match="--operation DeleteUser=METHOD PATH"):
        ops.resolve("DeleteUser")
    with pytest.raises(ValueError, match="NAME=METHOD PATH"):
        parse_override("GetAccounts GET /x")
    assert parse_override("  --operation 'GetUsers=GET /v9/users'") == ("GetUsers", ("GET", "/v9/users"))


def test_a_pathless_operation_the_document_makes_unambiguous_is_inferred_never_guessed():
    ops = Operations(DOCUMENT)
    # the only POST …/accounts of the document, whatever its operationId
    assert ops.resolve("CreateAccount") == ("POST", "/api/v9/accounts") and "CreateAccount" in ops.inferred
    assert ops.resolve("GetAccounts") == ("GET", "/api/v9/accounts")
    # two GET …/accounts collections: no choice between them, the candidates said
    two = {"paths": {**DOCUMENT["paths"], "/api/v10/accounts": op("ListAccountsV10", method="get")}}
    ops = Operations(two)
    with pytest.raises(UnknownOperation, match=r"candidates: GET /api/v9/accounts, GET /api/v10/accounts"):
        ops.resolve("GetAccounts")
    assert ("GetAccounts", [("GET", "/api/v9/accounts"), ("GET", "/api/v10/accounts")]) in ops.unresolved()
    # an operation the document names as another one the harness knows is no candidate
    named = {"paths": {"/v1/accounts/{id}": {"get": {"operationId": "GetAccount"}}}}
    assert Operations(named).candidates("DeleteAccount") == [] and Operations(named).candidates("GetAccount")


def test_what_the_document_does_not_offer_is_not_a_failure():
    assert issubclass(UnknownOperation, NotOffered) and issubclass(NoSchema, NotOffered)
    assert not issubclass(NotOffered, AssertionError)


def test_a_body_the_spec_does_not_show_follows_the_targets_schema():
    ops = Operations(DOCUMENT, {"CreateAccount": ("POST", "/api/v9/accounts")})
    body = Bodies(ops).build("CreateAccount", {"accountTypeId": "dummy-auth", "userId": "u1",
                                               "credentials": {"username": "x"}})
    assert body == {"accountType": "dummy-auth", "ownerId": "u1", "settings": {"username": "x"}, "region": "eu"}
    assert Bodies(ops).build("CreatePartner", {"name": "Store", "email": "s@example.test"}) == {
        "displayName": "Store", "contactEmail": "s@example.test"}


def test_a_value_the_schema_has_no_place_for_skips_unless_it_is_optional():
    ops = Operations(DOCUMENT)
    with pytest.raises(NoSchema, match="no property for scope"):
        Bodies(ops).build("CreatePartner", {"name": "Store", "scope": "partner:read"})
    assert Bodies(ops).build("CreatePartner", {"name": "Store", "scope": "x"}, optional=("scope",)) == {
        "displayName": "Store"}
    with pytest.raises(NoSchema, match="no request schema"):
        Bodies(Operations({"paths": {"/partners": op("CreatePartner")}})).build("CreatePartner", {"name": "x"})


def test_an_update_sends_back_the_record_under_the_schemas_names():
    ops = Operations(DOCUMENT)
    record = {"partnerId": "p1", "displayName": "Store", "email": "s@example.test", "createdAt": "2026-01-01"}
    assert Bodies(ops).writable("CreatePartner", record) == {"displayName": "Store", "contactEmail": "s@example.test"}


def test_a_records_id_is_found_under_the_name_the_document_gives_it():
    assert identifier({"id": "a1", "userId": "u1"}) == "a1"
    assert identifier({"accountId": "a1", "userId": "u1", "accountTypeId": "dummy"}, "accountId") == "a1"
    assert identifier({"txId": "t1", "accountId": "a1"}, "txId", "accountId") == "t1"
    assert identifier({"sessionId": "s1", "url": "https://x"}) == "s1"
    assert identifier({"userId": "u1", "accountId": "a1"}) is None          # ambiguous: never a guess
    assert Operations(DOCUMENT).hints("GetTransaction") == ["txId", "accountId"]


@pytest.mark.parametrize("body, entries", [
    ([{"id": "u1"}], [{"id": "u1"}]),
    ({"items": [{"id": "u1"}]}, [{"id": "u1"}]),                                   # the only array
    ({"links": [{"rel": "self", "href": "/users"}], "users": []}, []),             # the one named like the list
    ({"links": [{"rel": "self"}], "data": [{"id": "u1"}]}, [{"id": "u1"}]),        # the one of records with ids
    ({"total": 0}, None),
])
def test_a_lists_entries_are_chosen_by_name_or_by_their_records_never_by_member_order(body, entries):
    assert checks.entries(body, "users") == entries
    assert checks.entries(dict(reversed(list(body.items()))) if isinstance(body, dict) else body, "users") == entries


def test_a_list_whose_entries_could_be_in_several_arrays_is_not_checked_rather_than_guessed():
    with pytest.raises(NotOffered, match="arrays"):
        checks.entries({"data": [{"id": "u1"}], "recent": [{"id": "u2"}]}, "users")


@pytest.mark.parametrize("body, bad", [
    ({"createdAt": "2026-11-12T13:13:00.000000Z"}, ["$.createdAt"]),                      # six digits
    ({"createdAt": "2026-11-12 13:13"}, ["$.createdAt"]),                                 # a timestamp's name
    ({"fields": [{"value": "2026-11-12T13:13:00+01:00"}]}, ["$.fields[0].value"]),        # a date-time as a whole
    ({"createdAt": "2026-11-12T13:13:00.0000000Z", "bookingText": "2026-11-12 13:13 Card payment"}, []),
    ({"note": "2026-11-12"}, []),                                                         # a date, no time
])
def test_a_date_time_is_a_timestamps_value_or_a_whole_date_time_string_not_text_that_starts_with_one(body, bad):
    assert [where for where, _ in checks.bad_date_times(body)] == bad
