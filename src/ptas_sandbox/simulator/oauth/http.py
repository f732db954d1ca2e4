"""HTTP layer of the OAuth2 flow: CreateOauthRedirectUrl, the dummy provider's consent page, the return step.

The consent page and the return step are pages for a browser, without a bearer token: the consent key in
their URL is the secret. The return step always carries X-Service-AuthReference, X-Service-AuthStatus and
X-Service-AuthMessage (spec §1), whether it redirects or shows the plain service page.
"""

from urllib.parse import quote

from ..account_types import models as account_types
from ..operations import ANY_TOKEN, NO_AUTH, Answer, component, operation
from ..pages.html import FORM, PAGE, mine, page, redirect, shown, url, with_query, world_ctx
from ..partners import models as partners
from ..pipeline import json_body
from ..problems import BadRequest, Conflict, NotFound
from ..users import models as users
from . import models

component("OauthRedirect", {
    "type": "object",
    "properties": {"redirectUrl": {"type": "string", "format": "uri",
                                   "description": "the provider's page to send the user to"},
                   "authReference": {"type": "string"},
                   "expiresAt": {"type": "string", "format": "date-time"}},
    "required": ["redirectUrl", "authReference"],
})
CREATE = {"type": "object", "properties": {
    "accountTypeId": {"type": "string", "minLength": 1},
    "userId": {"type": "string", "minLength": 1, "description": "the user, when called with a partner token"},
    "redirectUrl": {**partners.URL_FIELD, "description": "where the user returns (spec §4.2 note 5); "
                    "default: the partner's first redirectUrls entry"}},
    "required": ["accountTypeId"]}


def oauth_type(ctx, type_id):
    """The account type, which must authenticate through OAuth2 (an accountField of Type Auth, spec §1)."""
    found = account_types.require(ctx, type_id)
    if not any(f.get("Type") == "Auth" for f in found["accountFields"]):
        raise BadRequest(f"Account type {type_id!r} does not use OAuth2 authentication (no field of Type Auth).")
    return found


def start(call, *, user_id, account_type_id, account_id=None, redirect_url=None):
    """A new reference and the consent page URL on this sandbox (shared by both redirect URL operations)."""
    if redirect_url is not None:
        partners.absolute_url(redirect_url)
    oauth_type(call.ctx, account_type_id)
    row = models.create(call.ctx, partner_id=call.principal.partner_id, user_id=user_id,
                        account_type_id=account_type_id, account_id=account_id, redirect_url=redirect_url)
    return Answer(201, {"redirectUrl": consent_url(call, row["consent_key"]), "authReference": row["id"],
                       "expiresAt": models.record(row)["expiresAt"]})


def consent_url(call, key):
    return url(call, f"/oauth/consent/{key}")


@operation("CreateOauthRedirectUrl", "POST", "/oauth", tokens=ANY_TOKEN, scopes=("account:create",), body=CREATE,
           example={"accountTypeId": "dummy-auth", "redirectUrl": "https://app.example/done"},
           responses={201: "OauthRedirect"})
def create_oauth_redirect_url(call):
    """Start the OAuth2 flow (spec §1 step 1): the provider URL to send the user to, and the authReference."""
    type_id, user_id, redirect_url = json_body(call, "accountTypeId", "userId", "redirectUrl")
    user_id = users.owner(call.ctx, call.principal, user_id)
    return start(call, user_id=user_id, account_type_id=type_id, redirect_url=redirect_url)


@operation("CreateAccountOauthRedirectUrl", "POST", "/accounts/{id}/oauth", tokens=ANY_TOKEN,
           scopes=("account:update",), body={"type": "object", "properties": {"redirectUrl": CREATE["properties"]
                                                                             ["redirectUrl"]}},
           body_required=False, example={"redirectUrl": "https://app.example/reconnected"},
           responses={201: "OauthRedirect"})
def create_account_oauth_redirect_url(call):
    """Reconnect an OAuth2 account (spec §1): the authReference it gives is what UpdateAccount then takes."""
    account = users.get_owned_row(call.ctx, call.principal, "accounts", call.params["id"], "account")
    return start(call, user_id=account["user_id"], account_type_id=account["type_id"], account_id=account["id"],
                 redirect_url=call.body.get("redirectUrl"))


# The consent page's form, documented (the handler reads and checks call.request.form itself).
CONSENT_FORM = {"type": "object", "properties": {
    "decision": {"type": "string", "enum": ["approve", "deny", "notfound", "error", "outcome"],
                 "description": "`outcome` takes the error named in `outcome`"},
    "outcome": {"type": "string", "enum": ["notfound", "error"]},
    "message": {"type": "string", "maxLength": models.MAX_MESSAGE, "description": "shown to the user"},
    "csrfToken": {"type": "string", "description": "the token of the page's form (docs/pages.md)"}},
    "required": ["decision"], "additionalProperties": False,
    "if": {"properties": {"decision": {"const": "outcome"}}}, "then": {"required": ["outcome"]}}


CONSENT_FIELDS = set(CONSENT_FORM["properties"])


def consent_reference(call):
    """The reference behind the consent key of the URL with the context of its world; 404 for any other key."""
    row = models.get_by_key(call.sandbox.store, call.params["key"])
    if row is None:
        raise NotFound("This sign-in link is not valid. Check that the whole link was copied, or start again "
                       "from the application.")
    ctx = world_ctx(call.sandbox, row["world"])
    mine(call, partners.record(partners.require(ctx, row["partner_id"])))
    return ctx, row





@operation("GetOauthConsentPage", "GET", "/oauth/consent/{key}", tokens=NO_AUTH, responses=PAGE)
@shown
def get_oauth_consent_page(call, look):
    """The dummy provider's consent page: approve, deny, or end with NotFoundError or OtherError."""
    ctx, row = consent_reference(call)
    if row["status"] != "Pending":
        raise Conflict("You have already answered this sign-in request. To try again, start over from the "
                       "application.")
    if models.lapsed(ctx, row):
        raise BadRequest("This sign-in request has expired. Start over from the application.")
    provider = account_types.require(ctx, row["account_type_id"])["name"]
    return page("consent.html", title=f"Sign in at {provider}", provider=provider,
                partner=partners.require(ctx, row["partner_id"])["name"], action=call.request.path)


@operation("CompleteOauthConsent", "POST", "/oauth/consent/{key}", tokens=NO_AUTH,
           consumes="application/x-www-form-urlencoded", body=CONSENT_FORM, example={"decision": "approve"},
           responses=FORM)
@shown
def complete_oauth_consent(call, look):
    """The user's answer, then the return step (spec §1 step 2): a redirect or the plain service page."""
    ctx, row = consent_reference(call)
    form = call.request.form
    forged = set(form) - CONSENT_FIELDS
    if forged:
        raise BadRequest(f"The form has fields it does not have on the page: {', '.join(sorted(forged))}.")
    decision = form.get("decision")
    choice = form.get("outcome") if decision == "outcome" else decision
    if not choice:
        raise BadRequest("The form was sent without a choice: go back and press one of the buttons.")
    message = form.get("message")
    if choice == "approve" and account_types.require(ctx, row["account_type_id"]).get("state") == "Outage":
        choice, message = "error", "The provider is in an outage; please try again later."
    return return_step(ctx, models.complete(ctx, row, choice, message))


def header_text(text):
    """A header-safe rendering of a message: control characters dropped, non-ASCII percent-encoded."""
    printable = "".join(c for c in text if c >= " " and c != "\x7f")
    return quote(printable, safe=" !#$&'()*+,/:;=?@[]~<>\"{}|^`\\")


def return_step(ctx, row):
    """Redirect to the applicable redirect URL with reference, status and message; else the service page."""
    result = {"reference": row["id"], "status": row["status"], "message": row["message"]}
    headers = {"X-Service-AuthReference": row["id"], "X-Service-AuthStatus": row["status"],
               "X-Service-AuthMessage": header_text(row["message"])}
    target = row["redirect_url"] or next(iter(partners.record(partners.require(ctx, row["partner_id"]))
                                              ["redirectUrls"]), None)
    if target is None:
        return page("oauth_result.html", headers=headers, title="Sign-in", **result)
    return redirect(with_query(target, **result), headers)
