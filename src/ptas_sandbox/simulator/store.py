"""The store: every piece of state of every world, behind one small interface with two engines.

- SQLite (the embedded default): a file (WAL mode, one connection per thread, so readers never wait for a
  writer and writers queue on `BEGIN IMMEDIATE`), or `:memory:` (one connection behind a lock: a private
  in-memory database cannot be shared between connections without shared-cache table locks).
- PostgreSQL (`postgresql://...`, psycopg 3): one connection per thread, so any number of processes on any
  number of machines share the state.

Each area of the spec declares its own tables (`SCHEMA` in its models module) in portable SQL with `?`
placeholders; the PostgreSQL engine translates the few differences (placeholders, 64-bit integers, identity
columns, `rowid` as an identity column). Rows come back as plain dicts on both engines. `transaction()` makes
an operation atomic: nested uses join the outer transaction; an exception rolls the whole of it back.
"""

import fcntl
import json
import os
import re
import threading
from contextlib import contextmanager
from types import SimpleNamespace

CORE_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def open_store(location=":memory:", schemas=(), upgrades=None):
    """The engine for a location: a PostgreSQL URL, `:memory:` or a SQLite file path. `upgrades` says how the
    rows of an older version's tables fill columns it did not have (`Store.upgrade`)."""
    if str(location).startswith(("postgresql://", "postgres://")):
        return PostgresStore(location, schemas, upgrades)
    return SqliteStore(location, schemas, upgrades)


def statements(schemas):
    for schema in (CORE_SCHEMA, *schemas):
        for statement in schema.split(";"):
            if statement.strip():
                yield statement.strip()


def _defaulted(definition):
    """Whether a column definition fills itself in old rows: nullable or with a DEFAULT, and not a key."""
    words = definition.upper()
    return ("NOT NULL" not in words or "DEFAULT" in words) and "PRIMARY KEY" not in words


class StaleState(RuntimeError):
    """A state file written by an older ptas-sandbox: a table lacks columns this version declares."""


def declared_columns(schemas):
    """{table: {column: its definition}} of every CREATE TABLE statement of the schemas (constraints left out)."""
    tables = {}
    for statement in statements(schemas):
        head, _, body = statement.partition("(")
        words = head.split()
        if [w.upper() for w in words[:2]] != ["CREATE", "TABLE"]:
            continue
        body = body[:body.rindex(")")]
        columns, depth, part = {}, 0, ""
        for char in body + ",":
            if char == "," and depth == 0:
                name = part.split()[0] if part.split() else ""
                if name and name.upper() not in ("PRIMARY", "UNIQUE", "FOREIGN", "CHECK", "CONSTRAINT"):
                    columns[name] = part.strip()
                part = ""
                continue
            depth += (char == "(") - (char == ")")
            part += char
        tables[words[-1]] = columns
    return tables


class Store:
    """What domain code uses: one/all/execute/executemany/insert/update inside transaction()s."""

    engine: str = ""
    location: str = ""
    versions = None     # hotstate.Versions: told of every statement and transaction end, when a process owns it

    # --- engine parts -------------------------------------------------------------------------------------

    def _connection(self):
        raise NotImplementedError

    def _begin(self, db, read_only=False):
        raise NotImplementedError

    def _sql(self, sql):
        return sql

    def _params(self, params):
        return params

    def lock(self, key):
        """Serialize this transaction with every other transaction taking the same key (say, one world's rate
        limit), in every process; released at commit. SQLite's write transactions are serial already."""

    # --- the interface ------------------------------------------------------------------------------------

    @contextmanager
    def transaction(self, read_only=False):
        """All or nothing: nested uses join the outer transaction; an exception rolls the whole of it back.
        `read_only`: a transaction that only reads, where the engine has such (PostgresStore.reading)."""
        with self._held() as local:
            outer = local.depth == 0
            if outer:
                self._begin(local.db, read_only)
            local.depth += 1
            try:
                yield self
            except BaseException:
                local.depth -= 1
                if outer:
                    local.db.rollback()
                    if self.versions is not None:
                        self.versions.ended()
                raise
            local.depth -= 1
            if outer:
                local.db.commit()
                if self.versions is not None:
                    self.versions.ended()

    RETRIES = 3

    def retrying(self, work):
        """`work()`, which runs its own transaction, again (up to RETRIES times in all) when the engine aborted
        that transaction to break a deadlock: on PostgreSQL two transactions that each wait for a row the other
        holds lose one of them, and without this the loser's request was a 500. The locks are taken in one
        order (pipeline, LOCK ORDER), so this is the rare case the order does not cover (a DELETE and an UPDATE
        meeting rows in different orders). Inside an outer transaction the error goes up to it: only the
        outermost transaction can start again."""
        for attempt in range(1, self.RETRIES + 1):
            try:
                return work()
            except Exception as error:
                if attempt == self.RETRIES or self.in_transaction or not self.transient(error):
                    raise

    def transient(self, error):
        """Whether `error` aborted a transaction that would succeed if run again. SQLite: never (its writers
        queue; a busy timeout after 60 s is not worth a second minute)."""
        return False

    @contextmanager
    def savepoint(self):
        """Inside a transaction: what the block writes is undone when it raises, and the transaction goes on (an
        API write keeps its rate-limit hit when its handler fails; pipeline.handle)."""
        if not self.in_transaction:
            raise RuntimeError("a savepoint needs a transaction around it")
        self.execute("SAVEPOINT ptas_operation")
        try:
            yield self
        except BaseException:
            self.execute("ROLLBACK TO SAVEPOINT ptas_operation")
            self.execute("RELEASE SAVEPOINT ptas_operation")
            raise
        self.execute("RELEASE SAVEPOINT ptas_operation")

    def reading(self):
        """A transaction for an operation that only reads (an API GET): `transaction()`, unless the engine can
        give one consistent view without a writer's turn (a SQLite file: SqliteStore.reading)."""
        return self.transaction()

    @property
    def in_transaction(self):
        return self._local().depth > 0

    def execute(self, sql, params=()):
        if self.versions is not None:
            self.versions.statement(sql)
        with self._held() as local:
            return local.db.execute(self._sql(sql), self._params(params))

    def executemany(self, sql, rows):
        if self.versions is not None:
            self.versions.statement(sql)
        with self._held() as local:
            return local.db.executemany(self._sql(sql), (self._params(r) for r in rows))

    def all(self, sql, params=()):
        if self.versions is not None:
            self.versions.statement(sql)
        with self._held() as local:
            return local.db.execute(self._sql(sql), self._params(params)).fetchall()

    def one(self, sql, params=()):
        if self.versions is not None:
            self.versions.statement(sql)
        with self._held() as local:
            return local.db.execute(self._sql(sql), self._params(params)).fetchone()

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
        """A server-wide setting kept in the store (the signing secret survives a restart with the state).
        Several processes starting at once agree on the first value written."""
        with self.transaction():
            row = self.one("SELECT value FROM meta WHERE key = ?", (key,))
            if row:
                return json.loads(row["value"])
            self.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                         (key, json.dumps(default_factory())))
            return json.loads(self.one("SELECT value FROM meta WHERE key = ?", (key,))["value"])

    def for_update(self):
        """A clause for the end of a SELECT in a write transaction: lock the rows read, waiting for other
        transactions holding them (PostgreSQL); nothing on SQLite."""
        return ""

    def skip_locked(self, alias=None):
        """A clause for the end of a SELECT in a write transaction: lock the rows read and skip rows another
        transaction has locked (PostgreSQL); SQLite's write transactions are serial, so nothing is needed."""
        return ""

    def tables_with_column(self, column):
        """The tables having `column` (say `world`: the tables a world's wipe clears), whichever area made them."""
        raise NotImplementedError

    def ddl(self, statement):
        """A CREATE statement of the schemas in this engine's words."""
        return statement

    def upgrade(self, schemas, upgrades=None):
        """Bring the tables an older version wrote up to the declared columns, keeping their rows, before the
        schemas' indexes name new columns. A column the old table lacks takes its declared default (or NULL),
        or the expression over the old columns its area gives in `UPGRADE` ({table: {column: SQL}}); columns
        no longer declared go. A table that cannot be brought up is left for `check_current` to refuse."""
        upgrades = upgrades or {}
        creates = {}
        for statement in statements(schemas):
            match = re.match(r"\s*CREATE TABLE IF NOT EXISTS (\w+)", statement, re.I)
            if match:
                creates[match.group(1)] = statement
        for table, columns in declared_columns(schemas).items():
            have = self.columns(table)
            missing = [c for c in columns if have and c not in have]
            fill = upgrades.get(table, {})
            if not missing or not all(c in fill or _defaulted(columns[c]) for c in missing):
                continue
            kept = [c for c in columns if c in have]
            filled = [c for c in missing if c in fill]
            rows = self.all(f"SELECT {', '.join(kept + [fill[c] for c in filled])} FROM {table}"
                            f"{self._insertion_order(table)}")
            self.execute(f"DROP TABLE {table}")
            self.execute(self.ddl(creates[table]))
            names = kept + filled
            self.executemany(f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                             [tuple(row.values()) for row in rows])

    def _insertion_order(self, table):
        return ""

    def check_current(self, schemas):
        """Refuse a state file an older version wrote (CREATE TABLE IF NOT EXISTS leaves its tables as they
        were): a clear error at start, not a 500 at the first request that reads a missing column."""
        for table, wanted in declared_columns(schemas).items():
            have = self.columns(table)
            missing = [c for c in wanted if have and c not in have]     # a table not there yet is made
            if missing:
                raise StaleState(f"table {table} lacks {', '.join(missing)}: it was written by an older "
                                 "ptas-sandbox; move it away (or serve another --state) to start afresh")

    def columns(self, table):
        """The columns of a table as {name: {"type": INTEGER|REAL|TEXT, "notnull", "default"}} (snapshots check
        rows against them); PostgreSQL's generated `rowid` is not one."""
        raise NotImplementedError

    # --- connections --------------------------------------------------------------------------------------

    def _init_local(self):
        self._tls = threading.local()
        self._opened = []
        self._opened_lock = threading.Lock()

    def _local(self):
        local = self._tls
        if not hasattr(local, "db"):
            local.db = self._connection()
            local.depth = 0
            local.pid = os.getpid()
            with self._opened_lock:
                self._opened.append(local.db)
        elif local.pid != os.getpid():          # a forked worker never shares its parent's connection
            local.db = self._connection()
            local.depth = 0
            local.pid = os.getpid()
        return local

    @contextmanager
    def _held(self):
        yield self._local()

    def close(self):
        with self._opened_lock:
            opened, self._opened = self._opened, []
        for db in opened:
            try:
                db.close()
            except Exception:       # a connection of another thread may be mid-statement; closing is best effort
                pass
        self._tls = threading.local()


def _dict_row(cursor, row):
    return dict(zip([d[0] for d in cursor.description], row))


BUSY_TIMEOUT_S = 60


class SqliteStore(Store):
    engine = "sqlite"

    def __init__(self, path=":memory:", schemas=(), upgrades=None):
        import sqlite3
        self._sqlite = sqlite3
        self.location = self.path = path
        self.memory = path == ":memory:"
        self._init_local()
        self._lock = threading.RLock()
        if self.memory:
            # One connection for every thread, behind a re-entrant lock held for a whole transaction.
            self._shared = self._open(":memory:")
            self._shared_local = SimpleNamespace(db=self._shared, depth=0)
        else:
            self._writer_pid = None
            # Created owner-only: the state holds the token signing secret.
            os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
            db = self._open(path)
            db.execute("PRAGMA journal_mode=WAL")
            db.close()
        try:
            with self.transaction():
                self.upgrade(schemas, upgrades)
                for statement in statements(schemas):
                    self.execute(statement)
        except self._sqlite.OperationalError:
            self.check_current(schemas)     # an index on a column an older version did not have: say so
            raise

    def _open(self, path):
        db = self._sqlite.connect(path, check_same_thread=False, isolation_level=None, timeout=BUSY_TIMEOUT_S)
        db.row_factory = _dict_row
        if path != ":memory:":
            db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        return db

    def _connection(self):
        return self._open(self.path)

    def _begin(self, db, read_only=False):
        db.execute("BEGIN IMMEDIATE")       # SqliteStore.reading takes no writer's turn; this is for writers

    def executemany(self, sql, rows):
        if self.versions is not None:
            self.versions.statement(sql)
        with self._held() as local:     # rows as given: SQLite takes Python values as they are
            return local.db.executemany(sql, rows)

    def tables_with_column(self, column):
        return [r["name"] for r in self.all(
            "SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) c WHERE m.type = 'table' "
            "AND c.name = ? ORDER BY m.name", (column,))]

    def columns(self, table):
        return {c["name"]: {"type": c["type"].upper() or "TEXT", "notnull": bool(c["notnull"]),
                            "default": c["dflt_value"] is not None}
                for c in self.all("SELECT * FROM pragma_table_info(?)", (table,))}

    @contextmanager
    def _held(self):
        if self.memory:
            with self._lock:
                yield self._shared_local
        else:
            yield self._local()

    @contextmanager
    def transaction(self, read_only=False):
        """In memory: the one connection's lock, held from BEGIN to COMMIT, so no other thread's statement lands
        inside. On a file: the process's writer lock, so this process's writers queue and each is woken the moment
        the one before commits, instead of polling SQLite's lock with sleeps of up to 100 ms (a queue of short
        writers stays short); then, between processes (`ptas serve --workers`), the same queue on a `flock` of
        `<state>-writer`. Writers outside ptas (the sqlite3 shell) still meet SQLite's busy timeout."""
        if not self._lock.acquire(timeout=BUSY_TIMEOUT_S):
            raise self._sqlite.OperationalError("database is locked (a write transaction waited 60 s)")
        try:
            if self.memory or self._local().depth:      # nested: the outer transaction holds the turn
                with super().transaction() as store:
                    yield store
            else:
                with self._turn_among_processes():
                    with super().transaction() as store:
                        yield store
        finally:
            self._lock.release()

    @contextmanager
    def reading(self):
        """On a file: a deferred transaction, a snapshot of the last commit (WAL readers never wait), without the
        writers' turn: a read no longer queues behind every writer of every world (three turns a GET, two now).
        A write there would skip the turn and race other writers into "database is locked"; it is rolled back
        and refused, always, so a GET that writes fails in tests (not `PRAGMA query_only`: setting it makes SQLite
        prepare every statement again, half a GET's time). In memory, or inside a transaction: `transaction()`."""
        if self.memory or self._local().depth:
            with self.transaction() as store:
                yield store
            return
        local = self._local()
        changes = local.db.total_changes
        local.db.execute("BEGIN")
        local.depth += 1
        try:
            yield self
        except BaseException:
            local.depth -= 1
            local.db.rollback()
            raise
        local.depth -= 1
        if local.db.total_changes != changes:
            local.db.rollback()
            raise self._sqlite.OperationalError("a read transaction wrote (store.reading); writes need transaction()")
        local.db.commit()       # ends the snapshot (cheaper than a rollback, which resets every cursor)

    @contextmanager
    def _turn_among_processes(self):
        """Without it, a worker whose BEGIN IMMEDIATE finds another worker's transaction sleeps in SQLite's busy
        handler (1, 2, 5, 10... ms) though the file may be free a microsecond later, and the process's lock keeps
        its other threads waiting behind the sleeper: two workers served fewer requests than one. The kernel
        wakes a `flock` waiter the moment the holder lets go (or dies)."""
        if self._writer_pid != os.getpid():         # first use, or a forked process: a descriptor of its own
            with self._opened_lock:
                if self._writer_pid != os.getpid():
                    self._writer_fd = os.open(self.path + "-writer", os.O_CREAT | os.O_RDWR, 0o600)
                    self._writer_pid = os.getpid()
        fcntl.flock(self._writer_fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            try:
                fcntl.flock(self._writer_fd, fcntl.LOCK_UN)
            except OSError:     # closed by close() meanwhile: closing released the lock
                pass

    def _local(self):
        return self._shared_local if self.memory else super()._local()

    def close(self):
        if self.memory:
            with self._lock:
                self._shared.close()
        else:
            super().close()
            if self._writer_pid == os.getpid():
                self._writer_pid = None
                os.close(self._writer_fd)


_PLACEHOLDER = re.compile(r"%|\?")
_DDL = [
    (re.compile(r"\bINTEGER PRIMARY KEY AUTOINCREMENT\b", re.I), "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"),
    (re.compile(r"\bINTEGER PRIMARY KEY\b", re.I), "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"),
    (re.compile(r"\bINTEGER\b", re.I), "BIGINT"),
    (re.compile(r"\bREAL\b", re.I), "DOUBLE PRECISION"),
    (re.compile(r"\)\s*WITHOUT ROWID\s*$", re.I), ")"),
]


def postgres_ddl(statement):
    """A SQLite CREATE TABLE in PostgreSQL's words. A table without an integer primary key gets a `rowid`
    identity column, so `ORDER BY created_at, rowid` (insertion order among equals) means the same on both."""
    create = re.match(r"\s*CREATE TABLE", statement, re.I)
    needs_rowid = create and not re.search(r"INTEGER PRIMARY KEY|WITHOUT ROWID", statement, re.I)
    for pattern, replacement in _DDL:
        statement = pattern.sub(replacement, statement)
    if needs_rowid:
        statement = statement.rstrip()[:-1].rstrip() + ",\n    rowid BIGINT GENERATED ALWAYS AS IDENTITY\n)"
    return statement


class PostgresStore(Store):
    engine = "postgresql"

    def __init__(self, url, schemas=(), upgrades=None):
        import psycopg
        from psycopg.rows import dict_row
        self._psycopg, self._dict_row = psycopg, dict_row
        self.location = self.url = url
        self._translated = {}
        self._init_local()
        with self.transaction():
            self.lock("ptas-schema")     # workers starting together create the tables once
            self.upgrade(schemas, upgrades)
            indexes = {r["indexname"] for r in self.all("SELECT indexname FROM pg_indexes "
                                                         "WHERE schemaname = current_schema()")}
            for statement in statements(schemas):
                # CREATE INDEX IF NOT EXISTS takes a SHARE lock on its table before it finds the index there,
                # held to the end of this transaction: a worker starting next to busy ones deadlocked with their
                # requests (a 500). An existing index is left alone, so a start locks no table in use.
                index = re.match(r"\s*CREATE (?:UNIQUE )?INDEX IF NOT EXISTS (\w+)", statement, re.I)
                if index is None or index.group(1).lower() not in indexes:
                    self.execute(postgres_ddl(statement))

    def ddl(self, statement):
        return postgres_ddl(statement)

    def _insertion_order(self, table):
        """Rows keep their order of insertion (the `rowid` identity) when a table is rebuilt."""
        has_rowid = self.one("SELECT 1 AS x FROM information_schema.columns WHERE table_schema = current_schema() "
                             "AND table_name = ? AND column_name = 'rowid'", (table,))
        return " ORDER BY rowid" if has_rowid else ""

    def _connection(self):
        return self._psycopg.connect(self.url, autocommit=True, row_factory=self._dict_row)

    def _begin(self, db, read_only=False):
        db.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" if read_only else "BEGIN")

    def reading(self):
        """One snapshot for the whole of an API read (REPEATABLE READ), as a SQLite file's WAL reader has: its
        statements see one state of the world and wait for none of its writers (under the world's lock instead,
        one world's reads queued behind each other and behind its writes). READ ONLY: a write inside is refused,
        as on SQLite."""
        return self.transaction(read_only=True)

    def tables_with_column(self, column):
        return [r["table_name"] for r in self.all(
            "SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND column_name = ? ORDER BY table_name", (column,))]

    def columns(self, table):
        kinds = {"bigint": "INTEGER", "integer": "INTEGER", "smallint": "INTEGER", "real": "REAL",
                 "double precision": "REAL", "numeric": "REAL"}
        return {c["column_name"]: {"type": kinds.get(c["data_type"], "TEXT"), "notnull": c["is_nullable"] == "NO",
                                   "default": c["column_default"] is not None or c["is_identity"] == "YES"}
                for c in self.all("SELECT column_name, data_type, is_nullable, column_default, is_identity "
                                  "FROM information_schema.columns WHERE table_schema = current_schema() "
                                  "AND table_name = ? AND column_name != 'rowid' ORDER BY ordinal_position",
                                  (table,))}

    def transient(self, error):
        errors = self._psycopg.errors
        return isinstance(error, (errors.DeadlockDetected, errors.SerializationFailure))

    def for_update(self):
        return " FOR UPDATE"

    def skip_locked(self, alias=None):
        return f" FOR UPDATE{' OF ' + alias if alias else ''} SKIP LOCKED"

    def lock(self, key):
        self.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (key,))

    def _sql(self, sql):
        translated = self._translated.get(sql)
        if translated is None:
            translated = _PLACEHOLDER.sub(lambda m: "%%" if m.group() == "%" else "%s", sql)
            translated = translated.replace("last_insert_rowid()", "lastval()").replace("instr(", "strpos(")
            if len(self._translated) < 4096:
                self._translated[sql] = translated
        return translated

    def executemany(self, sql, rows):
        with self._held() as local:
            with local.db.cursor() as cursor:
                cursor.executemany(self._sql(sql), (self._params(r) for r in rows))
                return cursor

    def _params(self, params):
        # SQLite stores booleans as 0/1 in INTEGER columns; PostgreSQL would refuse a boolean there.
        return tuple(int(p) if p is True or p is False else p for p in params)
