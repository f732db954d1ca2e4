"""Sandbox worlds: a root partner's private universe with its own seed, id sequence and clock.

The clock is `frozen_at` when frozen, else `system time + offset`: advancing or setting it moves the offset,
so token expiry, rate-limit windows, imports and webhook retries all follow it, in-process and over HTTP alike.
"""

import hashlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace

from .problems import BadRequest, Conflict
from .timestamps import parse, render

# The range of a world clock. The latest leaves a decade before the last renderable instant (timestamps.LATEST)
# for what a world schedules ahead (polls, retries, sessions, a running clock); a token that would outlive it is
# refused with a 400 by the token rules. The earliest is the Unix epoch (webhook timestamps are Unix seconds),
# leaving room for provider histories before it.
EARLIEST_CLOCK = 0
LATEST_CLOCK = parse("9990-01-01T00:00:00Z")


def check_within_range(target):
    if not EARLIEST_CLOCK <= target <= LATEST_CLOCK:
        raise BadRequest(f"A world clock stays between {render(EARLIEST_CLOCK)} and {render(LATEST_CLOCK)}.")

SCHEMA = """
CREATE TABLE IF NOT EXISTS worlds (
    id TEXT PRIMARY KEY,
    seed INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    offset_us INTEGER NOT NULL DEFAULT 0,
    frozen_at INTEGER,
    scenario TEXT
);
-- A world's last call on the system clock, to the minute (Worlds.used): what --world-idle-hours measures.
CREATE TABLE IF NOT EXISTS world_use (
    world TEXT PRIMARY KEY,
    used_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS counters (
    world TEXT NOT NULL,
    kind TEXT NOT NULL,
    value INTEGER NOT NULL,
    PRIMARY KEY (world, kind)
);
"""


USE_STEP_US = 60 * 1_000_000    # a world's last use is kept to the minute: one write a minute per busy world
NOTED_MAX = 10_000              # worlds whose last written use this process remembers


def derived_id(*parts):
    """A UUID drawn from its parts: the same world seed and sequence give the same ids, run after run."""
    digest = hashlib.sha256("/".join(map(str, parts)).encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def next_in_sequence(store, world, kind, count=1):
    """The next number of a per-world sequence (with `count`, the last of the next `count`): one upsert, so
    concurrent writers (of any process) never draw the same number."""
    return store.one("INSERT INTO counters (world, kind, value) VALUES (?, ?, ?) ON CONFLICT (world, kind) "
                     "DO UPDATE SET value = counters.value + ? RETURNING value", (world, kind, count, count))["value"]


def world_exists(store, world_id):
    """Whether the world is still there: what is written of a world after a wait (behind, or from a request in
    flight) is not written once it was deleted, so nothing of it outlives it."""
    return store.one("SELECT 1 AS found FROM worlds WHERE id = ?", (world_id,)) is not None


def record_uses(store, uses):
    """Written behind: each world's latest use of `uses` ((world id, system time)); a later one stored is kept,
    and a world deleted meanwhile gets no row."""
    latest: dict[str, int] = {}
    for world, at in uses:
        latest[world] = max(at, latest.get(world, at))
    with store.transaction():       # the batch's, when written behind; its own, when written at once
        store.executemany(
            "INSERT INTO world_use (world, used_at) SELECT ?, ? WHERE EXISTS (SELECT 1 FROM worlds WHERE id = ?) "
            "ON CONFLICT (world) DO UPDATE SET used_at = CASE WHEN excluded.used_at > world_use.used_at "
            "THEN excluded.used_at ELSE world_use.used_at END", [(w, at, w) for w, at in latest.items()])


@dataclass(frozen=True)
class World:
    """One world as read: a remembered one is shared by every request that reads it, so it never changes (a
    clock move makes a new one: `Worlds.move`)."""
    id: str
    seed: int
    offset_us: int = 0
    frozen_at: int | None = None
    scenario: str | None = None

    def now(self, system_us):
        return self.frozen_at if self.frozen_at is not None else system_us + self.offset_us

    @property
    def frozen(self):
        return self.frozen_at is not None


def _world(row):
    return World(row["id"], row["seed"], row["offset_us"], row["frozen_at"], row["scenario"])


class Worlds:
    """Creates, finds and moves the clocks of worlds. A world is read from the store, so every worker of every
    machine sees a clock move at once; a process that owns its store remembers it until the worlds table is
    written (requeststate.memory: it alone writes it)."""

    def __init__(self, store, system_time, state, server_seed=0, max_worlds=None):
        self.store = store
        self.state = state
        self.system_time = system_time
        self.server_seed = server_seed
        self.max_worlds = max_worlds      # the operator's --max-worlds: every way to a new world counts
        self._noted: dict[str, int] = {}  # world id: the system time of its use this process last wrote
        # What other parts keep per world in this process (the retention's last prune), forgotten with it:
        # f(world id, or None for every world)
        self.forgetting: list[Callable[[str | None], None]] = []
        self._uses = state.write_behind(record_uses)

    def create(self, seed=None, start=None, frozen=False, scenario=None, world_id=None):
        """A new world; `world_id` reuses the id of a world just deleted in this transaction (a snapshot loaded
        in its place), so the tokens signed for it keep working."""
        with self.store.transaction():
            if self.max_worlds and self.count() >= self.max_worlds:
                raise Conflict(f"This sandbox holds its maximum of {self.max_worlds} worlds (the operator's "
                               "--max-worlds), none of them unused long enough to make room (--world-idle-hours); "
                               "delete a world you no longer need (DELETE /_sandbox/world), or ask the operator.",
                               maxWorlds=self.max_worlds)
            if world_id is None or seed is None:
                n = next_in_sequence(self.store, "", "world")
                world_id = world_id or derived_id("world", self.server_seed, n)
                seed = seed if seed is not None else int(derived_id("seed", self.server_seed, n)[:8], 16)
            if start is not None:
                check_within_range(start)
            system = self.system_time()
            offset = (start - system) if start is not None else 0
            frozen_at = (start if start is not None else system) if frozen else None
            self.writes(world_id)       # the rows of the new world alone (its id's counter is no world's)
            self.store.insert("worlds", id=world_id, seed=seed, created_at=system, offset_us=offset,
                              frozen_at=frozen_at, scenario=scenario)
        return World(world_id, seed, offset, frozen_at, scenario)

    def used(self, world_id):
        """Note a call of the world on the system clock, to the minute (written behind when the process owns
        its store): a world nobody calls can make room for a new one (control.make_room). Noted inside a
        transaction (a reset's), its row comes before the world's lock (pipeline, LOCK ORDER): a delete of the
        same world at that moment deadlocks with it on PostgreSQL, and the aborted one runs again
        (Store.retrying)."""
        now = self.system_time()
        if now - self._noted.get(world_id, now - USE_STEP_US) < USE_STEP_US:
            return
        if len(self._noted) >= NOTED_MAX:
            self._noted.clear()
        self._noted[world_id] = now
        self._uses.add((world_id, now))

    def any_held(self):
        return self.store.one("SELECT 1 AS held FROM worlds LIMIT 1") is not None

    def count(self):
        return self.store.one("SELECT COUNT(*) AS n FROM worlds")["n"]

    def unused_longest(self, since):
        """The world whose last call (or creation) is the oldest, if it is not after `since` (system time)."""
        row = self.store.one(
            "SELECT w.* FROM worlds w LEFT JOIN world_use u ON u.world = w.id "
            "WHERE COALESCE(u.used_at, w.created_at) <= ? ORDER BY COALESCE(u.used_at, w.created_at), w.id LIMIT 1",
            (since,))
        return None if row is None else _world(row)

    def get(self, world_id):
        world = self.state.remember(("world", world_id), world_id, lambda: self._read(world_id))
        if world is None:       # no world (a deleted one's token, tried for weeks): nothing kept for its id,
            self.state.drop(("world", world_id))    # and nothing else looked at (its reads went with the world)
        return world

    def _read(self, world_id):
        row = self.store.one("SELECT * FROM worlds WHERE id = ?", (world_id,))
        return None if row is None else _world(row)

    def all(self):
        return [_world(r) for r in self.store.all("SELECT * FROM worlds ORDER BY rowid")]

    def delete(self, world_id):
        """Remove the world's row; its other rows go first (control.delete_world), in the same transaction."""
        self.store.execute("DELETE FROM worlds WHERE id = ?", (world_id,))

    def of_scenario(self, name, seed=None):
        """The first world loaded from scenario `name` (with `seed`, when given), or None."""
        where, args = "scenario = ?", [name]
        if seed is not None:
            where, args = where + " AND seed = ?", [*args, seed]
        row = self.store.one(f"SELECT * FROM worlds WHERE {where} ORDER BY created_at, id LIMIT 1", tuple(args))
        return None if row is None else _world(row)

    def now(self, world):
        return world.now(self.system_time())

    def lock(self, world_id):
        """Hold the world's lock to the end of the transaction (in every process): its writes, clock moves,
        catch-ups and resets take it in turn, and first of all their locks (pipeline, LOCK ORDER)."""
        self.store.lock(f"world/{world_id}")

    def writes(self, world_id):
        """Name the world whose rows this transaction writes without its lock (a world made, a hosted page, a
        fault counted), as its lock would: what this process remembers of other worlds stays (`Engine.note`).
        A transaction that names no world makes every world's remembered reads of its tables stale."""
        self.store.note(f"world/{world_id}")

    def name_scenario(self, world_id, scenario):
        """The scenario a world was loaded from, once it is whole (`ptas serve --scenario` resumes it)."""
        self.store.update("worlds", {"id": world_id}, scenario=scenario)

    def move(self, world, *, freeze=None, advance=None, set_to=None):
        """Freeze, unfreeze, advance or set a world's clock; it never runs backwards. Read and written in one
        transaction under the world's lock: two advances at once (from two processes) both count. The world
        as moved (a new World: a World never changes)."""
        with self.store.transaction():
            self.lock(world.id)
            row = self.store.one("SELECT * FROM worlds WHERE id = ?", (world.id,))
            if row is not None:
                world = _world(row)
            system = self.system_time()
            now = world.now(system)
            if advance is not None:
                if advance < 0:
                    raise BadRequest("The clock only moves forward: advance takes a number of seconds >= 0.")
                target = now + advance
            elif set_to is not None:
                check_within_range(set_to)       # outside the range is bad input (400), whatever the clock reads
                if set_to < now:
                    raise Conflict("The clock cannot be set backwards: state already issued would become future.")
                target = set_to
            else:
                target = now
            check_within_range(target)
            frozen = world.frozen if freeze is None else freeze
            world = replace(world, offset_us=target - system, frozen_at=target if frozen else None)
            self.store.update("worlds", {"id": world.id}, offset_us=world.offset_us, frozen_at=world.frozen_at)
        return world

    def forget(self, world_id=None):
        """What this process keeps of a deleted world (None: of every world): its last noted use and what the
        per-request state remembers of it (its reads and the marks of its writes), which no writer of the world
        would ever touch again: a team sandbox making and deleting worlds for weeks would keep them all. Called
        inside the deleting transaction: the state forgets the world once that has ended (`Engine.note`), so the
        end does not put the world's marks back into memory."""
        if world_id is None:
            self._noted.clear()
        else:
            self._noted.pop(world_id, None)
        self.store.note(f"gone/{'*' if world_id is None else world_id}")
        for forget in self.forgetting:
            forget(world_id)
