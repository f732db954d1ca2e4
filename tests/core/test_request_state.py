"""The in-memory request state's remembered reads (simulator/requeststate/memory.py): the writers invalidate them.
A write transaction that took a world's lock makes what was remembered of that world stale when it ends, whatever
its SQL says (an upsert, a `WITH ... UPDATE`); one that took no world's lock makes every world's stale."""

import pytest

from ptas_sandbox.simulator.requeststate import MemoryState
from ptas_sandbox.simulator.store import open_store

SCHEMA = "CREATE TABLE IF NOT EXISTS notes (world TEXT PRIMARY KEY, text TEXT NOT NULL)"


@pytest.fixture
def state():
    store = open_store(":memory:", [SCHEMA])
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
