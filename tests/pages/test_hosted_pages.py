"""The hosted pages (consent page, Account UI, User UI) in a shared sandbox (issue 11 item 7, issue 13 item 6):
framed only by the partner's listed origins, forms that only their own page can post, no fields the schema
forbids, a quoted fontFamily that applies, and words a person understands."""

import re
from urllib.parse import urlsplit

import pytest

from tests.support.pages import form_token, post_form
from tests.support.problems import assert_problem

API_WORDS = ("Conflict with the current state", "Bad request", "CreateOauthRedirectUrl", "authReference",
             "accountTypeId", "NotFoundError", "OtherError", "`")


@pytest.fixture
def user(world):
    return world.user(name="Jane")[0]


def consent(world, user, **body):
    flow = world.api.post("/oauth", json={"accountTypeId": "dummy-auth", "userId": user["id"], **body}).json
    return urlsplit(flow["redirectUrl"]).path


def userui(world):
    return urlsplit(world.api.post("/userui", json={}).json["url"]).path


def accountui(world, user, types=("dummy",)):
    return urlsplit(world.api.post("/accountui", json={"accountTypeIds": list(types), "userId": user["id"]})
                    .json["url"]).path


def pages(world, user):
    return {"consent": consent(world, user), "userui": userui(world), "accountui": accountui(world, user)}


def visible_text(html):
    """What a person reads: the page without its tags, hidden elements and style."""
    html = re.sub(r"<style>.*?</style>|<[^>]*\shidden[\s>][^<]*(<code[^>]*>[^<]*</code>[^<]*)*</p>", "", html,
                  flags=re.S)
    return re.sub(r"<[^>]+>", " ", html)


# --- framing ------------------------------------------------------------------------------------------------

def test_no_page_can_be_framed_by_default(client, world, user):
    for name, path in pages(world, user).items():
        response = client.get(path)
        assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"], name
        assert response.headers["X-Frame-Options"] == "DENY", name


def test_a_partner_lists_the_origins_that_may_frame_its_pages(client, world, user, other_world):
    origins = ["https://app.acme.example", "http://localhost:3000"]
    updated = world.api.put("/partners/self", json={"uiSettings": {"frameAncestors": origins}})
    assert updated.status_code == 200, updated.json
    assert updated.json["uiSettings"]["frameAncestors"] == origins
    for name, path in pages(world, user).items():
        response = client.get(path)
        assert "frame-ancestors https://app.acme.example http://localhost:3000" in \
            response.headers["Content-Security-Policy"], name
        assert "X-Frame-Options" not in response.headers, name
    other_user = other_world.user(name="Ann")[0]
    assert "frame-ancestors 'none'" in client.get(userui(other_world)).headers["Content-Security-Policy"], \
        "another partner's pages are not affected"
    assert "frame-ancestors 'none'" in client.get(accountui(other_world, other_user)) \
        .headers["Content-Security-Policy"]


@pytest.mark.parametrize("bad", [["https://app.example/path"], ["javascript:alert(1)"], ["*"],
                                 ["https://a.example; script-src *"], "https://app.example",
                                 ["https://x.example"] * 21 + ["https://y.example"]])
def test_frame_ancestors_are_origins_only(world, bad):
    assert_problem(world.api.put("/partners/self", json={"uiSettings": {"frameAncestors": bad}}), 400)


# --- forms ----------------------------------------------------------------------------------------------------

FORMS = {"consent": {"decision": "approve"}, "userui": {"name": "Jane"},
         "accountui": {"accountTypeId": "dummy", "username": "jane", "password": "pw"}}


@pytest.mark.parametrize("name", list(FORMS))
def test_every_form_carries_a_token_and_a_post_without_it_is_refused(client, world, user, name):
    path = pages(world, user)[name]
    html = client.get(path).get_data(as_text=True)
    forms = html.count("<form")
    assert forms and html.count('name="csrfToken"') == forms, "every form carries the token"
    refused = client.post(path, data=FORMS[name])
    assert refused.status_code == 403 and refused.mimetype == "text/html"
    assert "This form was not accepted" in refused.get_data(as_text=True)
    wrong = client.post(path, data={**FORMS[name], "csrfToken": "0" * 64})
    assert wrong.status_code == 403
    assert post_form(client, path, data=FORMS[name]).status_code in (200, 302), "the page's own post works"


@pytest.mark.parametrize("token", ["é", "€" * 64, "0" * 63 + "é"])
@pytest.mark.parametrize("name", [*FORMS, "accountui connect"])
def test_a_token_of_any_characters_is_refused_as_a_wrong_one(client, world, user, name, token):
    """A token is compared in constant time, and compare_digest refuses non-ASCII text: that was a 500."""
    path = pages(world, user)[name.split()[0]]
    data = {**FORMS[name.split()[0]], "csrfToken": token}
    if name == "accountui connect":
        path, data = path + "/connect", {"accountTypeId": "dummy", "csrfToken": token}
    form_token(client, path.removesuffix("/connect"))              # the browser has the page's cookie
    refused = client.post(path, data=data)
    assert refused.status_code == 403 and refused.mimetype == "text/html"
    assert "This form was not accepted" in refused.get_data(as_text=True)


@pytest.mark.parametrize("name", list(FORMS))
def test_a_post_from_another_site_is_refused_even_with_a_token(client, world, user, name):
    path = pages(world, user)[name]
    token = form_token(client, path)
    data = {**FORMS[name], "csrfToken": token}
    assert client.post(path, data=data, headers={"Origin": "https://evil.example"}).status_code == 403
    assert client.post(path, data=data, headers={"Sec-Fetch-Site": "cross-site"}).status_code == 403


def test_the_token_is_bound_to_the_browsers_cookie(app, world, user):
    path = userui(world)
    mine, theirs = app.test_client(), app.test_client()
    token = form_token(mine, path)
    form_token(theirs, path)                   # another browser, its own cookie
    assert theirs.post(path, data={"name": "Eve", "csrfToken": token}).status_code == 403
    cookie = mine.get_cookie("ptas_form")
    assert cookie.http_only and cookie.same_site == "Lax"


@pytest.mark.parametrize("field", ["userId", "accountId", "redirectUrl"])
def test_the_consent_form_refuses_fields_its_schema_forbids(client, world, user, field):
    path = consent(world, user)
    response = post_form(client, path, data={"decision": "approve", field: "x"})
    assert response.status_code == 400 and field in response.get_data(as_text=True)
    assert post_form(client, path, data={"decision": "approve"}).status_code == 200, "nothing was decided"


def test_the_account_ui_connect_step_refuses_fields_its_page_does_not_have(client, world, user):
    path = accountui(world, user, types=("dummy-auth",))
    response = post_form(client, path + "/connect", page=path, data={"accountTypeId": "dummy-auth", "userId": "x"})
    assert response.status_code == 400


def test_enter_in_the_message_field_cannot_approve(client, world, user):
    """A browser's Enter in a text field presses the first submit button of that field's form: the message field
    must sit in a form whose only button ends with the error (the browser test presses Enter for real)."""
    html = client.get(consent(world, user)).get_data(as_text=True)
    forms = re.findall(r"<form.*?</form>", html, flags=re.S)
    [with_message] = [f for f in forms if 'id="message"' in f]
    assert 'value="approve"' not in with_message
    first_button = re.search(r"<button[^>]*>", with_message).group(0)
    assert 'id="fail"' in first_button


# --- styling ---------------------------------------------------------------------------------------------------

def style_of(client, path):
    return re.search(r"<style>(.*?)</style>", client.get(path).get_data(as_text=True), flags=re.S).group(1)


@pytest.mark.parametrize("family", ['"Open Sans", sans-serif', "'Fira Sans', Arial, sans-serif", "Inter"])
def test_a_quoted_font_family_is_written_as_css(client, world, user, family):
    world.api.put("/partners/self", json={"uiSettings": {"styling": {"fontFamily": family}}})
    assert f"--font: {family};" in style_of(client, userui(world))


@pytest.mark.parametrize("family", ['"Open Sans"; } body { background: url(//evil.example/x) } :root { --x: 1',
                                    '"</style><script>alert(1)</script>"', '"Open Sans', "Arial\\3c script",
                                    'sans-serif\n}', '""'])
def test_a_font_family_that_could_escape_is_refused(client, world, user, family):
    assert world.api.put("/partners/self", json={"uiSettings": {"styling": {"fontFamily": family}}}).status_code == 400
    style = style_of(client, userui(world))
    assert "--font: system-ui, sans-serif;" in style and style.count("--font:") == 1
    assert "evil" not in style and "<" not in style


# --- words for people ------------------------------------------------------------------------------------------

def test_the_user_ui_page_names_the_partner_and_the_service(client, world):
    html = client.get(userui(world)).get_data(as_text=True)
    assert "Register with Acme" in html and "Payment Transactions Aggregation Service" in html


def test_the_account_ui_and_consent_pages_name_the_partner_and_the_service(client, world, user):
    for path in (accountui(world, user), accountui(world, user, ("dummy", "dummy-auth")), consent(world, user)):
        html = client.get(path).get_data(as_text=True)
        assert "Acme" in html and "Payment Transactions Aggregation Service" in html


def test_error_pages_speak_to_people(client, world, user):
    answered = consent(world, user)
    post_form(client, answered, data={"decision": "approve"})
    oauth_only = accountui(world, user, types=("dummy-auth",))
    shown = {
        "answered consent": client.get(answered),
        "unknown link": client.get("/partner/v2/oauth/consent/not-a-key"),
        "forged form": post_form(client, consent(world, user), data={"decision": "steal"}),
        "account without sign-in": post_form(client, oauth_only, data={"accountTypeId": "dummy-auth"}),
        "bad credentials": post_form(client, accountui(world, user), data={"accountTypeId": "dummy",
                                                                           "username": "jane"}),
        "no token": client.post(userui(world), data={"name": "Jane"}),
    }
    for what, response in shown.items():
        assert response.status_code in (400, 403, 404, 409), what
        text = visible_text(response.get_data(as_text=True))
        assert not [w for w in API_WORDS if w in text], (what, text)
    assert "Please sign in at Dummy provider with OAuth2 first" in shown["account without sign-in"].get_data(True)
