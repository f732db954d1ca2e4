"""Account types (spec §1 capabilities 4 and 6, §2): the catalogue, field metadata, and per-world outages."""

from tests.support.problems import assert_problem

FIELD_TYPES = {"Text", "Secret", "Number", "Choice", "File", "Auth"}


def test_catalogue_lists_the_three_dummy_types_and_samples(world):
    types = {t["id"]: t for t in world.api.get("/accounttypes").json["accountTypes"]}
    assert {"dummy", "dummy-auth", "dummy-report"} <= set(types)
    assert all(types[i]["isDummy"] for i in ("dummy", "dummy-auth", "dummy-report"))
    assert any(not t["isDummy"] for t in types.values())
    assert types["dummy-report"]["hasPspReports"] and not types["dummy"]["hasPspReports"]


def test_every_record_has_the_published_shape(world):
    for account_type in world.api.get("/accounttypes").json["accountTypes"]:
        assert {"id", "name", "accountFields", "transactionFields", "helpUrls", "hasPspReports", "state",
                "errors", "warnings", "isDummy"} <= set(account_type)
        for field in account_type["accountFields"]:
            assert field["Type"] in FIELD_TYPES
            assert {"name", "label", "isRequired", "isDeprecated", "deprecationReason", "description"} <= set(field)
            if field["Type"] == "Choice":
                assert field["options"]
            if field["Type"] == "File":
                assert field["maxSizeBytes"] > 0 and field["accept"]
        for field in account_type["transactionFields"]:
            assert {"name", "label", "type", "isDeprecated", "deprecationReason", "mappedTo"} <= set(field)


def test_dummy_auth_is_an_oauth2_type(world):
    fields = world.api.get("/accounttypes/dummy-auth").json["accountFields"]
    assert any(f["Type"] == "Auth" for f in fields)
    assert not any(f["Type"] == "Auth" for f in world.api.get("/accounttypes/dummy").json["accountFields"])


def test_samples_exercise_every_field_feature(world):
    types = world.api.get("/accounttypes").json["accountTypes"]
    account_fields = [f for t in types for f in t["accountFields"]]
    transaction_fields = [f for t in types for f in t["transactionFields"]]
    assert {f["Type"] for f in account_fields} == FIELD_TYPES
    assert any(f["isDeprecated"] and f["deprecationReason"] for f in account_fields)
    assert any(f["isDeprecated"] and f["deprecationReason"] for f in transaction_fields)
    assert any(f["mappedTo"] for f in transaction_fields) and any(not f["mappedTo"] for f in transaction_fields)
    assert any(t["helpUrls"] for t in types)
    degraded = [t for t in types if t["state"] == "Degraded"]
    assert degraded and degraded[0]["errors"] and degraded[0]["warnings"]


def test_user_token_reads_account_types(world):
    _, user = world.user(name="Jane")
    assert user.get("/accounttypes/dummy").json["id"] == "dummy"


def test_any_scope_is_enough_to_read_account_types(world):
    token = world.new_token("partner:read")
    assert world.api.as_(token).get("/accounttypes").status_code == 200


def test_unknown_account_type_is_404(world):
    assert_problem(world.api.get("/accounttypes/no-such-provider"), 404, "not-found")


def test_account_types_need_a_token(api):
    assert_problem(api.get("/accounttypes"), 401)


def test_outage_changes_the_type_in_the_callers_world_only(world, other_world):
    response = world.api.post("/_sandbox/accounttypes/dummy", json={
        "state": "Outage", "errors": [{"code": "ProviderUnavailable", "message": "down"}]})
    assert response.status_code == 200 and response.json["state"] == "Outage"
    assert world.api.get("/accounttypes/dummy").json["errors"][0]["code"] == "ProviderUnavailable"
    assert other_world.api.get("/accounttypes/dummy").json["state"] == "Operational"
    listed = {t["id"]: t for t in world.api.get("/accounttypes").json["accountTypes"]}
    assert listed["dummy"]["state"] == "Outage"


def test_outage_emits_account_type_updated_to_each_partner_of_the_world(app, world, other_world):
    child = world.api.post("/partners", json={"name": "Child"}).json
    world.api.post("/_sandbox/accounttypes/dummy-report", json={"state": "Degraded", "warnings": [
        {"code": "Slow", "message": "slow"}]})
    store = app.extensions["ptas"].store
    events = store.all("SELECT partner_id, data FROM events WHERE kind = 'AccountTypeUpdated'")
    assert {e["partner_id"] for e in events} == {world.partner["id"], child["id"]}
    import json
    data = json.loads(events[0]["data"])
    assert data["accountType"]["id"] == "dummy-report" and data["accountType"]["state"] == "Degraded"
    assert data["accountType"]["warnings"] == [{"code": "Slow", "message": "slow"}]


def test_outage_with_an_unknown_state_is_refused(world):
    assert_problem(world.api.post("/_sandbox/accounttypes/dummy", json={"state": "Exploded"}), 400)


def test_outage_of_an_unknown_type_is_404(world):
    assert_problem(world.api.post("/_sandbox/accounttypes/nope", json={"state": "Outage"}), 404)


def test_outage_switch_needs_a_partner_token_of_the_world(api, world):
    assert_problem(api.post("/_sandbox/accounttypes/dummy", json={"state": "Outage"}), 401)
    _, user = world.user(name="Jane")
    assert_problem(user.post("/_sandbox/accounttypes/dummy", json={"state": "Outage"}), 403)
    assert world.api.get("/accounttypes/dummy").json["state"] == "Operational"
