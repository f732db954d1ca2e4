"""The inspector web app: who may see it (token, link, admin key), what each tab shows, and its buttons."""

import re
from urllib.parse import urlsplit

import pytest

from ptas_sandbox.simulator import create_app
from ptas_sandbox.simulator.tools.inspector import models as access
from tests.support.client import Api
from tests.support.worlds import new_world

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def header(world):
    return {"Authorization": f"Bearer {world.token}"}


def page(client, path, world=None, **kw):
    headers = {**(header(world) if world else {}), **kw.pop("headers", {})}
    response = client.get(path, headers=headers, **kw)
    return response, response.get_data(as_text=True)


def sign_in(client, world):
    """Follow a fresh inspector link as a browser would; the session cookie stays in the client."""
    minted = client.post("/_sandbox/inspect/links", headers=header(world))
    assert minted.status_code == 201, minted.json
    target = urlsplit(minted.json["url"])
    followed = client.get(f"{target.path}?{target.query}")
    assert followed.status_code == 303 and followed.headers["Location"].endswith("/_sandbox/inspect/requests")
    return target


def csrf_of(html):
    return re.search(r'name="csrf" value="([0-9a-f]+)"', html).group(1)


def test_without_credentials_it_explains_how_to_sign_in(client):
    response, html = page(client, "/_sandbox/inspect")
    assert response.status_code == 401 and "ptas inspect" in html and response.mimetype == "text/html"


def test_a_bearer_token_in_the_address_is_refused(client, world):
    response, html = page(client, f"/_sandbox/inspect/requests?token={world.token}")
    assert response.status_code == 401 and "not accepted" in html and world.body["world"]["id"] not in html


def test_a_token_in_the_header_opens_its_world(client, world):
    response = client.get("/_sandbox/inspect", headers=header(world))
    assert response.status_code == 303 and response.headers["Location"] == "/_sandbox/inspect/requests"
    response, html = page(client, "/_sandbox/inspect/requests", world)
    assert response.status_code == 200 and world.body["world"]["id"] in html and "SandboxCreatePartner" in html


def test_a_user_token_or_a_bad_token_opens_nothing(client, world):
    user, _ = world.user(name="Jane")
    response, _ = page(client, "/_sandbox/inspect/requests",
                       headers={"Authorization": f"Bearer {user['token']['accessToken']}"})
    assert response.status_code == 401
    response, html = page(client, "/_sandbox/inspect/tokens", headers={"Authorization": "Bearer <b>x</b>"})
    assert response.status_code == 401 and "<b>x" not in html


def test_one_world_never_shows_another(client, world, other_world):
    world.api.post("/users", json={"name": "Only-in-Acme"})
    _, html = page(client, "/_sandbox/inspect/requests", other_world)
    assert "Only-in-Acme" not in html and world.body["world"]["id"] not in html
    _, html = page(client, "/_sandbox/inspect/tokens", other_world)
    assert world.partner["id"][:8] not in html


def test_a_link_opens_a_session_once(client, world):
    target = sign_in(client, world)
    response, html = page(client, "/_sandbox/inspect/requests")
    assert response.status_code == 200 and world.body["world"]["id"] in html
    cookie = response.request.headers.get("Cookie") or ""
    assert "ptas_inspector=" in cookie and world.token not in cookie
    again = client.get(f"{target.path}?{target.query}")
    assert again.status_code == 401


def test_the_session_cookie_is_httponly_and_scoped(client, world):
    minted = client.post("/_sandbox/inspect/links", headers=header(world)).json
    target = urlsplit(minted["url"])
    followed = client.get(f"{target.path}?{target.query}")
    cookie = followed.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/_sandbox/inspect" in cookie


def test_a_link_expires_within_minutes(client, world, system_time):
    target = urlsplit(client.post("/_sandbox/inspect/links", headers=header(world)).json["url"])
    system_time.tick(301)
    assert client.get(f"{target.path}?{target.query}").status_code == 401


def test_revoking_the_token_ends_its_session(client, world):
    second = world.new_token("partner:all", expires_in=7200)
    minted = client.post("/_sandbox/inspect/links", headers={"Authorization": f"Bearer {second}"}).json
    target = urlsplit(minted["url"])
    client.get(f"{target.path}?{target.query}")
    assert client.get("/_sandbox/inspect/requests").status_code == 200
    token_id = world.api.get("/partners/self/tokens").json
    listed = token_id if isinstance(token_id, list) else token_id.get("items", token_id.get("tokens", []))
    token_id = [t for t in listed if t.get("expiresIn") == 7200][0]["id"]
    assert world.api.delete(f"/partners/self/tokens/{token_id}").status_code in (200, 204)
    assert client.get("/_sandbox/inspect/requests").status_code == 401


def test_a_forged_cookie_opens_nothing(client, world):
    sign_in(client, world)
    client.set_cookie("ptas_inspector", "eyJ3IjogbnVsbH0.deadbeef", path="/_sandbox/inspect")
    assert client.get("/_sandbox/inspect/requests").status_code == 401


@pytest.mark.parametrize("csrf", ["é", "€" * 32, "0" * 31 + "é"])
def test_a_csrf_token_of_any_characters_is_refused_as_a_wrong_one(client, world, csrf):
    sign_in(client, world)
    before = world.api.get("/_sandbox/clock").json["now"]
    for action, data in (("flush", {}), ("clock", {"advance": "1h"})):
        refused = client.post(f"/_sandbox/inspect/actions/{action}", data={**data, "csrf": csrf})
        assert refused.status_code == 403 and refused.mimetype == "text/html", action
    assert world.api.get("/_sandbox/clock").json["now"][:13] == before[:13]


@pytest.mark.parametrize("given", ["é", "k" * 31 + "é", "\ud800"])
def test_a_cookie_or_admin_key_of_any_characters_opens_nothing(given):
    """Compared in constant time as text of any characters, never a TypeError (a 500)."""
    assert access.read_session("secret", 0, f"eyJ3IjogbnVsbH0.{given}") is None
    assert access.admin_key_ok({"ADMIN_KEY": "k" * 32}, given) is False


@pytest.fixture
def admin_app(config):
    app = create_app({**config, "ADMIN_KEY": "k" * 32, "OPEN": True})   # worlds made without the key
    yield app
    app.extensions["ptas"].close()


def test_every_world_needs_the_admin_key(admin_app):
    client = admin_app.test_client()
    acme = new_world(Api(client), name="Acme")
    assert client.get("/_sandbox/inspect", headers={"X-Sandbox-Admin-Key": "wrong"}).status_code == 401
    response, html = page(client, "/_sandbox/inspect", headers={"X-Sandbox-Admin-Key": "k" * 32})
    assert response.status_code == 200 and acme.body["world"]["id"] in html
    world_id = acme.body["world"]["id"]
    response, html = page(client, f"/_sandbox/inspect/requests?world={world_id}",
                          headers={"X-Sandbox-Admin-Key": "k" * 32})
    assert response.status_code == 200 and "SandboxCreatePartner" in html


def test_an_admin_link_shows_every_world(admin_app):
    client = admin_app.test_client()
    acme = new_world(Api(client), name="Acme")
    minted = client.post("/_sandbox/inspect/links", headers={"X-Sandbox-Admin-Key": "k" * 32})
    target = urlsplit(minted.json["url"])
    assert client.get(f"{target.path}?{target.query}").status_code == 303
    response, html = page(client, "/_sandbox/inspect")
    assert response.status_code == 200 and acme.body["world"]["id"] in html
    assert client.post("/_sandbox/inspect/links").status_code == 401


def test_requests_tab_filters_and_shows_one_entry_pretty(client, world):
    world.api.post("/users", json={"name": "Jane"})
    world.api.get("/users/nobody")
    _, html = page(client, "/_sandbox/inspect/requests?status=4xx", world)
    assert "GetUser" in html and "CreateUser</a>" not in html
    _, html = page(client, "/_sandbox/inspect/requests?operationId=CreateUser", world)
    entry = re.search(r'href="/_sandbox/inspect/requests\?entry=(\d+)"', html).group(1)
    _, detail = page(client, f"/_sandbox/inspect/requests?entry={entry}", world)
    assert '{\n  &#34;name&#34;: &#34;Jane&#34;\n}' in detail and "/_sandbox/inspect/tokens#t-" in detail
    _, bad = page(client, "/_sandbox/inspect/requests?status=teapot", world)
    assert "not teapot" in bad or "teapot" in bad


def test_webhooks_tab_shows_subscriptions_deliveries_attempts_and_captures(client, world):
    world.api.post("/webhooks", json={"callbackUrl": "http://localhost/_sandbox/echo/insp?status=503",
                                      "events": ["AccountDeleted"], "name": HOSTILE})
    world.api.post("/testevents/accountdeleted")
    world.api.post("/_sandbox/webhooks/flush")
    response, html = page(client, "/_sandbox/inspect/webhooks", world)
    assert "AccountDeleted (test)" in html and "HTTP 503" in html and "bin <code>insp</code>" in html
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    assert "whsec_" not in html or "…" in html
    assert "script-src 'self'" in response.headers["Content-Security-Policy"]
    assert "unsafe-inline" not in response.headers["Content-Security-Policy"]
    assert re.findall(r"<script(?![^>]*\bsrc=)", html) == []


def test_accounts_tab_links_users_accounts_and_imports(client, world):
    user, user_api = world.user(name="Jane")
    account = user_api.post("/accounts", json={"accountTypeId": "dummy",
                                               "credentials": {"username": "jane", "password": "pw"}}).json
    world.api.advance(3600)
    _, html = page(client, "/_sandbox/inspect/accounts", world)
    assert account["id"][:8] in html and "Jane" in html and f"accountId={account['id']}" in html
    _, only = page(client, f"/_sandbox/inspect/accounts?accountId={account['id']}", world)
    assert "Imports of account" in only


def test_tokens_tab_never_shows_a_token_string(client, world):
    user, _ = world.user(name="Jane")
    response, html = page(client, "/_sandbox/inspect/tokens", world)
    assert world.token not in html and user["token"]["accessToken"] not in html
    assert "this session" in html and html.count('<tr id="t-') == 2


def test_clock_buttons_move_the_world_clock_with_a_csrf_token(client, world):
    sign_in(client, world)
    _, html = page(client, "/_sandbox/inspect/clock")
    before = world.api.get("/_sandbox/clock").json["now"]
    refused = client.post("/_sandbox/inspect/actions/clock", data={"advance": "1h"})
    assert refused.status_code == 403 and world.api.get("/_sandbox/clock").json["now"][:13] == before[:13]
    done = client.post("/_sandbox/inspect/actions/clock", data={"advance": "1h", "csrf": csrf_of(html),
                                                               "next": "/_sandbox/inspect/clock"})
    assert done.status_code == 303 and done.headers["Location"].startswith("/_sandbox/inspect/clock?notice=")
    assert world.api.get("/_sandbox/clock").json["now"][11:13] != before[11:13]
    client.post("/_sandbox/inspect/actions/clock", data={"freeze": "true", "csrf": csrf_of(html)})
    assert world.api.get("/_sandbox/clock").json["frozen"] is True
    backwards = client.post("/_sandbox/inspect/actions/clock", data={"set": "2000-01-01T00:00:00Z",
                                                                    "csrf": csrf_of(html)})
    assert "Not+done" in backwards.headers["Location"]


def test_fire_a_test_event_and_flush_from_the_page(client, world):
    world.api.post("/webhooks", json={"callbackUrl": "http://localhost/_sandbox/echo/btn",
                                      "events": ["AccountCreated"]})
    done = client.post("/_sandbox/inspect/actions/test-event", headers=header(world),
                       data={"kind": "AccountCreated"})
    assert done.status_code == 303
    client.post("/_sandbox/inspect/actions/flush", headers=header(world))
    assert len(world.api.get("/_sandbox/echo/btn").json["captures"]) == 1
    unknown = client.post("/_sandbox/inspect/actions/test-event", headers=header(world), data={"kind": "Nope"})
    assert "Not+done" in unknown.headers["Location"]
    assert client.post("/_sandbox/inspect/actions/explode", headers=header(world)).status_code == 404


def test_the_redirect_after_an_action_stays_in_the_inspector(client, world):
    for target in ("https://evil.example/", "//evil.example/x", "/partner/v2/users"):
        done = client.post("/_sandbox/inspect/actions/flush", headers=header(world), data={"next": target})
        assert done.headers["Location"].startswith("/_sandbox/inspect/requests?")


def test_assets_ship_in_the_package(client):
    css = client.get("/_sandbox/inspect/assets/inspector.css")
    js = client.get("/_sandbox/inspect/assets/inspector.js")
    assert css.status_code == 200 and css.mimetype == "text/css" and b"@media" in css.data
    assert js.status_code == 200 and b"fetch(" in js.data
    assert client.get("/_sandbox/inspect/assets/..%2Fhttp.py").status_code == 404


def test_looking_is_not_journaled(client, world):
    for tab in ("requests", "webhooks", "accounts", "tokens", "clock"):
        assert page(client, f"/_sandbox/inspect/{tab}", world)[0].status_code == 200
    assert [e["operationId"] for e in world.api.get("/_sandbox/requests").json["requests"]] == [
        "SandboxCreatePartner"]


def test_odd_addresses_are_shown_as_nothing_found(client, world):
    for query in ("entry=99999999999999999999999", "before=99999999999999999999999", "entry=x", "status=4xx"):
        assert page(client, f"/_sandbox/inspect/requests?{query}", world)[0].status_code == 200


@pytest.mark.parametrize("typed", ["soon", "1x", "-1h"])
def test_a_clock_value_it_cannot_use_is_explained_in_words(client, world, typed, capsys):
    # the words `ptas clock advance` uses for the same value
    from ptas_sandbox.cli import main
    assert main(["clock", "advance", typed, "--url", "http://127.0.0.1:9", "--token", world.token]) == 2
    said = capsys.readouterr().err.strip().removeprefix("ptas clock: ")
    assert "not a duration: write 90, 90s, 15m, 1h, 2d, 1w or 1h30m" in said or "never runs backwards" in said
    sign_in(client, world)
    _, html = page(client, "/_sandbox/inspect/clock")
    before = world.api.get("/_sandbox/clock").json["now"]
    done = client.post("/_sandbox/inspect/actions/clock", data={"advance": typed, "csrf": csrf_of(html),
                                                               "next": "/_sandbox/inspect/clock"})
    _, shown = page(client, done.headers["Location"])
    assert said.replace("'", "&#39;") in shown and "convert" not in shown
    assert world.api.get("/_sandbox/clock").json["now"][:16] == before[:16]


def test_the_report_counts_in_words(client, world):
    sign_in(client, world)
    response, html = page(client, "/_sandbox/inspect/report")
    assert response.status_code == 200
    assert re.search(r"\b0 errors\b", html) and not re.search(r"\b0 error\b", html)


def test_the_world_key_opens_a_session_that_outlives_every_partner_token(client, world):
    key = world.body["worldKey"]
    minted = client.post("/_sandbox/inspect/links", headers={"Authorization": f"Bearer {key}"}).json
    target = urlsplit(minted["url"])
    client.get(f"{target.path}?{target.query}")
    [initial] = world.api.get("/partners/self/tokens").json["tokens"]
    backend = world.new_token("partner:all", expires_in=7200)
    assert world.api.as_(backend).delete(f"/partners/self/tokens/{initial['id']}").status_code == 200
    assert client.get("/_sandbox/inspect/requests").status_code == 200


def test_the_ptas_commands_own_calls_are_hidden_until_asked_for(client, world):
    client.get("/partner/v2/webhooks", headers={**header(world), "X-Sandbox-Tool": "ptas listen"})
    client.get("/partner/v2/partners/self", headers=header(world))
    _, html = page(client, "/_sandbox/inspect/requests", world)
    assert ">GetOwnPartner</a>" in html and ">GetWebhooks</a>" not in html
    _, html = page(client, "/_sandbox/inspect/requests?tools=1", world)
    assert ">GetOwnPartner</a>" in html and ">GetWebhooks</a>" in html and 'name="tools" value="1" checked' in html
