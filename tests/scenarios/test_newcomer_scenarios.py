"""The default scenario promises "imports done": nothing runs, so a newcomer's first refresh is not a 409."""

from tests.test_scenarios import load


def test_default_world_has_no_running_import_and_takes_a_refresh(api):
    world = load(api, "default")
    partner = api.as_(world["accessToken"])
    imports = partner.get("/dataimports").json["dataImports"]
    assert imports and {i["status"] for i in imports} == {"Completed"}
    account = partner.get("/accounts").json["accounts"][0]
    refreshed = partner.post(f"/accounts/{account['id']}/refresh", json={"startDate": "2026-01-01T00:00:00Z"})
    assert refreshed.status_code == 202, refreshed.json
