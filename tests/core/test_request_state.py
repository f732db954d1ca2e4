"""The in-memory request state's remembered reads (simulator/requeststate/memory.py): the writers invalidate them.
A write transaction that took a world's lock makes what was remembered of that world's tables stale when it ends,
whatever its SQL says (an upsert, a `WITH ... UPDATE`): the tables are those SQLite names, not ours to parse. One
that took no world's lock makes every world's reads of its tables stale."""

import contextlib

import pytest

from ptas_sandbox.simulator.requeststate import MemoryState
from ptas_sandbox.simulator.store import open_store

SCHEMA = "CREATE TABLE IF NOT EXISTS notes (world TEXT PRIMARY KEY, text TEXT NOT NULL)"
OTHER = "CREATE TABLE IF NOT EXISTS other (world TEXT NOT NULL, n INTEGER NOT NULL)"


@pytest.fixture
def state():
    store = open_store(":memory:", [SCHEMA, OTHER])
    with store.transaction():
        store.executemany("INSERT INTO notes (world, text) VALUES (?, ?)", [("a", "first"), ("b", "first")])
    return MemoryState(store, background=False)


def note(state, world):
    return state.remember(("note", world), world, lambda: state.store.one(
        "SELECT text FROM notes WHERE world = ?", (world,))["text"])


def write(state, world, sql, lock=True):
    with state.store.transaction():
        if lock:
            state.store.lock(f"world/{world}")
        state.store.execute(sql, (world,))


def test_a_writer_of_the_world_makes_its_reads_stale_whatever_its_sql(state):
    assert note(state, "a") == note(state, "b") == "first"
    state.store.execute("UPDATE notes SET text = 'unseen' WHERE world = 'a'")     # no world's lock, no transaction
    assert note(state, "a") == "first", "remembered: a write outside a world's transaction is not expected"
    write(state, "a", "INSERT INTO notes (world, text) VALUES (?, 'upserted') "
                      "ON CONFLICT (world) DO UPDATE SET text = excluded.text")
    assert note(state, "a") == "upserted"
    write(state, "a", "WITH w AS (SELECT ? AS id) UPDATE notes SET text = 'with' WHERE world IN (SELECT id FROM w)")
    assert note(state, "a") == "with"
    assert note(state, "b") == "first"


def test_a_writer_of_another_world_leaves_the_reads_remembered(state):
    assert note(state, "a") == "first"
    with state.store.transaction():
        state.store.execute("UPDATE notes SET text = 'quiet' WHERE world = 'a'")    # behind the state's back
        state.store.lock("world/b")
    assert note(state, "a") == "first"


def test_a_writer_of_no_world_makes_every_world_stale(state):
    assert note(state, "a") == note(state, "b") == "first"
    with state.store.transaction():
        state.store.execute("UPDATE notes SET text = 'wiped'")
    assert note(state, "a") == note(state, "b") == "wiped"


def test_a_read_inside_a_write_transaction_is_not_kept(state):
    """A read there may see the transaction's own writes: a rollback must leave nothing of them remembered."""
    with pytest.raises(RuntimeError):
        with state.store.transaction():
            state.store.lock("world/a")
            state.store.execute("UPDATE notes SET text = 'rolled back' WHERE world = 'a'")
            assert note(state, "a") == "rolled back"
            raise RuntimeError("refused")
    assert note(state, "a") == "first"


def test_the_state_s_own_batch_leaves_the_reads_remembered(state):
    assert note(state, "a") == "first"
    buffer = state.write_behind(lambda store, items: store.execute("UPDATE notes SET text = 'batch'"))
    buffer.add("item")
    state.settle()
    assert note(state, "a") == "first"


def test_a_writer_of_other_tables_leaves_the_reads_remembered(state):
    """A webhook attempt, an echo capture or a journal mark writes tables no remembered read reads: every world's
    reads stay, whether the writer took a world's lock or none."""
    assert note(state, "a") == note(state, "b") == "first"
    state.store.execute("UPDATE notes SET text = 'unseen'")     # behind the state's back: shows a read again
    write(state, "a", "INSERT INTO other (world, n) VALUES (?, 1)")
    write(state, "b", "INSERT INTO other (world, n) VALUES (?, 1)", lock=False)
    assert note(state, "a") == note(state, "b") == "first"
    write(state, "a", "UPDATE notes SET text = text WHERE world = ?")
    assert (note(state, "a"), note(state, "b")) == ("unseen", "first")


def test_a_read_made_of_remembered_reads_depends_on_their_tables(state):
    """A remembered read that uses another one (found in memory, no statement) is stale when that one's
    tables change."""
    state.remember(("note", "a"), "a", lambda: "first")      # a value of no table: nothing makes it stale
    state.cached.pop(("note", "a"))
    assert note(state, "a") == "first"
    shout = ("shout", "a")
    assert state.remember(shout, "a", lambda: note(state, "a").upper()) == "FIRST"
    write(state, "a", "UPDATE notes SET text = 'second' WHERE world = ?")
    assert state.remember(shout, "a", lambda: note(state, "a").upper()) == "SECOND"


@pytest.mark.parametrize("sql, params, read, written", [
    ("SELECT n.text FROM notes n JOIN other o ON o.world = n.world WHERE n.world = ?", ("a",), {"notes", "other"},
     set()),
    ("SELECT text FROM notes WHERE world IN (SELECT world FROM other WHERE n > ?)", (0,), {"notes", "other"}, set()),
    ("INSERT INTO notes (world, text) VALUES (?, 'x') ON CONFLICT (world) DO UPDATE SET text = excluded.text "
     "RETURNING text", ("c",), {"notes"}, {"notes"}),
    ("WITH w AS (SELECT world FROM other) UPDATE notes SET text = 'y' WHERE world IN (SELECT world FROM w) "
     "AND world = ?", ("a",), {"notes", "other"}, {"notes"}),
    ("DELETE FROM other WHERE world = ?", ("a",), {"other"}, {"other"}),
    ("SELECT no_such_column FROM notes WHERE world = ?", ("a",), {"*"}, {"*"}),    # SQLite cannot say: every table
    ("DROP TABLE other", (), {"sqlite_master"}, {"*", "other", "sqlite_master"}),     # dropped: what any read found
])
def test_the_tables_are_those_sqlite_names(state, sql, params, read, written):
    store = state.store
    with store._held() as local:
        assert store._name_tables(local.db, sql, params) == (frozenset(read), frozenset(written))


def test_a_write_transaction_uses_what_was_remembered_of_tables_it_has_not_written(state):
    """This process's writers are serial: inside a write transaction, a table it has not written holds the last
    commit, so what was remembered of it serves (the partner row of a POST); once it writes one, a read of it
    may see its own writes, and reads through."""
    assert note(state, "a") == "first"
    state.store.execute("UPDATE notes SET text = 'unseen' WHERE world = 'a'")     # behind the state's back
    with state.store.transaction():
        state.store.lock("world/a")
        state.store.execute("INSERT INTO other (world, n) VALUES ('a', 1)")
        assert note(state, "a") == "first"
        state.store.execute("UPDATE notes SET text = 'mine' WHERE world = 'a'")
        assert note(state, "a") == "mine"
    assert note(state, "a") == "mine"


def test_a_read_kept_inside_a_write_transaction_is_stale_once_the_transaction_writes_its_tables(state):
    with state.store.transaction():
        state.store.lock("world/a")
        state.store.execute("INSERT INTO other (world, n) VALUES ('a', 1)")
        assert note(state, "a") == "first"          # read there, and kept: the transaction wrote no notes
    state.store.execute("UPDATE notes SET text = 'unseen' WHERE world = 'a'")     # behind the state's back
    assert note(state, "a") == "first", "kept"
    for ending in ("rolled back", "committed"):
        with pytest.raises(RuntimeError) if ending == "rolled back" else contextlib.nullcontext():
            with state.store.transaction():
                state.store.lock("world/a")
                state.store.execute("INSERT INTO other (world, n) VALUES ('a', 2)")
                note(state, "a")
                state.store.execute(f"UPDATE notes SET text = '{ending}' WHERE world = 'a'")
                if ending == "rolled back":
                    raise RuntimeError(ending)
        assert note(state, "a") == ("unseen" if ending == "rolled back" else "committed")
