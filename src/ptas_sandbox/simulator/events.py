"""The event outbox: domain operations record events (spec §6) here; the webhook dispatcher delivers them.

Writing the event in the transaction of the change means an event exists exactly when its change does.
"""

import contextvars
import json

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    world TEXT NOT NULL,
    partner_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    data TEXT NOT NULL,
    test INTEGER NOT NULL DEFAULT 0,
    fanned INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS events_by_world ON events (world, seq);
CREATE INDEX IF NOT EXISTS events_to_fan_out ON events (seq) WHERE fanned = 0;
"""

ACTIVE = ("TransactionsImported", "AccountCreated", "AccountUpdated", "AccountDeleted", "AccountTypeUpdated")
RETIRED = ("ReportImported", "TransactionsImportError", "AccountError")

# Whether this thread (the request it serves) wrote an event since it last asked: the webhook dispatcher is
# woken by the requests that gave it work, not by every read (each wake was a write transaction of its own).
_emitted = contextvars.ContextVar("ptas_events_emitted", default=False)


def emit(ctx, kind, partner_id, data, test=False):
    assert kind in ACTIVE, kind
    event = {"id": ctx.new_id("event"), "world": ctx.world.id, "partner_id": partner_id, "kind": kind,
             "created_at": ctx.now, "data": json.dumps(data, sort_keys=True), "test": int(test)}
    ctx.store.insert("events", **event)
    _emitted.set(True)
    return event


def take_emitted():
    """True once after this thread emitted an event (rolled back or not: a needless look costs one round)."""
    if not _emitted.get():
        return False
    _emitted.set(False)
    return True


def mark_fanned(store, seq):
    """The outbox has written the event's deliveries (webhooks.deliveries.fan_out): it is not fanned out again."""
    store.execute("UPDATE events SET fanned = 1 WHERE seq = ?", (seq,))


def hold_unfanned(store, world=None):
    """Lock the events not yet fanned out (of `world`, or of every world) in `seq` order, the order in which the
    fan-out locks them, before deleting them (a reset): a DELETE takes rows in the table's order, and a fan-out
    holding a lower event while waiting for a higher one the reset had taken deadlocked with it (PostgreSQL)."""
    if not store.for_update():          # SQLite: writers run one at a time, nothing to wait for
        return
    where, params = ("AND world = ? ", (world,)) if world is not None else ("", ())
    store.all(f"SELECT seq FROM events WHERE fanned = 0 {where}ORDER BY seq" + store.for_update(), params)


def prune(store, world, before):
    """Retention: a world's events from before `before` that the webhook fan-out has already read go."""
    store.execute("DELETE FROM events WHERE world = ? AND created_at < ? AND fanned = 1", (world, before))
