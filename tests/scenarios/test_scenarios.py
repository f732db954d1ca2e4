"""Scenarios (docs/design.md): named, seeded worlds loaded by the control API and `ptas serve`."""

import hashlib
import json
import subprocess
import sys
from pathlib import Path

from ptas_sandbox.cli import main as ptas
from ptas_sandbox.simulator import create_app
from ptas_sandbox.simulator.providers.models import pool
from tests.support.client import Api
from tests.support.problems import assert_problem
from tests.support.worlds import SystemTime


def load(api, name, **body):
    response = api.post(f"/_sandbox/scenarios/{name}", json=body)
    assert response.status_code == 201, response.json
    return response.json


def test_catalogue_lists_the_named_scenarios_with_a_summary(api):
    scenarios = {s["name"]: s["summary"] for s in api.get("/_sandbox/scenarios").json["scenarios"]}
    assert {"default", "busy-merchant", "provider-outage"} <= set(scenarios)
    assert all(summary and "\n" not in summary for summary in scenarios.values())


def test_ptas_scenarios_prints_one_line_each(capsys):
    ptas(["scenarios"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert any(line.startswith("default ") for line in lines) and len(lines) >= 3


def test_default_world_is_ready_to_explore(api):
    world = load(api, "default")
    assert world["world"]["clock"] == {"now": "2026-01-05T09:50:00.0000000Z", "frozen": True}
    partner = api.as_(world["accessToken"])
    accounts = partner.get("/accounts").json["accounts"]
    assert {"dummy", "dummy-auth", "dummy-report"} <= {a["accountTypeId"] for a in accounts}
    assert all(a["statistics"]["count"] > 0 and a["errors"] == [] for a in accounts)
    user = api.as_(world["users"][0]["accessToken"])
    own = user.get("/accounts").json["accounts"]
    assert own and all(a["userId"] == world["users"][0]["id"] for a in own)
    report_account = next(a for a in accounts if a["accountTypeId"] == "dummy-report")
    assert partner.get(f"/accounts/{report_account['id']}/reports").json["reports"]


def test_provider_outage_has_a_degraded_type_and_accounts_with_errors(api):
    world = load(api, "provider-outage")
    partner = api.as_(world["accessToken"])
    types = {t["id"]: t for t in partner.get("/accounttypes").json["accountTypes"]}
    assert types["dummy"]["state"] == "Degraded" and types["dummy"]["errors"] and types["dummy"]["warnings"]
    assert types["dummy-report"]["state"] == "Outage"
    errors = {a["name"]: [e["code"] for e in a["errors"]] for a in partner.get("/accounts").json["accounts"]}
    assert errors["Café card terminal"] == ["ProviderUnavailable"]
    assert errors["Bike shop"] == ["InvalidCredentials"]
    assert errors["Café webshop"] == []
    imports = partner.get("/dataimports").json["dataImports"]
    assert any(i["warnings"] for i in imports if i["status"] == "Completed")


def test_outage_of_a_scenario_world_stays_in_it(api, world):
    load(api, "provider-outage")
    assert world.api.get("/accounttypes/dummy-report").json["state"] == "Operational"


def test_unknown_scenario_is_not_found(api):
    assert_problem(api.post("/_sandbox/scenarios/no-such-world"), 404)
    assert_problem(api.post("/_sandbox/scenarios/..%2Fsecrets"), 404)


def everything(seed=None):
    """A fresh simulator with the default scenario loaded: its accounts and their first thousand transactions as
    JSON text (page references are signed with the server's own secret, so they are left out)."""
    pool.cache_clear()      # draw the Faker material again, as a fresh process would
    app = create_app({"SYSTEM_TIME": SystemTime(), "START_SERVICES": False})
    try:
        api = Api(app.test_client())
        world = load(api, "default", **({"seed": seed} if seed is not None else {}))
        partner = api.as_(world["accessToken"])
        accounts = partner.get("/accounts").json["accounts"]
        pages = [partner.get(f"/accounts/{a['id']}/transactions?pageSize=1000").json["transactions"]
                 for a in accounts]
        return json.dumps([accounts, pages], sort_keys=True)
    finally:
        app.extensions["ptas"].close()


def test_same_scenario_and_seed_give_the_same_transactions_byte_for_byte():
    first = everything()
    assert first == everything()
    assert first != everything(seed=1)


def test_busy_merchant_has_a_million_transactions_on_one_account(api):
    world = load(api, "busy-merchant")
    partner = api.as_(world["accessToken"])
    accounts = {a["name"]: a for a in partner.get("/accounts").json["accounts"]}
    busy = accounts["Mega Store checkout"]
    assert busy["statistics"]["count"] == 1_000_000
    assert accounts["Corner Shop till"]["statistics"]["count"] == 1000
    last = partner.get(f"/accounts/{busy['id']}/transactions?createdAt={busy['statistics']['last']}").json
    assert [t["createdAt"] for t in last["transactions"]] == [busy["statistics"]["last"]]
    assert last["nextPageReference"] is None and last["previousPageReference"] is None
    path = f"/accounts/{busy['id']}/transactions"
    second = partner.get(path).json["nextPageReference"]
    middle = partner.get(f"{path}?pageSize=10&pageReference={second}").json
    assert len(middle["transactions"]) == 10 and middle["previousPageReference"] and middle["nextPageReference"]


def test_another_process_draws_the_same_transactions():
    """Nothing depends on the process (hash seed, caches): a fresh interpreter gives the same bytes."""
    script = ("import hashlib; from tests.scenarios.test_scenarios import everything; "
              "print(hashlib.sha256(everything().encode()).hexdigest())")
    other = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                           env={"PYTHONHASHSEED": "12345"}, cwd=Path(__file__).parents[2])
    assert other.returncode == 0, other.stderr
    assert other.stdout.strip() == hashlib.sha256(everything().encode()).hexdigest()


# The default scenario promises "imports done": nothing runs, so a newcomer's first refresh is not a 409.
def test_default_world_has_no_running_import_and_takes_a_refresh(api):
    world = load(api, "default")
    partner = api.as_(world["accessToken"])
    imports = partner.get("/dataimports").json["dataImports"]
    assert imports and {i["status"] for i in imports} == {"Completed"}
    account = partner.get("/accounts").json["accounts"][0]
    refreshed = partner.post(f"/accounts/{account['id']}/refresh", json={"startDate": "2026-01-01T00:00:00Z"})
    assert refreshed.status_code == 202, refreshed.json
