"""User rules: a partner registers users; a user sees only its own data.

"Its own data" is this area's rule for every table keyed by user (accounts, data imports): `of_caller` and
`one_of_caller` answer what a caller may see of them, so the areas above ask here rather than each other.
"""

from .. import scopes
from ..context import Ctx
from ..partners import models as partners
from ..problems import BadRequest, NotFound, not_found
from ..providers import models as providers
from ..rows import UserRow
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
    row = dict(id=user_id, world=ctx.world.id, partner_id=partner["id"], scope=" ".join(scope), created_at=ctx.now,
               updated_at=ctx.now, deleted_at=None, email=columns.pop("email", None), **columns)
    ctx.store.insert("users", **row)
    token = tokens.issue(ctx, partner_id=partner["id"], user_id=user_id, kind="user", scope=scope,
                         expires_in=partner["user_token_expiry"], name="initial user token")
    return {**record(row), "token": token}


def get_owned(ctx: Ctx, partner_id: str, user_id: str, live: bool = False) -> UserRow:
    """One user of the partner (deleted ones too, unless `live`); another partner's user is 404."""
    row = ctx.store.one("SELECT * FROM users WHERE id = ? AND world = ? AND partner_id = ?",
                        (user_id, ctx.world.id, partner_id))
    if row is None or (live and row["deleted_at"] is not None):
        raise not_found("user", user_id)
    return row


def is_deleted(ctx: Ctx, user_id: str) -> bool:
    """Whether the user was deleted (its rows stay readable for its partner, its tokens and data do not)."""
    row = ctx.store.one("SELECT deleted_at FROM users WHERE id = ?", (user_id,))
    return row is not None and row["deleted_at"] is not None


def search(ctx, partner_id, name=None, email=None, text=None):
    """GetUsers: exact `name` and `email`, and `search` as a case-insensitive substring of either."""
    sql = "SELECT * FROM users WHERE world = ? AND partner_id = ?"
    params = [ctx.world.id, partner_id]
    if name is not None:
        sql += " AND name = ?"
        params.append(name)
    if email is not None:
        sql += " AND lower(email) = lower(?)"
        params.append(email)
    if text:
        sql += " AND (instr(lower(name), lower(?)) > 0 OR instr(lower(coalesce(email, '')), lower(?)) > 0)"
        params += [text, text]
    return ctx.store.all(sql + " ORDER BY created_at, rowid", params)


def update(ctx, partner_id, user_id, values):
    get_owned(ctx, partner_id, user_id, live=True)
    columns = checked(values)
    if columns:
        ctx.store.update("users", {"id": user_id}, updated_at=ctx.now, **columns)
    return get_owned(ctx, partner_id, user_id)


def delete(ctx, partner_id, user_id):
    """DeleteUser: the user stays listed with deletedAt; its tokens stop working; a second delete is 404."""
    get_owned(ctx, partner_id, user_id, live=True)
    ctx.store.update("users", {"id": user_id}, deleted_at=ctx.now, updated_at=ctx.now)
    tokens.revoke_all(ctx, user_id=user_id)


def delete_partner(ctx, partner_id):
    """Delete a child partner with the partners below it: their tokens stop working, their users and their tokens
    go with them. A grandchild left behind would keep working tokens that no partner could reach any more."""
    below, level = [partner_id], [partner_id]
    while level:
        level = [child["id"] for parent in level for child in partners.children(ctx, parent)]
        below += level
    for each in below:
        partners.delete(ctx, each)
        ctx.store.execute("UPDATE users SET deleted_at = ? WHERE world = ? AND partner_id = ? AND deleted_at IS NULL",
                          (ctx.now, ctx.world.id, each))
        tokens.revoke_all(ctx, partner_id=each)


def create_token(ctx, principal, partner, user, values):
    """CreateUserToken: a partner grants any user scope and lifetime (spec §8); a user only scopes its own token
    holds, living at most the partner's userTokenExpirySeconds (spec §5 rule 6: the lifetime the partner set
    for tokens in end users' hands, which a user token must not extend by minting itself a longer one)."""
    if "scope" in values:
        if principal.kind == "user":
            scope = tokens.granted_scope(principal, values["scope"], "user")
        else:
            scope = scopes.parse(values["scope"], "user")
    else:
        scope = sorted(principal.scopes) if principal.kind == "user" else user["scope"].split()
    longest = partner["user_token_expiry"]
    expires_in = tokens.lifetime(values.get("expiresIn"), longest)
    if principal.kind == "user" and expires_in > longest:
        raise BadRequest(f"A user token may ask for a token of at most {longest} seconds, its partner's "
                         f"userTokenExpirySeconds (spec §5 rule 6), not {expires_in}; leave out `expiresIn` to "
                         "get that lifetime.")
    return tokens.issue(ctx, partner_id=partner["id"], user_id=user["id"], kind="user", scope=scope,
                        expires_in=expires_in, name=tokens.name_of(values.get("name")),
                        created_by=principal.token_id)


def owner(ctx, principal, user_id):
    """The user an operation acts for: a user token acts for itself; a partner token names one of its users."""
    if principal.kind == "user":
        if user_id is not None and user_id != principal.user_id:
            raise not_found("user", user_id)
        return principal.user_id
    if not user_id:
        # 404 rather than 400: the body is well formed, the user the partner acts for is not found.
        raise NotFound("A partner token acts for one of its users: name the user in `userId`.")
    return get_owned(ctx, principal.partner_id, user_id, live=True)["id"]


def of_caller(ctx, principal, table, order, **filters):
    """Rows of `table` (accounts, data imports) the caller may see: of its partner's live users, and only its
    own for a user token. `filters` are column=value pairs; None means no filter."""
    sql = (f"SELECT t.* FROM {table} t JOIN users u ON u.id = t.user_id WHERE t.world = ? AND t.partner_id = ? "
           "AND u.deleted_at IS NULL")
    params = [ctx.world.id, principal.partner_id]
    if principal.kind == "user":
        filters["user_id"] = principal.user_id if filters.get("user_id") in (None, principal.user_id) else ""
    for column, value in filters.items():
        if value is not None:
            sql += f" AND t.{column} = ?"
            params.append(value)
    return ctx.store.all(f"{sql} ORDER BY {order}", params)


def get_owned_row(ctx, principal, table, row_id, what):
    """The row `row_id` of `table` if the caller may see it (`of_caller`); 404 naming `what` otherwise."""
    rows = of_caller(ctx, principal, table, "t.id", id=row_id)
    if not rows:
        raise not_found(what, row_id)
    return rows[0]


def statistics(ctx, user_id):
    """Spec §1 capability 2, "user information and statistics": the user's accounts and their transactions."""
    rows = ctx.store.all("SELECT * FROM accounts WHERE world = ? AND user_id = ? ORDER BY created_at, seq",
                         (ctx.world.id, user_id))
    stats = [providers.statistics(ctx.world.seed, row) for row in rows]
    firsts = [s["first"] for s in stats if s["first"]]
    lasts = [s["last"] for s in stats if s["last"]]
    return {"accounts": len(rows), "transactions": sum(s["count"] for s in stats),
            "first": min(firsts, default=None), "last": max(lasts, default=None)}
