"""The OAuth2 flow of spec §1, run as a script following only the spec would: create the URL, open it,
approve, read the return step's query and headers, then redeem the authReference.

Then the same flow as a script that knows only the spec: CreateOauthRedirectUrl, open the provider page,
approve (the form is read from the page, not hard-coded), read the return step's query and headers, then
CreateAccount with the authReference; and the reconnection path before UpdateAccount."""

from urllib.parse import parse_qs, urlsplit

import pytest

from ptas_sandbox.simulator.oauth import models
from tests.support.oauth import authorized, follow_provider
from tests.support.pages import form_token, post_form
from tests.support.problems import assert_problem


def start(world, user_id, **body):
    response = world.api.post("/oauth", json={"accountTypeId": "dummy-auth", "userId": user_id, **body})
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.json


def consent_path(flow):
    return urlsplit(flow["redirectUrl"]).path


def answer(client, flow, **form):
    return post_form(client, consent_path(flow), data=form)


@pytest.fixture
def user(world):
    return world.user(name="Jane")[0]


def test_create_oauth_redirect_url_points_at_the_consent_page(client, world, user):
    flow = start(world, user["id"])
    assert flow["redirectUrl"].startswith("http://localhost/partner/v2/oauth/consent/")
    assert flow["authReference"] not in flow["redirectUrl"]
    page = client.get(consent_path(flow))
    assert page.status_code == 200 and page.mimetype == "text/html"
    assert "Dummy provider with OAuth2" in page.get_data(as_text=True) and "Acme" in page.get_data(as_text=True)


def test_approve_redirects_to_the_per_request_url_with_query_and_headers(client, world, user):
    flow = start(world, user["id"], redirectUrl="https://app.example/done?keep=1")
    response = answer(client, flow, decision="approve")
    assert response.status_code == 302
    location = urlsplit(response.headers["Location"])
    assert (location.scheme, location.netloc, location.path) == ("https", "app.example", "/done")
    query = {k: v[0] for k, v in parse_qs(location.query).items()}
    assert query["keep"] == "1" and query["reference"] == flow["authReference"] and query["status"] == "Success"
    assert query["message"]
    assert response.headers["X-Service-AuthReference"] == flow["authReference"]
    assert response.headers["X-Service-AuthStatus"] == "Success"
    assert response.headers["X-Service-AuthMessage"] == query["message"]


def test_without_a_per_request_url_the_partners_first_redirect_url_applies(client, world, user):
    world.api.put("/partners/self", json={"redirectUrls": ["https://first.example/cb", "https://second.example/cb"]})
    response = answer(client, start(world, user["id"]), decision="deny")
    assert response.headers["Location"].startswith("https://first.example/cb?")
    assert response.headers["X-Service-AuthStatus"] == "OtherError"


@pytest.mark.parametrize("form, status", [({"decision": "approve"}, "Success"),
                                          ({"decision": "deny"}, "OtherError"),
                                          ({"decision": "outcome", "outcome": "notfound"}, "NotFoundError"),
                                          ({"decision": "outcome", "outcome": "error"}, "OtherError")])
def test_without_any_redirect_url_the_service_page_shows_the_result(client, world, user, form, status):
    flow = start(world, user["id"])
    response = answer(client, flow, **form)
    assert response.status_code == 200 and response.mimetype == "text/html"
    assert response.headers["X-Service-AuthStatus"] == status
    assert response.headers["X-Service-AuthReference"] == flow["authReference"]
    assert response.headers["X-Service-AuthMessage"]
    assert f'data-status="{status}"' in response.get_data(as_text=True)


def test_a_chosen_message_travels_escaped_on_the_page_and_encoded_in_the_header(client, world, user):
    flow = start(world, user["id"])
    response = answer(client, flow, decision="outcome", outcome="error", message="<script>alert(1)</script> café")
    html = response.get_data(as_text=True)
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)&lt;/script&gt; café" in html
    assert response.headers["X-Service-AuthMessage"] == "<script>alert(1)</script> caf%C3%A9"


def test_partner_and_provider_names_are_escaped_on_the_consent_page(client, world, user):
    world.api.put("/partners/self", json={"name": "<script>alert('x')</script>"})
    html = client.get(consent_path(start(world, user["id"]))).get_data(as_text=True)
    assert "<script>alert" not in html and "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in html


@pytest.mark.parametrize("form", [{}, {"decision": "steal"}, {"decision": "outcome"},
                                  {"decision": "outcome", "outcome": "approve-all"}])
def test_consent_posted_with_missing_or_forged_fields_is_a_400_page(client, world, user, form):
    flow = start(world, user["id"])
    response = answer(client, flow, **form)
    assert response.status_code == 400 and response.mimetype == "text/html"
    assert "X-Service-AuthStatus" not in response.headers
    assert answer(client, flow, decision="approve").status_code == 200     # the reference is still open


def test_consent_answered_twice_is_a_409_page(client, world, user):
    flow = start(world, user["id"])
    answer(client, flow, decision="approve")
    assert answer(client, flow, decision="deny").status_code == 409
    assert client.get(consent_path(flow)).status_code == 409


def test_unknown_consent_key_is_a_404_page(client):
    response = client.get("/partner/v2/oauth/consent/not-a-key")
    assert response.status_code == 404 and response.mimetype == "text/html"
    assert post_form(client, "/partner/v2/oauth/consent/not-a-key", data={"decision": "approve"}).status_code == 404


def test_consent_after_expiry_is_refused(api, client, world, user):
    flow = start(world, user["id"])
    form_token(client, consent_path(flow))              # the page was open before the reference expired
    world.api.advance(models.REFERENCE_LIFETIME_US // 1_000_000)
    assert client.get(consent_path(flow)).status_code == 400
    assert answer(client, flow, decision="approve").status_code == 400


def test_consent_for_a_deleted_user_is_refused_as_expired(client, world, user):
    flow = start(world, user["id"])
    form_token(client, consent_path(flow))              # the page was open before the user was deleted
    assert world.api.delete(f"/users/{user['id']}").status_code == 204
    shown = client.get(consent_path(flow))
    assert shown.status_code == 400 and "expired" in shown.get_data(as_text=True)
    answered = answer(client, flow, decision="approve")
    assert answered.status_code == 400 and "X-Service-AuthStatus" not in answered.headers


@pytest.mark.parametrize("url", ["/relative/path", "ftp://files.example/x", "javascript:alert(1)", "https://",
                                 "not a url", "https://exa mple.com/"])
def test_redirect_url_that_is_not_absolute_http_is_refused(world, user, url):
    response = world.api.post("/oauth", json={"accountTypeId": "dummy-auth", "userId": user["id"], "redirectUrl": url})
    assert_problem(response, 400)


def test_partner_token_needs_a_user_of_its_own(world, other_world, user):
    assert_problem(world.api.post("/oauth", json={"accountTypeId": "dummy-auth"}), 404)
    stranger = other_world.user()[0]
    assert_problem(world.api.post("/oauth", json={"accountTypeId": "dummy-auth", "userId": stranger["id"]}), 404)


def test_user_token_starts_the_flow_for_itself(world):
    user, as_user = world.user()
    response = as_user.post("/oauth", json={"accountTypeId": "dummy-auth"})
    assert response.status_code == 201
    other = world.user()[0]
    assert_problem(as_user.post("/oauth", json={"accountTypeId": "dummy-auth", "userId": other["id"]}), 404)


def test_account_type_without_oauth_is_refused(world, user):
    assert_problem(world.api.post("/oauth", json={"accountTypeId": "dummy", "userId": user["id"]}), 400)
    assert_problem(world.api.post("/oauth", json={"accountTypeId": "nope", "userId": user["id"]}), 404)


def test_creating_a_redirect_url_needs_account_create(world, user):
    token = world.new_token("account:read")
    assert_problem(world.api.as_(token).post("/oauth", json={"accountTypeId": "dummy-auth", "userId": user["id"]}),
                   403)


def test_pages_forbid_scripts_and_leak_no_referrer(client, world, user):
    page = client.get(consent_path(start(world, user["id"])))
    assert "default-src 'none'" in page.headers["Content-Security-Policy"]
    assert "script-src" not in page.headers["Content-Security-Policy"]
    assert page.headers["Referrer-Policy"] == "no-referrer" and page.headers["Cache-Control"] == "no-store"


def test_pages_are_in_the_openapi_document_as_html(api):
    doc = api.get("/openapi.json").json
    consent = doc["paths"]["/partner/v2/oauth/consent/{key}"]
    assert consent["get"]["operationId"] == "GetOauthConsentPage" and consent["get"]["security"] == []
    assert "text/html" in consent["get"]["responses"]["400"]["content"]
    assert "302" in consent["post"]["responses"]


# -- the flow as a script that knows only the spec ------------------------------------------------------------
@pytest.fixture
def jane(world):
    return world.user(name="Jane")[0]


def test_a_script_creates_an_oauth_account_following_the_spec(client, world, jane):
    reference = authorized(client, world.api, accountTypeId="dummy-auth", userId=jane["id"],
                           redirectUrl="https://app.example/oauth-done")
    created = world.api.post("/accounts", json={"accountTypeId": "dummy-auth", "userId": jane["id"],
                                                "authReference": reference})
    assert created.status_code == 201, created.json
    assert created.json["accountTypeId"] == "dummy-auth" and created.json["userId"] == jane["id"]


def test_a_reference_used_twice_is_a_conflict(client, world, jane):
    reference = authorized(client, world.api, accountTypeId="dummy-auth", userId=jane["id"])
    body = {"accountTypeId": "dummy-auth", "userId": jane["id"], "authReference": reference}
    account = world.api.post("/accounts", json=body).json
    world.api.delete(f"/accounts/{account['id']}")
    assert_problem(world.api.post("/accounts", json=body), 409)


def test_unknown_and_expired_references_are_refused_by_create_account(client, world, jane):
    body = {"accountTypeId": "dummy-auth", "userId": jane["id"]}
    assert_problem(world.api.post("/accounts", json={**body, "authReference": "no-such-reference"}), 400)
    reference = authorized(client, world.api, **body)
    world.api.advance(models.REFERENCE_LIFETIME_US // 1_000_000)
    assert_problem(world.api.post("/accounts", json={**body, "authReference": reference}), 400)
    assert world.api.get("/accounts", query_string={"userId": jane["id"]}).json["accounts"] == []


def test_reconnecting_an_oauth_account_goes_through_create_account_oauth_redirect_url(client, world, jane):
    first = authorized(client, world.api, accountTypeId="dummy-auth", userId=jane["id"])
    account = world.api.post("/accounts", json={"accountTypeId": "dummy-auth", "userId": jane["id"],
                                                "authReference": first}).json
    other = authorized(client, world.api, accountTypeId="dummy-auth", userId=jane["id"])
    assert_problem(world.api.put(f"/accounts/{account['id']}", json={"authReference": other}), 400)
    again = authorized(client, world.api, f"/accounts/{account['id']}/oauth")
    updated = world.api.put(f"/accounts/{account['id']}", json={"authReference": again})
    assert updated.status_code == 200, updated.json


def test_create_account_oauth_redirect_url_is_for_own_oauth_accounts(world, other_world, jane):
    dummy = world.api.post("/accounts", json={"accountTypeId": "dummy", "userId": jane["id"],
                                              "credentials": {"username": "jane", "password": "pw"}}).json
    assert_problem(world.api.post(f"/accounts/{dummy['id']}/oauth", json={}), 400)
    assert_problem(other_world.api.post(f"/accounts/{dummy['id']}/oauth", json={}), 404)


def test_approving_during_a_provider_outage_ends_in_other_error(client, world, jane):
    assert world.api.post("/_sandbox/accounttypes/dummy-auth", json={"state": "Outage"}).status_code == 200
    flow = world.api.post("/oauth", json={"accountTypeId": "dummy-auth", "userId": jane["id"]}).json
    step = follow_provider(client, flow["redirectUrl"])
    assert step.headers["X-Service-AuthStatus"] == "OtherError"
    assert "outage" in step.headers["X-Service-AuthMessage"]
