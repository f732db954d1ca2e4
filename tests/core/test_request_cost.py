"""What one request costs the store, counted rather than timed (timing tests fail on a busy machine; bench/ has
the figures): how often it takes the writers' turn and how often it reads its world, on a SQLite file as
`ptas serve` runs it. A cost that creeps back shows up here."""

import re

import pytest

from ptas_sandbox.simulator import create_app
from tests.support.client import Api
from tests.support.worlds import new_world


@pytest.fixture
def traced(tmp_path, system_time):
    """A world on a SQLite file, and the statements its requests run (the test client's requests run on this
    thread, so on this thread's connection)."""
    app = create_app({"STATE": str(tmp_path / "cost.db"), "SYSTEM_TIME": system_time, "START_SERVICES": False})
    world = new_world(Api(app.test_client()))
    world.api.get("/partners/self")             # the first request of a world may set things up
    statements = []
    app.extensions["ptas"].store._local().db.set_trace_callback(statements.append)
    yield app, world, statements
    app.extensions["ptas"].close()


def turns(statements):
    return sum(1 for s in statements if s.strip().upper().startswith("BEGIN IMMEDIATE"))


def world_reads(statements):
    return sum(1 for s in statements if re.match(r"\s*SELECT \* FROM worlds WHERE", s))


def window_hits(app):
    return app.extensions["ptas"].store.one("SELECT hits FROM rate_windows WHERE rule = ''")["hits"]


def test_an_api_read_takes_two_writer_turns_and_reads_its_world_once(traced):
    _, world, statements = traced
    assert world.api.get("/partners/self").status_code == 200
    assert turns(statements) == 2, "the admission (lastUsedAt, the §8 hit) and the journal entry"
    assert world_reads(statements) == 1, "the journal and the pipeline share the world they read"


def test_an_api_write_takes_two_writer_turns_and_its_operation_one_of_them(traced):
    _, world, statements = traced
    assert world.api.post("/users", json={"name": "Jane"}).status_code == 201
    assert turns(statements) == 2, "the admission with the operation, and the journal entry"
    assert world_reads(statements) == 1


@pytest.mark.parametrize("method, path, body, status", [
    ("post", "/users", {"name": 5}, 400),                     # the body is refused
    ("delete", "/users/00000000-0000-0000-0000-000000000000", None, 404),   # the operation is refused
])
def test_a_refused_write_still_counts_and_changes_nothing_else(traced, method, path, body, status):
    app, world, _ = traced
    users = world.api.get("/users").json
    hits = window_hits(app)
    response = getattr(world.api, method)(path, **({"json": body} if body is not None else {}))
    assert response.status_code == status, response.json
    assert window_hits(app) == hits + 1, "the refused request counted toward the §8 budget"
    assert world.api.get("/users").json == users
