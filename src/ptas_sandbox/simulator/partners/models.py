"""Partner rules: a root partner owns a world; child partners see neither their parent nor each other."""

import json
import re

from ..context import Ctx
from ..problems import BadRequest, not_found
from ..rows import PartnerRow
from ..store import Store
from ..timestamps import render

SCHEMA = """
CREATE TABLE IF NOT EXISTS partners (
    id TEXT PRIMARY KEY,
    world TEXT NOT NULL,
    parent_id TEXT,
    name TEXT NOT NULL,
    email TEXT,
    redirect_urls TEXT NOT NULL DEFAULT '[]',
    user_token_expiry INTEGER NOT NULL,
    ui_settings TEXT NOT NULL DEFAULT '{}',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    deleted_at INTEGER,
    created_by TEXT
);
CREATE INDEX IF NOT EXISTS partners_by_parent ON partners (world, parent_id);
"""

# Deliberately plain ASCII: the same expressions serve the models, jsonschema and the document's readers.
EMAIL = re.compile(r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$")
URL = re.compile(r"^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?([/?#][A-Za-z0-9._~:/?#@!$&'()*+,;=%-]*)?$")
# JSON Schema of the fields above, so the OpenAPI document states the same rules the models apply.
NAME_FIELD = {"type": "string", "minLength": 1, "maxLength": 200}
EMAIL_FIELD = {"type": ["string", "null"], "maxLength": 254, "pattern": EMAIL.pattern}
URL_FIELD = {"type": "string", "maxLength": 2000, "pattern": URL.pattern}


def record(row):
    """The partner resource of spec §2: e-mail, redirectUrls, name, userTokenExpirySeconds, uiSettings."""
    return {
        "id": row["id"],
        "name": row["name"],
        "email": row["email"],
        "redirectUrls": json.loads(row["redirect_urls"]),
        "userTokenExpirySeconds": row["user_token_expiry"],
        "uiSettings": json.loads(row["ui_settings"]),
        "createdAt": render(row["created_at"]),
        "updatedAt": render(row["updated_at"]),
    }


def absolute_url(url):
    """An absolute http(s) URL, or BadRequest: redirect and callback targets must be reachable by a browser."""
    if not isinstance(url, str) or not URL.match(url):
        raise BadRequest(f"{url!r} is not an absolute http(s) URL.")
    return url


# uiSettings.frameAncestors: the origins that may frame the partner's hosted pages (CSP frame-ancestors).
ORIGIN = re.compile(r"^https?://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:\d{1,5})?$")
MAX_FRAME_ANCESTORS = 20


def frame_ancestors(values):
    """The checked list of origins of `uiSettings.frameAncestors` (BadRequest names the first bad one)."""
    if not isinstance(values, list) or len(values) > MAX_FRAME_ANCESTORS:
        raise BadRequest(f"`uiSettings.frameAncestors` is a list of at most {MAX_FRAME_ANCESTORS} origins.")
    for value in values:
        if not isinstance(value, str) or not ORIGIN.match(value):
            raise BadRequest(f"`uiSettings.frameAncestors`: {value!r} is not an origin such as "
                             "https://app.example or http://localhost:3000 (scheme, host, optional port; no path).")
    return list(dict.fromkeys(values))


def settings(values):
    """Columns for the settings present in `values`, each checked (the JSON schema has checked types)."""
    columns = {}
    if "name" in values:
        columns["name"] = values["name"]
    if "email" in values:
        email = values["email"]
        if email is not None and not EMAIL.match(email):
            raise BadRequest(f"`email` {email!r} is not an e-mail address.")
        columns["email"] = email
    if "redirectUrls" in values:
        columns["redirect_urls"] = json.dumps([absolute_url(u) for u in values["redirectUrls"]])
    if "userTokenExpirySeconds" in values:
        columns["user_token_expiry"] = int(values["userTokenExpirySeconds"])   # JSON Schema: 600.0 is an integer
    if "uiSettings" in values:
        ui = {"styling": {}, **values["uiSettings"]}
        if "frameAncestors" in ui:
            ui["frameAncestors"] = frame_ancestors(ui["frameAncestors"])
        columns["ui_settings"] = json.dumps(ui)
    return columns


def create(ctx, values, parent_id=None, created_by=None):
    partner_id = ctx.new_id("partner")
    columns = {"name": f"Partner {partner_id[:8]}", "user_token_expiry": ctx.config["USER_TOKEN_LIFETIME"],
               "ui_settings": json.dumps({"styling": {}}), **settings(values)}
    ctx.store.insert("partners", id=partner_id, world=ctx.world.id, parent_id=parent_id, created_at=ctx.now,
                     updated_at=ctx.now, created_by=created_by, **columns)
    return require(ctx, partner_id)


def require(ctx: Ctx, partner_id: str) -> PartnerRow:
    row = ctx.store.one("SELECT * FROM partners WHERE id = ? AND world = ? AND deleted_at IS NULL",
                        (partner_id, ctx.world.id))
    if row is None:
        raise not_found("partner", partner_id)
    return row


def root_of(store: Store, world_id: str) -> str | None:
    """The id of the world's root partner (the one without a parent, who owns and steers the world), or None."""
    row = store.one("SELECT id FROM partners WHERE world = ? AND parent_id IS NULL", (world_id,))
    return None if row is None else row["id"]


def get_owned(ctx: Ctx, parent_id: str, partner_id: str) -> PartnerRow:
    """A live child of `parent_id`; anything else (a sibling, the parent, another world) is 404."""
    row = require(ctx, partner_id)
    if row["parent_id"] != parent_id:
        raise not_found("partner", partner_id)
    return row


def children(ctx, parent_id):
    return ctx.store.all("SELECT * FROM partners WHERE world = ? AND parent_id = ? AND deleted_at IS NULL "
                         "ORDER BY created_at, rowid", (ctx.world.id, parent_id))


def update(ctx, partner_id, values):
    columns = settings(values)
    if columns:
        ctx.store.update("partners", {"id": partner_id}, updated_at=ctx.now, **columns)
    return require(ctx, partner_id)


def delete(ctx, partner_id):
    """Mark a child partner deleted (its users and tokens go with it: users.models.delete_partner)."""
    ctx.store.update("partners", {"id": partner_id}, deleted_at=ctx.now)
