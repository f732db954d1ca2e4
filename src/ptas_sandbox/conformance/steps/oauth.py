"""Steps of the OAuth2 account creation flow (spec §1 "OAuth2 account creation flow", §4.2 note 5, §7 rule 3).

Step 1 (CreateOauthRedirectUrl) is the same on every target; the provider's page of step 2 is answered by
`consent.drive` (a form the harness recognises, the QA engineer's --oauth-consent hook, or a person), so the
return step is checked on a deployment too, or said not checked with the reason.
"""

from urllib.parse import parse_qs, urlsplit

import pytest
from pytest_bdd import then, when

from .. import consent
from ..scene import check
from . import phrase
from .accounts import account_id, create_account
from .users import user_id

DECISIONS = {"approves": "approve", "reports a missing account": "notfound", "hits an error": "error"}


def ask(scene, type_id, owner, redirect=None, by="I"):
    """Step 1 of the flow; what it answered (with the type and owner asked for) flows to the next steps."""
    body = scene.body("CreateOauthRedirectUrl", {"accountTypeId": type_id, "userId": user_id(scene, owner),
                                                 "redirectUrl": redirect})
    reply = scene.call("CreateOauthRedirectUrl", by, json=body)
    answer = reply.body if reply.ok and isinstance(reply.body, dict) else {}
    return {"type": type_id, "owner": owner, "returnUrl": redirect, **answer}


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
    """The provider's page answered (consent.drive): the reply is the return step."""
    check(isinstance(oauth.get("redirectUrl"), str), f"step 1 answered a redirectUrl, got {scene.reply.describe()}")
    scene.reply = consent.drive(scene, oauth["redirectUrl"], DECISIONS[decision], oauth.get("returnUrl"))


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
    if "interactive" in (scene.reply.operation or ""):
        pytest.skip("an interactive consent shows no headers of the return step: --oauth-consent COMMAND does")
    headers = scene.reply.headers
    check(headers.get("x-service-authreference") == oauth["authReference"], "X-Service-AuthReference")
    check(headers.get("x-service-authstatus") == status, f"X-Service-AuthStatus: {headers.get('x-service-authstatus')}")
    check("x-service-authmessage" in headers, "X-Service-AuthMessage is present (spec §1)")


@then("the user sees the service's own page")
def service_page(scene):
    """A page the service shows itself (spec §1 step 1: "a simple service page showing a success or an error
    message"): answered there, not sent on to another address. Its format is not shown."""
    check(200 <= scene.reply.status < 300 and "location" not in scene.reply.headers,
          f"without a redirect URL the user ends on a service page (spec §1 step 1), got {scene.reply.describe()}")


@when(phrase('I create the account "{label}" with the authentication reference'))
def create_with_reference(scene, oauth, label):
    create_account(scene, label, oauth["type"], oauth["owner"], auth_reference=oauth["authReference"])


@then("the reference of the failed authorization creates no working account")
def failed_reference_makes_no_account(scene):
    """Spec §1 step 2: when the status is not Success, "the error must be fixed and the process repeated": the
    reference of a failed authorization does not give an account as a successful one does. CreateAccount refuses
    it (4xx), or answers the account with the error in its errors (its response "has errors", §4.2)."""
    reply = scene.reply
    if 400 <= reply.status < 500:
        return
    errors = reply.body.get("errors") if reply.ok and isinstance(reply.body, dict) else None
    check(reply.ok and isinstance(errors, list) and bool(errors),
          "CreateAccount with the reference of a failed authorization is refused, or names the error in the "
          f"account's errors (spec §1 step 2: the process is repeated); got {reply.describe()}")


@when(phrase('I update the account "{label}" with the new authentication reference'))
def update_with_reference(scene, oauth, label):
    scene.update("GetAccount", "UpdateAccount", {"id": account_id(scene, label)},
                 {"authReference": oauth["authReference"]})
