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
URL = re.compile(r"^https?://([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?([/?#][A-Za-z0-9._~:/?#@!$&'()*+,;=%-]*)?$")
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
# uiSettings.styling: the properties a partner may set, and the value shapes accepted for them. The hosted pages
# write them into <style> as they are, so none of these shapes holds <, >, &, ;, {, }, \\ or a newline.
COLOR = re.compile(r"^(#[0-9a-fA-F]{3,8}|[a-zA-Z]{3,20}|rgba?\(\s*[\d.%\s,]+\))$")
LENGTH = re.compile(r"^\d{1,3}(\.\d{1,2})?(px|em|rem|%)?$")
# Font families: names of letters, digits, spaces and hyphens, bare or in single or double quotes, separated by
# commas (`"Open Sans", sans-serif`).
FAMILY = r"""(?:[A-Za-z0-9][A-Za-z0-9 -]*|"[A-Za-z0-9 -]+"|'[A-Za-z0-9 -]+')"""
FONT = re.compile(rf"^\s*{FAMILY}\s*(,\s*{FAMILY}\s*)*$")
STYLING = {"primaryColor": COLOR, "backgroundColor": COLOR, "textColor": COLOR, "buttonTextColor": COLOR,
           "fontFamily": FONT, "borderRadius": LENGTH}
EXAMPLES = {COLOR: "#0b5fff or rgb(11, 95, 255)", LENGTH: "8px", FONT: '"Open Sans", sans-serif'}


def safe_style(key, value):
    """Whether `value` is a styling value of `key` that a page may write into its <style> as it is."""
    shape = STYLING.get(key)
    return shape is not None and isinstance(value, str) and len(value) <= 120 and bool(shape.match(value.strip()))


def styling(given):
    """uiSettings.styling as given, or BadRequest naming the key: an unknown key or a value that could end its CSS
    declaration is refused when it is set, not stored to be dropped (or echoed) later."""
    for key, value in given.items():
        if key not in STYLING:
            raise BadRequest(f"`uiSettings.styling.{key}` is not a styling property; the properties are "
                             f"{', '.join(STYLING)}.")
        if not safe_style(key, value):
            raise BadRequest(f"`uiSettings.styling.{key}` must be like {EXAMPLES[STYLING[key]]}: "
                             "letters, digits, quotes, commas and parentheses, at most 120 characters.")
    return given


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
        ui["styling"] = styling(ui["styling"])
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
    """The partner's row (remembered: nearly every request reads its caller's partner), or 404."""
    row = ctx.remember(("partner", ctx.world.id, partner_id), lambda: ctx.store.one(
        "SELECT * FROM partners WHERE id = ? AND world = ? AND deleted_at IS NULL", (partner_id, ctx.world.id)))
    if row is None:
        raise not_found("partner", partner_id)
    return row.copy()       # what is remembered is never changed by its reader


def world_of(store: Store, partner_id: str) -> str | None:
    """The id of the world holding partner `partner_id`, in any world (a snapshot loaded over its source), or None."""
    row = store.one("SELECT world FROM partners WHERE id = ?", (partner_id,))
    return None if row is None else row["world"]


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
