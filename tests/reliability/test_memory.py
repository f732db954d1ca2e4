"""A team sandbox runs for weeks (issue 40 item 5): a deleted world leaves nothing in the process's memory, and
what it remembers per request is bounded without dropping all of it at once. `python -m bench rss` measures the
slope of the resident memory under mixed load."""

import functools
from collections import deque

import pytest

from ptas_sandbox.simulator import create_app
from ptas_sandbox.simulator.requeststate import memory
from ptas_sandbox.simulator.store import Engine
from tests.support.client import Api
from tests.support.worlds import new_world

OURS = "ptas_sandbox."


def reachable(root):
    """Every container reachable from `root` through the simulator's own objects, dicts, lists, tuples, sets and
    deques (not through the store's connections or the Flask app)."""
    seen, todo, found = set(), [root], []
    while todo:
        thing = todo.pop()
        if id(thing) in seen or isinstance(thing, (str, bytes, int, float, type(None), Engine)):
            continue
        seen.add(id(thing))
        if isinstance(thing, dict):
            found.append(thing)
            todo.extend(thing.keys())
            todo.extend(thing.values())
        elif isinstance(thing, (list, tuple, set, frozenset, deque)):
            found.append(thing)
            todo.extend(thing)
        elif isinstance(thing, functools.partial):     # a stage bound to what it keeps (the last prunes)
            todo.extend([thing.args, thing.keywords])
        elif type(thing).__module__.startswith(OURS) and hasattr(thing, "__dict__"):
            todo.append(vars(thing))
    return found


def naming(containers, world_ids):
    """The containers holding one of `world_ids` as a key, an element or part of a tuple key."""
    def names(item):
        return item in world_ids if isinstance(item, str) else \
            isinstance(item, tuple) and any(isinstance(part, str) and part in world_ids for part in item)
    return [c for c in containers if any(names(item) for item in c)]


def used(world):
    """A few calls of every kind a world's memory is kept for: tokens, partners, clock, catch-up, rate windows."""
    user, as_user = world.user(name="Jane")
    as_user.get("/accounttypes")
    world.api.get("/partners/self")
    world.api.post("/_sandbox/clock", json={"advance": 60})
    world.api.get("/users")
    world.api.delete(f"/users/{user['id']}")


def test_a_deleted_world_leaves_nothing_in_memory(api, app):
    sandbox = app.extensions["ptas"]
    keeper = new_world(api, name="Keeper")
    used(keeper)
    gone = [new_world(api, name=f"Gone {n}") for n in range(5)]
    for world in gone:
        used(world)
    ids = {world.body["world"]["id"] for world in gone}
    assert naming(reachable(sandbox), ids), "the walk finds what the worlds left while they live"
    for world in gone:
        assert world.api.delete("/_sandbox/world").status_code == 204
    assert naming(reachable(sandbox), ids) == []
    assert keeper.api.get("/partners/self").status_code == 200
    assert naming(reachable(sandbox), {keeper.body["world"]["id"]})


def test_a_reset_of_every_world_leaves_nothing_of_them_in_memory():
    """The operator's reset (the admin key) deletes every world at once: what the process kept of each (remembered
    reads, the marks of their writes, noted uses, the last prunes) goes with them."""
    app = create_app({"STATE": ":memory:", "START_SERVICES": False, "ADMIN_KEY": "the-operators-key-0123456789"})
    try:
        client = app.test_client()
        client.environ_base["HTTP_X_SANDBOX_ADMIN_KEY"] = "the-operators-key-0123456789"    # an operator's calls
        sandbox, api = app.extensions["ptas"], Api(client)
        worlds = [new_world(api, name=f"Team {n}") for n in range(3)]
        for world in worlds:
            used(world)
        ids = {world.body["world"]["id"] for world in worlds}
        assert naming(reachable(sandbox), ids), "the walk finds what the worlds left while they live"
        assert api.post("/_sandbox/reset").json == {"reset": "everything"}
        assert naming(reachable(sandbox), ids) == []
        assert worlds[0].api.get("/partners/self").status_code == 401
    finally:
        app.extensions["ptas"].close()


def test_remembered_reads_are_bounded_and_the_oldest_go_first(monkeypatch, tmp_path):
    from ptas_sandbox.simulator.store import open_store
    monkeypatch.setattr(memory, "CACHED_MAX", 50)
    store = open_store(str(tmp_path / "state.db"))
    try:
        state = memory.MemoryState(store, background=False)
        for n in range(200):
            assert state.remember(("token", "w", n), "w", lambda n=n: {"n": n}) == {"n": n}
        assert len(state.cached) == 50
        assert set(state.cached) == {("token", "w", n) for n in range(150, 200)}
    finally:
        store.close()


def test_users_made_and_deleted_in_a_fixed_world_leave_nothing_remembered(app, world):
    """Per request with a fixed set of worlds: each new user's token was remembered after its first call and
    stayed after the user was deleted, one more entry a round until the bound."""
    state = app.extensions["ptas"].state
    if not isinstance(state, memory.MemoryState):
        pytest.skip("the store-exact strategy remembers no reads (PostgreSQL, several workers)")
    sizes = []
    for n in range(30):
        user, as_user = world.user(name=f"user {n}")
        assert as_user.get("/accounttypes").status_code == 200
        assert world.api.delete(f"/users/{user['id']}").status_code == 204
        sizes.append(len(state.cached))
    assert sizes[-1] == sizes[5], sizes


@pytest.fixture
def memory_app():
    """An app on the in-memory strategy whatever the pass (the store-exact one remembers no reads)."""
    app = create_app({"STATE": ":memory:", "START_SERVICES": False})
    yield app
    app.extensions["ptas"].close()


def test_a_deleted_worlds_token_tried_again_and_again_keeps_nothing_and_costs_no_walk_of_the_cache(memory_app):
    """Its miss drops the one read it made: a token of a deleted world tried for weeks must neither pile up
    entries nor walk every remembered read of the other worlds at each try."""
    app, api = memory_app, Api(memory_app.test_client())
    state = app.extensions["ptas"].state
    assert isinstance(state, memory.MemoryState)
    keeper, gone = new_world(api, name="Keeper"), new_world(api, name="Gone")
    used(keeper)
    world_id = gone.body["world"]["id"]
    assert gone.api.delete("/_sandbox/world").status_code == 204
    walks = []
    forget = state.forget_world
    state.forget_world = lambda *args: (walks.append(args), forget(*args))
    try:
        kept = dict(state.cached)
        for _ in range(3):
            assert gone.api.get("/partners/self").status_code == 401
    finally:
        del state.forget_world
    assert walks == [] and naming(reachable(app.extensions["ptas"]), {world_id}) == []
    assert {key: value for key, value in state.cached.items() if key in kept} == kept

