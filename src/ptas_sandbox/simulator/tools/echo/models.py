"""Echo capture rules: a built-in receiver keeps what it is sent, per bin, so a partner can point a webhook at
the sandbox itself and see exactly what went out."""

import base64
import json

from ptas_sandbox.webhooks import sign

from ...timestamps import render
from ...webhooks.signatures import same_text

SCHEMA = """
CREATE TABLE IF NOT EXISTS echo_captures (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    world TEXT NOT NULL DEFAULT '',
    bin TEXT NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    query TEXT NOT NULL,
    headers TEXT NOT NULL,
    content_type TEXT,
    body TEXT NOT NULL,
    body_encoding TEXT NOT NULL,
    received_at INTEGER NOT NULL,
    size INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS echo_captures_by_bin_world ON echo_captures (bin, world, seq);
CREATE INDEX IF NOT EXISTS echo_captures_by_age ON echo_captures (world, received_at);
"""
# A capture belongs to the world whose signed notification it is (`world_of`): only that world's partner tokens
# read it. Anything else (a request from outside any world) has `world` '' and is the operator's to read (the
# admin key), or anyone's on a sandbox without one. A reset of one world clears its captures.
KEPT_PER_BIN = 200


TOTAL_CHECK_EVERY = 16     # captures between two sums of all captures' sizes (a sum reads every row's size)


def migrate(store):
    """A state file from before `size` was kept gets the column (its old captures count as 0 bytes until they
    age out), then the index the total's checks read."""
    try:
        store.one("SELECT size FROM echo_captures LIMIT 1")
    except Exception:      # the column is missing (sqlite3 and psycopg name the error differently)
        store.execute("ALTER TABLE echo_captures ADD COLUMN size INTEGER NOT NULL DEFAULT 0")
    store.execute("CREATE INDEX IF NOT EXISTS echo_captures_sizes ON echo_captures (seq, size)")


def world_of(store, headers, raw):
    """The world whose notification this request is, or '' when it is none: an attempt of that event went out
    with exactly these signature headers and body (as recorded when sent, deliberately bad signatures of a
    fault included), or the headers verify against the secret of a webhook that was sent that event."""
    lowered = {k.lower(): v for k, v in headers.items()}
    event_id, stamp, signatures = (lowered.get(h) for h in ("webhook-id", "webhook-timestamp", "webhook-signature"))
    if not (event_id and stamp and signatures and stamp.isascii() and stamp.isdigit()):
        return ""
    given = [value for value in signatures.split() if value.startswith("v1,")]
    text = raw.decode("utf-8", "replace")
    rows = store.all("SELECT d.world, d.request_headers, d.request_body, w.secret FROM webhook_deliveries d "
                     "LEFT JOIN webhooks w ON w.id = d.webhook_id WHERE d.event_id = ?", (event_id,))
    for row in rows:
        sent = {k.lower(): v for k, v in json.loads(row["request_headers"] or "{}").items()}
        if (row["request_body"] == text and sent.get("webhook-timestamp") == stamp
                and same_text(sent.get("webhook-signature", ""), signatures)):
            return row["world"]
        if row["secret"] is not None:
            expected = sign(row["secret"], event_id, int(stamp), raw)
            if any(same_text(expected, value) for value in given):
                return row["world"]
    return ""


def size_of(headers, raw):
    return len(raw) + sum(len(k) + len(v) for k, v in headers.items())


def capture(store, bin_, method, path, query, headers, content_type, raw, received_at, world="",
            per_bin=KEPT_PER_BIN, total_bytes=None, stale_before=None):
    """Keep one request (the newest `per_bin` per bin and world; all captures within `total_bytes`, the oldest
    dropped first; those of no world received before `stale_before`, system time, too: a world's own go with
    its retention stage); bodies that are not UTF-8 are kept as base64."""
    try:
        body, encoding = raw.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        body, encoding = base64.b64encode(raw).decode(), "base64"
    kept_headers = json.dumps(headers)
    size = len(body) + len(kept_headers)
    store.insert("echo_captures", world=world, bin=bin_, method=method, path=path, query=query,
                 headers=kept_headers, content_type=content_type, body=body, body_encoding=encoding,
                 received_at=received_at, size=size)
    seq = store.one("SELECT MAX(seq) AS seq FROM echo_captures")["seq"]
    store.execute("DELETE FROM echo_captures WHERE bin = ? AND world = ? AND seq NOT IN "
                  "(SELECT seq FROM echo_captures WHERE bin = ? AND world = ? ORDER BY seq DESC LIMIT ?)",
                  (bin_, world, bin_, world, per_bin))
    if stale_before is not None:
        store.execute("DELETE FROM echo_captures WHERE world = '' AND received_at < ?", (stale_before,))
    if total_bytes and (seq % TOTAL_CHECK_EVERY == 0 or size * 64 > total_bytes):
        within_total(store, total_bytes)
    return seq


def within_total(store, total_bytes):
    """Drop the oldest captures until all of them together are within `total_bytes`. Checked every
    TOTAL_CHECK_EVERY captures (or at once for a large one), so the total overshoots by at most that many
    captures; the oldest are walked only as far as the excess reaches."""
    excess = (store.one("SELECT SUM(size) AS n FROM echo_captures")["n"] or 0) - total_bytes
    while excess > 0:
        rows = store.all("SELECT seq, size FROM echo_captures ORDER BY seq LIMIT 500")
        if not rows:
            return
        last = None
        for row in rows:
            excess -= row["size"]
            last = row["seq"]
            if excess <= 0:
                break
        store.execute("DELETE FROM echo_captures WHERE seq <= ?", (last,))


def prune(store, world, before):
    """Retention: a world's captures received before `before` (its clock) go."""
    store.execute("DELETE FROM echo_captures WHERE world = ? AND received_at < ?", (world, before))


def record(row):
    return {"id": row["seq"], "bin": row["bin"], "method": row["method"], "path": row["path"],
            "query": row["query"], "headers": json.loads(row["headers"]), "contentType": row["content_type"],
            "body": row["body"], "bodyEncoding": row["body_encoding"], "receivedAt": render(row["received_at"])}


def captures(store, bin_, worlds=None, limit=KEPT_PER_BIN):
    """A bin's captures, oldest first: of the given worlds ('' for those of no world), or of all (None)."""
    where, params = "bin = ?", [bin_]
    if worlds is not None:
        where += f" AND world IN ({', '.join('?' * len(worlds))})"
        params += list(worlds)
    rows = store.all(f"SELECT * FROM echo_captures WHERE {where} ORDER BY seq DESC LIMIT ?", (*params, limit))
    return [record(r) for r in reversed(rows)]


def recent(store, worlds=None, limit=50):
    where, params = "", []
    if worlds is not None:
        where = f"WHERE world IN ({', '.join('?' * len(worlds))})"
        params = list(worlds)
    rows = store.all(f"SELECT * FROM echo_captures {where} ORDER BY seq DESC LIMIT ?", (*params, limit))
    return [record(r) for r in rows]
