"""/openapi.json: OpenAPI 3.1, the spec's operation names, and never drifting from the routes."""

import re

import pytest
from jsonschema import Draft202012Validator

from ptas_sandbox.simulator import openapi
from ptas_sandbox.simulator.operations import REGISTRY

SPEC_OPERATIONS = {
    # spec §4.1
    "GetOwnPartnerTokens", "CreateOwnPartnerToken", "RevokePartnerOwnToken", "GetPartnerTokens",
    "CreatePartnerToken", "RevokePartnerToken",
    # spec §4.2 and §4.3
    "CreatePartner", "UpdatePartner", "GetPartner", "GetPartners", "CreateUser", "CreateUserToken", "GetUsers",
    "UpdateUser", "DeleteUser", "CreateOauthRedirectUrl", "CreateAccountOauthRedirectUrl", "CreateAccount",
    "UpdateAccount", "DeleteAccount", "GetAccounts", "GetAccount", "ValidateAccountCredentials",
    "GetAccountTypes", "GetAccountType", "TriggerAccountRefresh", "GetTransactions", "GetTransaction",
    "GetReport", "GetReports", "GetTransactionsDeprecated",
}
# Spec §4.2: every method and path of its table, served under the v2 prefix.
SPEC_PATHS = {
    ("POST", "/partners"), ("GET", "/partners/self"), ("PUT", "/partners/self"), ("GET", "/partners/{id}"),
    ("PUT", "/partners/{id}"), ("POST", "/users"), ("GET", "/users/{id}"), ("POST", "/users/{id}/tokens"),
    ("POST", "/users/self/tokens"), ("POST", "/accountui"), ("GET", "/accountui/{id}"), ("POST", "/userui"),
    ("GET", "/userui/{id}"), ("GET", "/dataimports"), ("GET", "/dataimports/{id}"), ("POST", "/webhooks"),
    ("GET", "/webhooks"), ("GET", "/webhooks/{id}"), ("PUT", "/webhooks/{id}"), ("PATCH", "/webhooks/{id}"),
    ("DELETE", "/webhooks/{id}"), ("POST", "/oauth"),
    *(("POST", f"/testevents/{kind}") for kind in ("accounttypeupdated", "accountcreated", "accountupdated",
                                                   "accountdeleted", "transactionsimported")),
}


@pytest.fixture
def doc(api):
    return api.get("/openapi.json").json


def routed(app):
    """(method, OpenAPI path) of every route the app answers, but the document itself and removed paths."""
    pairs = set()
    for rule in app.url_map.iter_rules():
        if rule.endpoint in ("static", "openapi"):
            continue
        path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule)
        pairs |= {(m, path) for m in rule.methods - {"HEAD", "OPTIONS"}}
    return pairs


def documented(doc):
    return {(m.upper(), p) for p, item in doc["paths"].items() for m in item}


def test_document_is_openapi_3_1(doc):
    assert doc["openapi"].startswith("3.1") and doc["info"]["version"] == "2.12.1"
    scheme = doc["components"]["securitySchemes"]["bearerAuth"]
    assert {k: scheme[k] for k in ("type", "scheme", "bearerFormat")} == {"type": "http", "scheme": "bearer",
                                                                          "bearerFormat": "JWT"}


def test_every_route_is_documented_and_every_operation_routed(app, doc):
    # but the sandbox's own web pages (inspector, /docs and their assets): a browser opens them, no client calls
    hidden = [op for op in REGISTRY.values() if not openapi.documented(op)]
    pages = {(op.method, op.path) for op in hidden}
    assert {"SandboxInspectRequests", "SandboxDocs", "SandboxHome"} <= {op.id for op in hidden}
    assert {op.area for op in hidden} == {"inspector", "apidocs"} and "SandboxInspectorLink" not in {
        op.id for op in hidden}
    assert routed(app) - pages == documented(doc) and not documented(doc) & pages


def test_docs_read_like_the_api_partners_first_and_the_sandbox_last(doc):
    names = [tag["name"] for tag in doc["tags"]]
    assert names[0] == "Partners" and names[-1] == "Sandbox" and all(tag["description"] for tag in doc["tags"])
    used = {op["tags"][0] for item in doc["paths"].values() for op in item.values()}
    assert used <= set(names) and all(len(op["tags"]) == 1 for item in doc["paths"].values() for op in item.values())
    for item in doc["paths"].values():
        for op in item.values():
            control = REGISTRY[op["operationId"]].control
            assert (op["tags"] == ["Sandbox"]) == control, op["operationId"]
            assert op.get("description"), op["operationId"]
    assert doc["paths"]["/partner/v2/users"]["post"]["tags"] == ["Users"]
    assert doc["paths"]["/partner/v2/partners/{id}"]["delete"]["tags"] == ["Partners"]
    # Swagger UI's Authorize lists schemes by name (Flask sorts keys): the bearer token comes first.
    assert sorted(doc["components"]["securitySchemes"])[0] == "bearerAuth"
    assert doc["servers"][0]["url"].startswith("http") and doc["info"]["contact"]


def test_operation_ids_are_the_specs_names(doc):
    ids = {op["operationId"] for item in doc["paths"].values() for op in item.values()}
    assert SPEC_OPERATIONS <= ids
    assert len(ids) == sum(len(item) for item in doc["paths"].values())


def test_every_path_of_the_specs_table_is_served(doc):
    assert {(m, "/partner/v2" + p) for m, p in SPEC_PATHS} <= documented(doc)


def test_token_endpoints_live_at_the_specs_paths(doc):
    own = doc["paths"]["/partner/v2/partners/self/tokens"]
    assert own["get"]["operationId"] == "GetOwnPartnerTokens"
    assert own["post"]["operationId"] == "CreateOwnPartnerToken"
    assert doc["paths"]["/partner/v2/partners/self/tokens/{tokenId}"]["delete"]["operationId"] == \
        "RevokePartnerOwnToken"


def test_every_request_body_has_an_example_that_fits_its_schema(doc):
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if "requestBody" not in op:
                continue
            media = next(iter(op["requestBody"]["content"].values()))
            assert "example" in media, f"{method} {path} has no example"
            if "schema" in media and media["schema"].get("type") == "object":
                Draft202012Validator(media["schema"]).validate(media["example"])


def test_every_response_has_a_schema_or_no_body(doc):
    for item in doc["paths"].values():
        for op in item.values():
            for status, response in op["responses"].items():
                for media in response.get("content", {}).values():
                    assert "schema" in media, (op["operationId"], status)
            errors = {s for s in op["responses"] if s.startswith("4")}
            assert "400" in errors and "429" in errors, op["operationId"]


def test_examples_work_against_a_fresh_world(api, world):
    """Each example of an operation without path parameters does what it says, as it stands."""
    _, as_user = world.user(scope="account:all transaction:all user.token:all")
    for op in REGISTRY.values():
        if op.example is None or "{" in op.path or op.consumes != "application/json":
            continue
        path = op.path if op.control else "/partner/v2" + op.path
        # Operations a user may call run as the user: their examples need no userId of a user not yet made.
        token = as_user.token if isinstance(op.tokens, tuple) and "user" in op.tokens else world.token
        response = world.api.client.open(path, method=op.method, json=op.example,
                                         headers={"Authorization": f"Bearer {token}"})
        assert response.status_code < 300, (op.id, response.get_data(as_text=True))


def test_every_operation_states_the_scopes_it_requires(doc):
    """Issue 9 item 6: each operation names the scopes (any one of them) per token kind in `x-required-scopes`,
    and its description says it in words; the scopes are the spec §5 table's and match what the simulator
    enforces. The bearer scheme is HTTP, which declares no scopes, so the security requirement names none."""
    from ptas_sandbox.simulator.scopes import TABLE
    for path, item in doc["paths"].items():
        for method, spec in item.items():
            op = REGISTRY[spec["operationId"]]
            if op.control or spec.get("security") == []:
                continue
            assert spec["security"] == [{"bearerAuth": []}], path
            named = [scope for needed in spec["x-required-scopes"].values() for scope in needed]
            assert set(named) <= set(TABLE), (path, named)
            enforced = {s for kind in op.tokens for s in op.scopes_for(kind)}
            assert enforced == set(named), (path, enforced, named)
            assert "Required scopes:" in spec["description"] or "Needs a" in spec["description"], path
    tokens = doc["paths"]["/partner/v2/partners/self/tokens"]["get"]
    assert tokens["x-required-scopes"] == {"partner": ["partner:read"]} and "partner:read" in tokens["description"]


def test_not_blank_means_the_same_to_the_schemas_dialect_and_to_the_validator():
    """`\\S` differs between ECMA-262 and Python's re (U+001C..U+001F, U+0085, U+FEFF): a fuzzer generating by
    one and a validator checking by the other disagreed on a name of one U+001D."""
    import re

    from ptas_sandbox.simulator.operations import NOT_BLANK
    ecma_space = "\t\n\v\f\r \xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
    python_space = "".join(chr(c) for c in range(0x3001) if chr(c).isspace())
    for char in ecma_space + python_space:
        assert not re.search(NOT_BLANK, char), hex(ord(char))
    for char in "a-\u00e9\u4e2d\x00":
        assert re.search(NOT_BLANK, char), hex(ord(char))
