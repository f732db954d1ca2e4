"""User rules: a partner registers users; a user sees only its own data. No Flask here."""

from .. import scopes
from ..partners import models as partners
from ..problems import BadRequest, not_found
from ..timestamps import render
from ..tokens import models as tokens

SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    id TEXT PRIMARY KEY,
    world TEXT NOT NULL,
    partner_id TEXT NOT NULL,
    name TEXT NOT NULL,
    email TEXT,
    scope TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    deleted_at INTEGER
);
CREATE INDEX IF NOT EXISTS users_by_partner ON users (world, partner_id, created_at);
"""


def record(row):
    """The user resource of spec §2; `deletedAt` only for deleted users (spec §4.3, §9 2.1.5)."""
    body = {"id": row["id"], "name": row["name"], "email": row["email"], "createdAt": render(row["created_at"]),
            "updatedAt": render(row["updated_at"])}
    if row["deleted_at"] is not None:
        body["deletedAt"] = render(row["deleted_at"])
    return body


def checked(values):
    columns = {}
    if "name" in values:
        columns["name"] = values["name"]
    if "email" in values:
        if values["email"] is not None and not partners.EMAIL.match(values["email"]):
            raise BadRequest(f"`email` {values['email']!r} is not an e-mail address.")
        columns["email"] = values["email"]
    return columns


def create(ctx, partner, values):
    """CreateUser: the user and its first token, valid for the partner's userTokenExpirySeconds.

    Spec §4.2 note 1: the token's scope is the request's `scope`, else `account:all transaction:all`;
    user.token:create only when the partner asks for it.
    """
    scope = scopes.parse(values["scope"], "user") if "scope" in values else scopes.DEFAULT_USER_SCOPE.split()
    columns = checked(values)
    user_id = ctx.new_id("user")
    columns.setdefault("name", columns.get("email") or f"User {user_id[:8]}")
    ctx.store.insert("users", id=user_id, world=ctx.world.id, partner_id=partner["id"], scope=" ".join(scope),
                     created_at=ctx.now, updated_at=ctx.now, deleted_at=None, email=columns.pop("email", None),
                     **columns)
    token = tokens.issue(ctx, partner_id=partner["id"], user_id=user_id, kind="user", scope=scope,
                         expires_in=partner["user_token_expiry"], name="initial user token")
    return {**record(get(ctx, partner["id"], user_id)), "token": token}


def get(ctx, partner_id, user_id, live=False):
    """One user of the partner (deleted ones too, unless `live`); another partner's user is 404."""
    row = ctx.store.one("SELECT * FROM users WHERE id = ? AND world = ? AND partner_id = ?",
                        (user_id, ctx.world.id, partner_id))
    if row is None or (live and row["deleted_at"] is not None):
        raise not_found("user", user_id)
    return row


def search(ctx, partner_id, name=None, email=None, text=None):
    """GetUsers: exact `name` and `email`, and `search` as a case-insensitive substring of either."""
    sql = "SELECT * FROM users WHERE world = ? AND partner_id = ?"
    params = [ctx.world.id, partner_id]
    if name is not None:
        sql += " AND name = ?"
        params.append(name)
    if email is not None:
        sql += " AND email = ? COLLATE NOCASE"
        params.append(email)
    if text:
        sql += " AND (instr(lower(name), lower(?)) > 0 OR instr(lower(coalesce(email, '')), lower(?)) > 0)"
        params += [text, text]
    return ctx.store.all(sql + " ORDER BY created_at, rowid", params)


def update(ctx, partner_id, user_id, values):
    get(ctx, partner_id, user_id, live=True)
    columns = checked(values)
    if columns:
        ctx.store.update("users", {"id": user_id}, updated_at=ctx.now, **columns)
    return get(ctx, partner_id, user_id)


def delete(ctx, partner_id, user_id):
    """DeleteUser: the user stays listed with deletedAt; its tokens stop working; a second delete is 404."""
    get(ctx, partner_id, user_id, live=True)
    ctx.store.update("users", {"id": user_id}, deleted_at=ctx.now, updated_at=ctx.now)
    tokens.revoke_all(ctx, user_id=user_id)


def delete_partner(ctx, partner_id):
    """Delete a child partner: its tokens stop working, its users and their tokens go with it."""
    partners.delete(ctx, partner_id)
    ctx.store.execute("UPDATE users SET deleted_at = ? WHERE world = ? AND partner_id = ? AND deleted_at IS NULL",
                      (ctx.now, ctx.world.id, partner_id))
    tokens.revoke_all(ctx, partner_id=partner_id)


def create_token(ctx, principal, partner, user, values):
    """CreateUserToken: a partner grants any user scope; a user only scopes its own token holds."""
    if "scope" in values:
        if principal.kind == "user":
            scope = tokens.granted_scope(principal, values["scope"], "user")
        else:
            scope = scopes.parse(values["scope"], "user")
    else:
        scope = sorted(principal.scopes) if principal.kind == "user" else user["scope"].split()
    return tokens.issue(ctx, partner_id=partner["id"], user_id=user["id"], kind="user", scope=scope,
                        expires_in=tokens.lifetime(values.get("expiresIn"), partner["user_token_expiry"]),
                        name=tokens.name_of(values.get("name")), created_by=principal.token_id)
