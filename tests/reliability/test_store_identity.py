"""Credentials are bound to the store that issued them (issue 40): a store gets a random identity when it is made,
and every token and world key carries it. Deleting a state and starting again with the same seed repeats the
world ids, and a kept `<state>.key` (or a fixed secret) signs alike: the earlier store's credentials are refused
all the same."""

import sqlite3

import jwt

from ptas_sandbox.simulator import create_app
from tests.support.client import Api
from tests.support.problems import assert_problem
from tests.support.worlds import new_world

SECRET = "one secret for both stores, long enough for HS256"


def started(config, location, **more):
    return create_app({**config, "STATE": location, **more})


def credentials(app):
    """(world id, initial token, world key) of a new world of `app`."""
    world = new_world(Api(app.test_client()), name="Team")
    return world.body["world"]["id"], world.token, world.body["worldKey"]


def refused(app, token):
    api = Api(app.test_client()).as_(token)
    assert_problem(api.get("/partners/self"), 401)
    assert_problem(api.get("/_sandbox/clock"), 401)


def test_a_deleted_state_started_again_with_its_key_file_and_seed_refuses_the_old_credentials(tmp_path, config):
    state = tmp_path / "sandbox.db"
    first = started(config, str(state))
    world_id, token, key = credentials(first)
    first.extensions["ptas"].close()
    for name in ("sandbox.db", "sandbox.db-wal", "sandbox.db-shm"):     # the operator starts over; the key stays
        (tmp_path / name).unlink(missing_ok=True)
    assert (tmp_path / "sandbox.db.key").exists()
    second = started(config, str(state))
    try:
        again_id, again_token, again_key = credentials(second)
        assert again_id == world_id         # the same seed: another team now holds the old world's id
        refused(second, token)
        refused(second, key)
        assert Api(second.test_client()).as_(again_key).get("/_sandbox/clock").status_code == 200
        assert Api(second.test_client()).as_(again_token).get("/partners/self").status_code == 200
    finally:
        second.extensions["ptas"].close()


def test_credentials_of_another_store_with_the_same_secret_and_seed_are_refused(config, new_store_location):
    first = started(config, new_store_location(), SECRET=SECRET)
    world_id, token, key = credentials(first)
    first.extensions["ptas"].close()
    second = started(config, new_store_location(), SECRET=SECRET)
    try:
        assert credentials(second)[0] == world_id
        refused(second, token)
        refused(second, key)
    finally:
        second.extensions["ptas"].close()


def without_store(token, secret):
    """The token as a version without store identities signed it: the same claims but the store's."""
    claims = jwt.decode(token, options={"verify_signature": False})
    claims.pop("sto")
    return jwt.encode(claims, secret, algorithm="HS256")


def test_a_state_an_older_version_made_keeps_its_tokens_and_a_new_store_refuses_such_tokens(tmp_path, config):
    state = tmp_path / "sandbox.db"
    first = started(config, str(state))
    _, token, _ = credentials(first)
    first.extensions["ptas"].close()
    secret = (tmp_path / "sandbox.db.key").read_text().strip()
    older = without_store(token, secret)
    with sqlite3.connect(state) as db:      # as an older version left it: worlds, and no store identity
        db.execute("DELETE FROM meta WHERE key = 'store-identity'")
    upgraded = started(config, str(state))
    try:
        assert Api(upgraded.test_client()).as_(older).get("/partners/self").status_code == 200
        _, new_token, _ = credentials(upgraded)
        assert jwt.decode(new_token, options={"verify_signature": False})["sto"]
        assert Api(upgraded.test_client()).as_(new_token).get("/partners/self").status_code == 200
    finally:
        upgraded.extensions["ptas"].close()
    fresh = started(config, ":memory:", SECRET=SECRET)
    try:
        _, token, _ = credentials(fresh)
        refused(fresh, without_store(token, SECRET))
    finally:
        fresh.extensions["ptas"].close()
