"""Steps of the OAuth2 account creation flow (spec §1 "OAuth2 account creation flow", §4.2 note 5, §7 rule 3).

Step 1 (CreateOauthRedirectUrl) is the same on every target; what the user does at the provider is the
simulator's dummy consent page, so the return step and CreateAccount with the reference are @sandbox.
"""

from urllib.parse import parse_qs, urlencode, urlsplit

from pytest_bdd import then, when

from ..scene import check
from . import page_form, phrase
from .accounts import account_id, create_account
from .users import user_id

DECISIONS = {"approves": "approve", "reports a missing account": "notfound", "hits an error": "error"}


def ask(scene, type_id, owner, redirect=None):
    """Step 1 of the flow; what it answered (with the type and owner asked for) flows to the next steps."""
    body = scene.body("CreateOauthRedirectUrl", {"accountTypeId": type_id, "userId": user_id(scene, owner),
                                                 "redirectUrl": redirect})
    reply = scene.call("CreateOauthRedirectUrl", json=body)
    answer = reply.body if reply.ok and isinstance(reply.body, dict) else {}
    return {"type": type_id, "owner": owner, **answer}


@when(phrase('I ask for an OAuth2 redirect URL for a "{type_id}" account of "{owner}" returning to "{url}"'),
      target_fixture="oauth")
def ask_with_redirect(scene, type_id, owner, url):
    return ask(scene, type_id, owner, url)


@when(phrase('I ask for an OAuth2 redirect URL for a "{type_id}" account of "{owner}"'),
      target_fixture="oauth")
def ask_plain(scene, type_id, owner):
    return ask(scene, type_id, owner)


@when(phrase('I ask for an OAuth2 redirect URL to reconnect the account "{label}"'), target_fixture="oauth")
def ask_reconnect(scene, label):
    reply = scene.call("CreateAccountOauthRedirectUrl", params={"id": account_id(scene, label)},
                       json=scene.body("CreateAccountOauthRedirectUrl", {}))
    return dict(reply.body) if reply.ok and isinstance(reply.body, dict) else {}


@then("the response carries the provider's redirect URL and an authentication reference")
def carries_redirect(scene):
    check(scene.reply.ok, f"expected the redirect URL, got {scene.reply.describe()}")
    body = scene.reply.body
    check(isinstance(body.get("redirectUrl"), str) and urlsplit(body["redirectUrl"]).scheme in ("http", "https"),
          f"redirectUrl is the provider URL (spec §1 step 1), got {body.get('redirectUrl')!r}")
    check(isinstance(body.get("authReference"), str) and body["authReference"],
          "authReference is the authentication reference (spec §1 step 1)")


@when(phrase("the user {decision} at the provider"))
def user_decides(scene, oauth, decision):
    """The dummy provider's consent form, answered as a browser would post it: the page is loaded first (its
    form carries a token bound to the cookie the page sets)."""
    path = urlsplit(oauth["redirectUrl"]).path
    form = {**page_form(scene, path), "decision": DECISIONS[decision]}
    scene.reply = scene.client.request("POST", path, data=urlencode(form),
                                       headers={"Content-Type": "application/x-www-form-urlencoded"})


@then(phrase('the user is sent back to "{url}" with the reference and status "{status}"'))
def sent_back(scene, oauth, url, status):
    check(scene.reply.status in (301, 302, 303, 307), f"expected a redirect, got {scene.reply.describe()}")
    location = scene.reply.headers.get("location", "")
    check(location.startswith(url), f"the user returns to {url}, not {location}")
    query = parse_qs(urlsplit(location).query)
    check(query.get("reference") == [oauth["authReference"]], f"reference: {query.get('reference')}")
    check(query.get("status") == [status], f"status: {query.get('status')}")
    check("message" in query, "the return carries a message for the user (spec §1 step 2)")


@then(phrase('the return step carries the reference and the status "{status}" in its headers'))
def return_headers(scene, oauth, status):
    headers = scene.reply.headers
    check(headers.get("x-service-authreference") == oauth["authReference"], "X-Service-AuthReference")
    check(headers.get("x-service-authstatus") == status, f"X-Service-AuthStatus: {headers.get('x-service-authstatus')}")
    check("x-service-authmessage" in headers, "X-Service-AuthMessage is present (spec §1)")


@then("the user sees the service's own page")
def service_page(scene):
    check(scene.reply.status == 200 and "html" in scene.reply.content_type,
          f"without a redirect URL the user ends on a service page (spec §1 step 1), got {scene.reply.describe()}")


@when(phrase('I create the account "{label}" with the authentication reference'))
def create_with_reference(scene, oauth, label):
    create_account(scene, label, oauth["type"], oauth["owner"], auth_reference=oauth["authReference"])


@when(phrase('I update the account "{label}" with the new authentication reference'))
def update_with_reference(scene, oauth, label):
    scene.update("GetAccount", "UpdateAccount", {"id": account_id(scene, label)},
                 {"authReference": oauth["authReference"]})
