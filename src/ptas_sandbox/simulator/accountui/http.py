"""HTTP layer of Account UI sessions: POST/GET /accountui for partner software, and the hosted page that
builds its form from the account types' accountFields (Auth fields through the OAuth2 flow)."""

import json

from .. import scopes
from ..account_types import models as account_types
from ..oauth.http import consent_url
from ..operations import ANY_TOKEN, NO_AUTH, Answer, component, operation
from ..pages.html import FORM, PAGE, hosted, page, redirect, shown, url, with_query
from ..partners import models as partners
from ..problems import BadRequest, Conflict, Forbidden
from ..users import models as users
from . import models

component("AccountUiSession", {
    "type": "object",
    "properties": {
        "id": {"type": "string"}, "url": {"type": "string", "format": "uri"},
        "status": {"type": "string", "enum": ["Pending", "Completed", "Failed", "Expired"]},
        "accountTypeIds": {"type": "array", "items": {"type": "string"}},
        "accountTypeId": {"type": "string", "deprecated": True, "description": "the first of accountTypeIds"},
        "userId": {"type": "string"},
        "accountId": {"type": ["string", "null"], "description": "the account created (or being updated)"},
        "mode": {"type": "string", "enum": ["Create", "Update"]}, "error": {"type": ["string", "null"]},
        "redirectUrl": {"type": ["string", "null"]},
        "createdAt": {"type": "string", "format": "date-time"},
        "expiresAt": {"type": "string", "format": "date-time"},
        "completedAt": {"type": ["string", "null"], "format": "date-time"}},
    "required": ["id", "url", "status", "accountTypeIds", "accountTypeId", "userId", "accountId"],
})
CREATE = {"type": "object", "properties": {
    "accountTypeIds": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1,
                       "maxItems": 100},
    "accountTypeId": {"type": "string", "minLength": 1, "deprecated": True,
                      "description": "deprecated single form of accountTypeIds (spec §4.2 note 4)"},
    "accountId": {"type": "string", "description": "update this account instead of creating one"},
    "userId": {"type": "string", "description": "the user, when called with a partner token"},
    "redirectUrl": {**partners.URL_FIELD, "description": "where the page sends the person when done, "
                    "with sessionId, status and accountId in the query"}},
    "anyOf": [{"required": ["accountTypeIds"]}, {"required": ["accountTypeId"]}, {"required": ["accountId"]}],
    "x-problem": "Name the account types to offer (`accountTypeIds`) or the account to update (`accountId`)."}


# The page's forms, documented (the handlers read and check call.request.form and .files themselves).
CSRF = {"type": "string", "description": "the token of the page's form (docs/pages.md)"}
CONNECT_FORM = {"type": "object", "description": "the page's form as it stands when the Authorize button is "
                "pressed: accountTypeId and the token, and the account type's fields (ignored)",
                "properties": {"accountTypeId": {"type": "string", "minLength": 1}, "csrfToken": CSRF},
                "required": ["accountTypeId"], "additionalProperties": {"type": "string"}}
ACCOUNT_FORM = {"type": "object", "description": "accountTypeId, then one part per accountFields entry by its "
                "name (a File field as a file part); authReference once an Auth field is authorized",
                "properties": {"accountTypeId": {"type": "string", "minLength": 1},
                               "authReference": {"type": "string"},
                               "action": {"type": "string", "enum": ["submit", "cancel"]}, "csrfToken": CSRF},
                "required": ["accountTypeId"], "additionalProperties": {"type": "string"}}


def page_url(call, key):
    return url(call, f"/accountui/pages/{key}")


@operation("CreateAccountUiSession", "POST", "/accountui", tokens=ANY_TOKEN,
           scopes=("account:create", "account:update"), body=CREATE,
           example={"accountTypeIds": ["dummy", "dummy-auth"], "redirectUrl": "https://app.example/connected"},
           responses={201: "AccountUiSession"})
def create_account_ui_session(call):
    """Open an account UI session (create, or update with accountId); send the person to its `url`."""
    body = call.body
    needed = "account:update" if body.get("accountId") else "account:create"
    if not scopes.holds(call.principal.scopes, needed):
        raise Forbidden(f"An account UI session that {needed.split(':')[1]}s an account needs {needed}.",
                        requiredScopes=[needed])
    type_ids = body.get("accountTypeIds") or ([body["accountTypeId"]] if body.get("accountTypeId") else [])
    user_id = users.owner(call.ctx, call.principal, body.get("userId"))
    row = models.create(call.ctx, partner_id=call.principal.partner_id, user_id=user_id,
                        account_type_ids=type_ids, account_id=body.get("accountId"),
                        redirect_url=body.get("redirectUrl"))
    return Answer(201, models.record(call.ctx, row, page_url(call, row["page_key"])))


@operation("GetAccountUiSession", "GET", "/accountui/{id}", tokens=ANY_TOKEN, scopes=("account:read",),
           responses={200: "AccountUiSession"})
def get_account_ui_session(call):
    """The session's status and the resulting account's id."""
    row = models.get_owned(call.ctx, call.principal, call.params["id"])
    return models.record(call.ctx, row, page_url(call, row["page_key"]))


def form_page(call, ctx, row, account_type, look, status=200, error=None, errors=(), reference=None,
              auth_message=None, typed=None):
    return page("accountui.html", status, title=f"Connect your {account_type['name']} account",
                account_type=account_type, partner=look["partner"],
                fields=models.form_fields(account_type), action=call.request.path,
                connect_action=call.request.path + "/connect", update=bool(row["target_account_id"]),
                error=error, errors=list(errors), reference=reference, auth_message=auth_message,
                typed=typed or {}, styling=look["styling"])


@operation("GetAccountUiPage", "GET", "/accountui/pages/{key}", tokens=NO_AUTH,
           query={"type": {"type": "string", "description": "the account type chosen"},
                  "reference": {"type": "string", "description": "set by the OAuth2 return step"}},
           responses=PAGE)
@shown
def get_account_ui_page(call, look):
    """The hosted page: a choice of account type, then the form built from its accountFields."""
    ctx, row = hosted(call, look, models, "account connection")
    type_ids = json.loads(row["account_type_ids"])
    if call.query.get("type") is None and len(type_ids) > 1:
        return page("accountui_choose.html", title="Connect an account", action=call.request.path,
                    types=[account_types.require(ctx, t) for t in type_ids], styling=look["styling"],
                    partner=look["partner"])
    account_type = models.chosen_type(ctx, row, call.query.get("type"))
    reference, message = models.connection(ctx, row, account_type, call.query.get("reference"))
    return form_page(call, ctx, row, account_type, look, reference=reference, auth_message=message)


@operation("ConnectAccountUiPage", "POST", "/accountui/pages/{key}/connect", tokens=NO_AUTH,
           consumes="application/x-www-form-urlencoded", body=CONNECT_FORM, example={"accountTypeId": "dummy-auth"},
           responses=FORM)
@shown
def connect_account_ui_page(call, look):
    """The page's Auth field: start the OAuth2 flow; the provider returns the person to this page."""
    ctx, row = hosted(call, look, models, "account connection")
    account_type = models.chosen_type(ctx, row, call.request.form.get("accountTypeId"))
    forged_fields(call.request.form, call.request.files, account_type)
    if not any(f["Type"] == "Auth" for f in account_type["accountFields"]):
        raise BadRequest(f"{account_type['name']} has no sign-in to authorize.")
    back = with_query(page_url(call, row["page_key"]), type=account_type["id"])
    reference = models.connect(ctx, row, account_type, back)
    return redirect(consent_url(call, reference["consent_key"]))


FIXED_FIELDS = {"accountTypeId", "authReference", "action", "csrfToken"}


def forged_fields(form, files, account_type):
    """A field the page does not have (its schema forbids it) refuses the form."""
    names = {f["name"] for f in models.form_fields(account_type)}
    forged = (set(form) | set(files)) - names - FIXED_FIELDS
    if forged:
        raise BadRequest(f"The form has fields it does not have on the page: {', '.join(sorted(forged))}.")
    return names


@operation("SubmitAccountUiPage", "POST", "/accountui/pages/{key}", tokens=NO_AUTH, consumes="multipart/form-data",
           body=ACCOUNT_FORM, example={"accountTypeId": "dummy", "username": "jane", "password": "secret",
                                       "action": "submit"}, responses=FORM)
@shown
def submit_account_ui_page(call, look):
    """Create or update the account from the form (or cancel); a refused attempt shows the form again."""
    ctx, row = hosted(call, look, models, "account connection")
    form, files = call.request.form, call.request.files
    if not form.get("accountTypeId"):
        raise BadRequest("The form lacks its `accountTypeId`.")
    account_type = models.chosen_type(ctx, row, form["accountTypeId"])
    names = forged_fields(form, files, account_type)
    if form.get("action") == "cancel":
        return finished(call, models.cancel(ctx, row), look["styling"])
    if form.get("action") not in (None, "submit"):
        raise BadRequest("The form was sent without a choice: go back and press one of the buttons.")
    typed = {k: v for k, v in form.items() if k in names and not is_secret(account_type, k)}
    reference = form.get("authReference") or None
    try:
        values = {"credentials": models.credentials(account_type, form,
                                                    {n: f.read(1024 * 1024 + 1) for n, f in files.items()})}
        if reference:
            values["authReference"] = reference
        elif uses_sign_in(account_type) and not row["target_account_id"]:
            raise BadRequest(f"Please sign in at {account_type['name']} first, with the button "
                             f"“Authorize at {account_type['name']}”.")
        with ctx.store.savepoint():
            row = models.submit(ctx, row, account_type, values)
    except (BadRequest, Conflict) as problem:
        models.fail(ctx, row, problem.detail)
        still = models.connection(ctx, row, account_type, reference)[0]
        headline, details = for_people(problem, account_type)
        return form_page(call, ctx, row, account_type, look, problem.status, headline, details,
                         reference=still, typed=typed)
    return finished(call, row, look["styling"])


def uses_sign_in(account_type):
    return any(f["Type"] == "Auth" for f in account_type["accountFields"])


def for_people(problem, account_type):
    """What a person reads when the form is refused: plain words with the field labels the page shows, never
    the API's names (operationIds, `authReference`, field names in quotes)."""
    name = account_type["name"]
    labels = {f["name"]: f.get("label") or f["name"] for f in account_type["accountFields"]}

    def plain(text):
        for field, label in labels.items():
            text = text.replace(f"{field!r}", f"“{label}”").replace(f"`{field}`", f"“{label}”")
        return text.replace("`", "")
    if isinstance(problem, Conflict) and "already has an account" in problem.detail:
        return f"You have already connected a {name} account.", []
    if "authReference" in problem.detail:
        return (f"The sign-in at {name} has expired or was already used. Please sign in at {name} again.", [])
    errors = [plain(e["message"]) for e in problem.extensions.get("errors", [])
              if isinstance(e, dict) and e.get("message")]
    if errors:
        return "Please check what you entered.", errors
    return plain(problem.detail), []


def is_secret(account_type, name):
    return any(f["name"] == name and f["Type"] == "Secret" for f in account_type["accountFields"])


def finished(call, row, styling):
    """After the form: back to the partner's redirectUrl with the result, else a confirmation page."""
    if row["redirect_url"]:
        return redirect(with_query(row["redirect_url"], sessionId=row["id"], status=row["status"],
                                   accountId=row["account_id"] or row["target_account_id"] or ""))
    error = "You cancelled connecting your account." if row["status"] == "Failed" and row["error"] == \
        models.CANCELLED else row["error"]
    return page("accountui_done.html", title="Account", status=row["status"], error=error, styling=styling)
