"""HTTP layer of User UI sessions: POST/GET /userui for the partner, the hosted registration page for a person."""

from ..operations import NO_AUTH, NOT_BLANK, PARTNER_ONLY, Answer, component, operation
from ..pages.html import FORM, PAGE, hosted, page, redirect, shown, url, with_query
from ..partners import models as partners
from ..problems import BadRequest
from . import models

component("UserUiSession", {
    "type": "object",
    "properties": {"id": {"type": "string"}, "url": {"type": "string", "format": "uri"},
                   "status": {"type": "string", "enum": ["Pending", "Completed", "Expired"]},
                   "userId": {"type": ["string", "null"]}, "redirectUrl": {"type": ["string", "null"]},
                   "createdAt": {"type": "string", "format": "date-time"},
                   "expiresAt": {"type": "string", "format": "date-time"},
                   "completedAt": {"type": ["string", "null"], "format": "date-time"}},
    "required": ["id", "url", "status", "userId"],
})
# The registration form, documented (the handler reads and checks call.request.form itself).
REGISTRATION_FORM = {"type": "object", "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 200, "pattern": NOT_BLANK},
    "email": {"type": "string", "maxLength": 254, "pattern": r"^$|^[^@\s]+@[^@\s]+\.[^@\s]+$"},
    "csrfToken": {"type": "string", "description": "the token of the page's form (docs/pages.md)"}},
    "required": ["name"], "additionalProperties": False}
FORM_FIELDS = set(REGISTRATION_FORM["properties"])


def page_url(call, key):
    return url(call, f"/userui/pages/{key}")


@operation("CreateUserUiSession", "POST", "/userui", tokens=PARTNER_ONLY, scopes=("userui:create",),
           body={"type": "object", "properties": {"redirectUrl": {
               **partners.URL_FIELD, "description": "where the page sends the person after registering, "
               "with sessionId, status and userId in the query; without one the page shows a confirmation"}}},
           body_required=False, example={"redirectUrl": "https://app.example/registered"},
           responses={201: "UserUiSession"})
def create_user_ui_session(call):
    """Open a user UI session; send the person to its `url` to register (spec §4.2 note 4)."""
    row = models.create(call.ctx, call.principal.partner_id, call.body.get("redirectUrl"))
    return Answer(201, models.record(call.ctx, row, page_url(call, row["page_key"])))


@operation("GetUserUiSession", "GET", "/userui/{id}", tokens=PARTNER_ONLY, scopes=("userui:read",),
           responses={200: "UserUiSession"})
def get_user_ui_session(call):
    """The session's status and, once Completed, the registered user's id."""
    row = models.get_owned(call.ctx, call.principal.partner_id, call.params["id"])
    return models.record(call.ctx, row, page_url(call, row["page_key"]))


def form_page(call, look, status=200, error=None, values=None):
    return page("userui.html", status, title=f"Register with {look['partner']}", action=call.request.path,
                error=error, values=values or {}, styling=look["styling"], partner=look["partner"])


@operation("GetUserUiPage", "GET", "/userui/pages/{key}", tokens=NO_AUTH, responses=PAGE)
@shown
def get_user_ui_page(call, look):
    """The hosted registration page of a session (its key is the secret), styled by the partner."""
    ctx, row = hosted(call, look, models, "registration")
    return form_page(call, look)


@operation("SubmitUserUiPage", "POST", "/userui/pages/{key}", tokens=NO_AUTH,
           consumes="application/x-www-form-urlencoded", body=REGISTRATION_FORM,
           example={"name": "Jane's Bakery", "email": "jane@bakery.example"}, responses=FORM)
@shown
def submit_user_ui_page(call, look):
    """Register the person: a new user of the partner; the session completes (or the form shows the error)."""
    ctx, row = hosted(call, look, models, "registration")
    form = call.request.form
    forged = set(form) - FORM_FIELDS
    if forged:
        raise BadRequest(f"The form has fields it does not have on the page: {', '.join(sorted(forged))}.")
    values = {"name": form.get("name", ""), "email": form.get("email", "").strip()}
    try:
        if not values["name"].strip():
            raise BadRequest("Please enter a name.")
        if len(values["name"]) > 200 or len(values["email"]) > 254:
            raise BadRequest("The name or e-mail address is too long.")
        with ctx.store.savepoint():
            row = models.register(ctx, row, values["name"], values["email"])
    except BadRequest as problem:
        return form_page(call, look, 400, problem.detail, values)
    if row["redirect_url"]:
        return redirect(with_query(row["redirect_url"], sessionId=row["id"], status="Completed",
                                   userId=row["user_id"]))
    return page("userui_done.html", title="Registered", name=values["name"].strip(), styling=look["styling"],
                partner=look["partner"])
