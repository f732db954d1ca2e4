"""Webhook subscriptions (spec §4.2 webhook rows, §6; field names: docs/design.md): which partner's events go to
which callback URL, signed with which secret. The delivery log is deliveries.py.
"""

import base64
import json
import re
import secrets
from urllib.parse import urlsplit

from ..events import ACTIVE, RETIRED
from ..partners.models import absolute_url
from ..problems import BadRequest, not_found
from ..timestamps import render
from . import deliveries
from .deliveries import cancel_pending, last_event
from .sender import ECHO_PATH, OWN_HOSTS, literal_refusal, private_callbacks_allowed
from .signatures import PREFIX

SCHEMA = """
CREATE TABLE IF NOT EXISTS webhooks (
    id TEXT PRIMARY KEY,
    world TEXT NOT NULL,
    partner_id TEXT NOT NULL,
    name TEXT,
    callback_url TEXT NOT NULL,
    events TEXT NOT NULL,
    is_active INTEGER NOT NULL,
    secret TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    after_seq INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS webhooks_by_partner ON webhooks (world, partner_id, created_at);
""" + deliveries.SCHEMA         # the app reads an area's tables from its models module

KINDS = ACTIVE + RETIRED
# A Standard Webhooks secret (whsec_ and base64 of 15+ bytes) or 16+ printable ASCII characters; plain ASCII so
# jsonschema, the document and the model apply the same rule.
SECRET = re.compile(r"^(whsec_([A-Za-z0-9+/]{4}){5,}([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?|(?!whsec_)[!-~]{16,200})$")


def record(row):
    """A webhook subscription as the API shows it (field names: docs/design.md)."""
    return {"id": row["id"], "name": row["name"], "callbackUrl": row["callback_url"],
            "events": json.loads(row["events"]), "isActive": bool(row["is_active"]), "secret": row["secret"],
            "createdAt": render(row["created_at"]), "updatedAt": render(row["updated_at"])}


def event_kinds(values):
    """The subscribed kinds, deduplicated in order; the retired ones are accepted (and never fire)."""
    unknown = [v for v in values if v not in KINDS]
    if unknown:
        raise BadRequest(f"Unknown event kinds {', '.join(map(repr, unknown))}; known: {', '.join(KINDS)}.",
                         allowed=list(KINDS))
    if not values:
        raise BadRequest("`events` must name at least one event kind.")
    return list(dict.fromkeys(values))


def secret_of(value):
    if not SECRET.match(value):
        raise BadRequest("`secret` is whsec_ and at least 15 bytes in base64, or 16 to 200 other printable "
                         "ASCII characters (no spaces).")
    return value


def new_secret():
    """A Standard Webhooks secret from the CSPRNG. Seeds make data and ids reproducible, never secrets: a secret
    that follows from the world seed lets anyone who knows the seed forge notifications that pass `verify`."""
    return PREFIX + base64.b64encode(secrets.token_bytes(24)).decode()


def callback_url(ctx, url):
    """An absolute http(s) URL the server may call: one naming a loopback, private or link-local address
    literally is refused here already, unless private callbacks are allowed or it is the sandbox's own echo
    receiver at a loopback host (the only place the dispatcher calls it; at a private address the attempt
    would be refused). Names are resolved and checked at every attempt (the dispatcher), not here."""
    url = absolute_url(url)
    parts = urlsplit(url)
    if private_callbacks_allowed(ctx.config) or (parts.path.startswith(ECHO_PATH) and parts.hostname in OWN_HOSTS):
        return url
    reason = literal_refusal(url)
    if reason:
        raise BadRequest(f"`callbackUrl` names a {reason} address; this sandbox calls only public addresses and "
                         "its own echo receiver (/_sandbox/echo/...). A sandbox on your machine can call local "
                         "receivers when started with --allow-private-callbacks.")
    return url


def columns(ctx, values):
    """Store columns for the API fields present in `values` (types already checked by the schema)."""
    out = {}
    if "name" in values:
        out["name"] = values["name"]
    if "callbackUrl" in values:
        out["callback_url"] = callback_url(ctx, values["callbackUrl"])
    if "events" in values:
        out["events"] = json.dumps(event_kinds(values["events"]))
    if "isActive" in values:
        out["is_active"] = int(values["isActive"])
    if "secret" in values:
        out["secret"] = secret_of(values["secret"])
    return out


def create(ctx, partner_id, values):
    webhook_id = ctx.new_id("webhook")
    row = {"name": None, "is_active": 1, **columns(ctx, values)}
    row.setdefault("secret", new_secret())
    ctx.store.insert("webhooks", id=webhook_id, world=ctx.world.id, partner_id=partner_id,
                     created_at=ctx.now, updated_at=ctx.now, after_seq=last_event(ctx.store), **row)
    return record(get_owned(ctx, partner_id, webhook_id))


def get_owned(ctx, partner_id, webhook_id):
    row = ctx.store.one("SELECT * FROM webhooks WHERE world = ? AND partner_id = ? AND id = ?",
                        (ctx.world.id, partner_id, webhook_id))
    if row is None:
        raise not_found("webhook", webhook_id)
    return row


def listing(ctx, partner_id):
    rows = ctx.store.all("SELECT * FROM webhooks WHERE world = ? AND partner_id = ? ORDER BY created_at, rowid",
                         (ctx.world.id, partner_id))
    return [record(r) for r in rows]


def replace(ctx, partner_id, webhook_id, values):
    """PUT: the body is the whole subscription; absent optional fields take their defaults, except the secret,
    which is kept (rotating a secret is something to ask for, not a side effect of an update)."""
    get_owned(ctx, partner_id, webhook_id)
    return change(ctx, partner_id, webhook_id, {"name": None, "isActive": True, **values})


def change(ctx, partner_id, webhook_id, values):
    """PATCH: only the fields given change."""
    row = get_owned(ctx, partner_id, webhook_id)
    changes = columns(ctx, values)
    if changes.get("is_active") and not row["is_active"]:
        changes["after_seq"] = last_event(ctx.store)        # nothing from the time it was paused
    ctx.store.update("webhooks", {"id": webhook_id}, updated_at=ctx.now, **changes)
    return record(get_owned(ctx, partner_id, webhook_id))


def delete(ctx, partner_id, webhook_id):
    get_owned(ctx, partner_id, webhook_id)
    ctx.store.execute("DELETE FROM webhooks WHERE id = ?", (webhook_id,))
    cancel_pending(ctx.store, webhook_id, "the webhook was deleted before this attempt")
