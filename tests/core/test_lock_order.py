"""The order in which a transaction takes its locks (pipeline, LOCK ORDER): a world's lock, then its rate lock,
then rows. A request waiting for one of the locks must hold no row that the holder of the lock may go on to
write, or the two deadlock and PostgreSQL aborts one of them (a 500).

Each test holds a lock from a second connection, as a clock move, a write or a reset would, sends a request
that has to wait for it, and then takes the world's token and rate-window rows with NOWAIT: they must be free.
No timing: the waiting request is found in `pg_locks`, and NOWAIT fails at once on a held row.

The last tests make a deadlock the order does not prevent, and check that the transaction PostgreSQL aborts
runs again (Store.retrying) rather than answering 500."""

import os
import threading
import time
from contextlib import contextmanager

import psycopg
import pytest

from tests.support.worlds import new_world

pytestmark = pytest.mark.skipif(
    os.environ.get("PTAS_TEST_STORE") != "postgresql",
    reason="PostgreSQL's row locks; a SQLite file runs one writer at a time, which waits holding nothing")


def post_user(world):
    return world.api.post("/users", json={"name": "Jane"})


def read_self(world):
    return world.api.get("/partners/self")


def reset(world):
    return world.api.post("/_sandbox/reset")


@pytest.mark.parametrize("held, request_, status", [
    ("world", post_user, 201),      # an API write waits for a clock move, a catch-up or a reset of its world
    ("world", reset, 200),          # a reset waits for the world's writer
    ("rate", read_self, 200),       # an API read waits for a write (which holds the rate lock to its commit)
    ("rate", reset, 200),           # and so does a reset
], ids=["write-waits-for-world", "reset-waits-for-world", "read-waits-for-rate", "reset-waits-for-rate"])
def test_a_request_waiting_for_a_lock_holds_no_row_the_holder_may_write(api, store_location, held, request_, status):
    world = new_world(api)
    assert read_self(world).status_code == 200       # the world's rate window has its row
    world_id = world.body["world"]["id"]
    with lock_held(store_location, f"{held}/{world_id}") as prober:
        thread, answers = started_and_waiting(prober, lambda: request_(world))
        with prober.transaction():
            for table in ("tokens", "rate_windows"):
                try:
                    prober.execute(f"SELECT 1 FROM {table} WHERE world = %s FOR UPDATE NOWAIT", (world_id,))
                except psycopg.errors.LockNotAvailable:
                    pytest.fail(f"the request waiting for the {held} lock holds a row of {table}")
    thread.join(60)      # the lock is released: the request goes on
    assert answers and answers[0].status_code == status, answers and answers[0].json


def test_an_api_read_waits_for_no_lock_its_worlds_writers_hold(api, store_location):
    """An API read is a snapshot (PostgresStore.reading): it does not take its world's lock, which a write, a
    clock move, a catch-up or a reset holds to its commit, so one world's reads do not queue behind each other
    or behind its writes."""
    world = new_world(api)
    assert read_self(world).status_code == 200
    world_id = world.body["world"]["id"]
    with lock_held(store_location, f"world/{world_id}") as prober:
        thread, answers = finished_or_waiting(prober, lambda: read_self(world))
        finished = bool(answers)
    thread.join(60)
    assert finished, "the read waited for its world's lock"
    assert answers[0].status_code == 200, answers[0].json


def test_a_reset_waiting_for_an_event_the_fan_out_holds_holds_no_later_one(api, store_location):
    """The webhook fan-out locks unfanned events in `seq` order; a reset deleting in the table's order took a
    later event and then waited for an earlier one the fan-out held, which then waited for the later one."""
    world = new_world(api)
    world_id = world.body["world"]["id"]
    with psycopg.connect(store_location, autocommit=True) as holder, \
            psycopg.connect(store_location, autocommit=True) as prober:
        first, later = (prober.execute(
            "INSERT INTO events (id, world, partner_id, kind, created_at, data) "
            "VALUES (%s, %s, %s, 'AccountCreated', 0, '{}') RETURNING seq",
            (f"event-{n}", world_id, world.partner["id"])).fetchone()[0] for n in (1, 2))
        prober.execute("UPDATE events SET data = data WHERE seq = %s", (first,))   # now after `later` in the table
        # A DELETE by the world's index would take the events in `seq` order by luck: scan the table, as a
        # larger table or another plan would.
        database = prober.execute("SELECT current_database()").fetchone()[0]
        prober.execute(f'ALTER DATABASE "{database}" SET enable_indexscan = off')
        prober.execute(f'ALTER DATABASE "{database}" SET enable_bitmapscan = off')
        try:
            with holder.transaction():
                holder.execute("SELECT 1 FROM events WHERE seq = %s FOR UPDATE", (first,))    # as fan_out would
                thread, answers = started_and_waiting(prober, lambda: reset(world))
                with prober.transaction():
                    try:
                        prober.execute("SELECT 1 FROM events WHERE seq = %s FOR UPDATE NOWAIT", (later,))
                    except psycopg.errors.LockNotAvailable:
                        pytest.fail("the reset waiting for the fan-out's event holds a later event")
            thread.join(60)
        finally:
            prober.execute(f'ALTER DATABASE "{database}" RESET ALL')
    assert answers and answers[0].status_code == 200, answers and answers[0].json


def test_a_transaction_the_store_aborted_to_break_a_deadlock_runs_again(app, store_location):
    """The rare deadlock the lock order does not cover (Store.retrying): the transaction PostgreSQL chose to
    abort runs again once the other has gone on, instead of answering 500. Here a second connection and a
    store transaction update two rows in opposite orders; the second connection waits for 30 s before it looks
    for a deadlock, so the store's transaction (1 s) is the one aborted."""
    store = app.extensions["ptas"].store
    store.executemany("INSERT INTO counters (world, kind, value) VALUES ('probe', ?, 0)", [("a",), ("b",)])
    attempts = []

    def work():
        attempts.append(len(attempts) + 1)
        with store.transaction():
            store.execute("UPDATE counters SET value = value + 1 WHERE world = 'probe' AND kind = 'a'")
            store.execute("UPDATE counters SET value = value + 10 WHERE world = 'probe' AND kind = 'b'")
        return len(attempts)

    with psycopg.connect(store_location, autocommit=True) as other, \
            psycopg.connect(store_location, autocommit=True) as prober:
        other.execute("SET deadlock_timeout = '30s'")
        with other.transaction():
            other.execute("UPDATE counters SET value = value + 100 WHERE world = 'probe' AND kind = 'b'")
            # the store's transaction holds `a` and waits for `b`
            thread, outcome = started_and_waiting(prober, lambda: store.retrying(work))
            other.execute("UPDATE counters SET value = value + 1000 WHERE world = 'probe' AND kind = 'a'")
        thread.join(60)
    assert outcome == [2], "the aborted transaction ran again, once"
    values = {r["kind"]: r["value"] for r in store.all("SELECT kind, value FROM counters WHERE world = 'probe'")}
    assert values == {"a": 1001, "b": 110}, "both transactions' updates, each once"


def test_an_api_write_aborted_to_break_a_deadlock_is_answered_as_if_it_had_not_been(api, store_location):
    """An API write whose operation PostgreSQL aborted is not the operation's refusal (a 500 that still counted
    the request): the whole write runs again. Here a second connection holds the world's user-id sequence, the
    write (holding its token's row) waits for it, and the connection then updates the token: a deadlock."""
    world = new_world(api)
    world_id = world.body["world"]["id"]
    token_id = world.body["token"]["id"]
    with psycopg.connect(store_location, autocommit=True) as other, \
            psycopg.connect(store_location, autocommit=True) as prober:
        other.execute("SET deadlock_timeout = '30s'")
        with other.transaction():
            other.execute("INSERT INTO counters (world, kind, value) VALUES (%s, 'user', 0) ON CONFLICT (world, kind) "
                          "DO UPDATE SET value = counters.value", (world_id,))
            # the write holds its token's row and waits for the sequence
            thread, answers = started_and_waiting(prober, lambda: post_user(world))
            other.execute("UPDATE tokens SET name = name WHERE id = %s", (token_id,))
        thread.join(60)
    assert answers and answers[0].status_code == 201, answers and answers[0].json
    assert [u["id"] for u in world.api.get("/users").json["users"]] == [answers[0].json["id"]]


@contextmanager
def lock_held(store_location, key):
    """The advisory lock `key` held by a connection of its own for the block, as a clock move, a write or a
    reset holds it; the block gets another connection to look with."""
    with psycopg.connect(store_location, autocommit=True) as holder, \
            psycopg.connect(store_location, autocommit=True) as prober:
        with holder.transaction():
            holder.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (key,))
            yield prober


def started_and_waiting(prober, work):
    """`work()` in a thread of its own, once it waits for a lock; the thread, and the list its answer goes to."""
    thread, answers = finished_or_waiting(prober, work)
    if not thread.is_alive():
        pytest.fail("the request never waited for the held lock")
    return thread, answers


def finished_or_waiting(prober, work, deadline_s=60):
    """`work()` in a thread of its own, until it finished or waits for a lock (polls `pg_locks`); the thread, and
    the list its answer goes to (still empty when it waits)."""
    answers = []
    thread = threading.Thread(target=lambda: answers.append(work()))
    thread.start()
    end = time.monotonic() + deadline_s
    while thread.is_alive() and not blocked(prober):
        if time.monotonic() > end:
            pytest.fail("the request neither finished nor waited for a lock")
        thread.join(0.005)
    return thread, answers


def blocked(db):
    """Whether a session of the database waits for a lock."""
    return db.execute("SELECT count(*) FROM pg_locks WHERE NOT granted AND pid IN "
                      "(SELECT pid FROM pg_stat_activity WHERE datname = current_database())").fetchone()[0] > 0
