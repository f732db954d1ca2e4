"""The global rate limit of spec §8 (100 requests per 60 s), per world, on the world clock, kept in the store.

A sliding log per window (one row per counted request, at most `limit` rows per window): a request is refused
when the window already holds `limit` requests, and `Retry-After` says when the oldest of them leaves it.
Advancing the world clock empties windows, as time would. The count and the new row are written in one
transaction under the world's rate lock, so the limit is exact with any number of threads and processes.

The count of a window is kept in its own row (`rate_windows.hits`: the rows of `rate_hits` left after the
last pruning), so a request costs the same with 100 or a million requests in the window: prune what left
it (amortized one row), add one to the count, insert the hit. Counting the log instead grew with the window.

Where the windows live is the request state's choice (requeststate/): in the store (`exact.StoreWindows`), or,
when this process owns its store, in its memory (`memory.Windows`), as exact as in the store: one lock around each
count, the log of each window loaded from the store at its first use, the hits written behind (their count rows
dropped, so a later launch with several workers counts the log again).
"""

import contextvars
import math

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
    """The §8 rules (a global limit, and an operation's own where the operator set one) over the windows of the
    request state's strategy (`RequestState.rate_windows`): the store's, or the same log in memory."""

    def __init__(self, store, limit=100, window_seconds=60, per_operation=None, *, windows):
        self.store = store
        self.global_rule = (limit, window_seconds)
        self.per_operation = dict(per_operation or {})   # operationId -> (limit, window seconds)
        self.windows = windows

    def rules(self, operation_id):
        rules = [(GLOBAL, self.global_rule)]
        if operation_id in self.per_operation:
            rules.append((operation_id, self.per_operation[operation_id]))
        return rules

    def hit(self, world_id, now, operation_id, frozen=False):
        """Count one request, or raise 429 with Retry-After when a window is full; a refused request is not counted."""
        self.windows.hit(world_id, now, operation_id, self.rules(operation_id), frozen)

    def lock(self, world_id):
        """Hold the world's rate lock to the end of the transaction (every admission takes it, in every process).
        A caller that writes rows the admission writes (tokens, the windows) takes it before them."""
        self.store.lock(f"rate/{world_id}")

    def forget(self, world_id=None, deleted=False):
        """A wiped world's windows (None: every world's) go with its rows (rate_hits has a `world` column); in
        memory they go too. `deleted`: the world is gone for good, its deletion committed."""
        self.windows.forget(world_id, deleted)


def count(store, world_id, now, operation_id, rules, frozen=False):
    """Count one request in the store's windows under the world's rate lock, or raise 429 (the transaction, and
    the count, roll back)."""
    with store.transaction():
        store.lock(f"rate/{world_id}")
        for rule, (limit, window) in rules:
            left = store.execute("DELETE FROM rate_hits WHERE world = ? AND rule = ? AND at <= ?",
                                 (world_id, rule, now - window * SECOND_US)).rowcount
            hits = _count(store, world_id, rule, left)
            if hits > limit:        # counted with this request: refused, the transaction rolls back
                oldest = store.one("SELECT MIN(at) AS at FROM rate_hits WHERE world = ? AND rule = ?",
                                   (world_id, rule))["at"]
                raise refusal(limit, window, oldest, now, rule, operation_id, frozen)
        store.executemany("INSERT INTO rate_hits (world, rule, at) VALUES (?, ?, ?)",
                          [(world_id, rule, now) for rule, _ in rules])


def _count(store, world_id, rule, left):
    """The window's count with this request, after `left` hits were pruned from it: one upsert. A window
    without its row yet (its first request, or a log an older version or a snapshot left) counts its log."""
    row = store.one("UPDATE rate_windows SET hits = hits - ? + 1 WHERE world = ? AND rule = ? "
                    "RETURNING hits", (left, world_id, rule))
    if row is not None:
        return row["hits"]
    hits = store.one("SELECT COUNT(*) AS n FROM rate_hits WHERE world = ? AND rule = ?",
                     (world_id, rule))["n"] + 1
    store.execute("INSERT INTO rate_windows (world, rule, hits) VALUES (?, ?, ?)", (world_id, rule, hits))
    return hits


def log_in_store(store, world_id, rule):
    """The instants of a window's hits in the store, oldest first."""
    return [r["at"] for r in store.all("SELECT at FROM rate_hits WHERE world = ? AND rule = ? ORDER BY at",
                                       (world_id, rule))]


def write_hits(store, hits):
    """Written behind: the hits, the log pruned to each window, and no count row (it would be stale)."""
    store.insert_many("rate_hits", ("world", "rule", "at"), [(world, rule, at) for world, rule, at, _ in hits])
    latest: dict[tuple[str, str], int] = {}
    for world, rule, at, window in hits:
        latest[world, rule] = max(at, latest.get((world, rule), at)) - window * SECOND_US
    store.executemany("DELETE FROM rate_hits WHERE world = ? AND rule = ? AND at <= ?",
                      [(world, rule, cutoff) for (world, rule), cutoff in latest.items()])
    store.executemany("DELETE FROM rate_windows WHERE world = ? AND rule = ?", list(latest))
