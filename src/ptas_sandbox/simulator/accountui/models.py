"""Account UI session rules: a session for one user and one or more account types (or one account to update);
the hosted page builds its form from the types' accountFields and creates or updates the account through the
accounts rules.

States (the spec shows none; the simulator's choice): Pending → Completed (the account was created or updated),
Failed (the person cancelled), or Expired (SESSION_LIFETIME_US passed on the world clock while Pending).
"""

import base64
import json

from ..account_types import models as account_types
from ..accounts import models as accounts
from ..oauth import models as oauth
from ..pages.models import closed, page_key
from ..partners.models import absolute_url
from ..problems import BadRequest, not_found
from ..timestamps import SECOND_US, render
from ..users import models as users

SCHEMA = """
CREATE TABLE IF NOT EXISTS accountui_sessions (
    id TEXT PRIMARY KEY,
    world TEXT NOT NULL,
    partner_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    account_type_ids TEXT NOT NULL,
    target_account_id TEXT,
    page_key TEXT NOT NULL UNIQUE,
    redirect_url TEXT,
    status TEXT NOT NULL DEFAULT 'Pending',
    account_id TEXT,
    error TEXT,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    completed_at INTEGER
);
"""

SESSION_LIFETIME_US = 60 * 60 * SECOND_US
SHOWN_TYPES = ("Text", "Secret", "Number", "Choice", "File", "Auth")


def status_of(ctx, row):
    if row["status"] == "Pending" and ctx.now >= row["expires_at"]:
        return "Expired"
    return row["status"]


def record(ctx, row, url):
    """The session as POST and GET /accountui answer it; accountTypeId is the deprecated single form."""
    type_ids = json.loads(row["account_type_ids"])
    return {"id": row["id"], "url": url, "status": status_of(ctx, row), "accountTypeIds": type_ids,
            "accountTypeId": type_ids[0], "userId": row["user_id"],
            "accountId": row["account_id"] or row["target_account_id"],
            "mode": "Update" if row["target_account_id"] else "Create", "error": row["error"],
            "redirectUrl": row["redirect_url"], "createdAt": render(row["created_at"]),
            "expiresAt": render(row["expires_at"]), "completedAt": render(row["completed_at"])}


def known_types(ctx, type_ids):
    """The session's account types, each known (an unknown id is 404, as for CreateOauthRedirectUrl)."""
    for type_id in type_ids:
        account_types.require(ctx, type_id)
    return list(dict.fromkeys(type_ids))


def target_account(ctx, partner_id, user_id, account_id):
    row = accounts.get(ctx, account_id)
    if row is None or row["partner_id"] != partner_id or row["user_id"] != user_id:
        raise not_found("account", account_id)
    return row


def create(ctx, *, partner_id, user_id, account_type_ids=None, account_id=None, redirect_url=None):
    """A session creating an account of one of `account_type_ids`, or updating `account_id`."""
    type_ids = known_types(ctx, account_type_ids or [])
    if account_id is not None:
        account = target_account(ctx, partner_id, user_id, account_id)
        if type_ids and account["type_id"] not in type_ids:
            raise BadRequest(f"Account {account_id!r} is of type {account['type_id']!r}, not one of accountTypeIds.")
        type_ids = [account["type_id"]]
    if not type_ids:
        raise BadRequest("Give `accountTypeIds` (or `accountId` to update an account).")
    session_id = ctx.new_id("accountui")
    ctx.store.insert("accountui_sessions", id=session_id, world=ctx.world.id, partner_id=partner_id,
                     user_id=user_id, account_type_ids=json.dumps(type_ids), target_account_id=account_id,
                     page_key=page_key(ctx, "accountui", session_id),
                     redirect_url=None if redirect_url is None else absolute_url(redirect_url),
                     status="Pending", created_at=ctx.now, expires_at=ctx.now + SESSION_LIFETIME_US)
    return get(ctx, session_id)


def get(ctx, session_id):
    return ctx.store.one("SELECT * FROM accountui_sessions WHERE id = ? AND world = ?", (session_id, ctx.world.id))


def get_owned(ctx, principal, session_id):
    """A session of the caller: the partner's own, and for a user token only the user's; a deleted user's is 404,
    as everything of that user but the user itself (docs/choices.md)."""
    row = get(ctx, session_id)
    if row is None or row["partner_id"] != principal.partner_id or (
            principal.kind == "user" and row["user_id"] != principal.user_id) or users.is_deleted(ctx, row["user_id"]):
        raise not_found("account UI session", session_id)
    return row


def get_by_key(store, key):
    return store.one("SELECT * FROM accountui_sessions WHERE page_key = ?", (key,)) if key else None


def open_session(ctx, row):
    """The session a page may still act on: Pending, not expired, its user not deleted since it was opened (the
    page answers as for an expired link: DeleteUser ends what was under way for the user), else a 409."""
    status = status_of(ctx, row)
    if status == "Pending" and users.is_deleted(ctx, row["user_id"]):
        status = "Expired"
    if status != "Pending":
        raise closed(status, {"Completed": "This account connection is already complete.",
                              "Failed": "This account connection was cancelled; ask for a new one.",
                              "Expired": "This link has expired; ask for a new one."}[status])


def form_fields(account_type):
    """The fields the page shows, in the type's order: deprecated optional fields are left out."""
    return [f for f in account_type["accountFields"]
            if f["Type"] in SHOWN_TYPES and not (f.get("isDeprecated") and not f.get("isRequired"))]


def chosen_type(ctx, row, type_id):
    """The session's account type the page works on; one outside the session is a forged form (400)."""
    type_ids = json.loads(row["account_type_ids"])
    if type_id is None and len(type_ids) == 1:
        type_id = type_ids[0]
    if type_id not in type_ids:
        raise BadRequest(f"Account type {type_id!r} is not offered by this session.")
    return account_types.require(ctx, type_id)


def connect(ctx, row, account_type, return_url):
    """Start the OAuth2 flow for the page: the reference returns the person to the page itself."""
    return oauth.create(ctx, partner_id=row["partner_id"], user_id=row["user_id"],
                        account_type_id=account_type["id"], account_id=row["target_account_id"],
                        redirect_url=return_url)


def connection(ctx, row, account_type, reference):
    """The reference the page came back with, when it is this session's and usable: (reference, message)."""
    ref = oauth.get(ctx, reference) if reference else None
    if ref is None or ref["partner_id"] != row["partner_id"] or ref["user_id"] != row["user_id"] or \
            ref["account_type_id"] != account_type["id"] or ref["used_at"] is not None or \
            ref["account_id"] != row["target_account_id"]:
        return None, None
    if oauth.is_expired(ctx, ref):
        return None, "The authorization has expired; please authorize again."
    return (ref["id"] if ref["status"] == "Success" else None), ref["message"]


def credentials(account_type, fields, files):
    """CreateAccount credentials from the posted form: text as typed, numbers parsed, files as base64."""
    values = {}
    for field in form_fields(account_type):
        name, kind = field["name"], field["Type"]
        if kind == "Auth":
            continue
        if kind == "File":
            content = files.get(name)
            if content:
                values[name] = base64.b64encode(content).decode()
            continue
        text = fields.get(name, "")
        if text == "":
            continue
        if kind == "Number":
            try:
                number = float(text)
            except ValueError:
                raise BadRequest(f"{field['label']}: {text!r} is not a number.") from None
            values[name] = int(number) if number.is_integer() else number
        else:
            values[name] = text
    return values


def submit(ctx, row, account_type, values):
    """Create (or update) the account through the accounts rules; the session completes with its id."""
    open_session(ctx, row)
    if row["target_account_id"]:
        account = accounts.update(ctx, target_account(ctx, row["partner_id"], row["user_id"],
                                                        row["target_account_id"]), values)
    else:
        account = accounts.create(ctx, partner_id=row["partner_id"], user_id=row["user_id"],
                                    values={"accountTypeId": account_type["id"], **values})
    ctx.store.update("accountui_sessions", {"id": row["id"]}, status="Completed", account_id=account["id"],
                     error=None, completed_at=ctx.now)
    return get(ctx, row["id"])


CANCELLED = "The person cancelled the account connection."


def fail(ctx, row, error):
    """Record the last refused attempt (GET shows it); the session stays Pending so the person can retry."""
    ctx.store.update("accountui_sessions", {"id": row["id"]}, error=error)


def cancel(ctx, row):
    open_session(ctx, row)
    ctx.store.update("accountui_sessions", {"id": row["id"]}, status="Failed",
                     error=CANCELLED, completed_at=ctx.now)
    return get(ctx, row["id"])
