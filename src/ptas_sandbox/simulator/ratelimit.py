"""The global rate limit of spec §8 (100 requests per 60 s), per world, on the world clock, kept in the store.

A sliding log per window (one row per counted request, at most `limit` rows per window): a request is refused
when the window already holds `limit` requests, and `Retry-After` says when the oldest of them leaves it.
Advancing the world clock empties windows, as time would. The count and the new row are written in one
transaction under the world's rate lock, so the limit is exact with any number of threads and processes.

The count of a window is kept in its own row (`rate_windows.hits`: the rows of `rate_hits` left after the
last pruning), so a request costs the same with 100 or a million requests in the window: prune what left
it (amortized one row), add one to the count, insert the hit. Counting the log instead grew with the window.

When this process owns its store (hotstate.owns_store), the windows live in its memory (`Windows`), as exact as
in the store: one lock around each count, the log of each window loaded from the store at its first use, the
hits written behind (their count rows dropped, so a later launch with several workers counts the log again).
"""

import bisect
import contextvars
import math
import threading
from collections import deque

from .problems import TooManyRequests
from .timestamps import SECOND_US

SCHEMA = """
CREATE TABLE IF NOT EXISTS rate_hits (
    world TEXT NOT NULL,
    rule TEXT NOT NULL,
    at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS rate_hits_by_rule ON rate_hits (world, rule, at);
CREATE TABLE IF NOT EXISTS rate_windows (
    world TEXT NOT NULL,
    rule TEXT NOT NULL,
    hits INTEGER NOT NULL,
    PRIMARY KEY (world, rule)
);
"""
GLOBAL = ""
# Which limit refused the request being handled: "global" (spec §8's, for every request) or the operationId whose
# own limit it was. The journal (a tool; the core imports none) resets it as a request starts and marks the
# entry with it, so the integration report knows how far a Retry-After reaches.
REFUSED_BY: contextvars.ContextVar[str | None] = contextvars.ContextVar("ptas_rate_refused_by", default=None)


def refusal(limit, window, oldest, now, rule, operation_id, frozen=False):
    """The 429 of a full window: Retry-After is when its oldest hit leaves it. On a `frozen` world clock the
    window never passes by itself, so the 429 says so and how to move on."""
    REFUSED_BY.set("global" if rule == GLOBAL else operation_id)
    wait = max(1, math.ceil((oldest + window * SECOND_US - now) / SECOND_US))
    scope = "the global rate limit" if rule == GLOBAL else f"the rate limit of {operation_id}"
    detail = f"{limit} requests per {window} s exceeded ({scope}); retry in {wait} s."
    if frozen:
        detail += (f" The world clock is frozen, so these {wait} s pass only when it moves: advance it"
                   f" (POST /_sandbox/clock {{\"advance\": {wait}}}, `ptas clock advance {wait}s`) or"
                   " thaw it (`ptas clock thaw`).")
    return TooManyRequests(detail, headers={"Retry-After": str(wait)}, limit=limit, windowSeconds=window,
                           **({"worldClockFrozen": True} if frozen else {}))


class RateLimiter:
    def __init__(self, store, limit=100, window_seconds=60, per_operation=None, state=None):
        self.store = store
        self.global_rule = (limit, window_seconds)
        self.per_operation = dict(per_operation or {})   # operationId -> (limit, window seconds)
        self.memory = Windows(self, state) if state is not None and state.hot else None

    def rules(self, operation_id):
        rules = [(GLOBAL, self.global_rule)]
        if operation_id in self.per_operation:
            rules.append((operation_id, self.per_operation[operation_id]))
        return rules

    def hit(self, world_id, now, operation_id, frozen=False):
        """Count one request, or raise 429 with Retry-After when a window is full; a refused request is not counted."""
        rules = self.rules(operation_id)
        if self.memory is not None:
            self.memory.hit(world_id, now, operation_id, rules, frozen)
            return
        store = self.store
        with store.transaction():
            self.lock(world_id)
            for rule, (limit, window) in rules:
                left = store.execute("DELETE FROM rate_hits WHERE world = ? AND rule = ? AND at <= ?",
                                     (world_id, rule, now - window * SECOND_US)).rowcount
                hits = self._count(world_id, rule, left)
                if hits > limit:        # counted with this request: refused, the transaction rolls back
                    oldest = store.one("SELECT MIN(at) AS at FROM rate_hits WHERE world = ? AND rule = ?",
                                       (world_id, rule))["at"]
                    raise refusal(limit, window, oldest, now, rule, operation_id, frozen)
            store.executemany("INSERT INTO rate_hits (world, rule, at) VALUES (?, ?, ?)",
                              [(world_id, rule, now) for rule, _ in rules])

    def lock(self, world_id):
        """Hold the world's rate lock to the end of the transaction (every admission takes it, in every process).
        A caller that writes rows the admission writes (tokens, the windows) takes it before them."""
        self.store.lock(f"rate/{world_id}")

    def _count(self, world_id, rule, left):
        """The window's count with this request, after `left` hits were pruned from it: one upsert. A window
        without its row yet (its first request, or a log an older version or a snapshot left) counts its log."""
        row = self.store.one("UPDATE rate_windows SET hits = hits - ? + 1 WHERE world = ? AND rule = ? "
                             "RETURNING hits", (left, world_id, rule))
        if row is not None:
            return row["hits"]
        hits = self.store.one("SELECT COUNT(*) AS n FROM rate_hits WHERE world = ? AND rule = ?",
                              (world_id, rule))["n"] + 1
        self.store.execute("INSERT INTO rate_windows (world, rule, hits) VALUES (?, ?, ?)", (world_id, rule, hits))
        return hits

    def forget(self, world_id=None, deleted=False):
        """A wiped world's windows (None: every world's) go with its rows (rate_hits has a `world` column); in
        memory they go too. `deleted`: the world is gone for good, its deletion committed."""
        if self.memory is not None:
            self.memory.forget(world_id, deleted)


class Windows:
    """The windows of a store this process owns, in memory: {(world, rule): its hits' instants, oldest first}.

    The lock guards the logs only: nothing waits for the store while holding it, since a reset that holds the
    store (its transaction) takes it to forget the world's windows."""

    def __init__(self, limiter, state):
        self.limiter = limiter
        self.logs = {}
        self.lock = threading.Lock()
        self.generation = 0         # counts wipes: a log read from the store before one is read again
        self.wiped = set()          # worlds wiped since this process started: their store log is empty
        self.everything_wiped = False
        self.pending = state.write_behind(self.write)

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
        return deque(r["at"] for r in self.limiter.store.all(
            "SELECT at FROM rate_hits WHERE world = ? AND rule = ? ORDER BY at", (world_id, rule)))

    def forget(self, world_id, deleted=False):
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

    @staticmethod
    def write(store, hits):
        """Written behind: the hits, the log pruned to each window, and no count row (it would be stale)."""
        store.executemany("INSERT INTO rate_hits (world, rule, at) VALUES (?, ?, ?)",
                          [(world, rule, at) for world, rule, at, _ in hits])
        latest = {}
        for world, rule, at, window in hits:
            latest[world, rule] = max(at, latest.get((world, rule), at)) - window * SECOND_US
        store.executemany("DELETE FROM rate_hits WHERE world = ? AND rule = ? AND at <= ?",
                          [(world, rule, cutoff) for (world, rule), cutoff in latest.items()])
        store.executemany("DELETE FROM rate_windows WHERE world = ? AND rule = ?", list(latest))
