"""Who may see the inspector: one world's viewer (its token) or the server's admin (the admin key).

A browser cannot send an Authorization header when it follows a link, and a bearer token in a URL ends up in
histories, logs and Referer headers. So the control API mints a short-lived, single-use link
(`POST /_sandbox/inspect/links`); following it sets a session cookie (HttpOnly, SameSite=Strict, path
/_sandbox/inspect) naming the world and the token that asked. Every page checks again that the token is
still unrevoked, so revoking it or resetting the world ends the session. Forms carry a CSRF token bound to the
session. Tools that can send headers (curl, tests) use `Authorization: Bearer` or the admin key directly.
Lifetimes run on the wall clock: a world clock moved a year ahead must not expire a link made a second ago.
"""

import base64
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass

from ...webhooks.signatures import same_text

SCHEMA = """
CREATE TABLE IF NOT EXISTS inspector_tickets (
    digest TEXT PRIMARY KEY,
    world TEXT NOT NULL,
    token_id TEXT,
    expires_at INTEGER NOT NULL
);
"""
# `world` is '' for a server-wide (admin) ticket: wiping every world clears those too.
TICKET_SECONDS = 300
SESSION_SECONDS = 8 * 3600
COOKIE = "ptas_inspector"
ADMIN_HEADER = "X-Sandbox-Admin-Key"


@dataclass
class Viewer:
    world: object            # the World shown; None for the admin's list of worlds
    token_id: str | None     # the token the session stands for (None: admin)
    admin: bool = False
    session: str | None = None   # the cookie value, when the viewer came by cookie (CSRF binds to it)


def _key(secret, purpose):
    return hmac.new(secret.encode(), f"ptas-inspector:{purpose}".encode(), hashlib.sha256).digest()


def _digest(ticket):
    return hashlib.sha256(ticket.encode()).hexdigest()


def admin_key_ok(config, given):
    key = config.get("ADMIN_KEY")
    return bool(key and given and same_text(str(key), given))


def mint_ticket(store, now_us, world_id, token_id):
    """A single-use ticket for a link; expired tickets are dropped as new ones are made (bounded)."""
    ticket = secrets.token_urlsafe(32)
    with store.transaction():
        store.execute("DELETE FROM inspector_tickets WHERE expires_at < ?", (now_us,))
        store.insert("inspector_tickets", digest=_digest(ticket), world=world_id or "", token_id=token_id,
                     expires_at=now_us + TICKET_SECONDS * 1_000_000)
    return ticket, now_us + TICKET_SECONDS * 1_000_000


def redeem_ticket(store, now_us, ticket):
    """(world id or None for admin, token id) of an unexpired ticket, which is used up; None otherwise."""
    with store.transaction():
        row = store.one("SELECT * FROM inspector_tickets WHERE digest = ?", (_digest(ticket or ""),))
        if row is None:
            return None
        store.execute("DELETE FROM inspector_tickets WHERE digest = ?", (row["digest"],))
    if row["expires_at"] < now_us:
        return None
    return row["world"] or None, row["token_id"]


def session_cookie(secret, now_us, world_id, token_id):
    payload = base64.urlsafe_b64encode(json.dumps(
        {"w": world_id, "t": token_id, "x": now_us + SESSION_SECONDS * 1_000_000,
         "n": secrets.token_hex(8)}).encode()).decode()
    signature = hmac.new(_key(secret, "session"), payload.encode(), hashlib.sha256).hexdigest()
    return f"{payload}.{signature}"


def read_session(secret, now_us, cookie):
    """(world id or None, token id) of a valid, unexpired session cookie; None otherwise."""
    payload, _, signature = (cookie or "").partition(".")
    expected = hmac.new(_key(secret, "session"), payload.encode(), hashlib.sha256).hexdigest()
    if not payload or not same_text(expected, signature):
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(payload.encode()))
    except ValueError:
        return None
    if data.get("x", 0) < now_us:
        return None
    return data.get("w"), data.get("t")


def csrf_token(secret, session):
    return hmac.new(_key(secret, "csrf"), (session or "").encode(), hashlib.sha256).hexdigest()[:32]


def csrf_ok(secret, viewer, given):
    """Header-authenticated callers carry no ambient credential, so only cookie sessions need the token."""
    if viewer.session is None:
        return True
    return bool(given) and same_text(csrf_token(secret, viewer.session), given)
