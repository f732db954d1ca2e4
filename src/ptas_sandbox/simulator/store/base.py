"""What both engines share: the domain's interface (interface.py) on a connection per thread, and the core's
parts (schema upgrades, retries of aborted transactions, the server's settings)."""

import json
import logging
import os
import re
import threading
from collections.abc import Callable
from contextlib import contextmanager

from ..problems import Problem, ServiceUnavailable
from .schema import StaleState, _defaulted, declared_columns, statements


class _process:
    """This process's id, kept: os.getpid() is a system call, and every statement checks it (a forked worker
    opens connections of its own)."""
    pid = os.getpid()


os.register_at_fork(after_in_child=lambda: setattr(_process, "pid", os.getpid()))


log = logging.getLogger("ptas")

EVERY_TABLE = "*"       # a table name no statement uses: "any table", where the engine does not say which
ALL_TABLES = frozenset({EVERY_TABLE})
INSERT_CHUNK = 256         # rows in one statement of `insert_many`
OLDER = "older"         # `Engine.read_view`: a read now may see a snapshot older than the last commit


class PlatformProblem(Problem):
    """A failure of the platform under the store. Its `detail` names the cause in plain words for any API
    client; `cause` (the driver's text: host, port, path) is for the operator's log only (Engine.outage)."""

    def __init__(self, detail=None, *, cause=None, **kw):
        super().__init__(detail, **kw)
        self.cause = cause


class StoreUnavailable(PlatformProblem, ServiceUnavailable):
    """The store cannot be reached or written now (PostgreSQL restarting, a read-only state file): a 503 the
    caller may retry, never "this is a bug"."""
    slug, title = "store-unavailable", "The store is unavailable"

    def __init__(self, detail=None, **kw):
        kw.setdefault("headers", {"Retry-After": "5"})
        super().__init__(detail, **kw)


class StoreFull(PlatformProblem):
    """The disk holding the store is full: 507, as RFC 4918 names it; nothing of the request was kept."""
    status, slug, title = 507, "insufficient-storage", "The store has no room left"


def one_line(error):
    """A driver's error on one line (psycopg's span several): the operator's log, never an API answer."""
    return " ".join(str(error).split()) or type(error).__name__


class Engine:
    """What both engines share: the domain's interface (interface.Store) and the core's (schema upgrades, retries
    of aborted transactions, the server's settings in `meta`)."""

    engine: str = ""
    location: str = ""
    # Told when a write transaction that changed a row ends, committed or rolled back, with the keys of the locks
    # it took (a world's `world/<id>`) and the tables it wrote (EVERY_TABLE among them where the engine cannot
    # say): the request state forgets what it remembered of those worlds' tables (requeststate.memory).
    ended: Callable[[frozenset[str], frozenset[str]], None] | None = None
    _outage = None      # the platform failure logged and not yet over (Engine.outage)

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
        limit), in every process; released at commit (`_take_lock`, the engine's way). The key is noted for `ended`."""
        local = self._local()
        if local.depth:
            local.locks.add(key)
        self._take_lock(key)

    def note(self, key):
        """Tell `ended` of `key` with this transaction's locks, taking no lock: a world deleted (`gone/<id>`), whose
        memory the request state drops once the transaction has ended, so no later step of it adds any again; a
        world whose rows it writes without holding its lock (`world/<id>`: `Worlds.writes`)."""
        local = self._local()
        if local.depth:
            local.locks.add(key)

    def _take_lock(self, key):
        """SQLite's write transactions are serial already."""

    def _writes_seen(self):
        """Where a write transaction's statements add the tables they write (SqliteStore: what SQLite names),
        or None where the engine cannot say: `ended` is then told EVERY_TABLE."""
        return None

    def _ended(self, local):
        """A transaction ended (committed, rolled back, or lost): tell `ended` of a write transaction's locks,
        unless it changed no row (a control API read, a refused write): what was remembered is still so."""
        locks, local.locks = local.locks, set()
        written, local.written = local.written, None
        if self.ended is not None and not local.reading and self._changed(local):
            self.ended(frozenset(locks), frozenset(written) if written is not None else ALL_TABLES)

    def _changed(self, local):
        began = local.began_changes
        if began is None:
            return True
        try:
            return self._changes(local.db) != began
        except Exception:       # the connection is gone: it may have changed anything
            return True

    # --- the interface ------------------------------------------------------------------------------------

    @contextmanager
    def transaction(self, read_only=False):
        """All or nothing: nested uses join the outer transaction; an exception rolls the whole of it back.
        `read_only`: a transaction that only reads, where the engine has such (PostgresStore.reading).
        A connection lost before COMMIT lost the transaction (Store.retrying runs it again); one lost during
        COMMIT may or may not have kept it: that is a 503, never a retry."""
        with self._held() as local:
            outer = local.depth == 0
            if outer:
                self._begin(local.db, read_only)
                local.reading, local.locks = read_only, set()
                local.written = self._writes_seen() if self.ended is not None and not read_only else None
                local.began_changes = self._changes(local.db) if self.ended is not None else None
                changes = self._changes(local.db) if self._outage is not None else None
            local.depth += 1
            try:
                yield self
            except BaseException:
                local.depth -= 1
                if outer:
                    try:
                        local.db.rollback()
                    except Exception:
                        if self._usable(local.db):
                            raise       # the connection is gone, and the transaction with it
                    self._ended(local)
                raise
            local.depth -= 1
            if outer:
                usable = self._usable(local.db)
                try:
                    local.db.commit()
                except Exception as error:
                    self._ended(local)
                    if usable and self.lost(error):
                        raise StoreUnavailable("The connection to the store was lost while this change was being "
                                               "committed; it may or may not have been kept.") from error
                    raise
                self._ended(local)
                if self._outage is not None and not read_only and self._changes(local.db) != changes:
                    self._over()

    RETRIES = 3

    def retrying(self, work):
        """`work()`, which runs its own transaction, again (up to RETRIES times in all) when the engine aborted
        that transaction to break a deadlock: on PostgreSQL two transactions that each wait for a row the other
        holds lose one of them, and without this the loser's request was a 500. The locks are taken in one
        order (pipeline, LOCK ORDER), so this is the rare case the order does not cover (a DELETE and an UPDATE
        meeting rows in different orders). Inside an outer transaction the error goes up to it: only the
        outermost transaction can start again."""
        attempt, reconnected = 0, False
        while True:
            attempt += 1
            try:
                return work()
            except Exception as error:
                if self.lost(error) and not reconnected and not self.in_transaction:
                    reconnected = True      # once: nothing was committed, and the next use connects again
                    attempt -= 1
                    continue
                if attempt >= self.RETRIES or self.in_transaction or not self.transient(error):
                    raise

    def lost(self, error):
        """Whether `error` says the connection to the store went away (PostgreSQL restarted, a network cut):
        the transaction it was in is gone, and the next use of the store connects again."""
        return False

    def _usable(self, db):
        """Whether a connection can still carry a statement (a PostgreSQL connection whose server went away
        cannot; SQLite's always can)."""
        return True

    def platform_problem(self, error):
        """The Problem a failure of the platform under the store answers (disk full 507; read-only, I/O error,
        connection lost 503), or None when `error` is no such failure (a bug stays a 500)."""
        if self.lost(error):
            return StoreUnavailable("The connection to the store was lost; the request was not carried out.",
                                    cause=one_line(error))
        return None

    def health(self):
        """None when the store answers a statement, else the PlatformProblem saying why (GET /_sandbox/health)."""
        try:
            self.retrying(lambda: self.one("SELECT 1 AS ok"))  # a connection its server dropped: once more
        except PlatformProblem as refusal:
            return refusal
        except Exception as error:
            platform = self.platform_problem(error)
            return platform if platform is not None else StoreUnavailable("The store failed to answer.",
                                                                          cause=one_line(error))
        return None

    def outage(self, problem, error=None):
        """Log a platform failure for the operator, with its cause, once per outage: a store away for an hour
        under load would otherwise write a line per request. The outage is over when a transaction that
        changed something commits (a read alone may succeed on a full disk or a read-only file)."""
        cause = getattr(problem, "cause", None) or (one_line(error) if error is not None else None)
        if self._outage is None:
            self._outage = problem.slug
            log.warning("store: %s%s", problem.detail, f" ({cause})" if cause else "")

    def _over(self):
        self._outage = None
        log.warning("store: working again")

    def _changes(self, db):
        """A count that grows with every change a connection makes (SqliteStore); here any commit counts."""
        return object()

    def transient(self, error):
        """Whether `error` aborted a transaction that would succeed if run again. SQLite: never (its writers
        queue; a busy timeout after 60 s is not worth a second minute)."""
        return self.lost(error)

    @contextmanager
    def savepoint(self):
        """Inside a transaction: what the block writes is undone when it raises, and the transaction goes on (an
        API write keeps its rate-limit hit when its handler fails, pipeline.write_operation; a hosted page's
        refused form attempt leaves no trace while the page records the error it shows). Savepoints nest: each
        ROLLBACK TO and RELEASE names the newest savepoint of that name."""
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

    @property
    def read_view(self):
        """What a read now sees, in one look at this thread's state (requeststate.MemoryState.remember asks before
        every read it could answer): OLDER when it may see a snapshot older than the last commit; else the tables
        this thread's write transaction has written so far (EVERY_TABLE where the engine cannot say), whose reads
        may see its own uncommitted writes, or None outside one. Here: any transaction may hold an older view."""
        return None if self._local().depth == 0 else OLDER

    def execute(self, sql, params=()):
        with self._held() as local:
            return local.db.execute(self._sql(sql), self._params(params))

    def executemany(self, sql, rows):
        with self._held() as local:
            return local.db.executemany(self._sql(sql), (self._params(r) for r in rows))

    def all(self, sql, params=()):
        with self._held() as local:
            return local.db.execute(self._sql(sql), self._params(params)).fetchall()

    def one(self, sql, params=()):
        with self._held() as local:
            return local.db.execute(self._sql(sql), self._params(params)).fetchone()

    def insert(self, table, **values):
        columns = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        self.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", tuple(values.values()))

    def insert_many(self, table, columns, rows):
        """`rows` (tuples in the order of `columns`) into `table` in a few statements of many rows each, their
        sizes powers of two up to INSERT_CHUNK, so a handful of statement texts serve every batch: executemany
        runs a statement per row, and SQLite's module lets go of the GIL at each (a batch written behind, a
        thousand rows, handed the GIL to the serving threads a thousand times)."""
        rows, start = list(rows), 0
        one = f"({', '.join('?' * len(columns))})"
        while start < len(rows):
            size = min(INSERT_CHUNK, 1 << ((len(rows) - start).bit_length() - 1))
            chunk = rows[start:start + size]
            self.execute(f"INSERT INTO {table} ({', '.join(columns)}) VALUES {', '.join([one] * size)}",
                         tuple(value for row in chunk for value in row))
            start += size

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

    def signing_secret(self, factory):
        """The server's token signing secret, made by `factory` at the first start. Kept in the store here (a
        PostgreSQL database is the team's to protect, and every machine sharing it must sign alike); a SQLite
        file keeps it beside the state instead (SqliteStore.signing_secret)."""
        return self.meta("signing-secret", factory)

    def forget_meta(self, key):
        self.execute("DELETE FROM meta WHERE key = ?", (key,))

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
        present = self.tables_columns()
        for table, columns in declared_columns(schemas).items():
            have = present.get(table, {})
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
        present = self.tables_columns()
        for table, wanted in declared_columns(schemas).items():
            have = present.get(table, {})
            missing = [c for c in wanted if have and c not in have]     # a table not there yet is made
            if missing:
                raise StaleState(f"table {table} lacks {', '.join(missing)}: it was written by an older "
                                 "ptas-sandbox; move it away (or serve another --state) to start afresh")

    def columns(self, table):
        """The columns of a table as {name: {"type": INTEGER|REAL|TEXT, "notnull", "default"}} (snapshots check
        rows against them); PostgreSQL's generated `rowid` is not one."""
        return self.tables_columns(table).get(table, {})

    def tables_columns(self, only=None):
        """{table: its columns, as `columns` says them} of every table (or of the table `only`), in one query:
        opening a store checks every table twice, and on PostgreSQL a query per table was most of the start."""
        raise NotImplementedError

    # --- connections --------------------------------------------------------------------------------------

    def _init_local(self):
        self._tls = threading.local()
        self._opened = []
        self._opened_lock = threading.Lock()

    def _local(self):
        local = self._tls
        db = getattr(local, "db", None)
        if db is not None and local.pid == _process.pid and (local.depth or self._usable(db)):
            return local        # every statement asks: the usual case first
        # A first use in this thread; a connection whose server went away between transactions; or a forked
        # worker, which never shares its parent's connection.
        forked = db is not None and local.pid != _process.pid
        local.db = self._connection()
        local.depth = 0
        local.written = None
        local.pid = _process.pid
        if not forked:
            with self._opened_lock:
                self._opened.append(local.db)
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
