"""Issue 40: a catch-up runs in steps, each a write transaction of its own under the world's lock, so another
world's writer gets the store's turn between two steps (on SQLite every writer of every world shares one turn).
However it is cut, the work and its order are the same: a world caught up in steps holds the same rows, byte for
byte, as one caught up in a single transaction."""

import contextlib

import pytest

from ptas_sandbox.simulator import create_app
from ptas_sandbox.simulator.catchup import service
from ptas_sandbox.simulator.store.base import StoreUnavailable
from ptas_sandbox.simulator.tools.scenarios import models as scenarios

CENTURY = 100 * 365 * 86400


@pytest.fixture
def commits(app, monkeypatch):
    """The write transactions that changed rows, each as the locks it took (the store's `ended` hook)."""
    store = app.extensions["ptas"].store
    seen, told = [], store.ended

    def ended(locks, tables):
        seen.append(locks)
        if told is not None:
            told(locks, tables)
    monkeypatch.setattr(store, "ended", ended)
    return seen


def test_a_century_advance_commits_its_imports_apart_from_the_move(api, commits, monkeypatch):
    monkeypatch.setattr(service, "STEP_RUNS", 1)
    loaded = api.post("/_sandbox/scenarios/busy-merchant")      # two accounts, each polled every interval
    assert loaded.status_code == 201, loaded.json
    world = f"world/{loaded.json['world']['id']}"
    commits.clear()
    moved = api.as_(loaded.json["accessToken"]).post("/_sandbox/clock", json={"advance": CENTURY})
    assert moved.status_code == 200, moved.json
    steps = [locks for locks in commits if world in locks]
    # the move; the two polls it made due; each account's catch-up import completed in a step of its own
    assert len(steps) >= 4, commits


def test_a_scenario_load_commits_its_imports_apart_from_the_world(api, commits, monkeypatch):
    monkeypatch.setattr(service, "STEP_RUNS", 1)
    loaded = api.post("/_sandbox/scenarios/busy-merchant")
    assert loaded.status_code == 201, loaded.json
    world = f"world/{loaded.json['world']['id']}"
    assert len([locks for locks in commits if world in locks]) >= 3, commits    # the world, then each import


def made(config, location, name, whole):
    """A fresh sandbox with scenario `name` loaded and then moved a century ahead, its imports caught up in steps
    or (`whole`) each inside one transaction, which the steps join: (its world's snapshot, commits of it)."""
    app = create_app({**config, "STATE": location})
    sandbox = app.extensions["ptas"]
    seen = []
    told = sandbox.store.ended
    sandbox.store.ended = lambda locks, tables: (seen.append(locks), told and told(locks, tables))
    one = sandbox.store.transaction if whole else contextlib.nullcontext
    try:
        with app.app_context():
            with one():
                body = scenarios.load(sandbox, name)
            with one():
                world = sandbox.worlds.get(body["world"]["id"])
                sandbox.catch_up(sandbox.worlds.move(world, advance=CENTURY * 1_000_000))
        commits = len([locks for locks in seen if f"world/{world.id}" in locks])
        response = app.test_client().get("/_sandbox/snapshot",
                                         headers={"Authorization": f"Bearer {body['accessToken']}"})
        assert response.status_code == 200, response.get_json()
        return response.get_data(as_text=True), commits
    finally:
        sandbox.close()


@pytest.mark.parametrize("name", ["default", "busy-merchant", "provider-outage"])
def test_steps_or_one_transaction_give_the_same_world_byte_for_byte(config, new_store_location, monkeypatch,
                                                                    name):
    monkeypatch.setattr(service, "STEP_RUNS", 1)
    stepped, steps = made(config, new_store_location(), name, whole=False)
    whole, transactions = made(config, new_store_location(), name, whole=True)
    assert transactions == 2 and steps > 4
    assert stepped == whole


@pytest.mark.parametrize("step", ["an account", "an import"])
def test_a_scenario_load_that_fails_midway_leaves_no_world(app, api, monkeypatch, step):
    """The world is made before its people, and its imports catch up after; when a step cannot be done (the
    store went away), the load takes the world away again: the caller has no token of it, and it would hold a
    place under --max-worlds."""
    def store_gone(*args, **kwargs):
        raise StoreUnavailable("The store went away.")
    if step == "an account":
        monkeypatch.setattr(scenarios.accounts, "create", store_gone)
    else:
        monkeypatch.setattr(service, "complete", store_gone)
    store = app.extensions["ptas"].store
    worlds = store.one("SELECT count(*) AS n FROM worlds")["n"]
    assert api.post("/_sandbox/scenarios/busy-merchant").status_code == 503
    assert store.one("SELECT count(*) AS n FROM worlds")["n"] == worlds
    assert store.one("SELECT count(*) AS n FROM users")["n"] == 0
