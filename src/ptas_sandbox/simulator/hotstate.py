"""Per-request state of a store that one process owns, kept in memory (issue 25).

A SQLite file is locked to one launch of `ptas serve` and `:memory:` belongs to one process: nobody else reads
that store, so the state every request touches need not be a store write. This module is the one place that
decides (`owns_store`): with `--workers N` (the launch says SHARED_STORE) or PostgreSQL, every request goes to
the store as before (`StoreState`, exact across processes); otherwise `HotState` keeps in memory

- the §8 windows, exact (`ratelimit.Windows`), their hits written behind;
- each token's latest `lastUsedAt`, written behind;
- what reads of the store give until one of the tables read is written again (`remember`): a world and its
  clock, a verified token's row, whether a world has live faults, when a world's next catch-up is due, a
  caller's partner row (`Ctx.remember`); so a GET answered from these makes no store statement at all, each
  of which would cost a served request a dozen thread hand-offs (the sqlite3 module lets go of the GIL at
  every step of a statement);
- whatever an area hands `write_behind` (the journal's entries).

Writing behind: in batches, one transaction each, at most FLUSH_EVERY_S after the request (the system clock
paces the batches only; what is written carries world-clock times), and on shutdown. An operation that reads
what is written behind (the control API, the journal, the tokens area: `settles`) first writes it all, so reads
see it. A kill -9 loses at most the last batch; an API write is committed before it is answered, as before.
"""

import logging
import re
import threading
from collections import defaultdict
from collections.abc import Callable
from typing import Any

FLUSH_EVERY_S = 0.5         # cadence of the batches (system clock); a kill -9 loses at most this much
PENDING_MAX = 10_000        # items waiting in one buffer; more and the request adding one writes the batch itself
PENDING_BYTES = 16 << 20    # ... or bytes they hold (what `add` is told: the journal's bodies), whichever first
CACHED_MAX = 20_000         # remembered reads; more and the oldest is forgotten (bounded, never stale)

log = logging.getLogger("ptas")


def owns_store(store, config) -> bool:
    """Whether this process owns its store, so per-request state may live in its memory: a SQLite store (a file
    is locked to one launch, `:memory:` is the process's) that the launch does not share between workers."""
    return store.engine == "sqlite" and not config.get("SHARED_STORE")


_WRITE = re.compile(r"\s*(INSERT\s+(?:OR\s+\w+\s+)?INTO|REPLACE\s+INTO|UPDATE|DELETE\s+FROM|DROP\s+TABLE|"
                    r"CREATE\s+TABLE(?:\s+IF\s+NOT\s+EXISTS)?)\s+(\w+)", re.I)


class Versions:
    """How often each table was written, so a remembered read knows it is stale: counted when a statement
    writes it and again when its transaction ends (a read between the two saw the old rows). Inserts are
    counted apart (`table+`): a new row changes no row read before, only a read that found nothing."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = defaultdict(int)
        self.total = 0
        self._keys: dict[str, str | None] = {}       # statement -> what it writes ("table" or "table+"), or None
        self._local = threading.local()
        self._lock = threading.Lock()

    def statement(self, sql: str) -> None:
        key = self._keys.get(sql, "")
        if key == "":
            match = _WRITE.match(sql)
            key = None
            if match:
                key = match.group(2).lower() + ("+" if match.group(1)[0] in "Ii" else "")
            if len(self._keys) < 8192:
                self._keys[sql] = key
        if key is not None:
            with self._lock:        # `+=` of two threads at once could lose one, and a version run backwards
                self.counts[key] += 1
                self.total += 1
            touched = getattr(self._local, "touched", None)
            if touched is None:
                touched = self._local.touched = set()
            touched.add(key)

    def ended(self) -> None:
        """A transaction of this thread ended (committed or rolled back)."""
        touched = getattr(self._local, "touched", None)
        if touched:
            with self._lock:
                for key in touched:
                    self.counts[key] += 1
                self.total += 1
            touched.clear()

    def of(self, tables: tuple[str, ...], inserts: bool) -> int:
        """The version of `tables` (empty: of the whole store), with their inserts or without: the sum of their
        counts, which only grow, so it moves exactly when one of them does."""
        if not tables:
            return self.total
        counts = self.counts
        if inserts:
            return sum([counts[t] + counts[t + "+"] for t in tables])
        return sum([counts[t] for t in tables])


class StoreState:
    """Every request's state straight in the store: exact across processes (several workers, PostgreSQL)."""

    hot = False

    def __init__(self, store) -> None:
        self.store = store

    def remember(self, key: Any, tables: tuple[str, ...], read: Callable[[], Any], inserts: bool = False) -> Any:
        """What `read()` gives; a HotState keeps it until a row of `tables` changes or goes (() : any table),
        or a row is added to them when `inserts` or the read found nothing (None)."""
        return read()

    def drop(self, key: Any) -> None:
        """Forget what `remember` kept under `key`."""

    def forget_world(self, world_id: str | None) -> None:
        """Forget what `remember` kept for a deleted world (keys name their world second); None: every world."""

    def write_behind(self, write: Callable[[Any, list[Any]], None]) -> "Behind":
        """A buffer whose items `write(store, items)` stores; here each is written when added."""
        return Behind(self, write, at_once=True)

    def settles(self, op) -> bool:
        return False

    def settle(self) -> None:
        """Write what waits to be written behind (nothing here)."""

    def wake(self) -> None:
        """Something waits to be written behind (nothing ever does here)."""

    def close(self) -> None:
        """Write what waits and stop writing behind."""


class Behind:
    """Items waiting to be written by `write(store, items)` in one transaction."""

    def __init__(self, state: StoreState, write: Callable[[Any, list[Any]], None], at_once: bool = False) -> None:
        self.state, self.write, self.at_once = state, write, at_once
        self.items: list[Any] = []
        self.size = 0
        self.lock = threading.Lock()

    def add(self, item: Any, size: int = 0) -> None:
        """`item` to be written; `size`, the bytes it holds beyond its own fields (bodies), bounds the buffer."""
        if self.at_once:
            self.write(self.state.store, [item])
            return
        with self.lock:
            self.items.append(item)
            self.size += size
            full = len(self.items) >= PENDING_MAX or self.size >= PENDING_BYTES
        if full:
            self.state.settle()
        else:
            self.state.wake()

    def take(self) -> list[Any]:
        with self.lock:
            items, self.items, self.size = self.items, [], 0
        return items

    def drop(self, keep: Callable[[Any], bool]) -> None:
        with self.lock:
            self.items = [item for item in self.items if keep(item)]


class HotState(StoreState):
    """Per-request state in this process's memory, written behind (module docstring)."""

    hot = True

    def __init__(self, store, background: bool = True) -> None:
        super().__init__(store)
        self.versions = Versions()
        store.versions = self.versions
        self.cached: dict[Any, tuple[int, Any]] = {}
        self.buffers: list[Behind] = []
        self.background = background        # a thread writes the batches (START_SERVICES); else settle() does
        self._flushing = threading.Lock()   # one batch at a time, in order
        self._wake = threading.Condition()
        self._stopped = False
        self._thread: threading.Thread | None = None
        self.batches = 0                    # batches written, for tests that wait for the thread
        self._written = threading.Condition()

    def remember(self, key, tables, read, inserts=False):
        if not self.store.sees_last_commit:     # a snapshot older than the versions say: read, keep nothing
            return read()
        seen = self.cached.get(key)
        if seen is not None and seen[0] == self.versions.of(tables, inserts or seen[1] is None):
            return seen[1]
        changed = self.versions.of(tables, False)      # before the read: a write meanwhile makes it stale
        added = self.versions.of(tables, True)
        value = read()
        if len(self.cached) >= CACHED_MAX and key not in self.cached:
            # The oldest goes: reads of tokens, partners and worlds no longer used (a user deleted long ago)
            # would otherwise pile up to the bound and, cleared all at once, be read again together.
            try:
                del self.cached[next(iter(self.cached))]
            except (StopIteration, KeyError, RuntimeError):     # another thread changed it meanwhile
                pass
        self.cached[key] = (added if inserts or value is None else changed, value)
        return value

    def drop(self, key: Any) -> None:
        self.cached.pop(key, None)

    def forget_world(self, world_id):
        if world_id is None:
            self.cached.clear()
            return
        for key in [k for k in list(self.cached) if isinstance(k, tuple) and len(k) > 1 and k[1] == world_id]:
            self.cached.pop(key, None)

    def write_behind(self, write):
        buffer = Behind(self, write)
        self.buffers.append(buffer)
        return buffer

    def settles(self, op) -> bool:
        """Whether an operation reads what is written behind: the tools (control API, journal, inspector...),
        and the tokens area's records (lastUsedAt). An API call of any other area reads none of it."""
        # "none", "world": operations.NO_AUTH and WORLD_AUTH (operations sits above this module's layer)
        return op.control or op.area == "tokens" or op.tokens in ("none", "world")

    def settle(self) -> None:
        """Write every buffer's items now, in one transaction."""
        with self._flushing:
            batches = [(buffer, buffer.take()) for buffer in self.buffers]
            if not any(items for _, items in batches):
                return
            try:
                with self.store.transaction():
                    for buffer, items in batches:
                        if items:
                            buffer.write(self.store, items)
            except Exception:
                # What is written behind never fails a request. One item the store refuses (one world's odd
                # request) must not take every world's items with it: each is written alone, and only what is
                # refused again is said loudly and dropped (retrying it would refuse it again).
                log.exception("could not write %d items behind at once; writing them one by one",
                              sum(len(items) for _, items in batches))
                for buffer, items in batches:
                    for item in items:
                        try:
                            with self.store.transaction():
                                buffer.write(self.store, [item])
                        except Exception:
                            log.exception("dropped an item written behind")
            with self._written:
                self.batches += 1
                self._written.notify_all()

    def written(self, batches: int, timeout: float) -> bool:
        """Wait until more than `batches` batches were written (tests: the thread's signal, not a sleep)."""
        with self._written:
            return self._written.wait_for(lambda: self.batches > batches, timeout)

    def wake(self) -> None:
        if self._thread is None and self.background and not self._stopped:
            self.start()

    def start(self) -> None:
        with self._wake:
            if self._thread is not None or self._stopped:
                return
            self._thread = threading.Thread(target=self._run, name="ptas-write-behind", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._wake:
                if self._stopped:
                    return
                self._wake.wait(FLUSH_EVERY_S)
                if self._stopped:
                    return
            self.settle()

    def close(self) -> None:
        """Stop the thread and write what is left (a clean shutdown loses nothing)."""
        with self._wake:
            self._stopped = True
            self._wake.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(10)
        self.settle()


def state_for(store, config) -> StoreState:
    if owns_store(store, config):
        return HotState(store, background=bool(config.get("START_SERVICES", True)))
    return StoreState(store)
