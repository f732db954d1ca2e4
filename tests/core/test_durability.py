"""What a crash may lose (simulator/requeststate/memory.py, docs/durability.md): when one process owns its store, the
journal, `lastUsedAt` and the §8 counts are written behind in batches, so a kill -9 may lose the last batch of
them, and never an acknowledged API write. A clean stop loses nothing. Each test asserts what survives; the
in-process tests write the batch explicitly (`settle`) or wait for the writer's signal, never a sleep."""

import signal

import pytest

from ptas_sandbox.simulator import create_app
from ptas_sandbox.simulator.requeststate import MemoryState, memory
from tests.core.test_workers import call
from tests.support.client import Api
from tests.support.launched import Launched
from tests.support.worlds import new_world


@pytest.fixture
def serve(tmp_path):
    """`ptas serve` (one process, waitress) on a SQLite file: its per-request state in memory."""
    launched = []

    def start(state):
        server = Launched(tmp_path, "one-process", "--store", state, "--rate-limit", "5/3600")
        launched.append(server)
        return server
    yield start
    for server in launched:
        server.stop()


def killed(server):
    server.process.send_signal(signal.SIGKILL)
    server.process.wait(20)


def test_a_kill_loses_no_acknowledged_api_write(serve, tmp_path):
    state = str(tmp_path / "kill.db")
    server = serve(state)
    root = call(server.base, "POST", "/_sandbox/partners", json={"name": "Crash"}).json()["accessToken"]
    user = call(server.base, "POST", "/users", root, json={"name": "Kept"})
    extra = call(server.base, "POST", "/partners/self/tokens", root, json={"expiresIn": 7200, "name": "gone",
                                                                          "scope": "partner:read"})
    revoked = call(server.base, "DELETE", f"/partners/self/tokens/{extra.json()['id']}", root)
    moved = call(server.base, "POST", "/_sandbox/clock", root, json={"advance": 3600})
    assert [r.status_code for r in (user, extra, revoked, moved)] == [201, 201, 200, 200]
    killed(server)          # at once: nothing waited for a batch

    again = serve(state)
    assert [u["id"] for u in call(again.base, "GET", "/users", root).json()["users"]] == [user.json()["id"]]
    listed = call(again.base, "GET", "/partners/self/tokens", root).json()["tokens"]
    assert {t.get("id"): t["isRevoked"] for t in listed}[extra.json()["id"]] is True
    another = call(again.base, "POST", "/partners/self/tokens", root, json={"expiresIn": 60, "scope": "partner:read"})
    assert another.status_code == 201, "the id sequence went on from the kept rows"
    assert call(again.base, "GET", "/_sandbox/clock", root).json()["now"] >= moved.json()["now"], \
        "the clock moved an hour ahead of the system's, and stays there"


def test_what_a_batch_wrote_survives_a_kill(serve, tmp_path):
    """The journal, lastUsedAt and the §8 counts of requests before a batch (a journal read writes one first)
    are there after a kill -9; the limit (5 per hour here) still counts them."""
    state = str(tmp_path / "batch.db")
    server = serve(state)
    root = call(server.base, "POST", "/_sandbox/partners", json={"name": "Batch"}).json()["accessToken"]
    assert [call(server.base, "GET", "/partners/self", root).status_code for _ in range(3)] == [200] * 3
    seen = call(server.base, "GET", "/_sandbox/requests?operationId=GetOwnPartner", root).json()["requests"]
    assert len(seen) == 3
    killed(server)

    again = serve(state)
    kept = call(again.base, "GET", "/_sandbox/requests?operationId=GetOwnPartner", root).json()["requests"]
    assert [e["id"] for e in kept] == [e["id"] for e in seen]
    tokens = call(again.base, "GET", "/partners/self/tokens", root).json()["tokens"]
    assert tokens[0]["lastUsedAt"] is not None
    # 3 counted before the kill, this listing the 4th: one more fits in the window of 5
    assert [call(again.base, "GET", "/partners/self", root).status_code for _ in range(2)] == [200, 429]


def test_a_clean_stop_writes_everything_behind(serve, tmp_path):
    state = str(tmp_path / "stop.db")
    server = serve(state)
    root = call(server.base, "POST", "/_sandbox/partners", json={"name": "Stop"}).json()["accessToken"]
    assert [call(server.base, "GET", "/partners/self", root).status_code for _ in range(4)] == [200] * 4
    server.stop()           # SIGTERM: the server closes its sandbox, which writes the last batch

    again = serve(state)
    kept = call(again.base, "GET", "/_sandbox/requests?operationId=GetOwnPartner", root).json()["requests"]
    assert len(kept) == 4
    assert [call(again.base, "GET", "/partners/self", root).status_code for _ in range(2)] == [200, 429], \
        "4 counted before the stop (the journal's control call is not): one more fits in the window of 5"


def test_the_writer_thread_writes_a_batch_without_being_asked(tmp_path, system_time):
    """With the services running, requests reach the store by the writer's cadence alone (at most a second)."""
    app = create_app({"STATE": str(tmp_path / "cadence.db"), "SYSTEM_TIME": system_time, "START_SERVICES": True,
                      "SHARED_STORE": False})     # the one-process path, on either test path
    sandbox = app.extensions["ptas"]
    try:
        assert isinstance(sandbox.state, MemoryState) and memory.FLUSH_EVERY_S <= 1
        world = new_world(Api(app.test_client()))
        before = sandbox.state.batches
        assert world.api.get("/partners/self").status_code == 200
        assert sandbox.state.written(before, timeout=30), "the writer thread wrote no batch"
        row = sandbox.store.one("SELECT COUNT(*) AS n FROM journal WHERE operation = 'GetOwnPartner'")
        assert row["n"] == 1
    finally:
        sandbox.close()


def test_reads_see_what_waits_to_be_written(app, api):
    """Without the writer thread (the tests' apps), nothing reaches the store until a read needs it, and the
    reads of the journal and of tokens see it all the same."""
    sandbox = app.extensions["ptas"]
    if not isinstance(sandbox.state, MemoryState):
        pytest.skip("the store-exact path writes every request at once")
    world = new_world(api)
    listed = world.api.get("/partners/self/tokens").json["tokens"]
    assert world.api.get("/partners/self").status_code == 200
    assert sandbox.store.one("SELECT COUNT(*) AS n FROM journal WHERE operation = 'GetOwnPartner'")["n"] == 0
    entries = world.api.get("/_sandbox/requests?operationId=GetOwnPartner").json["requests"]
    assert len(entries) == 1
    now = world.api.get("/_sandbox/clock").json["now"]
    relisted = world.api.get("/partners/self/tokens").json["tokens"]
    assert listed[0]["lastUsedAt"] is not None and relisted[0]["lastUsedAt"] == now


def test_health_writes_nothing_behind(app, api):
    """A health probe reads nothing written behind, so it leaves it waiting: writing it would queue the probe
    behind every other world's writer for the store's turn."""
    sandbox = app.extensions["ptas"]
    if not isinstance(sandbox.state, MemoryState):
        pytest.skip("the store-exact path writes every request at once")
    world = new_world(api)
    assert world.api.get("/partners/self").status_code == 200
    batches = sandbox.state.batches
    assert api.get("/_sandbox/health").status_code == 200
    assert sandbox.store.one("SELECT COUNT(*) AS n FROM journal WHERE operation = 'GetOwnPartner'")["n"] == 0
    assert sandbox.state.batches == batches


def test_a_world_reset_forgets_the_tokens_it_deletes(world):
    """A remembered token row goes stale with the reset that deletes the token: it is refused at once, while
    the root partner's tokens, which a reset keeps, still work."""
    kept = world.new_token("partner:read", name="kept")
    _, user = world.user(name="Gone")
    assert user.get("/accounts").status_code == 200 and world.api.as_(kept).get("/partners/self").status_code == 200
    assert world.api.post("/_sandbox/reset").status_code == 200
    assert user.get("/accounts").status_code == 401
    assert world.api.as_(kept).get("/partners/self").status_code == 200


def test_bodies_waiting_to_be_written_are_bounded_in_bytes(app, api, monkeypatch):
    """The journal's entries wait with their bodies unredacted (the batch redacts them): a request that brings the
    bytes waiting over PENDING_BYTES writes the batch itself, so memory stays bounded whatever the cadence."""
    sandbox = app.extensions["ptas"]
    if not isinstance(sandbox.state, MemoryState):
        pytest.skip("the store-exact path writes every request at once")
    world = new_world(api)
    monkeypatch.setattr(memory, "PENDING_BYTES", 3000)
    def journaled():
        return sandbox.store.one("SELECT COUNT(*) AS n FROM journal WHERE operation = 'CreateUser'")["n"]
    for n in range(10):
        assert world.api.post("/users", json={"name": "x" * 100}).status_code == 201
        if journaled():
            break
    assert 0 < journaled() < 10      # a body is about a kilobyte: the third or fourth call wrote the batch


def test_a_batch_the_store_refuses_is_counted_lost_and_said_once(app, api, caplog):
    """A full disk refuses a batch and then each of its items alone: nothing crashes, the requests were all
    answered, and what is lost is counted and logged once for the batch. Once the store takes writes again,
    the next batch is written."""
    sandbox = app.extensions["ptas"]
    if not isinstance(sandbox.state, MemoryState):
        pytest.skip("the store-exact path writes every request at once")
    world = new_world(api)
    sandbox.state.settle()
    for n in range(5):      # entries of a few pages each: no page the store has free holds them
        assert world.api.get(f"/partners/self?pad={n}{'x' * 8000}").status_code == 200
    store = sandbox.store
    pages = store.one("PRAGMA page_count")["page_count"]
    # SQLite's own "database or disk is full": room for one entry alone (about 3 pages), not for the batch
    store.one(f"PRAGMA max_page_count = {pages + 4}")
    caplog.clear()
    sandbox.state.settle()
    failures = [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]
    assert len(failures) == 1 and "lost" in failures[0].getMessage(), [r.getMessage() for r in failures]
    journaled = store.one("SELECT COUNT(*) AS n FROM journal WHERE operation = 'GetOwnPartner'")["n"]
    assert 1 <= journaled < 5, "the entry that fits alone was written, the others lost"
    assert sandbox.state.lost >= 5 - journaled

    store.one("PRAGMA max_page_count = 1073741823")
    assert world.api.get("/partners/self").status_code == 200
    sandbox.state.settle()
    assert store.one("SELECT COUNT(*) AS n FROM journal WHERE operation = 'GetOwnPartner'")["n"] == journaled + 1
