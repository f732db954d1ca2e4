"""How a deployment dresses its answers, learned and served (profile_answers.py, tools/profile/dressing.py): the
headers it sends on every answer, successes without a body, the status of a removed path, null members the spec
does not name left out, record members of another JSON type, the order of the pages of transactions, the form of
an invalid body's `errors` and what its document says of each."""

import json

import pytest

from ptas_sandbox import profile as profiles
from ptas_sandbox.conformance import profile_answers as answers
from ptas_sandbox.conformance.profile_learn import Recorder, created_order, learn
from ptas_sandbox.conformance.resolver import Operations
from ptas_sandbox.conformance.targets import in_process
from ptas_sandbox.simulator import create_app
from ptas_sandbox.simulator.hooks import PAGE_ORDER
from tests.conformance.variants import Variant, json_of, operation_object

API = "/partner/v2"


def simulator(**config):
    return create_app({"STATE": ":memory:", "START_SERVICES": False, **config})


def profile_with(**choices):
    made = profiles.new("https://staging.example")
    made["choices"] = {name: {"value": value, "says": name, "evidence": []} for name, value in choices.items()}
    return profiles.check(made)


@pytest.fixture
def apps():
    made = []

    def make(**config):
        made.append(simulator(**config))
        return made[-1]
    yield make
    for app in made:
        app.extensions["ptas"].close()


class Partner:
    """A partner of a fresh world of an app, calling the API."""

    def __init__(self, app):
        self.client = app.test_client()
        self.token = self.client.post("/_sandbox/partners", json={"name": "Partner"}).json["accessToken"]

    def call(self, method, path, **kw):
        return self.client.open(API + path, method=method, headers={"Authorization": f"Bearer {self.token}"}, **kw)

    def account_with_transactions(self):
        user = self.call("POST", "/users", json={"name": "Jane"}).json["id"]
        account = self.call("POST", "/accounts", json={
            "userId": user, "accountTypeId": "dummy", "name": "shop",
            "credentials": {"username": "jane", "password": "s3cret"}}).json["id"]
        self.client.post("/_sandbox/clock", json={"advance": 2 * 86400},
                         headers={"Authorization": f"Bearer {self.token}"})
        return account


def document(app):
    return app.test_client().get("/openapi.json").json


def learned(deployment):
    """The probes' profile of a deployment, with what every answer they got said (the Recorder)."""
    target = in_process(deployment)
    return learn(target, recorder=Recorder(target))


# -- headers sent on every answer ------------------------------------------------------------------------------
def traffic_of(answered, paths=("/partner/v2/users", "/partner/v2/users/{id}")):
    operations = Operations({"paths": {path: {"get": {"operationId": f"Op{i}", "responses": {"200": {
        "description": "ok", "headers": {"X-Api-Version": {"schema": {"type": "string"}}}}}}}
        for i, path in enumerate(paths)}})
    traffic = answers.Traffic(operations)
    for path, headers in answered:
        traffic.saw("GET", path, 200, headers, "{}")
    return traffic, operations


def test_a_header_sent_with_one_value_on_every_answer_is_learned_with_where_the_document_names_it():
    traffic, operations = traffic_of([("/partner/v2/users/7", {
        "x-api-version": "2.12.1", "x-request-id": f"req-{i}", "date": "Mon, 05 Jan 2026 09:00:00 GMT",
        "server": "gateway", "content-type": "application/json", "cache-control": "no-store" if i else "private"})
        for i in range(answers.ENOUGH_ANSWERS)] + [("/elsewhere", {})])
    value, says = answers.constant_headers(traffic, operations)
    assert value == {"X-Api-Version": {"value": "2.12.1", "documented": ["*"], "schema": {"type": "string"}}}
    assert "X-Api-Version: 2.12.1" in says


def test_a_header_is_not_learned_from_fewer_answers_than_tell():
    traffic, operations = traffic_of([("/partner/v2/users", {"x-api-version": "2"})] * (answers.ENOUGH_ANSWERS - 1))
    assert answers.constant_headers(traffic, operations) is None


def test_a_learned_header_is_on_every_answer_of_the_api_and_in_the_document(apps):
    app = apps(PROFILE=profile_with(headers={"X-Api-Version": {"value": "2.12.1", "documented": ["*"]},
                                             "WWW-Authenticate": {"value": "Bearer realm=api"}}))
    partner = Partner(app)
    for reply in (partner.call("GET", "/users"), partner.call("GET", "/users/not-an-id"),
                  partner.call("GET", "/users/x/token"), partner.call("POST", "/users", data=b"{not json",
                                                                      content_type="application/json")):
        assert reply.headers.get("X-Api-Version") == "2.12.1", reply.status_code
    unauthorized = app.test_client().get(API + "/users")
    assert unauthorized.headers["WWW-Authenticate"] == "Bearer"         # the simulator's own keeps its value
    assert "X-Api-Version" not in app.test_client().get("/_sandbox/health").headers
    responses = operation_object(document(app), "GetUsers")["responses"]
    assert all("X-Api-Version" in r.get("headers", {}) for r in responses.values())


# -- successes without a body -----------------------------------------------------------------------------------
class RevokeAccepted(Variant):
    """A revocation answers 202 without a body (and without a Content-Type)."""

    def response(self, operation, environ, status, headers, data):
        if operation == "RevokePartnerOwnToken" and status.startswith("200"):
            return "202 Accepted", [(k, v) for k, v in headers if k.lower() != "content-type"], b""
        return status, headers, data


def test_a_success_answered_without_a_body_is_learned_and_served_without_body_or_content_type(apps):
    profile = learned(RevokeAccepted(apps()))
    assert "RevokePartnerOwnToken" in profiles.known(profile, "emptyAnswers")
    assert profiles.known(profile, "revokeStatus")["RevokePartnerOwnToken"] == 202
    partner = Partner(apps(PROFILE=profile))
    made = partner.call("POST", "/partners/self/tokens", json={"name": "t", "scope": "partner:read",
                                                                "expiresIn": 7200}).json
    revoked = partner.call("DELETE", f"/partners/self/tokens/{made['id']}")
    assert (revoked.status_code, revoked.data, revoked.headers.get("Content-Type")) == (202, b"", None)
    assert "content" not in operation_object(document(partner.client.application), "RevokePartnerOwnToken")[
        "responses"]["202"]


# -- a path the spec removed -------------------------------------------------------------------------------------
def test_the_paths_the_spec_removed_answer_the_learned_status(apps):
    partner = Partner(apps(PROFILE=profile_with(removedPaths={"status": 410})))
    user = partner.call("POST", "/users", json={"name": "Jane"}).json["id"]
    for reply in (partner.call("GET", f"/users/{user}/token"), partner.call("PATCH", "/partners", json={}),
                  partner.call("POST", "/webhooks/test-events", json={})):
        assert reply.status_code == 410 and reply.json["status"] == 410, reply.json
    assert partner.call("GET", "/users/Jane").status_code == 404       # an id that names no user, not a removed path
    assert partner.call("GET", "/nothing/here").status_code == 404


def test_a_removed_paths_status_is_learned_where_every_one_called_answered_it():
    traffic, _ = traffic_of([])
    traffic.saw("GET", "/partner/v2/users/1/token", 410, {}, "{}")
    traffic.saw("POST", "/partner/v2/webhooks/test-events", 410, {}, "{}")
    traffic.saw("GET", "/partner/v2/users/Jane", 404, {}, "{}")       # the shape of GetUser: not a removed path
    assert answers.removed_status(traffic)[0] == {"status": 410}
    traffic.saw("PATCH", "/partner/v2/partners", 404, {}, "{}")
    assert answers.removed_status(traffic) is None


# -- null members ------------------------------------------------------------------------------------------------
def observed(app, pairs):
    sim = document(app)
    return sim, [({"$ref": f"#/components/schemas/{component}"}, body, {"seen": component})
                 for component, body in pairs]


def test_nulls_are_omitted_where_none_the_spec_does_not_name_is_sent_and_one_is_left_out(apps):
    sim, seen = observed(apps(), [
        ("User", {"id": "1", "name": "a", "email": "a@partner.example"}), ("User", {"id": "2", "name": "b"}),
        ("Token", {"name": None, "lastUsedAt": None, "revokedAt": None}),         # the spec names these
        ("TransactionPage", {"transactions": [], "previousPageReference": None, "nextPageReference": None})])
    assert answers.null_members(seen, sim)[0] == "omitted"
    seen.append(({"$ref": "#/components/schemas/Webhook"}, {"id": "3", "name": None}, {}))
    assert answers.null_members(seen, sim)[0] == "sent"
    assert answers.null_members(seen[2:3], sim) is None                # nothing told either way


def test_null_members_the_spec_does_not_name_are_left_out_and_the_document_says_so(apps):
    app = apps(PROFILE=profile_with(nulls="omitted"))
    partner = Partner(app)
    made = partner.call("POST", "/users", json={"name": "Jane"}).json
    assert "email" not in made and made["token"]["lastUsedAt"] is None and made["token"]["revokedAt"] is None
    hook = partner.call("POST", "/webhooks", json={"callbackUrl": "https://partner.example/hooks",
                                                    "events": ["AccountCreated"]}).json
    assert "name" not in hook
    account = partner.account_with_transactions()
    page = partner.call("GET", f"/accounts/{account}/transactions").json
    assert page["previousPageReference"] is None and "transactions" in page
    fields = [f for t in page["transactions"] for f in t["fields"]]
    assert all("mappedTo" not in f or f["mappedTo"] is not None for f in fields)
    assert any(f["deprecationReason"] is None for f in fields)           # named: kept null
    schemas = document(app)["components"]["schemas"]
    assert schemas["User"]["properties"]["email"]["type"] == "string" and "email" not in schemas["User"]["required"]
    assert schemas["Token"]["properties"]["lastUsedAt"]["type"] == ["string", "null"]


# -- JSON types of record members --------------------------------------------------------------------------------
@pytest.mark.parametrize("mine, shown, kind", [
    ("number", ["1317.50", "-2.00"], {"type": "string", "fractionDigits": 2}),
    ("integer", ["12", "7"], {"type": "string", "fractionDigits": 0}),
    ("boolean", ["true", "false"], {"type": "string"}),
    ("string", [True, False], {"type": "boolean"}),
    ("number", [1.5, 2], None),                  # the simulator's own type
    ("number", ["12.5", 3], None),               # not every value has the other type
    ("number", ["twelve"], None),                # no number
    ("integer", ["1.5"], None),                  # not without loss
])
def test_a_member_of_another_json_type_is_learned_only_where_every_value_converts(mine, shown, kind):
    assert answers.converted(mine, shown) == kind


class ActiveAsText(Variant):
    """A webhook's `isActive` is "true" or "false", a string, in answers and in the document."""

    def publish(self, document):
        document["components"]["schemas"]["Webhook"]["properties"]["isActive"] = {"type": "string",
                                                                                   "enum": ["true", "false"]}
        return document

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        for record in (body.get("webhooks") or [body]) if isinstance(body, dict) else ():
            if isinstance(record, dict) and isinstance(record.get("isActive"), bool):
                record["isActive"] = "true" if record["isActive"] else "false"
        return status, headers, json.dumps(body).encode() if body is not None else data


def test_a_member_of_another_json_type_is_learned_served_and_published(apps):
    profile = learned(ActiveAsText(apps()))
    assert profiles.known(profile, "memberTypes") == {"Webhook": {"isActive": {
        "type": "string", "schema": {"type": "string", "enum": ["true", "false"]}}}}
    app = apps(PROFILE=profile)
    partner = Partner(app)
    hook = partner.call("POST", "/webhooks", json={"callbackUrl": "https://partner.example/hooks",
                                                    "events": ["AccountCreated"]}).json
    assert hook["isActive"] == "true"
    assert partner.call("GET", "/webhooks").json["webhooks"][0]["isActive"] == "true"
    assert document(app)["components"]["schemas"]["Webhook"]["properties"]["isActive"]["enum"] == ["true", "false"]


def test_amounts_served_as_decimal_strings_of_the_learned_digits(apps):
    partner = Partner(apps(PROFILE=profile_with(memberTypes={"Transaction": {"amount": {
        "type": "string", "fractionDigits": 2}}})))
    account = partner.account_with_transactions()
    page = partner.call("GET", f"/accounts/{account}/transactions").json["transactions"]
    assert all(isinstance(t["amount"], str) and len(t["amount"].split(".")[1]) == 2 for t in page)
    one = partner.call("GET", f"/accounts/{account}/transactions/{page[0]['id']}").json
    assert one["amount"] == page[0]["amount"]


# -- the order of the pages of transactions ---------------------------------------------------------------------
def test_pages_newest_first_lead_on_to_older_ones_and_back(apps):
    partner = Partner(apps(PROFILE=profile_with(paging={"order": "newest first"})))
    account = partner.account_with_transactions()
    path = f"/accounts/{account}/transactions"
    every = partner.call("GET", path, query_string={"pageSize": "1000"}).json["transactions"]
    stamps = [t["createdAt"] for t in every]
    assert len(stamps) > 6 and stamps == sorted(stamps, reverse=True)
    first = partner.call("GET", path, query_string={"pageSize": "3"}).json
    second = partner.call("GET", path, query_string={"pageSize": "3",
                                                      "pageReference": first["nextPageReference"]}).json
    back = partner.call("GET", path, query_string={"pageSize": "3",
                                                    "pageReference": second["previousPageReference"]}).json
    assert first["previousPageReference"] is None
    assert [t["id"] for t in first["transactions"] + second["transactions"]] == [t["id"] for t in every[:6]]
    assert back["transactions"] == first["transactions"] and back["previousPageReference"] is None
    last = partner.call("GET", path, query_string={"pageSize": str(len(every) - 1),
                                                    "pageReference": first["nextPageReference"]}).json
    assert last["nextPageReference"] is None and last["transactions"][-1]["id"] == every[-1]["id"]


def test_a_reference_of_one_order_is_refused_in_the_other(apps):
    partner = Partner(apps())
    account = partner.account_with_transactions()
    path, auth = f"{API}/accounts/{account}/transactions", {"Authorization": f"Bearer {partner.token}"}
    newest = partner.client.get(path, query_string={"pageSize": "2"}, headers=auth,
                                environ_overrides={PAGE_ORDER: "newest first"}).json
    assert partner.client.get(path, query_string={"pageSize": "2", "pageReference": newest["nextPageReference"]},
                              headers=auth).status_code == 400


@pytest.mark.parametrize("stamps, order", [
    (["2026-01-01T00:00:00.0000000Z", "2026-01-02T00:00:00.0000000Z"], "oldest first"),
    (["2026-01-02T00:00:00.0000000Z", "2026-01-01T00:00:00.0000000Z"], "newest first"),
    (["2026-01-02T00:00:00.0000000Z", "2026-01-01T00:00:00.0000000Z", "2026-01-03T00:00:00.0000000Z"], None),
    (["2026-01-02T00:00:00.0000000Z"], None),
])
def test_the_order_of_a_page_is_read_from_its_entries_createdat(stamps, order):
    assert created_order([{"createdAt": stamp} for stamp in stamps]) == order


# -- an invalid body's errors ------------------------------------------------------------------------------------
@pytest.mark.parametrize("errors, form", [
    ({"name": ["must be a string"]}, {"form": "object", "keys": "path", "messages": "list"}),
    ({"/name": "must be a string"}, {"form": "object", "keys": "pointer", "messages": "string"}),
    ([{"field": "name", "message": "must be a string"}],
     {"form": "list", "keys": "path", "pointer": "field", "detail": "message"}),
    ([{"pointer": "/name", "detail": "5 is not of type 'string'"}],
     {"form": "list", "keys": "pointer", "pointer": "pointer", "detail": "detail"}),
    ("must be a string", None),
])
def test_the_form_of_an_invalid_bodys_errors_is_learned(errors, form):
    assert answers.errors_form(errors, "name") == form


def test_an_invalid_bodys_errors_are_served_in_the_learned_form_and_the_problem_in_the_documents_words(apps):
    errors = {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}}
    properties = {"type": {"type": "string"}, "title": {"type": "string"}, "status": {"type": "integer"},
                  "detail": {"type": "string"}, "errors": errors}
    app = apps(PROFILE=profile_with(
        invalidBody={"status": 400, "errors": {"form": "object", "keys": "path", "messages": "list"}},
        problems={"properties": properties}))
    refused = Partner(app).call("POST", "/partners/self/tokens", json={"name": 5, "scope": 7, "expiresIn": "x"})
    assert refused.status_code == 400 and set(refused.json["errors"]) == {"name", "scope", "expiresIn"}
    assert all(isinstance(v, list) and v for v in refused.json["errors"].values())
    assert document(app)["components"]["schemas"]["ProblemDetails"]["properties"] == properties


# -- what no run observes ----------------------------------------------------------------------------------------
def test_a_bound_the_deployments_document_leaves_out_is_left_out_of_the_profiled_document(apps):
    app = apps(PROFILE=profile_with(operations={"GetTransactions": {
        "method": "GET", "path": "/partner/v2/accounts/{id}/transactions", "bounds": {"pageSize": {"maximum": None}}}}))
    parameters = operation_object(document(app), "GetTransactions")["parameters"]
    size = next(p for p in parameters if p["name"] == "pageSize")
    assert "maximum" not in size["schema"] and size["schema"]["minimum"] == 1
