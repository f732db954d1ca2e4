"""Partners (spec §1 capability 1, §2 partner resource, §4.2, §4.3): own settings and child partners."""

import pytest

from tests.support.problems import assert_problem


def test_own_settings_are_readable(world):
    partner = world.api.get("/partners/self").json
    assert partner["id"] == world.partner["id"] and partner["email"] == "dev@acme.example"
    assert partner["redirectUrls"] == [] and partner["uiSettings"] == {"styling": {}}
    assert isinstance(partner["userTokenExpirySeconds"], int)


def test_update_partner_changes_only_what_it_names(world):
    body = {"email": "ops@acme.example", "redirectUrls": ["https://acme.example/a", "http://localhost:3000/b"],
            "uiSettings": {"styling": {"primaryColor": "#112233"}}, "userTokenExpirySeconds": 600}
    updated = world.api.put("/partners/self", json=body).json
    assert {k: updated[k] for k in body} == body and updated["name"] == "Acme"
    assert world.api.get("/partners/self").json == updated


def test_user_tokens_live_as_long_as_the_partner_says(world):
    world.api.put("/partners/self", json={"userTokenExpirySeconds": 600})
    user, as_user = world.user()
    assert user["token"]["expiresIn"] == 600
    world.api.advance(600)
    assert_problem(as_user.post("/users/self/tokens", json={}), 401)


@pytest.mark.parametrize("body", [
    {"email": "not-an-address"}, {"redirectUrls": "https://one.example"}, {"redirectUrls": ["/relative"]},
    {"redirectUrls": ["ftp://files.example/x"]}, {"redirectUrls": ["javascript:alert(1)"]},
    {"userTokenExpirySeconds": 0}, {"userTokenExpirySeconds": "600"}, {"name": ""}, {"name": 5},
    {"uiSettings": []}, {"uiSettings": {"styling": "red"}},
    # styling a hosted page writes into <style>: nothing that could end the declaration is stored (or echoed)
    {"uiSettings": {"styling": {"primaryColor": "red;}</style><script>alert(1)</script>"}}},
    {"uiSettings": {"styling": {"fontFamily": "</style><script>alert(1)</script>"}}},
    {"uiSettings": {"styling": {"borderRadius": 8}}}, {"uiSettings": {"styling": {"onload": "x"}}},
])
def test_bad_settings_are_refused_and_nothing_changes(world, body):
    before = world.api.get("/partners/self").json
    assert_problem(world.api.put("/partners/self", json=body), 400)
    assert world.api.get("/partners/self").json == before


def test_reading_and_updating_need_their_scopes(world):
    updater = world.api.as_(world.new_token("partner:update"))
    reader = world.api.as_(world.new_token("partner:read"))
    assert_problem(updater.get("/partners/self"), 403)
    assert_problem(reader.put("/partners/self", json={"name": "x"}), 403)
    assert updater.put("/partners/self", json={"name": "Acme GmbH"}).json["name"] == "Acme GmbH"


def test_child_partners_are_created_listed_read_renamed_and_deleted(world):
    child = world.api.post("/partners", json={"name": "Store", "email": "store@acme.example",
                                              "redirectUrls": ["https://store.example/done"]})
    assert child.status_code == 201
    child = child.json
    assert world.api.get("/partners").json["partners"] == [child]
    assert world.api.get(f"/partners/{child['id']}").json == child
    renamed = world.api.put(f"/partners/{child['id']}", json={"name": "Store Berlin"}).json
    assert renamed["name"] == "Store Berlin" and renamed["email"] == "store@acme.example"
    assert world.api.delete(f"/partners/{child['id']}").status_code == 204
    assert world.api.get("/partners").json["partners"] == []
    assert_problem(world.api.get(f"/partners/{child['id']}"), 404)
    assert_problem(world.api.delete(f"/partners/{child['id']}"), 404)


def test_a_child_partner_can_rename_itself(world):
    child = world.api.post("/partners", json={"name": "Store"}).json
    as_child = world.api.as_(world.api.post(f"/partners/{child['id']}/tokens", json={}).json["accessToken"])
    assert as_child.put("/partners/self", json={"name": "Store Mitte"}).json["name"] == "Store Mitte"


def test_child_partner_scopes(world):
    child = world.api.post("/partners", json={"name": "Store"}).json
    reader = world.api.as_(world.new_token("partner:read"))
    assert_problem(reader.post("/partners", json={"name": "x"}), 403)
    assert_problem(reader.put(f"/partners/{child['id']}", json={"name": "x"}), 403)
    assert_problem(reader.delete(f"/partners/{child['id']}"), 403)
    assert reader.get(f"/partners/{child['id']}").status_code == 200


def test_partners_of_another_world_are_not_found(world, other_world):
    foreign = other_world.api.post("/partners", json={"name": "Theirs"}).json["id"]
    for response in (world.api.get(f"/partners/{foreign}"), world.api.put(f"/partners/{foreign}", json={"name": "x"}),
                     world.api.delete(f"/partners/{foreign}")):
        assert_problem(response, 404)
    assert other_world.api.get(f"/partners/{foreign}").json["name"] == "Theirs"


def test_deleting_a_child_takes_its_users_with_it(world):
    child = world.api.post("/partners", json={"name": "Store"}).json
    as_child = world.api.as_(world.api.post(f"/partners/{child['id']}/tokens", json={}).json["accessToken"])
    user_token = as_child.post("/users", json={"name": "Shop"}).json["token"]["accessToken"]
    world.api.delete(f"/partners/{child['id']}")
    assert_problem(world.api.as_(user_token).post("/users/self/tokens", json={}), 401)


def test_deleting_a_child_takes_the_partners_below_it_with_their_users(world):
    """Nobody could reach a grandchild left behind (its parent is gone), yet its tokens would keep working."""
    child = world.api.post("/partners", json={"name": "Region"}).json
    as_child = world.api.as_(world.api.post(f"/partners/{child['id']}/tokens", json={}).json["accessToken"])
    grandchild = as_child.post("/partners", json={"name": "Store"}).json
    as_grandchild = world.api.as_(as_child.post(f"/partners/{grandchild['id']}/tokens", json={}).json["accessToken"])
    user_token = as_grandchild.post("/users", json={"name": "Shop"}).json["token"]["accessToken"]
    sibling = world.api.post("/partners", json={"name": "Other region"}).json
    assert as_grandchild.get("/partners/self").status_code == 200
    assert world.api.delete(f"/partners/{child['id']}").status_code == 204
    assert_problem(as_grandchild.get("/partners/self"), 401)
    assert_problem(world.api.as_(user_token).post("/users/self/tokens", json={}), 401)
    assert world.api.get(f"/partners/{sibling['id']}").json["name"] == "Other region"
