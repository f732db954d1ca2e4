"""OAuth2 authentication references: created by CreateOauthRedirectUrl, completed on the dummy provider's
consent page, redeemed once by CreateAccount or UpdateAccount.

A reference lives REFERENCE_LIFETIME_US on the world clock from its creation: consent and redemption must both
happen within it (the simulator's choice; the spec is silent). The consent page is addressed by a separate
secret (`consent_key`), so knowing an authReference (it travels in the return step's query) does not let
anyone answer the consent for the user.
"""


from ..pages.models import page_key
from ..problems import BadRequest, Conflict
from ..timestamps import SECOND_US, render
from ..users import models as users

SCHEMA = """
CREATE TABLE IF NOT EXISTS auth_references (
    id TEXT PRIMARY KEY,
    world TEXT NOT NULL,
    partner_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    account_type_id TEXT NOT NULL,
    account_id TEXT,
    redirect_url TEXT,
    consent_key TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL DEFAULT 'Pending',
    message TEXT,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    completed_at INTEGER,
    used_at INTEGER,
    used_for TEXT
);
"""

REFERENCE_LIFETIME_US = 15 * 60 * SECOND_US
# What the dummy provider's consent page offers, and what each choice completes the reference with.
OUTCOMES = {
    "approve": ("Success", "The account was authorized at the provider."),
    "deny": ("OtherError", "The user denied access at the provider."),
    "notfound": ("NotFoundError", "The provider knows no such user or merchant account."),
    "error": ("OtherError", "The provider reported an error; please try again."),
}
MAX_MESSAGE = 500


def create(ctx, *, partner_id, user_id, account_type_id, account_id=None, redirect_url=None):
    """A pending reference for one user and account type (and account, for an update of its connection)."""
    reference_id = ctx.new_id("authReference")
    key = page_key(ctx, "consent", reference_id)
    ctx.store.insert("auth_references", id=reference_id, world=ctx.world.id, partner_id=partner_id,
                     user_id=user_id, account_type_id=account_type_id, account_id=account_id,
                     redirect_url=redirect_url, consent_key=key, status="Pending", message=None,
                     created_at=ctx.now, expires_at=ctx.now + REFERENCE_LIFETIME_US)
    return get(ctx, reference_id)


def get(ctx, reference_id):
    return ctx.store.one("SELECT * FROM auth_references WHERE id = ? AND world = ?", (reference_id, ctx.world.id))


def get_by_key(store, key):
    """The reference behind a consent page, in any world (the page has no token: its key is the secret)."""
    if not isinstance(key, str) or not key:
        return None
    return store.one("SELECT * FROM auth_references WHERE consent_key = ?", (key,))


def is_expired(ctx, row):
    return ctx.now >= row["expires_at"]


def lapsed(ctx, row):
    """The reference can no longer be answered: expired, or its user deleted since it was made (DeleteUser ends
    what was under way for the user, and the consent page answers as for an expired one)."""
    return is_expired(ctx, row) or users.is_deleted(ctx, row["user_id"])


def complete(ctx, row, outcome, message=None):
    """The user's answer on the consent page: the reference gets its status and message, once."""
    if outcome not in OUTCOMES:
        raise BadRequest(f"This answer is not one the page offers ({', '.join(OUTCOMES)}): go back and press one "
                         "of its buttons.")
    if row["status"] != "Pending":
        raise Conflict("This authorization was already answered; start a new one.")
    if lapsed(ctx, row):
        raise BadRequest("This authorization has expired; start a new one.")
    status, default = OUTCOMES[outcome]
    text = (message or "").strip()[:MAX_MESSAGE] or default
    ctx.store.update("auth_references", {"id": row["id"]}, status=status, message=text, completed_at=ctx.now)
    return get(ctx, row["id"])


def redeem(ctx, reference, *, partner_id, user_id, account_type_id, account_id=None):
    """Consume an authReference for CreateAccount (`account_id` None) or UpdateAccount (`account_id` set).

    Unknown, foreign (another partner, user or world), expired, wrong-type and unsuccessful references are 400;
    a reference already used is 409. Returns the reference's record, marked used.
    """
    if not isinstance(reference, str) or not reference:
        raise BadRequest("`authReference` is required for an account type with OAuth2 authentication.")
    row = get(ctx, reference)
    if row is None or row["partner_id"] != partner_id or row["user_id"] != user_id:
        raise BadRequest(f"Unknown authReference {reference!r}.")
    if row["used_at"] is not None:
        raise Conflict(f"The authReference {reference!r} was already used; start a new OAuth2 authorization.")
    if is_expired(ctx, row):
        raise BadRequest(f"The authReference {reference!r} has expired; start a new OAuth2 authorization.")
    if row["account_type_id"] != account_type_id:
        raise BadRequest(f"The authReference {reference!r} was made for account type {row['account_type_id']!r}, "
                         f"not {account_type_id!r}.")
    if (row["account_id"] or None) != (account_id or None):
        if account_id is None:
            raise BadRequest(f"The authReference {reference!r} was made for updating an existing account "
                             "(CreateAccountOauthRedirectUrl); use it with UpdateAccount.")
        raise BadRequest(f"The authReference {reference!r} was not made for account {account_id!r}; "
                         "call CreateAccountOauthRedirectUrl for it first.")
    if row["status"] != "Success":
        detail = ("the user has not completed the authorization yet" if row["status"] == "Pending"
                  else f"the authorization ended with {row['status']}: {row['message']}")
        raise BadRequest(f"The authReference {reference!r} cannot be used: {detail}.")
    ctx.store.update("auth_references", {"id": reference}, used_at=ctx.now, used_for=account_id or "create")
    return record(get(ctx, reference))


def record(row):
    """The reference as the API shows it (GetOauthReference is not in the spec; this feeds responses)."""
    return {"authReference": row["id"], "accountTypeId": row["account_type_id"], "userId": row["user_id"],
            "accountId": row["account_id"], "status": row["status"], "message": row["message"],
            "createdAt": render(row["created_at"]), "expiresAt": render(row["expires_at"]),
            "usedAt": render(row["used_at"])}
