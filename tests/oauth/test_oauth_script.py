"""The OAuth2 flow end to end as a script that knows only the spec: CreateOauthRedirectUrl, open the provider
page, approve (the form is read from the page, not hard-coded), read the return step's query and headers,
then CreateAccount with the authReference; and the reconnection path before UpdateAccount."""

from html.parser import HTMLParser
from urllib.parse import parse_qs, urljoin, urlsplit

import pytest

from ptas_sandbox.simulator.oauth import models
from tests.conftest import assert_problem


class Form(HTMLParser):
    """The first form of a page: its action and its submit buttons (name, value, label)."""

    def __init__(self):
        super().__init__()
        self.action, self.buttons, self.label = None, [], None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form" and self.action is None:
            self.action = attrs.get("action")
        if tag == "button" and attrs.get("type", "submit") == "submit":
            self.buttons.append([attrs.get("name"), attrs.get("value"), ""])

    def handle_data(self, data):
        if self.buttons and self.lasttag == "button":
            self.buttons[-1][2] += data.strip()


def follow_provider(client, url, label="Approve"):
    """What a person does in the browser, scripted: open the page, press the button with this label."""
    page = client.get(urlsplit(url).path)
    assert page.status_code == 200
    form = Form()
    form.feed(page.get_data(as_text=True))
    name, value, _ = next(b for b in form.buttons if b[2] == label)
    return client.post(urljoin(url, form.action), data={name: value})


def authorized(client, api, path="/oauth", **body):
    flow = api.post(path, json=body)
    assert flow.status_code == 201, flow.get_data(as_text=True)
    step = follow_provider(client, flow.json["redirectUrl"])
    assert step.headers["X-Service-AuthReference"] == flow.json["authReference"]
    assert step.headers["X-Service-AuthStatus"] == "Success"
    if step.status_code == 302:           # a redirect URL applies: the same data in its query
        query = {k: v[0] for k, v in parse_qs(urlsplit(step.headers["Location"]).query).items()}
        assert (query["reference"], query["status"]) == (flow.json["authReference"], "Success")
    else:                                 # none applies: the plain service page
        assert step.status_code == 200 and step.mimetype == "text/html"
    return step.headers["X-Service-AuthReference"]


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
    world.api.advance(models.REFERENCE_LIFETIME // 1_000_000)
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
