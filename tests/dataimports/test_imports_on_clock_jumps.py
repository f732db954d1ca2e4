"""A frozen clock moved by whole hours lands on the dummies' hourly polls: they must be over by then, or every
TriggerAccountRefresh of a newcomer's test is a 409 and the last hour's transactions never show."""

import pytest

from tests.support.pages import post_form
from tests.support.worlds import new_world


@pytest.mark.parametrize("type_id", ["dummy", "dummy-auth", "dummy-report"])
def test_whole_hour_jumps_on_a_frozen_clock_leave_no_import_running(api, type_id):
    world = new_world(api, name="Acme", frozen=True)
    user, as_user = world.user()
    if type_id == "dummy-auth":
        account = api.as_(user["token"]["accessToken"])
        start = account.post("/oauth", json={"accountTypeId": "dummy-auth"}).json
        post_form(api.client, start["redirectUrl"].split("localhost", 1)[-1], data={"decision": "approve"})
        created = as_user.post("/accounts", json={"accountTypeId": type_id, "authReference": start["authReference"]})
    else:
        created = as_user.post("/accounts", json={"accountTypeId": type_id,
                                                  "credentials": {"username": "jane", "password": "s3cret"}})
    assert created.status_code == 201, created.json
    for _ in range(3):
        world.api.advance(3600)
        imports = as_user.get("/dataimports").json["dataImports"]
        assert {i["status"] for i in imports} == {"Completed"}, imports
    refresh = as_user.post(f"/accounts/{created.json['id']}/refresh", json={"startDate": "2026-01-01T00:00:00Z"})
    assert refresh.status_code == 202, refresh.json
