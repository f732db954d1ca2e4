"""The embedded engine: a SQLite file (WAL, a connection per thread, writers queued per process and by a
`flock` between processes) or `:memory:` (one connection behind a lock)."""

import fcntl
import json
import os
import threading
from contextlib import contextmanager
from types import SimpleNamespace

from .base import ALL_TABLES, EVERY_TABLE, OLDER, Engine, StoreFull, StoreUnavailable
from .schema import statements


def _dict_row(cursor, row):
    return dict(zip([d[0] for d in cursor.description], row))


BUSY_TIMEOUT_S = 60
NAMED_MAX = 4096        # statements whose tables are kept; past it, a new statement counts as touching every table
LOW_SPACE_BYTES = 1 << 20      # free space under which health calls the disk full


class SqliteStore(Engine):
    engine = "sqlite"

    def __init__(self, path=":memory:", schemas=(), upgrades=None):
        import sqlite3
        self._sqlite = sqlite3
        self.location = self.path = path
        self.memory = path == ":memory:"
        self._init_local()
        self._named: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
        self._reads = threading.local()
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
        rows = list(rows)
        with self._held() as local:     # rows as given: SQLite takes Python values as they are
            if rows:
                self._see(local, sql, rows[0])
            return local.db.executemany(sql, rows)

    # A statement on a file, without the context manager of `_held` around it: every statement of every request
    # passes here, and SQLite takes the SQL and the values as they are.
    def execute(self, sql, params=()):
        return self._in_memory(sql, params, None) if self.memory else self._statement(sql, params)

    def one(self, sql, params=()):
        return self._in_memory(sql, params, "fetchone") if self.memory else self._statement(sql, params).fetchone()

    def all(self, sql, params=()):
        return self._in_memory(sql, params, "fetchall") if self.memory else self._statement(sql, params).fetchall()

    def _in_memory(self, sql, params, fetch):
        """The one connection, its rows fetched before its lock is let go (another thread's statement may follow)."""
        with self._held() as local:
            self._see(local, sql, params)
            cursor = local.db.execute(sql, params)
            return getattr(cursor, fetch)() if fetch else cursor

    def _statement(self, sql, params):
        local = Engine._local(self)
        if getattr(local, "begin_pending", False):     # a read's first statement (reading)
            local.begin_pending = False
            local.db.execute("BEGIN")
            local.snapshot = True
        self._see(local, sql, params)
        return local.db.execute(sql, params)

    # --- the tables a statement touches, for the request state's remembered reads (requeststate.memory) -------

    def _writes_seen(self):
        return set()

    def tables_read(self, read):
        """(`read()`, the tables its statements read, as SQLite names them); a read recorded inside it adds its
        tables to this one's too. Only the request state of a store one process owns asks (requeststate.memory)."""
        outer = getattr(self._reads, "seen", None)
        seen = self._reads.seen = set()
        try:
            value = read()
        finally:
            self._reads.seen = outer
            if outer is not None:
                outer |= seen
        return value, frozenset(seen)

    def saw(self, tables):
        """A read that is being recorded (`tables_read`) used what another read found in these tables."""
        seen = getattr(self._reads, "seen", None)
        if seen is not None:
            seen |= tables

    def _see(self, local, sql, params):
        """Add the tables of this statement to the write transaction's and to the recorded read's."""
        written, seen = local.written, getattr(self._reads, "seen", None)
        if written is None and seen is None:
            return
        named = self._named.get(sql) or self._name_tables(local.db, sql, params)
        if seen is not None:
            seen |= named[0]
        if written is not None:
            written |= named[1]

    def _name_tables(self, db, sql, params):
        """(the tables `sql` reads, those it writes), as SQLite's authorizer names them while it compiles the
        statement (`EXPLAIN` compiles it, runs nothing): no parsing of ours, so an upsert, a `RETURNING` or a
        `WITH ... UPDATE` is named like any other. Where SQLite cannot say, every table."""
        if len(self._named) >= NAMED_MAX:
            return ALL_TABLES, ALL_TABLES
        sqlite, read, written = self._sqlite, set(), set()
        writes = (sqlite.SQLITE_INSERT, sqlite.SQLITE_UPDATE, sqlite.SQLITE_DELETE)
        changes_nothing = (sqlite.SQLITE_SELECT, sqlite.SQLITE_FUNCTION, sqlite.SQLITE_TRANSACTION,
                           sqlite.SQLITE_SAVEPOINT, sqlite.SQLITE_PRAGMA, sqlite.SQLITE_RECURSIVE)

        def name(action, table, _column, _database, _trigger):
            if action == sqlite.SQLITE_READ:
                read.add(table)
            elif action in writes:
                written.add(table)
            elif action not in changes_nothing:     # a table made, dropped or altered: whatever it held
                written.add(EVERY_TABLE)
            return sqlite.SQLITE_OK
        # Setting an authorizer makes SQLite compile the connection's cached statements again on their next use:
        # once per statement text this process runs, not per request.
        db.set_authorizer(name)
        try:
            db.execute("EXPLAIN " + sql, params)
            named = frozenset(read), frozenset(written)
        except sqlite.Error:
            named = ALL_TABLES, ALL_TABLES
        finally:
            db.set_authorizer(None)
        self._named[sql] = named
        return named

    def tables_with_column(self, column):
        return [r["name"] for r in self.all(
            "SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) c WHERE m.type = 'table' "
            "AND c.name = ? ORDER BY m.name", (column,))]

    def tables_columns(self, only=None):
        tables: dict[str, dict[str, dict]] = {}
        for c in self.all("SELECT m.name AS table_name, c.* FROM sqlite_master m JOIN pragma_table_info(m.name) c "
                          "WHERE m.type = 'table' AND (? IS NULL OR m.name = ?) ORDER BY m.name, c.cid",
                          (only, only)):
            tables.setdefault(c["table_name"], {})[c["name"]] = {
                "type": c["type"].upper() or "TEXT", "notnull": bool(c["notnull"]),
                "default": c["dflt_value"] is not None}
        return tables

    @contextmanager
    def _held(self):
        if self.memory:
            with self._lock:
                yield self._shared_local
            return
        local = self._local()
        if getattr(local, "begin_pending", False):     # a read's first statement (reading)
            local.begin_pending = False
            local.db.execute("BEGIN")
            local.snapshot = True
        yield local

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
        writers' turn, so a read never queues behind the writers of every world. Its BEGIN waits for its first
        statement (`_held`), where SQLite's snapshot would begin anyway: a read answered from memory alone
        (requeststate.memory) then costs the store nothing.
        A write there would skip the turn and race other writers into "database is locked"; it is rolled back
        and refused, always, so a GET that writes fails in tests (not `PRAGMA query_only`: setting it makes SQLite
        prepare every statement again, half a GET's time). In memory, or inside a transaction: `transaction()`."""
        if self.memory or self._local().depth:
            with self.transaction(read_only=True) as store:     # in memory: a write inside is not refused
                yield store
            return
        local = self._local()
        changes = local.db.total_changes
        local.begin_pending, local.reading = True, True
        local.depth += 1
        try:
            yield self
        except BaseException:
            local.depth -= 1
            if not self._end_reading(local):
                local.db.rollback()
            raise
        local.depth -= 1
        if self._end_reading(local):
            return
        if local.db.total_changes != changes:
            local.db.rollback()
            raise self._sqlite.OperationalError("a read transaction wrote (store.reading); writes need transaction()")
        local.db.commit()       # ends the snapshot (cheaper than a rollback, which resets every cursor)

    @staticmethod
    def _end_reading(local):
        """Whether the read ended before its first statement (no snapshot to end)."""
        unread, local.begin_pending, local.snapshot = local.begin_pending, False, False
        return unread

    @property
    def read_view(self):
        """Only a read's snapshot, once begun, may be older: writers are serial (a write transaction holds the
        writers' turn, so it reads the last commit and its own writes)."""
        local = self._local()
        if local.depth == 0:
            return None
        if getattr(local, "reading", False):
            return OLDER if getattr(local, "snapshot", False) and not self.memory else None
        return local.written if local.written is not None else ALL_TABLES

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

    def signing_secret(self, factory):
        """A state file keeps its signing secret in a key file beside it (`<state>.key`, 0600), not inside: a
        copy of the state (a backup, a file attached to a bug report) then lets no one forge tokens. A secret
        an older version kept in the state moves to the key file, so its tokens stay valid."""
        if self.memory:
            return super().signing_secret(factory)
        path = self.path + ".key"
        with self.transaction():
            row = self.one("SELECT value FROM meta WHERE key = 'signing-secret'")
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            except FileExistsError:
                pass
            else:
                with os.fdopen(fd, "w") as out:
                    out.write(json.loads(row["value"]) if row else factory())
            os.chmod(path, 0o600)
            with open(path) as key:
                secret = key.read().strip()
            if not secret:
                raise OSError(f"the key file {path} is empty; remove it to make a new one (tokens issued so far "
                              "will no longer verify)")
            if row:
                self.forget_meta("signing-secret")
        return secret

    def platform_problem(self, error):
        """Disk full is a 507, a state file that cannot be written, read or opened a 503: the platform's
        failures, said plainly, not a 500 "this is a bug"."""
        code = getattr(error, "sqlite_errorcode", None)
        if not isinstance(error, self._sqlite.Error) or code is None:
            return super().platform_problem(error)
        primary = code & 0xFF
        if primary == 13:       # SQLITE_FULL
            return StoreFull("The disk holding the sandbox's state is full; nothing of this request was kept.",
                             cause=f"{self.path}: {error}")
        reasons = {8: "the state file is read-only", 10: "the state file could not be read or written (I/O error)",
                   14: "the state file cannot be opened"}
        if primary in reasons:  # SQLITE_READONLY, SQLITE_IOERR, SQLITE_CANTOPEN
            return StoreUnavailable(f"The sandbox cannot use its state: {reasons[primary]}.",
                                    cause=f"{self.path}: {error}")
        return None

    def health(self):
        """The store answers, its file is writable and its disk has room (reads still work on a full disk,
        so a statement alone would say all is well)."""
        problem = super().health()
        if problem is not None or self.memory:
            return problem
        if not os.access(self.path, os.W_OK):
            return StoreUnavailable("The sandbox cannot use its state: the state file is read-only.",
                                    cause=f"{self.path} is not writable")
        try:
            disk = os.statvfs(os.path.dirname(os.path.abspath(self.path)))
        except OSError as error:
            return StoreUnavailable("The sandbox cannot use its state: its disk cannot be read.",
                                    cause=f"{self.path}: {error}")
        if disk.f_bavail * disk.f_frsize < LOW_SPACE_BYTES:
            return StoreFull("The disk holding the sandbox's state is full.",
                             cause=f"{disk.f_bavail * disk.f_frsize} bytes free beside {self.path}")
        return None

    def _changes(self, db):
        return db.total_changes

    def close(self):
        if self.memory:
            with self._lock:
                self._shared.close()
        else:
            super().close()
            if self._writer_pid == os.getpid():
                self._writer_pid = None
                os.close(self._writer_fd)
