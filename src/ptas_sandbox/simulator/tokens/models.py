"""Token rules: issue, list, revoke, and authenticate a bearer on the world clock."""

from .. import scopes as scope_table
from ..auth import WORLD_KEY, Principal, remembered_token
from ..partners import models as partners
from ..problems import BadRequest, Conflict, Forbidden, Unauthorized, not_found
from ..timestamps import LATEST, SECOND_US, render

SCHEMA = """
CREATE TABLE IF NOT EXISTS tokens (
    id TEXT PRIMARY KEY,
    world TEXT NOT NULL,
    partner_id TEXT NOT NULL,
    user_id TEXT,
    kind TEXT NOT NULL,
    name TEXT,
    scope TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_in INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    revoked_at INTEGER,
    last_used_at INTEGER,
    created_by TEXT
);
CREATE INDEX IF NOT EXISTS tokens_by_partner ON tokens (world, partner_id, kind, created_at);
"""

HOUR_S = 3600
CHILD_DEFAULT_LIFETIME_S = 15_768_000  # spec §4.1 rule 2 and §8: 6 months, half of the spec's one-year 31536000


def has_public_id(row):
    """Spec §2, §5 rule 3, §8: partner tokens get an id only when their lifetime exceeds one hour."""
    return row["kind"] == "partner" and row["expires_in"] > HOUR_S


def record(row, now, access_token=None):
    """The token record of spec §2; `accessToken` only in the response that creates the token."""
    revoked = row["revoked_at"] is not None
    expired = now >= row["expires_at"]
    body = {}
    if has_public_id(row):
        body["id"] = row["id"]
    body.update({
        "name": row["name"],
        "createdAt": render(row["created_at"]),
        "expiresIn": row["expires_in"],
        "expiresAt": render(row["expires_at"]),
        "isRevoked": revoked,
        "isExpired": expired,
        "isValid": not revoked and not expired,
        "scope": row["scope"],
        "lastUsedAt": render(row["last_used_at"]),
        "revokedAt": render(row["revoked_at"]),
    })
    if access_token is not None:
        body["accessToken"] = access_token
    return body


def lifetime(value, default=None):
    """`expiresIn`: a positive whole number of seconds (spec §8: any value, as long as it is one)."""
    if value is None:
        if default is None:
            raise BadRequest("`expiresIn` is required: the token's lifetime in seconds.")
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)   # JSON Schema counts 3600.0 as an integer, and so do we
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest("`expiresIn` must be a whole number of seconds.")
    if value <= 0:
        raise BadRequest("`expiresIn` must be a positive number of seconds.")
    return value


def name_of(value):
    if value is not None and not isinstance(value, str):
        raise BadRequest("`name` must be a string.")
    return value


def issue(ctx, *, partner_id, kind, scope, expires_in, name=None, user_id=None, created_by=None):
    """Create a token and its JWT; spec §3: a new token is valid, its accessToken returned once."""
    expires_at = ctx.now + expires_in * SECOND_US
    if expires_at > LATEST:
        raise BadRequest(f"`expiresIn` {expires_in} puts the expiry past 9999-12-31, the last date a "
                         "timestamp can show.")
    token_id = ctx.new_id("token")
    row = dict(id=token_id, world=ctx.world.id, partner_id=partner_id, user_id=user_id, kind=kind, name=name,
               scope=" ".join(scope), created_at=ctx.now, expires_in=expires_in, expires_at=expires_at,
               revoked_at=None, last_used_at=None, created_by=created_by)
    ctx.store.insert("tokens", **row)
    jwt = ctx.signer.issue(token_id=token_id, subject=user_id or partner_id, kind=kind, world=ctx.world.id,
                           scope=row["scope"], issued_at=ctx.now, expires_at=expires_at)
    return record(row, ctx.now, access_token=jwt)


def granted_scope(principal, text, kind):
    """The scopes a new token asks for, each valid for `kind`; 403 for any the creator does not hold itself."""
    requested = scope_table.parse(text, kind)
    missing = scope_table.within(principal.scopes, requested)
    if missing:
        raise Forbidden(f"A token grants only scopes it holds itself; the calling token lacks {' '.join(missing)}.")
    return requested


def partner_tokens(ctx, partner_id):
    rows = ctx.store.all("SELECT * FROM tokens WHERE world = ? AND partner_id = ? AND kind = 'partner' "
                         "ORDER BY created_at, rowid", (ctx.world.id, partner_id))
    return [record(r, ctx.now) for r in rows]


def unrevoked(store, world_id, token_id):
    """The row of a token of the world that exists and is not revoked, or None: what a session opened with it (the
    inspector's) or a snapshot's access to it needs."""
    return store.one("SELECT * FROM tokens WHERE id = ? AND world = ? AND revoked_at IS NULL", (token_id, world_id))


def unrevoked_partner_tokens(store, world_id, partner_id):
    """The rows of a partner's partner tokens that are not revoked."""
    return store.all("SELECT * FROM tokens WHERE world = ? AND partner_id = ? AND kind = 'partner' "
                     "AND revoked_at IS NULL", (world_id, partner_id))


def revoke(ctx, partner_id, token_id, caller_token_id):
    """Spec §3: revoke a partner token by id; never the token making the call (spec §5 rule 2)."""
    row = ctx.store.one("SELECT * FROM tokens WHERE world = ? AND partner_id = ? AND id = ? AND kind = 'partner'",
                        (ctx.world.id, partner_id, token_id))
    if row is None or not has_public_id(row):
        raise not_found("token", token_id)
    if row["id"] == caller_token_id:
        raise Conflict("A token cannot revoke itself: revoke it with another token (spec §3, §5 rule 2).")
    if row["revoked_at"] is None:
        ctx.store.update("tokens", {"id": row["id"]}, revoked_at=ctx.now)
    return record(ctx.store.one("SELECT * FROM tokens WHERE id = ?", (row["id"],)), ctx.now)


def revoke_all(ctx, *, partner_id=None, user_id=None):
    """Revoke every live token of a deleted partner or user."""
    column, value = ("user_id", user_id) if user_id else ("partner_id", partner_id)
    revoked = ctx.store.all(f"UPDATE tokens SET revoked_at = ? WHERE world = ? AND {column} = ? "
                            "AND revoked_at IS NULL RETURNING id", (ctx.now, ctx.world.id, value))
    for row in revoked:     # a deleted user's tokens are seldom tried again: their rows need not stay in memory
        ctx.state.drop(remembered_token(ctx.world.id, row["id"]))


def authenticate(ctx, claims, row=None):
    """The principal of verified JWT claims, on the world clock: 401 when expired, revoked or unknown.

    Without `row`, records `lastUsedAt` (spec §2) in the same statement that reads the token: call it inside a
    transaction, which a refusal rolls back, so a refused token's `lastUsedAt` stays as it was. With the row
    `read_token` gave, it only judges it (the caller records the use: requeststate.memory). A deleted user or child
    partner has no valid tokens: deleting one revokes them (`revoke_all`), so the tokens table alone answers.
    """
    if row is None:
        row = ctx.store.one("UPDATE tokens SET last_used_at = ? WHERE id = ? AND world = ? RETURNING *",
                            (ctx.now, claims["jti"], ctx.world.id))
    if row is None or row["kind"] != claims["knd"]:
        raise Unauthorized("The bearer token is not known to this service.")
    if row["revoked_at"] is not None:
        raise Unauthorized("The bearer token has been revoked.")
    if ctx.now >= row["expires_at"]:
        raise Unauthorized("The bearer token has expired.")
    return Principal(row["id"], row["kind"], row["partner_id"], row["user_id"], frozenset(row["scope"].split()))


def read_token(ctx, claims):
    """The token row of verified claims, or None; what `authenticate` judges, read without recording a use."""
    return ctx.store.one("SELECT id, kind, partner_id, user_id, scope, revoked_at, expires_at FROM tokens "
                         "WHERE id = ? AND world = ?", (claims["jti"], ctx.world.id))


def record_uses(store, uses):
    """Written behind: each token's latest `lastUsedAt` of `uses` ((token id, world, world-clock instant)); a
    later use already stored is kept."""
    latest: dict[tuple[str, str], int] = {}
    for token_id, world, at in uses:
        if at > latest.get((token_id, world), at - 1):
            latest[token_id, world] = at
    store.executemany("UPDATE tokens SET last_used_at = ? WHERE id = ? AND world = ? "
                      "AND (last_used_at IS NULL OR last_used_at < ?)",
                      [(at, token_id, world, at) for (token_id, world), at in latest.items()])


CONTROL_SCOPES = ("partner:update",)     # or partner:all, which covers it


def control_principal(ctx, claims):
    """Who steers a world through the control API (docs/design.md): its root partner's tokens holding
    `partner:update` or `partner:all`, expired or not (a harness that moved the clock past its token's expiry can
    still steer and renew it), revoked never; the root partner's id. Child partners', deploy and narrower
    tokens get 403. The world key (auth.world_key) steers its world whatever became of the partner's tokens."""
    if claims["knd"] == WORLD_KEY:
        root = partners.root_of(ctx.store, ctx.world.id)
        if root is None:
            raise Unauthorized("The world of this world key has no root partner.")
        return root
    row = ctx.store.one("SELECT partner_id, revoked_at, scope FROM tokens WHERE id = ? AND world = ? "
                        "AND kind = 'partner'", (claims["jti"], ctx.world.id))
    if claims["knd"] != "partner":       # a valid token of the wrong kind: refused, as the service refuses it
        raise Forbidden("The control API takes partner tokens, not user tokens.")
    if row is None or row["revoked_at"] is not None:
        raise Unauthorized("The control API needs a partner token of the world (revoked tokens do not count).")
    if row["partner_id"] != partners.root_of(ctx.store, ctx.world.id):
        raise Forbidden("Only the world's root partner steers it; a child partner's token does not.")
    if not scope_table.holds_any(frozenset(row["scope"].split()), CONTROL_SCOPES):
        raise Forbidden("The control API needs a root partner token holding partner:update or partner:all.",
                        requiredScopes=["partner:update", "partner:all"])
    return row["partner_id"]
