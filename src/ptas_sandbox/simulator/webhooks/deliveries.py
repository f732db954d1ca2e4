"""The webhook delivery log (spec §6): it turns outbox events into signed attempts with retries on the world
clock. No Flask, no network here (the dispatcher does the I/O); subscriptions are in models.py.

A delivery row is one attempt. Fan-out writes attempt 1 of every (event, subscribed webhook), due when the
event happened; `claim` marks due attempts `sending` and signs them; `record_outcome` stores the outcome and, on
failure, writes the next attempt at `BACKOFF_S[attempt]` seconds later on the world clock, until the schedule
runs out. Retries and first attempts share one code path, and every attempt stays in the log.
"""

import json

from .. import events as outbox
from ..events import ACTIVE, mark_fanned
from ..timestamps import SECOND_US, render
from ..worlds import derived_id
from .sender import BODY_KEPT, destination
from .signatures import sign

SCHEMA = """
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    world TEXT NOT NULL,
    partner_id TEXT NOT NULL,
    webhook_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    test INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    status TEXT NOT NULL,
    due_at INTEGER NOT NULL,
    url TEXT NOT NULL,
    request_body TEXT NOT NULL,
    request_headers TEXT,
    attempted_at INTEGER,
    response_status INTEGER,
    response_headers TEXT,
    response_body TEXT,
    error TEXT,
    duration_ms REAL,
    next_retry_at INTEGER,
    lease_until INTEGER,
    claimed_by TEXT
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (status, world, due_at);
CREATE INDEX IF NOT EXISTS webhook_deliveries_by_world ON webhook_deliveries (world, seq);
CREATE INDEX IF NOT EXISTS webhook_deliveries_leased ON webhook_deliveries (status, lease_until);
CREATE INDEX IF NOT EXISTS webhook_deliveries_by_event ON webhook_deliveries (event_id);
"""

# Seconds to wait after a failed attempt before the next one; attempt 1 goes out when the event happens, so a
# notification gets 1 + len(BACKOFF_S) attempts in all (about 1 h 12 min of world time), then is given up.
BACKOFF_S = (30, 120, 600, 3600)
MAX_ATTEMPTS = 1 + len(BACKOFF_S)


def last_event(store):
    """The outbox position now: a webhook gets the events recorded after it was subscribed (or reactivated),
    however late the dispatcher fans them out."""
    return store.one("SELECT COALESCE(MAX(seq), 0) AS seq FROM events")["seq"]


def cancel_pending(store, webhook_id, reason):
    store.execute("UPDATE webhook_deliveries SET status = 'cancelled', error = ? "
                  "WHERE webhook_id = ? AND status = 'pending'", (reason, webhook_id))


def payload(event, store=None, hooks=None):
    """The notification body of an outbox event (docs/design.md): id, eventType, createdAt, data; isTest marks the
    notifications of the test-event operations (§9.2: receivers tolerate extra properties); then the
    `notification` stage of `hooks` (hooks.py)."""
    body = {"id": event["id"], "eventType": event["kind"], "createdAt": render(event["created_at"]),
            "isTest": bool(event["test"]), "data": json.loads(event["data"])}
    for shape in hooks.notification if hooks else ():
        body = shape(store, event["world"], body)
    return json.dumps(body, sort_keys=True)


def fan_out(store, hooks, limit=500):
    """Turn outbox events not yet fanned out into attempt 1 for every active webhook of the event's partner that
    subscribes to its kind, each passed to the `fan_out` stage of `hooks` (hooks.py). Returns the number of
    attempts written. Call inside a store transaction.

    Each event is marked when fanned out (no cursor: on PostgreSQL an event of a lower seq can commit after a
    higher one); a fan-out running elsewhere is waited for, and its events are then seen as fanned out.
    """
    events = store.all("SELECT * FROM events WHERE fanned = 0 ORDER BY seq LIMIT ?" + store.for_update(),
                       (limit,))
    written = 0
    for event in events:
        body = None         # made once, for every webhook it goes to (a profile's ids may read the store)
        subscribed = store.all("SELECT id, events, callback_url FROM webhooks WHERE world = ? AND partner_id = ? "
                               "AND is_active = 1 AND after_seq < ? ORDER BY created_at, rowid",
                               (event["world"], event["partner_id"], event["seq"]))
        for hook in subscribed:
            if event["kind"] in ACTIVE and event["kind"] in json.loads(hook["events"]):
                if body is None:
                    body = payload(event, store, hooks)
                row = attempt_row(event, hook, body)
                store.insert("webhook_deliveries", **row)
                for adjust in hooks.fan_out:
                    adjust(store, row, lambda extra: store.insert("webhook_deliveries", **extra))
                written += 1
        mark_fanned(store, event["seq"])
    return written


def attempt_row(event, hook, body, attempt=1, due_at=None):
    return {"id": derived_id("delivery", event["world"], event["id"], hook["id"], attempt),
            "world": event["world"], "partner_id": event["partner_id"], "webhook_id": hook["id"],
            "event_id": event["id"], "event_type": event["kind"], "test": event["test"], "attempt": attempt,
            "status": "pending", "due_at": event["created_at"] if due_at is None else due_at,
            "url": hook["callback_url"], "request_body": body}


def pending_worlds(store, system_now=None):
    """Worlds with attempts waiting: pending ones, and ones whose sender's lease ran out (a stopped process)."""
    rows = store.all("SELECT DISTINCT world FROM webhook_deliveries WHERE status = 'pending' "
                     "OR (status = 'sending' AND lease_until < ?)", (-1 if system_now is None else system_now,))
    return [r["world"] for r in rows]


def due_waiting(store, world, now):
    """Whether attempts of `world` are due and not yet claimed (another process may be claiming them now)."""
    return store.one("SELECT 1 AS due FROM webhook_deliveries WHERE world = ? AND status = 'pending' AND due_at <= ? "
                     "LIMIT 1", (world, now)) is not None


def in_flight(store, world, system_now):
    """Attempts of `world` on the wire in any process (leased and the lease still running), per webhook."""
    return {r["webhook_id"]: r["n"] for r in store.all(
        "SELECT webhook_id, COUNT(*) AS n FROM webhook_deliveries WHERE world = ? AND status = 'sending' "
        "AND lease_until >= ? GROUP BY webhook_id", (world, system_now))}


def claim(store, world, now, busy=None, per_webhook=2, hosts=None, per_host=None, host_of=destination, *,
          hooks, system_now=0, lease_us=60_000_000, holder="", limit=None):
    """Lease the world's due attempts to this sender (`sending`, until `system_now + lease_us` of real time),
    sign them at `now` (world clock), pass their headers to the `signing` stage of `hooks` and return what to
    send.

    Several processes claim from the same store: on PostgreSQL the due rows are locked and rows another process
    holds are skipped (FOR UPDATE SKIP LOCKED); SQLite's write transactions are serial. An attempt whose lease
    ran out (its sender stopped mid-flight) is due again. At most `per_webhook` attempts per webhook are on the
    wire at once across every process (`busy` adds this process's own count of those not yet recorded), so a
    burst to a dead receiver cannot take every sender; the rest wait for the next round. An attempt goes to the
    webhook's callback URL of the moment; attempts of a webhook deleted or paused since fan-out are cancelled
    instead. Call inside a transaction.
    """
    out = in_flight(store, world, system_now)
    for webhook, n in (busy or {}).items():
        out[webhook] = max(out.get(webhook, 0), n)
    taken = dict(hosts or {})
    full = [webhook for webhook, n in out.items() if n >= per_webhook]   # their backlog is not even read
    jobs = []
    rows = store.all("SELECT d.*, w.secret, w.is_active, w.callback_url FROM webhook_deliveries d "
                     "LEFT JOIN webhooks w ON w.id = d.webhook_id AND w.world = d.world "
                     "WHERE (d.status = 'pending' OR (d.status = 'sending' AND d.lease_until < ?)) "
                     "AND d.world = ? AND d.due_at <= ? "
                     + (f"AND d.webhook_id NOT IN ({', '.join('?' * len(full))}) " if full else "")
                     + "ORDER BY d.due_at, d.seq"
                     + store.skip_locked("d"), (system_now, world, now, *full))
    for row in rows:
        if limit is not None and len(jobs) >= limit:
            break
        if row["secret"] is None or not row["is_active"]:
            store.update("webhook_deliveries", {"id": row["id"]}, status="cancelled",
                         error="the webhook was deleted or paused before this attempt")
            continue
        host = host_of(row["callback_url"])
        if out.get(row["webhook_id"], 0) >= per_webhook or (
                per_host and host is not None and taken.get(host, 0) >= per_host):
            continue
        out[row["webhook_id"]] = out.get(row["webhook_id"], 0) + 1
        taken[host] = taken.get(host, 0) + 1
        stamp = now // SECOND_US
        headers = {"Content-Type": "application/json", "User-Agent": "ptas-sandbox-webhooks/1.3.0",
                   "webhook-id": row["event_id"], "webhook-timestamp": str(stamp),
                   "webhook-signature": sign(row["secret"], row["event_id"], stamp, row["request_body"])}
        for tamper in hooks.signing:
            headers = tamper(store, row, headers)
        store.update("webhook_deliveries", {"id": row["id"]}, status="sending", attempted_at=now,
                     url=row["callback_url"], request_headers=json.dumps(headers),
                     lease_until=system_now + lease_us, claimed_by=holder)
        jobs.append({"id": row["id"], "world": world, "webhook_id": row["webhook_id"], "url": row["callback_url"],
                     "headers": headers, "body": row["request_body"], "attempt": row["attempt"], "host": host,
                     "holder": holder})
    return jobs


def record_outcome(store, job, now, status=None, body=None, error=None, duration_ms=None, headers=None, retry=True):
    """Store one attempt's outcome (2xx is success; any other status, a timeout or a refused connection is a
    failure) and schedule the next attempt on the world clock while the schedule lasts."""
    row = store.one("SELECT * FROM webhook_deliveries WHERE id = ? AND status = 'sending' AND claimed_by = ?",
                    (job["id"], job.get("holder", "")))
    if row is None:                  # the world was reset meanwhile, or the lease ran out and another took it
        return
    succeeded = error is None and status is not None and 200 <= status < 300
    if error is None and not succeeded:
        error = f"the receiver answered {status}"
    next_at = None
    if not succeeded and retry and row["attempt"] < MAX_ATTEMPTS:
        next_at = now + BACKOFF_S[row["attempt"] - 1] * SECOND_US
        event = {"world": row["world"], "partner_id": row["partner_id"], "id": row["event_id"],
                 "kind": row["event_type"], "test": row["test"]}
        next_row = attempt_row(event, {"id": row["webhook_id"], "callback_url": row["url"]}, row["request_body"],
                               row["attempt"] + 1, next_at)
        if row["id"] != derived_id("delivery", row["world"], row["event_id"], row["webhook_id"], row["attempt"]):
            # a copy (the `duplicate` fault) retries on a chain of ids of its own: the original's next id is
            # the original's to write
            next_row["id"] = derived_id("delivery-retry", row["id"], row["attempt"] + 1)
        store.insert("webhook_deliveries", **next_row)
    store.update("webhook_deliveries", {"id": job["id"]}, status="succeeded" if succeeded else "failed",
                 response_status=status, response_body=None if body is None else body[:BODY_KEPT],
                 response_headers=None if status is None else json.dumps(headers or {}),
                 error=None if succeeded else error, duration_ms=duration_ms, next_retry_at=next_at)


def prune(store, world, before):
    """Retention (the operator's --retention-days): a world's outbox events already fanned out and its finished
    delivery attempts from before `before` (its clock) go, so neither grows until a reset."""
    outbox.prune(store, world, before)
    store.execute("DELETE FROM webhook_deliveries WHERE world = ? AND status NOT IN ('pending', 'sending') "
                  "AND COALESCE(attempted_at, due_at) < ?", (world, before))


def requeue_interrupted(store):
    """Attempts left `sending` by a server that stopped mid-flight go out again at once (a server launch that
    owns its state alone calls this; otherwise a stopped sender's leases run out)."""
    store.execute("UPDATE webhook_deliveries SET status = 'pending', lease_until = NULL, claimed_by = NULL "
                  "WHERE status = 'sending'")


def log_entry(row):
    """One attempt of the delivery log (GET /_sandbox/deliveries)."""
    return {
        "id": row["id"], "webhookId": row["webhook_id"], "eventId": row["event_id"],
        "eventType": row["event_type"], "isTest": bool(row["test"]), "attempt": row["attempt"],
        "status": row["status"], "url": row["url"], "dueAt": render(row["due_at"]),
        "attemptedAt": render(row["attempted_at"]),
        "request": {"headers": json.loads(row["request_headers"]) if row["request_headers"] else None,
                    "body": row["request_body"]},
        "response": None if row["response_status"] is None else {
            "status": row["response_status"], "body": row["response_body"],
            "headers": json.loads(row["response_headers"]) if row["response_headers"] else {}},
        "error": row["error"], "durationMs": row["duration_ms"], "nextRetryAt": render(row["next_retry_at"]),
        "final": row["status"] in ("succeeded", "cancelled") or (row["status"] == "failed"
                                                                  and row["next_retry_at"] is None),
    }


def log(store, hooks, world, webhook_id=None, event_id=None, limit=1000):
    """The world's delivery log, oldest first, noted on by the `delivery_log` stage of `hooks`."""
    where, params = ["world = ?"], [world]
    if webhook_id:
        where.append("webhook_id = ?")
        params.append(webhook_id)
    if event_id:
        where.append("event_id = ?")
        params.append(event_id)
    rows = store.all(f"SELECT * FROM webhook_deliveries WHERE {' AND '.join(where)} ORDER BY seq DESC LIMIT ?",
                     (*params, limit))
    entries = [log_entry(r) for r in reversed(rows)]
    for note in hooks.delivery_log:
        note(store, world, entries)
    return entries
