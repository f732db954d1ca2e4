"""The SQLite store: one connection per app, every request one transaction (it completes or leaves no trace).

Each area of the spec declares its own tables (`SCHEMA` in its models module); the store creates them all.
One connection behind a re-entrant lock keeps `:memory:` usable across the server's threads and makes every
operation atomic; a file path keeps a sandbox across restarts.
"""

import json
import sqlite3
import threading
from contextlib import contextmanager

CORE_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class Store:
    def __init__(self, path=":memory:", schemas=()):
        self.path = path
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._lock = threading.RLock()
        self._depth = 0
        if path != ":memory:":
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        with self.transaction():
            for schema in (CORE_SCHEMA, *schemas):
                for statement in schema.split(";"):
                    if statement.strip():
                        self._db.execute(statement)

    @contextmanager
    def transaction(self):
        """All or nothing: nested uses join the outer transaction; an exception rolls the whole of it back."""
        with self._lock:
            outer = self._depth == 0
            if outer:
                self._db.execute("BEGIN IMMEDIATE")
            self._depth += 1
            try:
                yield self
            except BaseException:
                self._depth -= 1
                if outer:
                    self._db.execute("ROLLBACK")
                raise
            self._depth -= 1
            if outer:
                self._db.execute("COMMIT")

    def execute(self, sql, params=()):
        with self._lock:
            return self._db.execute(sql, params)

    def executemany(self, sql, rows):
        with self._lock:
            return self._db.executemany(sql, rows)

    def all(self, sql, params=()):
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    def one(self, sql, params=()):
        with self._lock:
            return self._db.execute(sql, params).fetchone()

    def insert(self, table, **values):
        columns = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        self.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", tuple(values.values()))

    def update(self, table, key, **values):
        """UPDATE table SET values WHERE key; key is a dict of column: value."""
        sets = ", ".join(f"{c} = ?" for c in values)
        where = " AND ".join(f"{c} = ?" for c in key)
        self.execute(f"UPDATE {table} SET {sets} WHERE {where}", (*values.values(), *key.values()))

    def meta(self, key, default_factory):
        """A server-wide setting kept in the store (the signing secret survives a restart with the state)."""
        with self.transaction():
            row = self.one("SELECT value FROM meta WHERE key = ?", (key,))
            if row:
                return json.loads(row["value"])
            value = default_factory()
            self.insert("meta", key=key, value=json.dumps(value))
            return value

    def close(self):
        with self._lock:
            self._db.close()
