"""World snapshots (issue 14): a world exported as one document loads into a new world on another sandbox with
the same state; a bad document is a 400 and leaves no world behind."""

import copy
import json

import pytest

from ptas_sandbox.simulator import create_app
from ptas_sandbox.simulator.tools.snapshots import models
from tests.support.accounts import imported, long_lived_user
from tests.support.client import Api
from tests.support.problems import assert_problem


@pytest.fixture
def elsewhere(system_time):
    """Another sandbox: its own store and its own signing secret."""
    app = create_app({"SYSTEM_TIME": system_time, "START_SERVICES": False,
                      "SECRET": "another sandbox's secret, long enough for HS256"})
    yield Api(app.test_client())
    app.extensions["ptas"].close()


@pytest.fixture(autouse=True)
def small_packs(monkeypatch):
    """The multi-row tables of these small worlds travel packed, as the long tables of a real world do."""
    monkeypatch.setattr(models, "PACK_ABOVE", 1)


def snapshot(world):
    response = world.api.get("/_sandbox/snapshot")
    assert response.status_code == 200, response.json
    return response.json


def load(api, document):
    response = api.post("/_sandbox/snapshots", json=document)
    assert response.status_code == 201, response.json
    return response.json


def worlds(api):
    app = api.client.application
    return len(app.extensions["ptas"].worlds.all())


@pytest.fixture
def busy(world):
    """A world with a user, an imported account, a webhook with a pending notification, a fault, a frozen clock."""
    user, user_api = long_lived_user(world)
    account = imported(world.api, user_api, seconds=3 * 86400)
    hook = world.api.post("/webhooks", json={"callbackUrl": "http://localhost/_sandbox/echo/snap",
                                             "events": ["AccountCreated"]}).json
    world.api.post("/_sandbox/clock", json={"freeze": True})
    world.api.post("/testevents/accountcreated")
    world.api.post("/_sandbox/faults", json={"match": {"operationId": "GetUsers"},
                                             "effect": {"type": "status", "status": 502}, "times": 3})
    return {"user": user, "user_api": user_api, "account": account, "hook": hook}


def pages(api, account_id):
    out, reference = [], None
    while True:
        page = api.get(f"/accounts/{account_id}/transactions?pageSize=1000"
                       + (f"&pageReference={reference}" if reference else "")).json
        out += page["transactions"]
        reference = page["nextPageReference"]
        if reference is None:
            return out


def test_a_snapshot_is_one_versioned_document_without_secrets(world, busy):
    document = snapshot(world)
    assert (document["format"], document["version"]) == (models.FORMAT, models.VERSION)
    assert document["world"]["clock"]["frozen"] is True
    assert isinstance(document["tables"]["data_imports"], dict)            # packed: many rows
    assert isinstance(document["tables"]["users"], list)                   # one row: as it is
    assert "transactions" not in document["tables"]         # accounts carry how many they delivered
    text = json.dumps(document)
    assert world.token not in text and "accessToken" not in text and "eyJ" not in text


def test_a_loaded_world_has_the_same_state(world, busy, elsewhere):
    document = snapshot(world)
    loaded = load(elsewhere, document)
    there = elsewhere.as_(loaded["accessToken"])
    assert there.get("/_sandbox/clock").json == world.api.get("/_sandbox/clock").json
    assert there.get("/partners/self").json == world.api.get("/partners/self").json
    assert there.get("/webhooks").json == world.api.get("/webhooks").json
    user_there = elsewhere.as_(loaded["tokens"][token_id(world, busy["user"])])
    account_id = busy["account"]["id"]
    assert user_there.get("/accounts").json == busy["user_api"].get("/accounts").json
    mine = pages(busy["user_api"], account_id)
    assert len(mine) > 100 and pages(user_there, account_id) == mine
    assert there.get("/_sandbox/faults").json["faults"][0]["remaining"] == 3


def token_id(world, user):
    """The id of the user's long-lived token (the one long_lived_user made)."""
    rows = world.api.client.application.extensions["ptas"].store.all(
        "SELECT id FROM tokens WHERE user_id = ? AND revoked_at IS NULL ORDER BY created_at DESC", (user["id"],))
    return rows[0]["id"]


def test_pending_deliveries_travel_and_go_out_after_loading(world, busy, elsewhere):
    loaded = load(elsewhere, snapshot(world))
    there = elsewhere.as_(loaded["accessToken"])
    assert there.post("/_sandbox/webhooks/flush").json["attempted"] == 1
    [capture] = there.get("/_sandbox/echo/snap").json["captures"]      # the loaded world's own capture
    assert json.loads(capture["body"])["eventType"] == "AccountCreated"


def test_loading_twice_into_one_sandbox_is_a_conflict_and_makes_nothing(world, busy, elsewhere):
    document = snapshot(world)
    load(elsewhere, document)
    before = worlds(elsewhere)
    assert_problem(elsewhere.post("/_sandbox/snapshots", json=document), 409)
    assert worlds(elsewhere) == before


def test_replace_puts_the_snapshot_back_where_it_came_from(world, busy):
    document = snapshot(world)
    jane = world.api.get(f"/users/{busy['user']['id']}").json
    later = world.api.post("/users", json={"name": "Made after the snapshot"}).json
    world.api.post("/_sandbox/clock", json={"advance": 86400})
    before = worlds(world.api)
    assert_problem(world.api.post("/_sandbox/snapshots", json=document), 409)      # without replace: as before
    replaced = world.api.post("/_sandbox/snapshots?replace=true", json=document)
    assert replaced.status_code == 201, replaced.json
    here = world.api.as_(replaced.json["accessToken"])
    assert worlds(world.api) == before                       # in place of its world, not beside it
    assert replaced.json["world"]["id"] == document["world"]["id"]
    assert world.api.get(f"/users/{jane['id']}").json == jane            # the world's tokens keep working
    assert here.get(f"/users/{jane['id']}").json == jane
    assert here.get("/partners/self").json["id"] == world.partner["id"]
    assert_problem(here.get(f"/users/{later['id']}"), 404)
    assert here.get("/_sandbox/clock").json["now"] == document["world"]["clock"]["now"]
    # Again, from the world the first replace made: "start every test run from the same state".
    again = world.api.as_(replaced.json["accessToken"]).post("/_sandbox/snapshots?replace=true", json=document)
    assert again.status_code == 201 and worlds(world.api) == before
    assert world.api.as_(again.json["accessToken"]).get(f"/users/{jane['id']}").json == jane


def test_replace_needs_the_worlds_root_token_and_changes_nothing_without_it(world, busy, other_world):
    document = snapshot(world)
    jane = world.api.get(f"/users/{busy['user']['id']}").json
    before = worlds(world.api)
    assert_problem(world.api.as_(None).post("/_sandbox/snapshots?replace=true", json=document), 401)
    assert_problem(other_world.api.post("/_sandbox/snapshots?replace=true", json=document), 403)
    narrow = world.new_token("partner:read")
    assert_problem(world.api.as_(narrow).post("/_sandbox/snapshots?replace=true", json=document), 403)
    assert worlds(world.api) == before and world.api.get(f"/users/{jane['id']}").json == jane


def broken(document, change):
    document = copy.deepcopy(document)
    change(document)
    return document


BREAKAGES = {
    "format": lambda d: d.update(format="something else"),
    "version": lambda d: d.update(version=99),
    "seed": lambda d: d["world"].update(seed="seven"),
    "clock": lambda d: d["world"]["clock"].update(now="yesterday"),
    "unknown table": lambda d: d["tables"].update(secrets=[]),
    "unknown column": lambda d: d["tables"]["users"][0].update(password="x"),
    "wrong type": lambda d: d["tables"]["users"][0].update(created_at="noon"),
    "missing column": lambda d: d["tables"]["users"][0].pop("created_at"),
    "no root": lambda d: d["tables"]["partners"][0].update(parent_id="someone"),
    "garbled pack": lambda d: d["tables"]["data_imports"].update(data="bm90IGd6aXA="),
    "pack count": lambda d: d["tables"]["data_imports"].update(rows=99),
    "orphan imports": lambda d: d["tables"].pop("accounts"),
    "duplicate ids": lambda d: d["tables"]["users"].append(dict(d["tables"]["users"][0])),
    "reference outside": lambda d: d["tables"]["users"][0].update(partner_id="a partner of another world"),
    "unknown account type": lambda d: d["tables"]["accounts"][0].update(type_id="no-such-type"),
    "json text not json": lambda d: d["tables"]["accounts"][0].update(errors="{"),
    "json text of another type": lambda d: d["tables"]["accounts"][0].update(credentials='"nope"'),
    "json text nested too deep": lambda d: d["tables"]["accounts"][0].update(options="[" * 5000 + "]" * 5000),
}


@pytest.mark.parametrize("name", BREAKAGES)
def test_a_bad_snapshot_is_a_400_and_leaves_no_world(world, busy, elsewhere, name):
    document = broken(snapshot(world), BREAKAGES[name])
    before = worlds(elsewhere)
    assert_problem(elsewhere.post("/_sandbox/snapshots", json=document), 400)
    assert worlds(elsewhere) == before
    assert load(elsewhere, snapshot(world))["world"]           # nothing half-made blocks the good document


@pytest.mark.parametrize("name", ["duplicate ids", "orphan imports", "wrong type"])
def test_a_bad_replace_is_a_400_and_leaves_the_world_as_it_was(world, busy, name):
    document = snapshot(world)
    jane = world.api.get(f"/users/{busy['user']['id']}").json
    later = world.api.post("/users", json={"name": "Made after the snapshot"}).json
    assert_problem(world.api.post("/_sandbox/snapshots?replace=true", json=broken(document, BREAKAGES[name])), 400)
    assert world.api.get(f"/users/{jane['id']}").json == jane
    assert world.api.get(f"/users/{later['id']}").json["name"] == "Made after the snapshot"


def test_a_snapshot_cannot_name_another_worlds_rows(world, busy, system_time):
    """Ids are unique across the sandbox: a hand-written snapshot whose pending delivery names another world's
    webhook would have that world's secret sign a body the snapshot wrote, and send it to that world's receiver."""
    now = world.api.get("/_sandbox/clock").json["now"]
    document = {"format": models.FORMAT, "version": models.VERSION, "counters": {},
                "world": {"seed": 7, "clock": {"now": now, "frozen": False}},
                "tables": {"partners": [{"id": "forger", "parent_id": None, "name": "Forger", "email": None,
                                         "redirect_urls": "[]", "user_token_expiry": 86400, "ui_settings": "{}",
                                         "created_at": 0, "updated_at": 0}],
                           "webhook_deliveries": [{"id": "forged", "partner_id": "forger",
                                                   "webhook_id": busy["hook"]["id"], "event_id": "e",
                                                   "event_type": "AccountDeleted", "test": 0, "attempt": 1,
                                                   "status": "pending", "due_at": 0, "url": "http://x.example/",
                                                   "request_body": "{}"}]}}
    before = worlds(world.api)
    problem = assert_problem(world.api.post("/_sandbox/snapshots", json=document), 400)
    assert "webhook_id" in problem["detail"] and "does not hold" in problem["detail"]
    assert worlds(world.api) == before
    own = {**snapshot(world)["tables"]["webhooks"][0], "id": "own hook", "partner_id": "forger"}
    document["tables"]["webhooks"] = [own]          # the same delivery, to a webhook of its own: it loads
    document["tables"]["webhook_deliveries"][0]["webhook_id"] = "own hook"
    assert load(world.api, document)["world"]


def test_a_snapshot_that_is_not_json_is_a_400(elsewhere):
    response = elsewhere.post("/_sandbox/snapshots", data="{not json", headers={"Content-Type": "application/json"})
    assert_problem(response, 400)


def test_snapshots_are_bounded_in_size(system_time, world, busy):
    app = create_app({"SYSTEM_TIME": system_time, "START_SERVICES": False, "SNAPSHOT_MAX_BYTES": 1_000})
    assert_problem(app.test_client().post("/_sandbox/snapshots", json=snapshot(world)), 413)
    app.extensions["ptas"].close()


def test_a_packed_table_that_unpacks_beyond_the_bound_is_refused_unread(world, elsewhere):
    """A gzip bomb: a few KiB of base64 that unpack to 64 MiB (without a bound, any size: the server's memory)."""
    import base64
    import gzip
    document = snapshot(world)
    name = "tokens"
    bomb = gzip.compress(b'{"columns": {"id": ["' + b"a" * (64 << 20) + b'"]}}', 9)
    document["tables"][name] = {"encoding": "gzip+base64", "rows": 1, "data": base64.b64encode(bomb).decode()}
    before = worlds(elsewhere)
    response = elsewhere.post("/_sandbox/snapshots", json=document)
    assert_problem(response, 400)
    assert "unpacks to more than" in response.json["detail"]
    assert worlds(elsewhere) == before


def test_a_document_of_many_small_json_values_is_refused_before_it_is_parsed(elsewhere):
    """`[{},{},...]` costs Python ~25 times its size: 32 MiB of it peaked the server at 1 GiB."""
    response = elsewhere.post("/_sandbox/snapshots", data=b"[" + b"{}," * 200_000 + b"{}]",
                              headers={"Content-Type": "application/json"})
    assert_problem(response, 413)
    assert models.MAX_BYTES <= 4 * 1024 * 1024 and models.MAX_UNPACKED <= 8 * 1024 * 1024


def test_only_the_root_partner_exports_its_world(world):
    child = world.api.post("/partners", json={"name": "Store"}).json
    as_child = world.api.as_(world.api.post(f"/partners/{child['id']}/tokens", json={}).json["accessToken"])
    assert_problem(as_child.get("/_sandbox/snapshot"), 403)
    _, user = world.user(name="Jane")
    assert_problem(user.get("/_sandbox/snapshot"), 403)


def test_the_documented_example_loads_into_a_fresh_sandbox(elsewhere):
    from ptas_sandbox.simulator.tools.snapshots.http import EXAMPLE
    loaded = load(elsewhere, EXAMPLE)
    assert loaded["partner"]["name"] == "Acme" and loaded["accessToken"]
    assert elsewhere.as_(loaded["accessToken"]).get("/partners/self").status_code == 200


def test_a_version_1_snapshot_loads_without_its_transaction_rows(world, busy, elsewhere):
    """Version 1 carried a row per delivered transaction; accounts carry how many they delivered, so the rows
    are dropped and the loaded world reads the same transactions."""
    document = snapshot(world)
    document["version"] = 1
    document["tables"]["transactions"] = [{"account": 1, "created_at": 0, "n": 0, "report": None}]
    loaded = load(elsewhere, document)
    user_there = elsewhere.as_(loaded["tokens"][token_id(world, busy["user"])])
    account_id = busy["account"]["id"]
    assert pages(user_there, account_id) == pages(busy["user_api"], account_id)


def test_on_a_shared_sandbox_the_worlds_root_token_replaces_it_and_only_a_new_world_needs_the_admin_key(config):
    """The admin key guards what is server-wide (a new world); putting a world back is its own root partner's."""
    app = create_app({**config, "ADMIN_KEY": "the-operators-key-0123456789"})
    try:
        api = Api(app.test_client())
        admin = {"X-Sandbox-Admin-Key": "the-operators-key-0123456789"}
        made = api.post("/_sandbox/partners", json={"name": "Acme"}, headers=admin).json
        mine, theirs = api.as_(made["accessToken"]), api.as_(
            api.post("/_sandbox/partners", json={"name": "Globex"}, headers=admin).json["accessToken"])
        document = mine.get("/_sandbox/snapshot").json
        mine.post("/users", json={"name": "Made after the snapshot"})
        assert_problem(mine.post("/_sandbox/snapshots", json=document), 401)           # a new world: the key
        assert_problem(theirs.post("/_sandbox/snapshots?replace=true", json=document), 403)
        replaced = mine.post("/_sandbox/snapshots?replace=true", json=document)
        assert replaced.status_code == 201, replaced.json
        assert mine.get("/users").json["users"] == []
    finally:
        app.extensions["ptas"].close()
