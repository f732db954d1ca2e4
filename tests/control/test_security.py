"""A shared sandbox nobody can steer, read into or exhaust (issue 11 items 1, 4, 5, 6): control rights by role,
the admin key, echo captures per world, budgets only for authenticated requests, caps and retention, bad input."""

import json

import pytest

from ptas_sandbox.simulator import create_app
from tests.support.accounts import connect
from tests.support.client import Api
from tests.support.problems import assert_problem
from tests.support.worlds import World, new_world

CONTROL = [("GET", "/_sandbox/clock", None), ("POST", "/_sandbox/clock", {"advance": 1}),
           ("GET", "/_sandbox/deliveries", None), ("POST", "/_sandbox/webhooks/flush", None),
           ("POST", "/_sandbox/reset", None), ("POST", "/_sandbox/token", None), ("DELETE", "/_sandbox/world", None)]


def child_token(world):
    child = world.api.post("/partners", json={"name": "Store"}).json
    return world.api.post(f"/partners/{child['id']}/tokens", json={}).json["accessToken"]


# --- 1. control rights by role ------------------------------------------------------------------------------

@pytest.mark.parametrize("method,path,body", CONTROL)
@pytest.mark.parametrize("who", ["child partner", "deploy token", "transaction:read only", "partner:read only"])
def test_only_root_tokens_that_may_update_the_partner_steer_a_world(world, method, path, body, who):
    token = child_token(world) if who == "child partner" else world.new_token(
        {"deploy token": "partner:create", "transaction:read only": "transaction:read",
         "partner:read only": "partner:read"}[who])
    before = world.api.get("/_sandbox/clock").json
    body_ = assert_problem(world.api.as_(token).call(method, path, json=body), 403, "forbidden")
    assert "root partner" in body_["detail"]
    assert world.api.get("/_sandbox/clock").json == before


@pytest.mark.parametrize("scope", ["partner:update", "partner:all"])
def test_a_root_token_with_partner_update_steers_even_when_expired_but_never_when_revoked(world, scope):
    short = world.api.as_(world.new_token(scope, expires_in=7200))
    short.advance(7201)
    assert_problem(short.get("/partners/self"), 401)
    assert short.get("/_sandbox/deliveries").status_code == 200
    token_id = [t for t in world.api.get("/partners/self/tokens").json["tokens"] if t["scope"] == scope][-1]["id"]
    assert world.api.delete(f"/partners/self/tokens/{token_id}").status_code in (200, 204)
    assert_problem(short.get("/_sandbox/clock"), 401)


def test_a_clock_jump_past_every_root_token_has_a_way_back(world):
    """A century ahead expires every root token (testing expiry is what a sandbox is for); the control API
    still takes the expired token, and POST /_sandbox/token renews it with the same scopes."""
    world.api.post("/_sandbox/clock", json={"advance": 100 * 365 * 86400})
    assert_problem(world.api.get("/partners/self"), 401)
    renewed = world.api.post("/_sandbox/token")
    assert renewed.status_code == 201, renewed.json
    assert renewed.json["scope"].split() == world.body["token"]["scope"].split()
    fresh = world.api.as_(renewed.json["accessToken"])
    assert fresh.get("/partners/self").json["id"] == world.partner["id"]
    assert fresh.post("/users", json={"name": "Jane"}).status_code == 201


def test_renewing_grants_no_scope_the_caller_lacks(world):
    narrow = world.api.as_(world.new_token("partner:update"))
    renewed = narrow.post("/_sandbox/token").json
    assert renewed["scope"] == "partner:update"
    assert_problem(narrow.as_(child_token(world)).post("/_sandbox/token"), 403)


def admin_app(config, **extra):
    app = create_app({**config, "ADMIN_KEY": "the-operators-key", **extra})
    return app, Api(app.test_client())


ADMIN = {"X-Sandbox-Admin-Key": "the-operators-key"}


@pytest.mark.parametrize("path", ["/_sandbox/partners", "/_sandbox/scenarios/default"])
def test_with_an_admin_key_creating_worlds_and_loading_scenarios_need_it(config, path):
    app, api = admin_app(config)
    try:
        assert_problem(api.post(path, json={}), 401, "unauthorized")
        assert_problem(api.post(path, json={}, headers={"X-Sandbox-Admin-Key": "guess"}), 401)
        assert api.post(path, json={}, headers=ADMIN).status_code == 201
        assert app.extensions["ptas"].store.one("SELECT COUNT(*) AS n FROM worlds")["n"] == 1
    finally:
        app.extensions["ptas"].close()


def test_open_keeps_world_creation_free_and_no_key_keeps_a_laptop_sandbox_open(config, api):
    app, opened = admin_app(config, OPEN=True)
    try:
        assert opened.post("/_sandbox/partners", json={}).status_code == 201
        assert_problem(opened.post("/_sandbox/reset", headers={"X-Sandbox-Admin-Key": "guess"}), 401)
    finally:
        app.extensions["ptas"].close()
    assert api.post("/_sandbox/partners", json={}).status_code == 201
    assert api.post("/_sandbox/scenarios/default", json={}).status_code == 201


def test_the_admin_key_is_documented_as_a_security_scheme(api):
    document = api.get("/openapi.json").json
    assert document["components"]["securitySchemes"]["sandboxAdminKey"]["name"] == "X-Sandbox-Admin-Key"
    create = document["paths"]["/_sandbox/partners"]["post"]
    assert {"sandboxAdminKey": []} in create["security"] and "401" in create["responses"]


def test_worlds_are_capped(config):
    app = create_app({**config, "MAX_WORLDS": 2})
    api = Api(app.test_client())
    try:
        first = new_world(api)
        new_world(api)
        body = assert_problem(api.post("/_sandbox/partners", json={}), 409, "conflict")
        assert body["maxWorlds"] == 2
        assert first.api.post("/_sandbox/reset").status_code == 200     # a reset keeps the world: still full
        refused = assert_problem(api.post("/_sandbox/scenarios/default", json={}), 409)
        assert "DELETE /_sandbox/world" in refused["detail"]
    finally:
        app.extensions["ptas"].close()


@pytest.fixture
def sandbox_with(config):
    """An app of the test's configuration with `settings` over it, through its test client; closed after the test."""
    apps = []

    def make(**settings):
        apps.append(create_app({**config, **settings}))
        return Api(apps[-1].test_client())
    yield make
    for app in apps:
        app.extensions["ptas"].close()


def test_deleting_a_world_frees_its_place_and_refuses_its_tokens(sandbox_with):
    api = sandbox_with(MAX_WORLDS=2)
    first, second = new_world(api), new_world(api)
    user, as_user = second.user(name="Kept")
    assert first.api.delete("/_sandbox/world").status_code == 204
    assert "deleted" in assert_problem(first.api.get("/partners/self"), 401)["detail"]
    assert_problem(first.api.get("/_sandbox/clock"), 401)
    third = new_world(api)                                       # its place is free again
    assert third.api.get("/users").json["users"] == []
    assert second.api.get(f"/users/{user['id']}").status_code == 200 and as_user.get("/accounts").status_code == 200


def test_a_deleted_world_leaves_no_row_behind(app, api, world):
    from ptas_sandbox.simulator.tools.control.models import world_tables
    world.user(name="Jane")
    notified(world, "bin")
    world_id = world.body["world"]["id"]
    assert world.api.delete("/_sandbox/world").status_code == 204
    sandbox = app.extensions["ptas"]
    sandbox.state.settle()
    left = {table: sandbox.store.one(f"SELECT COUNT(*) AS n FROM {table} WHERE world = ?", (world_id,))["n"]
            for table in world_tables(sandbox.store)}
    assert not any(left.values()), left
    assert sandbox.worlds.get(world_id) is None


def test_journal_entries_of_a_world_deleted_while_they_waited_are_not_written(app):
    from ptas_sandbox.simulator.tools.journal import models
    store = app.extensions["ptas"].store
    entry = dict(at=0, wall=0, operation="GetOwnPartner", method="GET", path="/partner/v2/partners/self", query="",
                 status=200, latency_us=1)
    models.record_many(store, "gone", [entry, entry])
    assert models.record(store, "gone", **entry) is None
    for table in ("journal", "counters"):
        assert store.one(f"SELECT COUNT(*) AS n FROM {table} WHERE world = 'gone'")["n"] == 0


@pytest.fixture
def full_sandbox(sandbox_with, system_time):
    """A sandbox of two worlds at most, where a world nobody called for an hour makes room, holding two worlds
    made a minute apart: (its api, the system clock, the older world, the newer one)."""
    api = sandbox_with(MAX_WORLDS=2, WORLD_IDLE_HOURS=1)
    older = new_world(api)
    system_time.tick(60)
    return api, system_time, older, new_world(api)


def test_a_world_nobody_called_for_the_idle_hours_makes_room_on_a_full_sandbox(full_sandbox):
    api, clock, idle, busy = full_sandbox
    clock.tick(50 * 60)
    assert busy.api.get("/partners/self").status_code == 200      # called 50 minutes after its creation
    clock.tick(8 * 60)
    assert_problem(api.post("/_sandbox/partners", json={}), 409)    # idle: 59 minutes unused, not yet an hour
    clock.tick(2 * 60)
    new_world(api)                                                  # idle: 61 minutes unused; it makes room
    assert_problem(idle.api.get("/partners/self"), 401)
    assert busy.api.get("/partners/self").status_code == 200
    assert_problem(api.post("/_sandbox/partners", json={}), 409)    # no other world was unused for an hour


def test_a_reset_is_a_call_and_keeps_the_worlds_last_use(full_sandbox):
    api, clock, reset, other = full_sandbox
    clock.tick(2 * 3600)
    assert reset.api.post("/_sandbox/reset").status_code == 200
    new_world(api)
    assert reset.api.get("/partners/self").status_code == 200
    assert_problem(other.api.get("/partners/self"), 401)


def test_with_no_idle_hours_a_full_sandbox_stays_full(sandbox_with, system_time):
    api = sandbox_with(MAX_WORLDS=1, WORLD_IDLE_HOURS=0)
    kept = new_world(api)
    system_time.tick(365 * 86400)
    assert_problem(api.post("/_sandbox/partners", json={}), 409)
    assert kept.api.get("/_sandbox/clock").status_code == 200     # its token expired; the world is there


# --- 4. echo captures belong to the world whose notifications they are ----------------------------------------

def notified(world, bin_):
    hook = world.api.post("/webhooks", json={"callbackUrl": f"http://localhost/_sandbox/echo/{bin_}",
                                             "events": ["AccountDeleted"]}).json
    assert world.api.post("/testevents/accountdeleted").status_code == 202
    assert world.api.post("/_sandbox/webhooks/flush").json["attempted"] == 1
    return hook


def test_a_worlds_captures_are_read_with_its_token_only(api, world, other_world):
    notified(world, "shared-name")
    [capture] = world.api.get("/_sandbox/echo/shared-name").json["captures"]
    assert json.loads(capture["body"])["eventType"] == "AccountDeleted"
    assert other_world.api.get("/_sandbox/echo/shared-name").json["captures"] == []
    assert api.get("/_sandbox/echo/shared-name").json["captures"] == []       # anonymous: none of a world's
    assert_problem(api.as_("forged.token.here").get("/_sandbox/echo/shared-name"), 401)
    _, as_user = world.user()
    assert_problem(as_user.get("/_sandbox/echo/shared-name"), 401)


def test_a_forged_notification_is_no_worlds_capture(api, world):
    notified(world, "bin")
    [real] = world.api.get("/_sandbox/echo/bin").json["captures"]
    forged = dict(real["headers"])
    api.post("/_sandbox/echo/bin", data=real["body"] + " ", headers={**forged, "Content-Type": "application/json"})
    assert len(world.api.get("/_sandbox/echo/bin").json["captures"]) == 1
    assert len(api.get("/_sandbox/echo/bin").json["captures"]) == 1       # kept as a capture of no world


def test_with_an_admin_key_captures_of_no_world_need_it(config):
    app, api = admin_app(config)
    try:
        token = api.post("/_sandbox/partners", json={}, headers=ADMIN).json["accessToken"]
        world = World(api.as_(token), token, {}, {})
        api.post("/_sandbox/echo/outside", data="hello", headers={"Content-Type": "text/plain"})
        assert_problem(api.get("/_sandbox/echo/outside"), 401)
        assert world.api.get("/_sandbox/echo/outside").json["captures"] == []
        [capture] = api.get("/_sandbox/echo/outside", headers=ADMIN).json["captures"]
        assert capture["body"] == "hello"
    finally:
        app.extensions["ptas"].close()


def test_two_servers_without_a_seed_give_different_world_ids_and_secrets(config, new_store_location):
    """Seeds make ids reproducible, never secrets: the same seed gives the same world ids, never the same
    signing key (tokens of one server are refused by the other)."""
    apps = [create_app({**config, "SEED": 7, "STATE": new_store_location()}) for _ in range(2)]
    try:
        worlds = [new_world(Api(app.test_client())) for app in apps]
        assert worlds[0].body["world"]["id"] == worlds[1].body["world"]["id"]
        assert_problem(Api(apps[1].test_client()).as_(worlds[0].token).get("/partners/self"), 401)
    finally:
        for app in apps:
            app.extensions["ptas"].close()


# --- 5. budgets and bounds ----------------------------------------------------------------------------------

def test_refused_requests_do_not_use_up_the_partners_budget(world):
    revoked = world.new_token("partner:read")
    revoked_id = world.api.get("/partners/self/tokens").json["tokens"][-1]["id"]
    world.api.delete(f"/partners/self/tokens/{revoked_id}")
    expired = world.new_token("partner:read", expires_in=1)
    world.api.advance(2)
    narrow = world.new_token("transaction:read")
    _, as_user = world.user()
    world.api.advance(61)                       # the set-up's requests leave the window
    for _ in range(150):
        assert_problem(world.api.as_(revoked).get("/partners/self"), 401)
        assert_problem(world.api.as_(expired).get("/partners/self"), 401)
        assert_problem(world.api.as_(narrow).get("/partners/self"), 403)      # authenticated, lacks the scope
        assert_problem(as_user.get("/partners/self"), 403)                    # an end-user token refused
    statuses = [world.api.get("/partners/self").status_code for _ in range(101)]
    assert statuses[:100] == [200] * 100 and statuses[-1] == 429


def test_an_echo_capture_over_the_size_cap_is_refused_and_a_bin_keeps_its_newest(config):
    app = create_app({**config, "ECHO_CAPTURE_MAX_BYTES": 2048, "ECHO_CAPTURES_PER_BIN": 3})
    api = Api(app.test_client())
    try:
        assert_problem(api.post("/_sandbox/echo/big", data=b"x" * 2048, headers={"Content-Type": "text/plain"}),
                       413, "payload-too-large")
        for n in range(5):
            api.post("/_sandbox/echo/few", data=f"n{n}", headers={"Content-Type": "text/plain"})
        assert [c["body"] for c in api.get("/_sandbox/echo/few").json["captures"]] == ["n2", "n3", "n4"]
    finally:
        app.extensions["ptas"].close()


def test_all_captures_together_stay_within_the_total(config):
    app = create_app({**config, "ECHO_TOTAL_BYTES": 50_000})
    api = Api(app.test_client())
    try:
        for n in range(40):
            api.post(f"/_sandbox/echo/bin-{n}", data=f"{n:04d}" + "x" * 5000, headers={"Content-Type": "text/plain"})
        kept = app.extensions["ptas"].store.one(
            "SELECT COUNT(*) AS n, SUM(LENGTH(body) + LENGTH(headers)) AS size FROM echo_captures")
        assert kept["size"] <= 50_000 and kept["n"] >= 8
        assert api.get("/_sandbox/echo/bin-39").json["captures"]
        assert not api.get("/_sandbox/echo/bin-0").json["captures"]
    finally:
        app.extensions["ptas"].close()


def test_outbox_deliveries_and_captures_older_than_the_retention_are_pruned_on_the_world_clock(app, world):
    notified(world, "old")
    store = app.extensions["ptas"].store
    world_id = world.body["world"]["id"]

    def counts():
        return [store.one(f"SELECT COUNT(*) AS n FROM {t} WHERE world = ?", (world_id,))["n"]
                for t in ("events", "webhook_deliveries", "echo_captures")]

    assert counts() == [1, 1, 1]
    world.api.advance(6 * 86400)
    world.api.get("/partners/self")
    assert counts() == [1, 1, 1], "within the retention period nothing goes"
    world.api.advance(2 * 86400)
    world.api.get("/partners/self")
    assert counts() == [0, 0, 0]
    assert world.api.get("/_sandbox/echo/old").json["captures"] == []


# --- 6. bad input -------------------------------------------------------------------------------------------

OUT_OF_RANGE = ["9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00", "２０２６-01-01T00:00:00Z"]


@pytest.fixture
def account(world):
    user, as_user = world.user()
    return as_user, connect(as_user)


@pytest.mark.parametrize("value", OUT_OF_RANGE)
def test_out_of_range_date_times_are_400_everywhere(world, account, value):
    as_user, created = account
    account_id = created["id"] if "id" in created else created["account"]["id"]
    assert_problem(as_user.get(f"/accounts/{account_id}/transactions", query_string={"createdAt": value}), 400)
    assert_problem(as_user.post(f"/accounts/{account_id}/refresh", json={"startDate": value}), 400)
    assert_problem(world.api.post("/_sandbox/clock", json={"set": value}), 400)
    assert_problem(world.api.post("/_sandbox/partners", json={"start": value}), 400)


def test_setting_the_clock_before_1970_is_400_not_409(world):
    assert_problem(world.api.post("/_sandbox/clock", json={"set": "1969-12-31T23:59:59Z"}), 400, "bad-request")
    assert_problem(world.api.post("/_sandbox/clock", json={"set": "9999-01-01T00:00:00Z"}), 400, "bad-request")


@pytest.mark.parametrize("value", ["1_0", "+5", " 5", "5 ", "５", "٣", "0x10", "-1", "1e2", ""])
def test_integer_query_parameters_take_ascii_digits_only(world, account, value):
    as_user, created = account
    account_id = created["id"] if "id" in created else created["account"]["id"]
    body = assert_problem(as_user.get(f"/accounts/{account_id}/transactions", query_string={"pageSize": value}),
                          400, "invalid-parameter")
    assert body["parameter"] == "pageSize"


def test_integer_query_parameters_still_take_plain_digits(world, account):
    as_user, created = account
    account_id = created["id"] if "id" in created else created["account"]["id"]
    assert as_user.get(f"/accounts/{account_id}/transactions", query_string={"pageSize": "10"}).status_code == 200


def test_a_state_file_from_before_capture_sizes_still_takes_captures(config, tmp_path):
    import sqlite3
    state = str(tmp_path / "old.db")
    old = sqlite3.connect(state)
    old.execute("CREATE TABLE echo_captures (seq INTEGER PRIMARY KEY AUTOINCREMENT, world TEXT NOT NULL DEFAULT '', "
                "bin TEXT NOT NULL, method TEXT NOT NULL, path TEXT NOT NULL, query TEXT NOT NULL, headers TEXT NOT "
                "NULL, content_type TEXT, body TEXT NOT NULL, body_encoding TEXT NOT NULL, "
                "received_at INTEGER NOT NULL)")
    old.commit()
    old.close()
    app = create_app({**config, "STATE": state})
    api = Api(app.test_client())
    try:
        assert api.post("/_sandbox/echo/bin", data="after", headers={"Content-Type": "text/plain"}).status_code == 200
        assert [c["body"] for c in api.get("/_sandbox/echo/bin").json["captures"]] == ["after"]
    finally:
        app.extensions["ptas"].close()


def test_loading_a_snapshot_makes_a_world_so_it_needs_the_admin_key_and_counts_toward_the_cap(
        api, world, config, new_store_location):
    snapshot = world.api.get("/_sandbox/snapshot").json          # taken on a laptop sandbox, loaded on a shared one
    app, shared = admin_app(config, MAX_WORLDS=2, SEED=1, STATE=new_store_location())
    try:
        shared.post("/_sandbox/partners", json={}, headers=ADMIN)
        assert_problem(shared.post("/_sandbox/snapshots", json=snapshot), 401)
        assert shared.post("/_sandbox/snapshots", json=snapshot, headers=ADMIN).status_code == 201
        assert_problem(shared.post("/_sandbox/partners", json={}, headers=ADMIN), 409)
    finally:
        app.extensions["ptas"].close()
