"""User UI session rules: a partner opens a session, a person registers on its page, the partner reads the
result.

States (the spec shows none; the simulator's choice): Pending → Completed (a user was registered) or
Expired (SESSION_LIFETIME_US passed on the world clock while Pending).
"""

from ..pages.models import closed, page_key
from ..partners import models as partners
from ..problems import not_found
from ..timestamps import SECOND_US, render
from ..users import models as users

SCHEMA = """
CREATE TABLE IF NOT EXISTS userui_sessions (
    id TEXT PRIMARY KEY,
    world TEXT NOT NULL,
    partner_id TEXT NOT NULL,
    page_key TEXT NOT NULL UNIQUE,
    redirect_url TEXT,
    status TEXT NOT NULL DEFAULT 'Pending',
    user_id TEXT,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    completed_at INTEGER
);
"""

SESSION_LIFETIME_US = 60 * 60 * SECOND_US


def status_of(ctx, row):
    if row["status"] == "Pending" and ctx.now >= row["expires_at"]:
        return "Expired"
    return row["status"]


def record(ctx, row, url):
    return {"id": row["id"], "url": url, "status": status_of(ctx, row), "userId": row["user_id"],
            "redirectUrl": row["redirect_url"], "createdAt": render(row["created_at"]),
            "expiresAt": render(row["expires_at"]), "completedAt": render(row["completed_at"])}


def create(ctx, partner_id, redirect_url=None):
    session_id = ctx.new_id("userui")
    ctx.store.insert("userui_sessions", id=session_id, world=ctx.world.id, partner_id=partner_id,
                     page_key=page_key(ctx, "userui", session_id),
                     redirect_url=None if redirect_url is None else partners.absolute_url(redirect_url),
                     status="Pending", created_at=ctx.now, expires_at=ctx.now + SESSION_LIFETIME_US)
    return get_owned(ctx, partner_id, session_id)


def get_owned(ctx, partner_id, session_id):
    """A session of the partner; another partner's (or world's) session is 404."""
    row = ctx.store.one("SELECT * FROM userui_sessions WHERE id = ? AND world = ? AND partner_id = ?",
                        (session_id, ctx.world.id, partner_id))
    if row is None:
        raise not_found("user UI session", session_id)
    return row


def get_by_key(store, key):
    return store.one("SELECT * FROM userui_sessions WHERE page_key = ?", (key,)) if key else None


def open_session(ctx, row):
    """The session a page may still act on: Pending and not expired, else a 409 the page shows."""
    status = status_of(ctx, row)
    if status != "Pending":
        raise closed(status, "This registration is already complete." if status == "Completed"
                     else "This registration link has expired; ask for a new one.")


def register(ctx, row, name, email):
    """The page's form: CreateUser for the session's partner, and the session completes with the user's id."""
    open_session(ctx, row)
    user = users.create(ctx, partners.require(ctx, row["partner_id"]), {"name": name, "email": email or None})
    ctx.store.update("userui_sessions", {"id": row["id"]}, status="Completed", user_id=user["id"],
                     completed_at=ctx.now)
    return ctx.store.one("SELECT * FROM userui_sessions WHERE id = ?", (row["id"],))
