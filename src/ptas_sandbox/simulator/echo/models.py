"""Echo capture rules: a built-in receiver keeps what it is sent, per bin, so a partner can point a webhook at
the sandbox itself and see exactly what went out. No Flask here."""

import base64
import json

from ..timestamps import render

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
    received_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS echo_captures_by_bin ON echo_captures (bin, seq);
"""
# Bins belong to no world (the receiver takes no token; its name, any path segment, is the handle), so `world`
# is '': a reset of every world clears them, a reset of one world does not.
KEPT_PER_BIN = 200


def capture(store, bin_, method, path, query, headers, content_type, raw, received_at):
    """Keep one request (the newest KEPT_PER_BIN per bin); bodies that are not UTF-8 are kept as base64."""
    try:
        body, encoding = raw.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        body, encoding = base64.b64encode(raw).decode(), "base64"
    store.insert("echo_captures", bin=bin_, method=method, path=path, query=query,
                 headers=json.dumps(headers), content_type=content_type, body=body, body_encoding=encoding,
                 received_at=received_at)
    seq = store.one("SELECT last_insert_rowid() AS seq")["seq"]
    store.execute("DELETE FROM echo_captures WHERE bin = ? AND seq <= ?", (bin_, seq - KEPT_PER_BIN))
    return seq


def record(row):
    return {"id": row["seq"], "bin": row["bin"], "method": row["method"], "path": row["path"],
            "query": row["query"], "headers": json.loads(row["headers"]), "contentType": row["content_type"],
            "body": row["body"], "bodyEncoding": row["body_encoding"], "receivedAt": render(row["received_at"])}


def captures(store, bin_, limit=KEPT_PER_BIN):
    rows = store.all("SELECT * FROM echo_captures WHERE bin = ? ORDER BY seq DESC LIMIT ?", (bin_, limit))
    return [record(r) for r in reversed(rows)]


def recent(store, limit=50):
    rows = store.all("SELECT * FROM echo_captures ORDER BY seq DESC LIMIT ?", (limit,))
    return [record(r) for r in rows]
