"""Issue 11: a clock jump costs what the imports it creates cost, not the years it spans. Delivered transactions
are a prefix of each account's schedule (one counter) and the days an import settles are one row, so the store
holds as many rows after a century as after a day, and loading `busy-merchant` (a million transactions) writes a
few dozen rows: nothing long holds the store that other worlds write to."""

from ptas_sandbox.simulator.tools.control.models import world_tables
from tests.support.accounts import connect, long_lived_user
from tests.support.client import Api
from tests.support.worlds import new_world


def rows_of(app, world_id):
    store = app.extensions["ptas"].store
    return {table: store.one(f"SELECT count(*) AS c FROM {table} WHERE world = ?", (world_id,))["c"]
            for table in world_tables(store) if table not in ("journal",)}


def world_after(app, api, seconds):
    world = new_world(api, name="Acme")
    _, jane = long_lived_user(world)
    _, joe = world.user(name="Joe")
    connect(jane, "dummy")
    connect(joe, "dummy-report")
    world.api.advance(5)                      # the first imports finish
    assert world.api.post("/_sandbox/clock", json={"advance": seconds}).status_code == 200
    partner = world.api.as_(world.api.post("/_sandbox/token").json["accessToken"])
    accounts = partner.get("/accounts").json["accounts"]
    return rows_of(app, world.body["world"]["id"]), accounts


def test_a_century_writes_as_many_rows_as_a_day(app, api):
    day, day_accounts = world_after(app, api, 86400)
    century, century_accounts = world_after(app, api, 100 * 365 * 86400)
    assert century == day
    delivered = lambda accounts: sum(a["statistics"]["count"] for a in accounts)
    assert delivered(century_accounts) > 30_000 * delivered(day_accounts) // 100 > 0     # yet it delivered them


def test_loading_a_million_transactions_writes_a_few_rows(app, client):
    loaded = client.post("/_sandbox/scenarios/busy-merchant")
    assert loaded.status_code == 201, loaded.get_json()
    rows = rows_of(app, loaded.get_json()["world"]["id"])
    assert sum(rows.values()) < 200, rows
    user_api = Api(client).as_(loaded.get_json()["accessToken"])
    assert sum(a["statistics"]["count"] for a in user_api.get("/accounts").json["accounts"]) == 1_001_000
