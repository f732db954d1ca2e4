"""Per-request state of a store that one process owns, kept in memory.

A SQLite file is locked to one launch of `ptas serve` and `:memory:` belongs to one process: nobody else reads
that store, so the state every request touches need not be a store write (`open_state` decides). `MemoryState`
keeps in memory

- the §8 windows, exact (`Windows`), their hits written behind;
- each token's latest `lastUsedAt`, written behind;
- what reads of one world give until a writer of that world's tables ends (`remember`, `ended`): a world and
  its clock, a verified token's row, whether a world has live faults, when a world's next catch-up is due, a
  caller's partner row (`Ctx.remember`); so a GET answered from these makes no store statement at all, each
  of which would cost a served request a dozen thread hand-offs (the sqlite3 module lets go of the GIL at
  every step of a statement). The tables are those SQLite names for the statements (`SqliteStore.tables_read`),
  so a webhook attempt recorded in one world, or an echo capture, leaves every world's reads in place;
- whatever an area hands `write_behind` (the journal's entries).

Writing behind: in batches, one transaction each, at most FLUSH_EVERY_S after the request (the system clock
paces the batches only; what is written carries world-clock times), and on shutdown. An operation that reads
what is written behind (`Operation.reads_behind`: the control API, the journal, the tokens area) first writes
it all, so reads see it. A kill -9 loses at most the last batch; an API write is committed before it is
answered, as on the store-exact path. A batch the store refuses is written again item by item; what it refuses
again is counted (`lost`) and logged once for the batch.
"""

import bisect
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from ..auth import Principal, authorize, remembered_token
from ..ratelimit import log_in_store, refusal, write_hits
from ..store.base import EVERY_TABLE, OLDER
from ..timestamps import SECOND_US
from .exact import StoreState

FLUSH_EVERY_S = 0.5         # cadence of the batches (system clock); a kill -9 loses at most this much
PENDING_MAX = 10_000        # items waiting in one buffer; more and the request adding one writes the batch itself
PENDING_BYTES = 16 << 20    # ... or bytes they hold (what `add` is told: the journal's bodies), whichever first
CACHED_MAX = 20_000         # remembered reads; more and the oldest is forgotten (bounded, never stale)

log = logging.getLogger("ptas")
T = TypeVar("T")
ANY_WRITE = ""          # in `MemoryState.changed`: the last write of any table (for a read whose tables are unknown)


class Behind:
    """Items waiting to be written by `write(store, items)` in one transaction of a batch."""

    def __init__(self, state: "MemoryState", write: Callable[[Any, list[Any]], None]) -> None:
        self.state, self.write = state, write
        self.items: list[Any] = []
        self.size = 0
        self.lock = threading.Lock()

    def add(self, item: Any, size: int = 0) -> None:
        """`item` to be written; `size`, the bytes it holds beyond its own fields (bodies), bounds the buffer."""
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


def overlap(tables: frozenset[str], written: set[str] | frozenset[str]) -> bool:
    """Whether a read of `tables` may see writes to `written` (EVERY_TABLE in either: any)."""
    return EVERY_TABLE in written or (EVERY_TABLE in tables and bool(written)) or not tables.isdisjoint(written)


class MemoryState(StoreState):
    """Per-request state in this process's memory, written behind (module docstring)."""

    # `Simulator.catch_up` remembers a world as quiet up to a minute, or a second, of world time ahead
    lookahead_us = (60 * SECOND_US, SECOND_US)

    def __init__(self, store, background: bool = True) -> None:
        super().__init__(store)
        # Remembered reads, each as (the last write that had ended before it was read, the marks of `changed`
        # that would make it stale, the tables it read, its value). `changed`: {(world, table): the last write of
        # that table that ended (`Engine.ended`) in a transaction that locked or named that world}; a write that
        # named no world counts for every world (None). A read is fresh while no write of its tables, in its world
        # or in every world, ended after it.
        self.ends = 0
        self.changed: dict[tuple[str | None, str], int] = {}
        self.cached: dict[Any, tuple[int, tuple[tuple[str | None, str], ...], frozenset[str], Any]] = {}
        self._batch = threading.local()     # this thread writes a batch: it changes no remembered read
        store.ended = self.ended
        self.buffers: list[Behind] = []
        self.background = background        # a thread writes the batches (START_SERVICES); else settle() does
        self._flushing = threading.Lock()   # one batch at a time, in order
        self._wake = threading.Condition()
        self._stopped = False
        self._thread: threading.Thread | None = None
        self.batches = 0                    # batches written, for tests that wait for the thread
        self.lost = 0                       # items the store refused twice (in their batch, then alone)
        self._written = threading.Condition()
        self._counting = threading.Lock()

    def remember(self, key: Any, world_id: str, read: Callable[[], Any]) -> Any:
        # Read through, keeping nothing, inside a snapshot that may be older than the last commit. Inside a write
        # transaction, a read of tables it has written may see its own writes, which other threads must not see
        # before its commit, nor at all after a rollback: read through, keeping nothing. Its reads of other tables
        # see the last commit (this process owns the store, its writers are serial, and each writer's end was
        # told before the next began), so there what was remembered serves, and what is read is kept.
        store = self.store
        written = store.read_view
        if written is OLDER:
            return read()
        seen = self.cached.get(key)
        if seen is not None:
            since, marks, tables, value = seen
            changed = self.changed
            for mark in marks:
                if changed.get(mark, 0) > since:
                    break
            else:
                if not written or not overlap(tables, written):
                    store.saw(tables)       # an outer read being recorded depends on these tables too
                    return value
        since = self.ends           # before the read: a write that ends meanwhile makes it stale
        value, tables = store.tables_read(read)
        if written and overlap(tables, written):    # `written` grows with the transaction: the set, read now
            return value
        if len(self.cached) >= CACHED_MAX and key not in self.cached:
            # The oldest goes: reads of tokens, partners and worlds no longer used (a user deleted long ago)
            # would otherwise pile up to the bound and, cleared all at once, be read again together.
            try:
                del self.cached[next(iter(self.cached))]
            except (StopIteration, KeyError, RuntimeError):     # another thread changed it meanwhile
                pass
        # the marks of `changed` that make it stale: a write of one of its tables (any table, where it is not
        # known which), or of every table, in its world or in every world
        names = (ANY_WRITE,) if EVERY_TABLE in tables else (*tables, EVERY_TABLE)
        self.cached[key] = (since, tuple((world, name) for world in (world_id, None) for name in names), tables,
                            value)
        return value

    def ended(self, locks: frozenset[str], tables: frozenset[str]) -> None:
        """A write transaction that changed rows ended (committed or rolled back: its own reads may have seen its
        writes): what was remembered of these tables is stale, in the worlds it locked, or in every world when it
        locked none."""
        if getattr(self._batch, "on", False):
            return
        gone = {key[5:] for key in locks if key.startswith("gone/")}     # deleted: forgotten, not moved
        if "*" in gone:         # every world wiped
            self.forget_world(None)
            return
        worlds: list[str | None] = [key[6:] for key in locks if key.startswith("world/") and key[6:] not in gone]
        with self._counting:        # two ends at once must not share a number
            self.ends += 1
            for world in worlds or [None]:
                for table in (*tables, ANY_WRITE):
                    self.changed[world, table] = self.ends
        for world_id in gone:
            self.forget_world(world_id)

    def drop(self, key: Any) -> None:
        self.cached.pop(key, None)

    def forget_world(self, world_id: str | None) -> None:
        """A deleted world's reads (keys name their world second) and the marks of its writes (`changed`): no
        writer of it will ever end again to make them stale, so they would stay for ever. None: every world's."""
        if world_id is None:
            self.cached.clear()
            with self._counting:
                self.changed.clear()
                self.ends += 1
                self.changed[None, EVERY_TABLE] = self.ends
            return
        for key in [k for k in list(self.cached) if isinstance(k, tuple) and len(k) > 1 and k[1] == world_id]:
            self.cached.pop(key, None)
        with self._counting:
            kept = [key for key in self.changed if key[0] == world_id]
            for key in kept:
                del self.changed[key]
            if kept:
                self.ends += 1      # a read of the world in flight now keeps nothing it could serve
                self.changed[None, EVERY_TABLE] = self.ends

    def admit(self, sandbox, ctx, claims, op) -> Principal:
        """Authenticate, authorize and count the request in memory: the token's row as last read, the §8
        windows, `lastUsedAt` written behind. Only a request that authenticated and holds the scope counts."""
        tokens = sandbox.hooks.tokens
        row = self.remember(remembered_token(ctx.world.id, claims["jti"]), ctx.world.id,
                            lambda: tokens.read(ctx, claims))
        principal = tokens.authenticate(ctx, claims, row)
        authorize(op, principal)
        sandbox.limiter.hit(ctx.world.id, ctx.now, op.id, frozen=ctx.world.frozen)
        tokens.used(ctx, principal)
        return principal

    @contextmanager
    def admitted(self, sandbox, ctx, claims, op, prepare: Callable[[Principal], T]) -> Iterator[T]:
        """An API write: admitted and caught up first (the request counts whatever the operation does), its
        call prepared (the body parsed and validated), then the operation's transaction alone, under the world's
        lock: the writers' turn is held for the operation only, not for the parsing other threads could do
        meanwhile."""
        principal = self.admit(sandbox, ctx, claims, op)
        self.store.retrying(lambda: sandbox.catch_up(ctx.world))
        self.reads_behind(op)
        call = prepare(principal)
        with self.store.transaction():
            sandbox.worlds.lock(ctx.world.id)
            yield call

    def rate_windows(self) -> Any:
        return Windows(self.store, self)

    def write_behind(self, write):
        buffer = Behind(self, write)
        self.buffers.append(buffer)
        return buffer

    def settle(self) -> None:
        """Write every buffer's items now, in one transaction."""
        with self._flushing:
            batches = [(buffer, buffer.take()) for buffer in self.buffers]
            if not any(items for _, items in batches):
                return
            self._batch.on = True
            try:
                with self.store.transaction():
                    for buffer, items in batches:
                        if items:
                            buffer.write(self.store, items)
            except Exception as error:
                # What is written behind never fails a request. One item the store refuses (one world's odd
                # request) must not take every world's items with it: each is written alone. What is refused
                # again (a full disk refuses them all) is dropped, since retrying it would refuse it again,
                # counted (`lost`) and said once for the batch, not once per item.
                lost = sum(not self._write_alone(buffer, item) for buffer, items in batches for item in items)
                if lost:
                    self.lost += lost
                    log.error("lost %d of %d items written behind (journal entries, lastUsedAt, §8 hits), %d "
                              "since start: the store refused them (%s)", lost,
                              sum(len(items) for _, items in batches), self.lost, error, exc_info=error)
            finally:
                self._batch.on = False
            with self._written:
                self.batches += 1
                self._written.notify_all()

    def _write_alone(self, buffer: Behind, item: Any) -> bool:
        try:
            with self.store.transaction():
                buffer.write(self.store, [item])
        except Exception:
            return False
        return True

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


class Windows:
    """The windows of a store this process owns, in memory: {(world, rule): its hits' instants, oldest first}.

    The lock guards the logs only: nothing waits for the store while holding it, since a reset that holds the
    store (its transaction) takes it to forget the world's windows."""

    def __init__(self, store, state):
        self.store = store
        self.logs = {}
        self.lock = threading.Lock()
        self.generation = 0         # counts wipes: a log read from the store before one is read again
        self.wiped = set()          # worlds wiped since this process started: their store log is empty
        self.everything_wiped = False
        self.pending = state.write_behind(write_hits)

    def hit(self, world_id, now, operation_id, rules, frozen=False):
        keys = [(world_id, rule) for rule, _ in rules]
        while True:
            generation = self.generation
            loaded = {key: self.load(*key) for key in keys if key not in self.logs}   # outside the lock
            with self.lock:
                if generation == self.generation:       # else a wipe came between: read them again
                    self._count(world_id, now, operation_id, rules, loaded, frozen)
                    break
        for rule, (_, window) in rules:
            self.pending.add((world_id, rule, now, window))

    def _count(self, world_id, now, operation_id, rules, loaded, frozen):
        for key, log in loaded.items():
            self.logs.setdefault(key, log)
        self.wiped.discard(world_id)        # its wipe is over (bounded: a marker lives until its world's next count)
        logs = []
        for rule, (limit, window) in rules:
            log = self.logs[world_id, rule]
            cutoff = now - window * SECOND_US
            while log and log[0] <= cutoff:
                log.popleft()
            if len(log) >= limit:
                raise refusal(limit, window, log[0], now, rule, operation_id, frozen)
            logs.append(log)
        for log in logs:
            if log and now < log[-1]:     # read the clock before an earlier arrival did: keep them in order
                log.insert(bisect.bisect_right(log, now), now)
            else:
                log.append(now)

    def load(self, world_id, rule):
        if self.everything_wiped or world_id in self.wiped:     # its rows are gone, or going with the wipe
            return deque()
        return deque(log_in_store(self.store, world_id, rule))

    def forget(self, world_id=None, deleted=False):
        with self.lock:
            self.generation += 1
            if world_id is None:
                self.everything_wiped = True
                self.logs.clear()
            else:
                if not deleted:     # a deleted world counts no more: its marker would stay for ever
                    self.wiped.add(world_id)
                for key in [key for key in self.logs if key[0] == world_id]:
                    del self.logs[key]
            self.pending.drop(lambda item: world_id is not None and item[0] != world_id)
