"""What each inspector tab shows of one world, read through the areas' own record functions.

The inspector is a read-only window on every area of a world, so it reads their tables by world and shapes
rows with each area's `record`; secrets (webhook secrets, token strings) never reach a page.
"""

import json
from collections import OrderedDict

from ... import events
from ...accounts import models as accounts
from ...dataimports import models as dataimports
from ...timestamps import render
from ...tokens import models as tokens
from ...webhooks import deliveries as delivery_log
from ...webhooks import models as webhooks
from ..echo import models as echo
from ..journal import models as journal

PAGE = 50
ECHO_PATH = "/_sandbox/echo/"


def pretty(value):
    """JSON as people read it: indented, keys in the order given; text stays text (JSON inside is indented)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, indent=2, ensure_ascii=False)


def requests(ctx, query):
    """The journal, filtered like GET /_sandbox/requests, one page at a time (older with `before`)."""
    filters = {"operation": query.get("operationId") or None, "status": query.get("status") or None,
               "token": query.get("tokenId") or None}
    before = query.get("before")
    found = journal.entries(ctx.store, ctx.world.id, limit=PAGE + 1, tools=query.get("tools") == "1",
                            before=int(before) if entry_id(before) else None,
                            **{k: v for k, v in filters.items() if v})
    operations = sorted({r["operation"] for r in ctx.store.all(
        "SELECT DISTINCT operation FROM journal WHERE world = ?", (ctx.world.id,))})
    return {"entries": found[:PAGE], "older": found[PAGE - 1]["id"] if len(found) > PAGE else None,
            "operations": operations}


def entry_id(text):
    """True for an entry id as a page's address may carry it (digits, within SQL's integers)."""
    return bool(text) and str(text).isdigit() and len(str(text)) < 16


def entry(ctx, ident):
    return journal.get(ctx.store, ctx.world.id, int(ident)) if entry_id(ident) else None


def subscriptions(ctx):
    rows = ctx.store.all("SELECT * FROM webhooks WHERE world = ? ORDER BY created_at", (ctx.world.id,))
    found = []
    for row in rows:
        record = webhooks.record(row)
        record["secret"] = record["secret"][:10] + "…"     # enough to tell secrets apart
        record["partnerId"] = row["partner_id"]
        found.append(record)
    return found


def deliveries(ctx, hooks, webhook_id=None):
    """Notifications, newest first, each with its attempts in order."""
    by_event = OrderedDict()
    for attempt in reversed(delivery_log.log(ctx.store, hooks, ctx.world.id, webhook_id=webhook_id or None, limit=300)):
        key = (attempt["eventId"], attempt["webhookId"])
        by_event.setdefault(key, {"eventId": attempt["eventId"], "webhookId": attempt["webhookId"],
                                  "eventType": attempt["eventType"], "isTest": attempt["isTest"],
                                  "url": attempt["url"], "attempts": []})["attempts"].insert(0, attempt)
    for notification in by_event.values():
        notification["status"] = notification["attempts"][-1]["status"]
    return list(by_event.values())


def echo_bins(hooks):
    """The echo bins the world's webhooks point at: their captures belong on its page."""
    bins = []
    for hook in hooks:
        url = hook["callbackUrl"]
        if ECHO_PATH in url:
            name = url.split(ECHO_PATH, 1)[1].split("?", 1)[0].split("/", 1)[0]
            if name and name not in bins:
                bins.append(name)
    return bins


def captures(ctx, bins):
    return {name: list(reversed(echo.captures(ctx.store, name, [ctx.world.id], limit=20))) for name in bins}


def webhooks_tab(ctx, query, stages):
    hooks = subscriptions(ctx)
    bins = echo_bins(hooks)
    return {"hooks": hooks, "deliveries": deliveries(ctx, stages, query.get("webhookId")), "bins": bins,
            "captures": captures(ctx, bins), "kinds": events.ACTIVE, "webhookId": query.get("webhookId")}


def accounts_tab(ctx, query):
    user_id = query.get("userId") or None
    where, params = "world = ?", [ctx.world.id]
    if user_id:
        where += " AND user_id = ?"
        params.append(user_id)
    rows = ctx.store.all(f"SELECT * FROM accounts WHERE {where} ORDER BY created_at", tuple(params))
    found = []
    for row in rows:
        try:
            found.append(accounts.record(ctx, row))
        except KeyError:      # an account type no longer in the catalogue: show the row plainly
            found.append({"id": row["id"], "userId": row["user_id"], "accountTypeId": row["type_id"]})
    account_id = query.get("accountId") or None
    where, params = "world = ?", [ctx.world.id]
    if account_id:
        where += " AND account_id = ?"
        params.append(account_id)
    imports = [dataimports.record(r) for r in ctx.store.all(
        f"SELECT * FROM data_imports WHERE {where} ORDER BY started_at DESC LIMIT 200", tuple(params))]
    users = {r["id"]: r["name"] for r in ctx.store.all("SELECT id, name FROM users WHERE world = ?",
                                                        (ctx.world.id,))}
    return {"accounts": found, "imports": imports, "users": users, "userId": user_id, "accountId": account_id}


def tokens_tab(ctx, query):
    rows = ctx.store.all("SELECT * FROM tokens WHERE world = ? ORDER BY created_at", (ctx.world.id,))
    found = []
    for row in rows:
        record = tokens.record(row, ctx.now)
        record.update(ref=row["id"], kind=row["kind"], partnerId=row["partner_id"], userId=row["user_id"])
        found.append(record)
    return {"tokens": list(reversed(found))}


def clock_tab(ctx, query):
    return {"now": render(ctx.now), "frozen": ctx.world.frozen}
