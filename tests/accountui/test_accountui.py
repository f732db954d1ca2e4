"""Account UI sessions (spec §4.2 note 4): the hosted page builds its form from accountFields and creates or
updates the account through the accounts rules; GET /accountui/{id} tells the result."""

import base64
import io
from urllib.parse import parse_qs, urlsplit

import pytest

from ptas_sandbox.simulator.accountui import models
from ptas_sandbox.simulator.oauth import models as oauth
from ptas_sandbox.simulator.pages.html import ENV
from tests.support.pages import form_token, post_form
from tests.support.problems import assert_problem


@pytest.fixture
def user(world):
    return world.user(name="Jane")[0]


def open_session(api, **body):
    response = api.post("/accountui", json=body)
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.json


def path(session):
    return urlsplit(session["url"]).path


def test_session_answers_account_type_ids_and_the_deprecated_single_id(world, user):
    session = open_session(world.api, accountTypeIds=["dummy", "dummy-auth"], userId=user["id"])
    assert session["status"] == "Pending" and session["accountId"] is None
    assert session["accountTypeIds"] == ["dummy", "dummy-auth"] and session["accountTypeId"] == "dummy"
    old = open_session(world.api, accountTypeId="dummy-report", userId=user["id"])
    assert old["accountTypeIds"] == ["dummy-report"] and old["accountTypeId"] == "dummy-report"
    read = world.api.get(f"/accountui/{old['id']}").json
    assert read["accountTypeIds"] == ["dummy-report"] and read["accountTypeId"] == "dummy-report"


def test_the_page_form_creates_a_dummy_account(client, world, user):
    session = open_session(world.api, accountTypeIds=["dummy"], userId=user["id"])
    html = client.get(path(session)).get_data(as_text=True)
    assert 'name="username"' in html and 'type="password"' in html
    done = post_form(client, path(session), data={"accountTypeId": "dummy", "username": "jane", "password": "pw",
                                            "action": "submit"})
    assert done.status_code == 200 and "Account connected" in done.get_data(as_text=True)
    read = world.api.get(f"/accountui/{session['id']}").json
    assert read["status"] == "Completed" and read["accountId"]
    account = world.api.get(f"/accounts/{read['accountId']}").json
    assert account["accountTypeId"] == "dummy"


def test_several_types_offer_a_choice_first(client, world, user):
    session = open_session(world.api, accountTypeIds=["dummy", "dummy-report"], userId=user["id"])
    html = client.get(path(session)).get_data(as_text=True)
    assert "?type=dummy-report" in html and 'name="username"' not in html
    form = client.get(path(session) + "?type=dummy-report").get_data(as_text=True)
    assert '<option value="csv"' in form and '<option value="xml"' in form


def test_the_page_connects_an_oauth_account_through_the_provider(client, world, user):
    session = open_session(world.api, accountTypeIds=["dummy-auth"], userId=user["id"])
    assert 'id="connect"' in client.get(path(session)).get_data(as_text=True)
    to_provider = post_form(client, path(session) + "/connect", page=path(session),
                            data={"accountTypeId": "dummy-auth"})
    assert to_provider.status_code == 302 and "/oauth/consent/" in to_provider.headers["Location"]
    back = post_form(client, urlsplit(to_provider.headers["Location"]).path, data={"decision": "approve"})
    assert back.status_code == 302 and back.headers["X-Service-AuthStatus"] == "Success"
    returned = urlsplit(back.headers["Location"])
    assert returned.path == path(session)
    query = {k: v[0] for k, v in parse_qs(returned.query).items()}
    html = client.get(returned.path + "?" + returned.query).get_data(as_text=True)
    assert 'id="auth-connected"' in html and f'value="{query["reference"]}"' in html
    done = post_form(client, path(session), data={"accountTypeId": "dummy-auth", "authReference": query["reference"],
                                            "shopName": "Jane's shop"})
    assert done.status_code == 200, done.get_data(as_text=True)
    read = world.api.get(f"/accountui/{session['id']}").json
    assert read["status"] == "Completed" and read["accountId"]


def test_a_failed_authorization_is_shown_and_can_be_retried(client, world, user):
    session = open_session(world.api, accountTypeIds=["dummy-auth"], userId=user["id"])
    consent = post_form(client, path(session) + "/connect", page=path(session),
                        data={"accountTypeId": "dummy-auth"}).headers["Location"]
    back = post_form(client, urlsplit(consent).path, data={"decision": "outcome", "outcome": "notfound",
                                                     "message": "<img src=x onerror=alert(1)>"})
    html = client.get(urlsplit(back.headers["Location"]).path + "?" + urlsplit(back.headers["Location"]).query)
    text = html.get_data(as_text=True)
    assert 'id="auth-error"' in text and "&lt;img src=x onerror=alert(1)&gt;" in text and "<img" not in text
    assert 'id="connect"' in text and 'name="authReference"' not in text


def test_a_forged_reference_in_the_return_query_is_not_taken(client, world, user):
    session = open_session(world.api, accountTypeIds=["dummy-auth"], userId=user["id"])
    html = client.get(path(session) + "?type=dummy-auth&reference=forged&status=Success").get_data(as_text=True)
    assert 'name="authReference"' not in html and 'id="connect"' in html


def test_submitting_without_authorization_shows_the_error_and_keeps_the_session(client, world, user):
    session = open_session(world.api, accountTypeIds=["dummy-auth"], userId=user["id"])
    response = post_form(client, path(session), data={"accountTypeId": "dummy-auth", "authReference": "made-up"})
    assert response.status_code == 400 and 'id="error"' in response.get_data(as_text=True)
    read = world.api.get(f"/accountui/{session['id']}").json
    assert read["status"] == "Pending" and read["error"]


@pytest.mark.parametrize("form", [{"accountTypeId": "dummy", "username": "jane", "password": "pw", "isAdmin": "1"},
                                  {"accountTypeId": "dummy-report", "username": "jane", "password": "pw"},
                                  {"username": "jane", "password": "pw"},
                                  {"accountTypeId": "dummy", "username": "jane", "password": "pw", "action": "x"}])
def test_forged_or_missing_fixed_fields_are_a_400_page(client, world, user, form):
    session = open_session(world.api, accountTypeIds=["dummy"], userId=user["id"])
    response = post_form(client, path(session), data=form)
    assert response.status_code == 400 and response.mimetype == "text/html"
    assert world.api.get(f"/accountui/{session['id']}").json["status"] == "Pending"


def test_missing_credentials_show_the_form_again_without_the_secret(client, world, user):
    session = open_session(world.api, accountTypeIds=["dummy"], userId=user["id"])
    response = post_form(client, path(session), data={"accountTypeId": "dummy", "username": "<b>jane</b>",
                                                "password": ""})
    html = response.get_data(as_text=True)
    assert response.status_code == 400 and 'id="error"' in html
    assert 'value="&lt;b&gt;jane&lt;/b&gt;"' in html
    assert world.api.get(f"/accountui/{session['id']}").json["status"] == "Pending"


def test_cancel_fails_the_session_and_redirects_with_the_result(client, world, user):
    session = open_session(world.api, accountTypeIds=["dummy"], userId=user["id"],
                           redirectUrl="https://app.example/back")
    response = post_form(client, path(session), data={"accountTypeId": "dummy", "action": "cancel"})
    assert response.status_code == 302
    query = parse_qs(urlsplit(response.headers["Location"]).query)
    assert query["status"] == ["Failed"] and query["sessionId"] == [session["id"]]
    assert world.api.get(f"/accountui/{session['id']}").json["status"] == "Failed"
    page = client.get(path(session))
    assert page.status_code == 409 and "This was cancelled" in page.get_data(as_text=True)


def test_an_update_session_updates_the_given_account(client, world, user):
    created = open_session(world.api, accountTypeIds=["dummy"], userId=user["id"])
    post_form(client, path(created), data={"accountTypeId": "dummy", "username": "jane", "password": "pw"})
    account_id = world.api.get(f"/accountui/{created['id']}").json["accountId"]
    update = open_session(world.api, accountId=account_id, userId=user["id"])
    assert update["accountTypeIds"] == ["dummy"] and update["mode"] == "Update"
    done = post_form(client, path(update), data={"accountTypeId": "dummy", "password": "new"})
    assert done.status_code == 200, done.get_data(as_text=True)
    read = world.api.get(f"/accountui/{update['id']}").json
    assert read["status"] == "Completed" and read["accountId"] == account_id


def test_session_expires_on_the_world_clock(client, world, user):
    session = open_session(world.api, accountTypeIds=["dummy"], userId=user["id"])
    world.api.advance(models.SESSION_LIFETIME_US // 1_000_000)
    assert world.api.get(f"/accountui/{session['id']}").json["status"] == "Expired"
    page = client.get(path(session)).get_data(as_text=True)
    assert client.get(path(session)).status_code == 409
    assert "<h1>This link has expired</h1>" in page and "already done" not in page


def test_a_deleted_users_session_answers_as_expired_and_creates_nothing(client, world, user):
    """DeleteUser ends what was under way for the user: every other operation on a deleted user is 404
    (docs/choices.md), and the page a person still has open answers as for an expired link."""
    session = open_session(world.api, accountTypeIds=["dummy", "dummy-auth"], userId=user["id"])
    form_token(client, path(session) + "?type=dummy")   # the page was open before the user was deleted
    assert world.api.delete(f"/users/{user['id']}").status_code == 204
    page = client.get(path(session) + "?type=dummy")
    assert page.status_code == 409 and "<h1>This link has expired</h1>" in page.get_data(as_text=True)
    submitted = post_form(client, path(session), data={"accountTypeId": "dummy", "username": "jane",
                                                       "password": "pw", "action": "submit"})
    assert submitted.status_code == 409
    connect = post_form(client, path(session) + "/connect", page=path(session), data={"accountTypeId": "dummy-auth"})
    assert connect.status_code == 409
    assert world.api.get(f"/users/{user['id']}").json["statistics"]["accounts"] == 0
    assert_problem(world.api.get(f"/accountui/{session['id']}"), 404)


def test_session_of_another_partner_or_user_is_not_found(world, other_world, user):
    session = open_session(world.api, accountTypeIds=["dummy"], userId=user["id"])
    assert_problem(other_world.api.get(f"/accountui/{session['id']}"), 404)
    _, other_user = world.user()
    assert_problem(other_user.get(f"/accountui/{session['id']}"), 404)


def test_a_user_token_opens_sessions_for_itself(world):
    user, as_user = world.user()
    session = open_session(as_user, accountTypeIds=["dummy"])
    assert session["userId"] == user["id"]
    assert as_user.get(f"/accountui/{session['id']}").status_code == 200


@pytest.mark.parametrize("body, status", [({"accountTypeIds": ["nope"]}, 404), ({}, 400),
                                          ({"accountTypeIds": ["dummy"], "redirectUrl": "ftp://x.example/"}, 400),
                                          ({"accountTypeIds": []}, 400), ({"accountId": "no-such"}, 404)])
def test_bad_session_requests_are_refused(world, user, body, status):
    assert_problem(world.api.post("/accountui", json={"userId": user["id"], **body}), status)


def test_scopes_account_create_to_open_and_account_read_to_read(world, user):
    session = open_session(world.api, accountTypeIds=["dummy"], userId=user["id"])
    reader = world.api.as_(world.new_token("account:read"))
    creator = world.api.as_(world.new_token("account:create"))
    assert_problem(reader.post("/accountui", json={"accountTypeIds": ["dummy"], "userId": user["id"]}), 403)
    assert_problem(creator.get(f"/accountui/{session['id']}"), 403)
    assert reader.get(f"/accountui/{session['id']}").status_code == 200


def test_partner_styling_and_escaped_names_on_the_page(client, world, user):
    world.api.put("/partners/self", json={"uiSettings": {"styling": {"primaryColor": "rgb(1, 2, 3)"}}})
    assert world.api.put("/partners/self", json={"uiSettings": {"styling": {
        "borderRadius": "0;}body{display:none"}}}).status_code == 400
    html = client.get(path(open_session(world.api, accountTypeIds=["dummy"], userId=user["id"]))).get_data(True)
    assert "--primary: rgb(1, 2, 3);" in html and "display:none" not in html


def test_the_form_renders_every_field_type_escaped():
    account_type = {"id": "t", "name": "<script>x</script>", "accountFields": [
        {"name": "n", "label": "Shops", "Type": "Number", "isRequired": True, "isDeprecated": False},
        {"name": "c", "label": "Cert", "Type": "File", "isRequired": False, "isDeprecated": False,
         "maxSizeBytes": 2048, "accept": ".pem"},
        {"name": "r", "label": "Region", "Type": "Choice", "isRequired": True, "isDeprecated": False,
         "options": ["eu", "<us>"]},
        {"name": "old", "label": "Old", "Type": "Text", "isRequired": False, "isDeprecated": True,
         "deprecationReason": "gone"}]}
    html = ENV.get_template("accountui.html").render(account_type=account_type,
                                                     fields=models.form_fields(account_type), typed={})
    assert 'type="number"' in html and 'type="file"' in html and 'accept=".pem"' in html
    assert '<option value="&lt;us&gt;">&lt;us&gt;</option>' in html and "<script>x" not in html
    assert 'name="old"' not in html


def test_posted_values_become_credentials_numbers_parsed_files_base64():
    account_type = {"accountFields": [
        {"name": "n", "Type": "Number", "label": "N"}, {"name": "f", "Type": "File", "label": "F"},
        {"name": "s", "Type": "Secret", "label": "S"}, {"name": "a", "Type": "Auth", "label": "A"}]}
    values = models.credentials(account_type, {"n": "12", "s": "pw", "a": "x"}, {"f": b"PEM"})
    assert values == {"n": 12, "s": "pw", "f": base64.b64encode(b"PEM").decode()}
    with pytest.raises(models.BadRequest):
        models.credentials(account_type, {"n": "twelve"}, {})


def connect_on_page(client, session):
    """Authorize on the page's Auth field and come back: the page URL the provider returned to."""
    consent = post_form(client, path(session) + "/connect", page=path(session),
                        data={"accountTypeId": "dummy-auth"}).headers["Location"]
    back = urlsplit(post_form(client, urlsplit(consent).path, data={"decision": "approve"}).headers["Location"])
    return {k: v[0] for k, v in parse_qs(back.query).items()}["reference"]


def test_an_update_session_reconnects_an_oauth_account(client, world, user):
    created = open_session(world.api, accountTypeIds=["dummy-auth"], userId=user["id"])
    post_form(client, path(created),
              data={"accountTypeId": "dummy-auth", "authReference": connect_on_page(client, created)})
    account_id = world.api.get(f"/accountui/{created['id']}").json["accountId"]
    update = open_session(world.api, accountId=account_id, userId=user["id"])
    reference = connect_on_page(client, update)
    done = post_form(client, path(update), data={"accountTypeId": "dummy-auth", "authReference": reference})
    assert done.status_code == 200, done.get_data(as_text=True)
    assert world.api.get(f"/accountui/{update['id']}").json["status"] == "Completed"
    again = post_form(client, path(open_session(world.api, accountId=account_id, userId=user["id"])),
                      data={"accountTypeId": "dummy-auth", "authReference": reference})
    assert again.status_code == 409                                 # the reference was used by the update


def test_the_page_uploads_a_file_and_parses_a_number(client, world, user):
    session = open_session(world.api, accountTypeIds=["sample-card-acquirer"], userId=user["id"])
    html = client.get(path(session)).get_data(as_text=True)
    assert 'accept="application/x-pem-file,application/x-x509-ca-cert,application/x-pkcs12"' in html
    assert 'name="password"' not in html                     # deprecated and optional: left out
    done = post_form(client, path(session), content_type="multipart/form-data", data={
        "accountTypeId": "sample-card-acquirer", "merchantId": "M-1", "apiKey": "k", "terminalCount": "3",
        "environment": "test", "certificate": (io.BytesIO(b"-----BEGIN CERTIFICATE-----"), "client.pem")})
    assert done.status_code == 200, done.get_data(as_text=True)
    account_id = world.api.get(f"/accountui/{session['id']}").json["accountId"]
    account = world.api.get(f"/accounts/{account_id}")
    assert account.json["accountTypeId"] == "sample-card-acquirer"


def test_a_file_over_the_limit_is_refused_on_the_page(client, world, user):
    session = open_session(world.api, accountTypeIds=["sample-card-acquirer"], userId=user["id"])
    response = post_form(client, path(session), content_type="multipart/form-data", data={
        "accountTypeId": "sample-card-acquirer", "merchantId": "M-1", "apiKey": "k",
        "certificate": (io.BytesIO(b"x" * 20000), "big.pem")})
    assert response.status_code == 400 and "16384" in response.get_data(as_text=True)
    assert world.api.get(f"/accountui/{session['id']}").json["status"] == "Pending"


def test_an_expired_authorization_is_not_offered_for_submission(client, world, user):
    session = open_session(world.api, accountTypeIds=["dummy-auth"], userId=user["id"])
    reference = connect_on_page(client, session)
    world.api.advance(oauth.REFERENCE_LIFETIME_US // 1_000_000)
    html = client.get(path(session) + f"?type=dummy-auth&reference={reference}").get_data(as_text=True)
    assert 'name="authReference"' not in html and "expired" in html and 'id="connect"' in html
