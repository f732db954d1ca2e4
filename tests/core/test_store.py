"""State: a file-backed sandbox survives a restart; worlds are deterministic from their seed."""

import os
import re
import threading
from contextlib import contextmanager

import pytest

from ptas_sandbox.simulator import create_app
from ptas_sandbox.simulator.store import open_store
from ptas_sandbox.simulator.store.base import OLDER
from ptas_sandbox.simulator.timestamps import parse, render
from tests.support.accounts import all_pages, imported, long_lived_user
from tests.support.client import Api
from tests.support.worlds import new_world


def test_a_file_backed_sandbox_keeps_partners_users_and_tokens_across_a_restart(durable_store, config):
    state = durable_store
    first = create_app({**config, "STATE": state})
    world = new_world(Api(first.test_client()), name="Persistent")
    user, _ = world.user(name="Jane")
    token = world.new_token("partner:read", expires_in=7200)
    world.api.advance(600)
    first.extensions["ptas"].close()

    second = create_app({**config, "STATE": state})
    api = Api(second.test_client())
    assert api.as_(world.token).get("/partners/self").json["name"] == "Persistent"
    assert api.as_(world.token).get(f"/users/{user['id']}").json["name"] == "Jane"
    assert api.as_(token).get("/partners/self").status_code == 200
    assert api.as_(world.token).get("/_sandbox/clock").json["now"] == "2026-01-05T09:10:00.0000000Z"
    second.extensions["ptas"].close()


def _replay(config, seed, location):
    app = create_app({**config, "STATE": location, "SEED": seed,
                      "SECRET": "a fixed secret for a byte-for-byte replay test"})
    world = new_world(Api(app.test_client()), name="Same")
    user, _ = world.user(name="Jane")
    child = world.api.post("/partners", json={"name": "Store"}).json
    result = (world.body, user, child, world.api.get("/partners/self/tokens").json)
    app.extensions["ptas"].close()
    return result


def _credentials_apart(value, found):
    """`value` with every JWT (access tokens, world keys) replaced by a mark, each gathered in `found`."""
    if isinstance(value, dict):
        return {k: _credentials_apart(v, found) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_credentials_apart(v, found) for v in value]
    if isinstance(value, str) and value.startswith("eyJ"):
        found.append(value)
        return "<credential>"
    return value


def test_the_same_seed_gives_the_same_sandbox_byte_for_byte_but_its_credentials(config, new_store_location):
    """Credentials carry their store's random identity (issue 40): a second store's are its own."""
    first, second = [], []
    assert _credentials_apart(_replay(config, 7, new_store_location()), first) == \
        _credentials_apart(_replay(config, 7, new_store_location()), second)
    assert len(first) == len(second) >= 3 and not set(first) & set(second)
    assert _replay(config, 7, new_store_location())[0]["partner"]["id"] != \
        _replay(config, 8, new_store_location())[0]["partner"]["id"]


def test_timestamps_have_exactly_seven_fractional_digits():
    assert render(0) == "1970-01-01T00:00:00.0000000Z"
    assert render(parse("2026-03-04T05:06:07.123456Z")) == "2026-03-04T05:06:07.1234560Z"
    assert render(parse("2026-03-04T07:06:07+02:00")) == "2026-03-04T05:06:07.0000000Z"
    assert parse("2026-03-04") == parse("2026-03-04T00:00:00.0000000Z")


def _date_times(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _date_times(v)
    elif isinstance(value, list):
        for v in value:
            yield from _date_times(v)
    elif isinstance(value, str) and re.match(r"^\d{4}-\d{2}-\d{2}T", value):
        yield value


def test_every_date_time_of_every_response_has_seven_digits(world):
    user, _ = world.user(name="Jane")
    world.api.delete(f"/users/{user['id']}")
    bodies = [world.body, world.api.get("/partners/self/tokens").json, world.api.get("/users").json,
              world.api.post("/partners", json={"name": "S"}).json, world.api.get("/partners/self").json]
    stamps = [s for body in bodies for s in _date_times(body)]
    assert len(stamps) > 10
    assert all(re.match(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7}Z$", s) for s in stamps), stamps


OLD_REPORTS = """
CREATE TABLE IF NOT EXISTS reports (
    id TEXT PRIMARY KEY, world TEXT NOT NULL, partner_id TEXT NOT NULL, user_id TEXT NOT NULL,
    account_id TEXT NOT NULL, account_seq INTEGER NOT NULL, day INTEGER NOT NULL, created_at INTEGER NOT NULL,
    data_import_id TEXT NOT NULL, transaction_count INTEGER NOT NULL, errors TEXT NOT NULL DEFAULT '[]',
    warnings TEXT NOT NULL DEFAULT '[]', UNIQUE (account_seq, day)
)"""
OLD_TRANSACTIONS = """
CREATE TABLE IF NOT EXISTS transactions (
    account INTEGER NOT NULL, created_at INTEGER NOT NULL, n INTEGER NOT NULL, world TEXT NOT NULL, report INTEGER,
    PRIMARY KEY (account, created_at)
) WITHOUT ROWID"""


def as_an_older_version_wrote_it(location):
    """Rewrite a state in the layout of the version before: a report row per day, a row per transaction, and a
    webhook_deliveries table without the lease columns."""
    store = open_store(location)
    with store.transaction():
        settled = store.all("SELECT * FROM reports")
        store.execute("DROP TABLE reports")
        store.execute(store.ddl(OLD_REPORTS))
        for row in settled:
            for day in range(row["first_day"], row["end_day"]):
                store.insert("reports", id=f"old-{day}", world=row["world"], partner_id=row["partner_id"],
                             user_id=row["user_id"], account_id=row["account_id"], account_seq=row["account_seq"],
                             day=day, created_at=row["created_at"], data_import_id=row["data_import_id"],
                             transaction_count=0, errors=row["errors"], warnings=row["warnings"])
        store.execute(store.ddl(OLD_TRANSACTIONS))
        store.execute("INSERT INTO transactions VALUES (1, 0, 0, 'w', NULL)")
        store.execute("DROP INDEX webhook_deliveries_leased")
        store.execute("ALTER TABLE webhook_deliveries DROP COLUMN lease_until")
        store.execute("ALTER TABLE webhook_deliveries DROP COLUMN claimed_by")
    store.close()


def test_a_state_an_older_version_wrote_is_brought_up_to_date_keeping_its_data(durable_store, config):
    first = create_app({**config, "STATE": durable_store})
    world = new_world(Api(first.test_client()), name="Kept")
    _, jane = long_lived_user(world)
    account = imported(world.api, jane, "dummy-report", seconds=3 * 86400)
    world.api.post("/webhooks", json={"callbackUrl": "http://localhost/_sandbox/echo/kept",
                                      "events": ["AccountCreated"]})
    world.api.post("/testevents/accountcreated")
    reports = jane.get(f"/accounts/{account['id']}/reports").json["reports"]
    transactions, _ = all_pages(jane, account["id"])
    first.extensions["ptas"].close()
    as_an_older_version_wrote_it(durable_store)

    second = create_app({**config, "STATE": durable_store})
    api = Api(second.test_client())
    there = api.as_(jane.token)
    assert there.get(f"/accounts/{account['id']}/reports").json["reports"] == reports
    assert all_pages(there, account["id"]) == (transactions, 1)
    found, _ = all_pages(there, account["id"], f"&reportId={reports[1]['id']}")
    assert len(found) == reports[1]["transactionCount"] > 0
    assert api.as_(world.token).post("/_sandbox/webhooks/flush").json["attempted"] == 1    # the pending attempt
    store = second.extensions["ptas"].store
    assert "transactions" not in store.tables_with_column("world")
    assert {"lease_until", "claimed_by"} <= set(store.columns("webhook_deliveries"))
    second.extensions["ptas"].close()


@contextmanager
def a_write_held_open(store, sql):
    """A transaction that has written `sql` and stays open for the block: a request in the middle of a write."""
    writing, done = threading.Event(), threading.Event()

    def write():
        with store.transaction():
            store.execute(sql)
            writing.set()
            done.wait(60)
    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert writing.wait(30)
        yield
    finally:
        done.set()
        writer.join()


def in_a_thread(work, seconds=30):
    """[work()] when it finished within `seconds` in a thread of its own, [] when it was still waiting."""
    done = []
    thread = threading.Thread(target=lambda: done.append(work()))
    thread.start()
    thread.join(seconds)
    return done


@pytest.mark.skipif(os.environ.get("PTAS_TEST_STORE") != "postgresql",
                    reason="PostgreSQL's table locks; a SQLite file has one write lock, which a start waits for")
def test_a_worker_starting_next_to_busy_ones_locks_no_table_they_use(durable_store):
    """`ptas serve --workers` on PostgreSQL: a worker that starts while others serve must not take table locks
    (CREATE INDEX IF NOT EXISTS does, even when the index is there): held to the end of its schema transaction,
    they deadlocked with the requests being served (500s)."""
    from ptas_sandbox.simulator import ratelimit
    busy = open_store(durable_store, [ratelimit.SCHEMA])
    try:
        with a_write_held_open(busy, "INSERT INTO rate_hits (world, rule, at) VALUES ('w', '', 1)"):
            opened = in_a_thread(lambda: open_store(durable_store, [ratelimit.SCHEMA]))
            assert opened, "the starting worker waited for a transaction of a busy one"
            opened[0].close()
    finally:
        busy.close()


def test_an_api_read_waits_for_no_writer_and_cannot_write(durable_store):
    """store.reading() (the transaction of an API GET), on a SQLite file or PostgreSQL: a snapshot taken while
    another transaction writes, without waiting for it; a write inside is refused at once (on SQLite, rather than
    racing other writers; on PostgreSQL, a READ ONLY transaction) and leaves nothing behind."""
    import sqlite3

    from ptas_sandbox.simulator import ratelimit
    store = open_store(durable_store, [ratelimit.SCHEMA])
    refused, reason = sqlite3.OperationalError, "read transaction wrote"
    if store.engine == "postgresql":
        import psycopg
        refused, reason = psycopg.errors.ReadOnlySqlTransaction, "read-only transaction"
    with a_write_held_open(store, "INSERT INTO rate_windows (world, rule, hits) VALUES ('w', '', 1)"):
        assert in_a_thread(lambda: _read_windows(store)) == [[]], \
            "the read waited for the writer, or saw what it had not committed"
    assert _read_windows(store) == [{"world": "w", "rule": "", "hits": 1}]
    with pytest.raises(refused, match=reason):
        with store.reading():
            store.execute("DELETE FROM rate_windows")
    assert _read_windows(store) == [{"world": "w", "rule": "", "hits": 1}], "the refused write was rolled back"
    with store.transaction():       # the connection writes again after a refused read
        store.execute("DELETE FROM rate_windows")
    assert _read_windows(store) == []
    store.close()


def test_a_read_is_one_snapshot_from_its_first_statement(tmp_path):
    """SqliteStore.reading defers its BEGIN to its first statement, where SQLite's snapshot begins anyway: what
    was committed before that statement is seen, what is committed after it is not, until the read ends. Only
    before the first statement may a remembered read stand in for the store (`read_view` is not OLDER)."""
    from ptas_sandbox.simulator import ratelimit
    store = open_store(str(tmp_path / "s.db"), [ratelimit.SCHEMA])
    other = open_store(str(tmp_path / "s.db"), [ratelimit.SCHEMA])

    def add(rule):
        with other.transaction():
            other.execute("INSERT INTO rate_windows (world, rule, hits) VALUES ('w', ?, 1)", (rule,))

    def rules():
        return [r["rule"] for r in store.all("SELECT rule FROM rate_windows ORDER BY rule")]
    with store.reading():
        assert store.read_view is not OLDER, "nothing read yet: no snapshot"
        add("a")
        assert rules() == ["a"], "the snapshot began at the first statement, after the commit"
        assert store.read_view is OLDER
        add("b")
        assert rules() == ["a"], "one snapshot for the whole read"
    with store.reading():
        assert rules() == ["a", "b"]
    with store.reading():
        pass        # a read that made no statement ends nothing and leaves the connection usable
    with store.transaction():
        assert store.read_view is not OLDER, "a write transaction holds the writers' turn: it reads the last commit"
        store.execute("DELETE FROM rate_windows")
    with store.reading():
        assert rules() == []
    store.close()
    other.close()


def _read_windows(store):
    with store.reading():
        return store.all("SELECT world, rule, hits FROM rate_windows")


@pytest.mark.parametrize("count", [0, 1, 3, 256, 257, 1000])
def test_insert_many_writes_every_row_in_order_whatever_their_number(durable_store, count):
    """Rows go in by chunks of a power of two (store.insert_many): none is lost or doubled at a chunk's edge."""
    store = open_store(durable_store)
    try:
        with store.transaction():
            store.execute("CREATE TABLE IF NOT EXISTS many (n INTEGER PRIMARY KEY, label TEXT NOT NULL)")
            store.execute("DELETE FROM many")
            store.insert_many("many", ("n", "label"), [(n, f"row {n}") for n in range(count)])
        rows = store.all("SELECT n, label FROM many ORDER BY n")
        assert [(r["n"], r["label"]) for r in rows] == [(n, f"row {n}") for n in range(count)]
    finally:
        store.close()
