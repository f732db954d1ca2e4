"""The order in which a transaction takes its locks (pipeline, LOCK ORDER): a world's lock, then its rate lock,
then rows. A request waiting for one of the locks must hold no row that the holder of the lock may go on to
write, or the two deadlock and PostgreSQL aborts one of them (a 500).

Each test holds a lock from a second connection, as a clock move, a write or a reset would, sends a request
that has to wait for it, and then takes the world's token and rate-window rows with NOWAIT: they must be free.
No timing: the waiting request is found in `pg_locks`, and NOWAIT fails at once on a held row."""

import os
import threading
import time

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
    with psycopg.connect(store_location, autocommit=True) as holder, \
            psycopg.connect(store_location, autocommit=True) as prober:
        with holder.transaction():
            holder.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"{held}/{world_id}",))
            answers = []
            thread = threading.Thread(target=lambda: answers.append(request_(world)))
            thread.start()
            wait_until_blocked_on_an_advisory_lock(prober)
            with prober.transaction():
                for table in ("tokens", "rate_windows"):
                    try:
                        prober.execute(f"SELECT 1 FROM {table} WHERE world = %s FOR UPDATE NOWAIT", (world_id,))
                    except psycopg.errors.LockNotAvailable:
                        pytest.fail(f"the request waiting for the {held} lock holds a row of {table}")
        thread.join(60)      # the lock is released: the request goes on
    assert answers and answers[0].status_code == status, answers and answers[0].json


def wait_until_blocked_on_an_advisory_lock(db, deadline_s=60):
    """Until a session of the database waits for an advisory lock (the request reached it): polls `pg_locks`."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        waiting = db.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                             "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
                             ).fetchone()[0]
        if waiting:
            return
        time.sleep(0.005)
    pytest.fail("the request never waited for the held lock")
