"""Imports on the world clock (spec §1 capability 5, §4.2 data imports, §6 TransactionsImported)."""

import json

import pytest

from tests.support.accounts import connect, imported, long_lived_user
from tests.support.problems import assert_problem


@pytest.fixture
def jane(world):
    return long_lived_user(world)


def events(app, kind):
    rows = app.extensions["ptas"].store.all("SELECT data FROM events WHERE kind = ? ORDER BY seq", (kind,))
    return [json.loads(r["data"]) for r in rows]


def count(api, account):
    return api.get(f"/accounts/{account['id']}").json["statistics"]["count"]


def test_transactions_arrive_when_the_dummy_import_finishes(world, jane):
    _, api = jane
    account = connect(api)
    assert count(api, account) == 0
    assert api.get(f"/accounts/{account['id']}/transactions").json["transactions"] == []
    world.api.advance(4)
    assert count(api, account) == 0
    world.api.advance(1)
    statistics = api.get(f"/accounts/{account['id']}").json["statistics"]
    assert statistics["count"] == 600 and statistics["first"] < statistics["last"]
    assert len(api.get(f"/accounts/{account['id']}/transactions").json["transactions"]) == 100


def test_larger_sample_types_take_longer(world, jane):
    _, api = jane
    from tests.support.accounts import CARD_CREDENTIALS
    account = connect(api, "sample-card-acquirer", CARD_CREDENTIALS)
    world.api.advance(60)
    assert count(api, account) == 0
    world.api.advance(900)
    assert count(api, account) == 18000


def test_new_transactions_arrive_with_each_poll(world, jane):
    _, api = jane
    account = imported(world.api, api, seconds=10)
    before = count(api, account)
    world.api.advance(86400)
    after = api.get(f"/accounts/{account['id']}").json["statistics"]
    assert 0 < after["count"] - before <= 20
    imports = api.get(f"/dataimports?accountId={account['id']}").json["dataImports"]
    assert [i["kind"] for i in imports] == ["Initial", "Scheduled"]


def test_a_long_clock_jump_becomes_one_catch_up_import(world, jane):
    _, api = jane
    account = imported(world.api, api, seconds=10)
    world.api.advance(30 * 86400 + 3)
    imports = api.get(f"/dataimports?accountId={account['id']}").json["dataImports"]
    assert len(imports) <= 3 and all(i["status"] == "Completed" for i in imports)
    assert count(api, account) == pytest.approx(600 + 600, abs=2)


def test_each_import_is_a_data_import_with_errors_and_warnings(world, jane):
    user, api = jane
    account = connect(api)
    [running] = api.get("/dataimports").json["dataImports"]
    assert running["status"] == "Running" and running["finishedAt"] is None
    assert running["accountId"] == account["id"] and running["kind"] == "Initial"
    world.api.advance(5)
    done = api.get(f"/dataimports/{running['id']}").json
    assert done["status"] == "Completed" and done["transactionCount"] == 600
    assert done["errors"] == [] and done["warnings"] == [] and done["userId"] == user["id"]


def test_transactions_imported_event_carries_account_import_and_count(app, world, jane):
    user, api = jane
    account = imported(world.api, api, seconds=5)
    [event] = events(app, "TransactionsImported")
    assert event["account"]["id"] == account["id"] and event["userId"] == user["id"]
    assert event["transactionCount"] == 600 and event["dataImport"]["status"] == "Completed"
    assert event["report"] is None and event["account"]["statistics"]["count"] == 600


def test_rejected_credentials_fail_the_import_and_mark_the_account(app, world, jane):
    _, api = jane
    account = connect(api, credentials={"username": "jane", "password": "wrong"})
    world.api.advance(5)
    read = api.get(f"/accounts/{account['id']}").json
    assert read["errors"][0]["code"] == "InvalidCredentials" and read["statistics"]["count"] == 0
    [failed] = api.get("/dataimports").json["dataImports"]
    assert failed["status"] == "Failed" and failed["errors"][0]["code"] == "InvalidCredentials"
    assert events(app, "AccountUpdated")[-1]["account"]["errors"][0]["code"] == "InvalidCredentials"
    assert events(app, "TransactionsImported")[-1]["dataImport"]["status"] == "Failed"
    world.api.advance(86400)
    assert len(api.get("/dataimports").json["dataImports"]) == 1, "no polling while the provider refuses"


def test_fixed_credentials_clear_the_error_and_import_again(world, jane):
    _, api = jane
    account = connect(api, credentials={"username": "jane", "password": "wrong"})
    world.api.advance(5)
    fixed = api.put(f"/accounts/{account['id']}", json={"credentials": {"password": "right"}}).json
    assert fixed["errors"] == []
    world.api.advance(5)
    assert count(api, account) == 600


def test_provider_outage_fails_imports_until_it_ends(world, jane):
    _, api = jane
    world.api.post("/_sandbox/accounttypes/dummy", json={"state": "Outage"})
    account = connect(api)
    world.api.advance(5)
    read = api.get(f"/accounts/{account['id']}").json
    assert read["errors"][0]["code"] == "ProviderUnavailable" and read["statistics"]["count"] == 0
    world.api.post("/_sandbox/accounttypes/dummy", json={"state": "Operational"})
    world.api.advance(3600)
    read = api.get(f"/accounts/{account['id']}").json
    assert read["errors"] == [] and read["statistics"]["count"] > 600


def test_degraded_provider_imports_with_warnings(world, jane):
    _, api = jane
    world.api.post("/_sandbox/accounttypes/dummy", json={"state": "Degraded", "warnings": [
        {"code": "Slow", "message": "slow"}]})
    connect(api)
    world.api.advance(5)
    [done] = api.get("/dataimports").json["dataImports"]
    assert done["status"] == "Completed" and done["warnings"] == [{"code": "Slow", "message": "slow"}]


def test_refresh_rereads_from_a_start_date_as_a_new_import(world, jane):
    _, api = jane
    account = imported(world.api, api, seconds=5)
    response = api.post(f"/accounts/{account['id']}/refresh", json={"startDate": "2026-01-01T00:00:00Z"})
    assert response.status_code == 202 and response.json["kind"] == "Refresh"
    assert response.json["from"] == "2026-01-01T00:00:00.0000000Z"
    world.api.advance(5)
    done = api.get(f"/dataimports/{response.json['id']}").json
    assert done["status"] == "Completed" and 0 < done["transactionCount"] < 600
    assert count(api, account) == 600


def test_refresh_from_the_future_is_refused(world, jane):
    _, api = jane
    account = imported(world.api, api, seconds=5)
    assert_problem(api.post(f"/accounts/{account['id']}/refresh", json={"startDate": "2099-01-01T00:00:00Z"}), 400)
    assert_problem(api.post(f"/accounts/{account['id']}/refresh", json={"startDate": "yesterday"}), 400)
    assert len(api.get("/dataimports").json["dataImports"]) == 1


def test_refresh_while_importing_is_a_conflict(jane):
    _, api = jane
    account = connect(api)
    assert_problem(api.post(f"/accounts/{account['id']}/refresh", json={"startDate": "2026-01-01"}), 409)


def test_data_imports_of_others_are_not_found(world, jane):
    _, api = jane
    connect(api)
    [run] = api.get("/dataimports").json["dataImports"]
    _, joe = world.user(name="Joe")
    assert joe.get("/dataimports").json["dataImports"] == []
    assert_problem(joe.get(f"/dataimports/{run['id']}"), 404)
    assert world.api.get(f"/dataimports/{run['id']}").status_code == 200


def test_data_imports_need_account_read(world, jane):
    token = world.new_token("transaction:read")
    assert_problem(world.api.as_(token).get("/dataimports"), 403)


def test_deleting_the_account_stops_its_imports(world, jane):
    _, api = jane
    account = connect(api)
    api.delete(f"/accounts/{account['id']}")
    world.api.advance(86400)
    assert api.get("/dataimports").json["dataImports"] == []


def test_refresh_after_a_failed_first_import_brings_the_whole_history(world, jane):
    _, api = jane
    world.api.post("/_sandbox/accounttypes/dummy", json={"state": "Outage"})
    account = connect(api)
    world.api.advance(5)
    world.api.post("/_sandbox/accounttypes/dummy", json={"state": "Operational"})
    response = api.post(f"/accounts/{account['id']}/refresh", json={"startDate": "2026-01-04T00:00:00Z"})
    world.api.advance(5)
    done = api.get(f"/dataimports/{response.json['id']}").json
    assert done["status"] == "Completed" and done["transactionCount"] == 600
    assert count(api, account) == 600


def test_accounts_of_a_deleted_user_are_no_longer_polled(app, world, jane):
    user, api = jane
    imported(world.api, api, seconds=5)
    world.api.delete(f"/users/{user['id']}")
    world.api.advance(86400)
    assert len(events(app, "TransactionsImported")) == 1


def test_an_import_running_when_its_user_is_deleted_ends_without_a_notification(app, world, jane):
    """A deleted user's accounts and imports are 404 (docs/choices.md): a TransactionsImported about them would
    name data the partner can no longer read."""
    user, api = jane
    connect(api)                                # its first import runs for 5 s of world time
    assert world.api.delete(f"/users/{user['id']}").status_code == 204
    world.api.advance(86400)
    assert events(app, "TransactionsImported") == []
    runs = app.extensions["ptas"].store.all("SELECT status FROM data_imports")
    assert [run["status"] for run in runs] == ["Failed"], "ended, nothing delivered"


def test_an_oauth2_account_imports_like_the_others(client, world, jane):
    from tests.support.oauth import authorized
    user, api = jane
    reference = authorized(client, world.api, accountTypeId="dummy-auth", userId=user["id"])
    created = api.post("/accounts", json={"accountTypeId": "dummy-auth", "authReference": reference,
                                          "credentials": {"shopName": "Jane's"}})
    assert created.status_code == 201, created.json
    assert created.json["isOauth"] and created.json["credentials"] == {"shopName": "Jane's"}
    world.api.advance(10)
    account = api.get(f"/accounts/{created.json['id']}").json
    assert account["statistics"]["count"] == 450 and account["errors"] == []


def test_reset_wipes_accounts_imports_transactions_and_provider_states(app, world, jane):
    _, api = jane
    imported(world.api, api, "dummy-report", seconds=10)
    world.api.post("/_sandbox/accounttypes/dummy", json={"state": "Outage"})
    assert world.api.post("/_sandbox/reset").status_code == 200
    store = app.extensions["ptas"].store
    for table in ("accounts", "data_imports", "reports", "account_type_states"):
        assert store.one(f"SELECT count(*) AS c FROM {table}")["c"] == 0, table
    assert world.api.get("/accounttypes/dummy").json["state"] == "Operational"
