"""What one request costs the store, counted rather than timed (timing tests fail on a busy machine; bench/ has
the figures): how often it takes the writers' turn, how often it reads its world, on a SQLite file as
`ptas serve` runs it, one process owning it (requeststate.memory: per-request state in memory) or shared by several
(`--workers`: SHARED_STORE, every request's state in the store). A cost that creeps back shows up here."""

import re
from urllib.parse import urlsplit

import pytest

from ptas_sandbox.simulator import create_app
from tests.support.client import Api
from tests.support.pages import post_form
from tests.support.receivers import Receiver
from tests.support.worlds import new_world


@pytest.fixture(params=["owned", "shared"])
def traced(request, tmp_path, system_time):
    """A world on a SQLite file, and the statements its requests run (the test client's requests run on this
    thread, so on this thread's connection)."""
    app = create_app({"STATE": str(tmp_path / "cost.db"), "SYSTEM_TIME": system_time, "START_SERVICES": False,
                      "SHARED_STORE": request.param == "shared"})
    world = new_world(Api(app.test_client()))
    for _ in range(2):          # a world's first requests catch it up and remember what they read
        world.api.get("/partners/self")
    statements = []
    app.extensions["ptas"].store._local().db.set_trace_callback(statements.append)
    yield request.param, app, world, statements
    app.extensions["ptas"].close()


def turns(statements):
    return sum(1 for s in statements if s.strip().upper().startswith("BEGIN IMMEDIATE"))


def transactions(statements):
    return sum(1 for s in statements if s.strip().upper().startswith("BEGIN"))


def world_reads(statements):
    return sum(1 for s in statements if re.match(r"\s*SELECT \* FROM worlds WHERE", s))


def window_hits(app):
    """The §8 hits of the world's global window, as the store keeps them (what is written behind, written)."""
    sandbox = app.extensions["ptas"]
    sandbox.state.settle()
    return sandbox.store.one("SELECT COUNT(*) AS n FROM rate_hits WHERE rule = ''")["n"]


def test_an_api_read_costs_its_read_alone_when_the_process_owns_the_store(traced):
    mode, _, world, statements = traced
    assert world.api.get("/partners/self").status_code == 200
    if mode == "owned":
        assert statements == [], "the world, the token and the partner are remembered; the rest is in memory"
    else:
        assert turns(statements) == 2, "the admission (lastUsedAt, the §8 hit) and the journal entry"
        assert world_reads(statements) == 1, "the journal and the pipeline share the world they read"


def test_a_remembered_row_is_read_again_once_it_changed(traced):
    mode, _, world, statements = traced
    assert world.api.put("/partners/self", json={"name": "Renamed"}).status_code == 200
    statements.clear()
    assert world.api.get("/partners/self").json["name"] == "Renamed"
    partner_reads = sum(1 for s in statements if re.match(r"\s*SELECT \* FROM partners WHERE", s))
    assert partner_reads == 1, "the write changed the partners table: its row is read again"
    if mode == "owned":
        assert transactions(statements) == 1, "in a snapshot of its own, nothing else read from the store"
    statements.clear()
    assert world.api.get("/partners/self").json["name"] == "Renamed"
    assert (statements == []) == (mode == "owned")


def test_a_write_that_changed_no_row_leaves_what_was_remembered(traced):
    mode, _, world, statements = traced
    assert world.api.delete("/users/00000000-0000-0000-0000-000000000000").status_code == 404
    statements.clear()
    assert world.api.get("/partners/self").status_code == 200
    assert (statements == []) == (mode == "owned"), "the refused delete changed nothing: nothing is read again"


def test_an_api_write_is_one_transaction_when_the_process_owns_the_store(traced):
    mode, _, world, statements = traced
    assert world.api.post("/users", json={"name": "Jane"}).status_code == 201
    if mode == "owned":
        assert (turns(statements), transactions(statements)) == (1, 1), "the operation alone"
        assert world_reads(statements) == 0
    else:
        assert turns(statements) == 2, "the admission with the operation, and the journal entry"
        assert world_reads(statements) == 1


def test_a_write_reads_again_only_what_its_tables_hold(traced):
    mode, _, world, statements = traced
    assert world.api.post("/users", json={"name": "Jane"}).status_code == 201
    statements.clear()
    assert world.api.get("/partners/self").status_code == 200
    if mode == "owned":
        assert world_reads(statements) == 0, "a user made leaves the worlds table, and its world remembered, as it was"
        assert any(re.match(r"\s*SELECT .* FROM tokens WHERE", s) for s in statements), "it wrote a token"
        assert world.api.post("/users", json={"name": "Joe"}).status_code == 201
        statements.clear()
        assert world.api.post("/users", json={"name": "Ann"}).status_code == 201
        before = statements[:next(n for n, s in enumerate(statements) if s.startswith("BEGIN"))]
        assert [s.split(" WHERE")[0] for s in before] == [
            "SELECT id, kind, partner_id, user_id, scope, revoked_at, expires_at FROM tokens"], \
            "a POST after a POST reads its token again (the last one wrote tokens), nothing else"
        inside = statements[len(before):]
        assert not any(re.match(r"\s*SELECT \* FROM partners", s) for s in inside), \
            "its partner row comes from memory: the transaction has not written partners"


def test_a_webhook_attempt_in_one_world_leaves_every_world_s_reads_remembered(tmp_path, system_time):
    """The dispatcher records an attempt with no world's lock: had that made every world's reads stale, one busy
    world's notifications would cost every other world's requests a read of all they remembered."""
    app = create_app({"STATE": str(tmp_path / "cost.db"), "SYSTEM_TIME": system_time, "START_SERVICES": False,
                      "ALLOW_PRIVATE_CALLBACKS": True})
    receiver = Receiver()
    try:
        api = Api(app.test_client())
        busy, quiet = new_world(api), new_world(api)
        hook = {"callbackUrl": receiver.url, "events": ["AccountCreated"]}
        assert busy.api.post("/webhooks", json=hook).status_code == 201
        for _ in range(2):
            quiet.api.get("/partners/self")
        statements = []
        app.extensions["ptas"].store._local().db.set_trace_callback(statements.append)
        assert busy.api.post("/testevents/accountcreated").status_code < 300
        assert busy.api.post("/_sandbox/webhooks/flush").json["inFlight"] == 0
        assert receiver.wait_for(1)
        statements.clear()
        assert quiet.api.get("/partners/self").status_code == 200
        assert statements == []
    finally:
        receiver.close()
        app.extensions["ptas"].close()


def make_a_world(api, busy):
    new_world(api)


def count_a_fault(api, busy):
    created = busy.api.post("/_sandbox/faults", json={"match": {"operationId": "GetUsers"},
                                                      "effect": {"type": "status", "status": 503}, "times": 1})
    assert created.status_code == 201, created.json
    assert busy.api.get("/users").status_code == 503


def connect_on_a_hosted_page(api, busy):
    user = busy.user(name="Jane")[0]
    session = busy.api.post("/accountui", json={"accountTypeIds": ["dummy"], "userId": user["id"]}).json
    page = urlsplit(session["url"]).path
    done = post_form(api.client, page, data={"accountTypeId": "dummy", "username": "jane", "password": "pw",
                                             "action": "submit"})
    assert done.status_code == 200
    assert busy.api.get(f"/accountui/{session['id']}").json["status"] == "Completed"


@pytest.mark.parametrize("write", [make_a_world, count_a_fault, connect_on_a_hosted_page])
def test_a_write_that_names_its_world_leaves_every_other_world_s_reads_remembered(tmp_path, system_time, write):
    """A world made, a fault counted and a hosted page's form write one world's rows without its lock (no token
    names it, or none is needed yet): `Worlds.writes` names it, so no other world reads again what it kept."""
    app = create_app({"STATE": str(tmp_path / "cost.db"), "SYSTEM_TIME": system_time, "START_SERVICES": False})
    try:
        api = Api(app.test_client())
        busy, quiet = new_world(api), new_world(api)
        for _ in range(2):
            quiet.api.get("/partners/self")
        statements = []
        app.extensions["ptas"].store._local().db.set_trace_callback(statements.append)
        write(api, busy)
        statements.clear()
        assert quiet.api.get("/partners/self").status_code == 200
        assert statements == []
    finally:
        app.extensions["ptas"].close()


def test_what_is_written_behind_reaches_the_store_in_one_transaction(traced):
    mode, app, world, statements = traced
    for _ in range(3):
        world.api.get("/partners/self")
    statements.clear()
    app.extensions["ptas"].state.settle()
    assert transactions(statements) == (1 if mode == "owned" else 0), "nothing waits on the exact path"


@pytest.mark.parametrize("method, path, body, status", [
    ("post", "/users", {"name": 5}, 400),                     # the body is refused
    ("delete", "/users/00000000-0000-0000-0000-000000000000", None, 404),   # the operation is refused
])
def test_a_refused_write_still_counts_and_changes_nothing_else(traced, method, path, body, status):
    _, app, world, _ = traced
    users = world.api.get("/users").json
    hits = window_hits(app)
    response = getattr(world.api, method)(path, **({"json": body} if body is not None else {}))
    assert response.status_code == status, response.json
    assert window_hits(app) == hits + 1, "the refused request counted toward the §8 budget"
    assert world.api.get("/users").json == users
