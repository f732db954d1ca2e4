"""Spec §4.3 and §9 2.7.0/2.8.2: UpdateAccount, like CreateAccount, answers errors, the deprecated warnings and
warningDetails, the latter in the structure GetAccount uses for warnings."""

from tests.support.accounts import CARD_CREDENTIALS, connect, long_lived_user


def test_update_account_answers_errors_warnings_and_warning_details_like_get_account(world):
    _, jane = long_lived_user(world)
    account = connect(jane, "sample-card-acquirer", CARD_CREDENTIALS)
    assert account["errors"] == [] and account["warnings"] == [] and account["warningDetails"] == []
    updated = jane.put(f"/accounts/{account['id']}", json={"credentials": {"password": "old"}})
    assert updated.status_code == 200, updated.json
    assert updated.json["errors"] == []
    assert [d["code"] for d in updated.json["warningDetails"]] == ["DeprecatedField"]
    assert updated.json["warnings"] == [d["message"] for d in updated.json["warningDetails"]]
    assert jane.get(f"/accounts/{account['id']}").json["warnings"] == updated.json["warningDetails"]


def test_every_token_endpoint_requires_a_partner_token(world):
    """§4.1: a user token, even one holding every user scope, reaches none of the six token endpoints."""
    child = world.api.post("/partners", json={"name": "Store 7"}).json
    child_token = world.api.post(f"/partners/{child['id']}/tokens", json={}).json
    own_id = world.body["token"]["id"]
    _, as_user = world.user(name="Jane", scope="account:all transaction:all user.token:all")
    calls = [("GET", "/partners/self/tokens", None),
             ("POST", "/partners/self/tokens", {"scope": "account:read", "expiresIn": 7200}),
             ("DELETE", f"/partners/self/tokens/{own_id}", None),
             ("GET", f"/partners/{child['id']}/tokens", None),
             ("POST", f"/partners/{child['id']}/tokens", {}),
             ("DELETE", f"/partners/{child['id']}/tokens/{child_token['id']}", None)]
    for method, path, body in calls:
        response = as_user.call(method, path, **({"json": body} if body is not None else {}))
        assert response.status_code in (401, 403), (method, path, response.status_code)
        assert response.mimetype == "application/problem+json"
    listed = {t["id"]: t for t in world.api.get("/partners/self/tokens").json["tokens"]}
    assert listed[own_id]["isValid"]
    assert world.api.get(f"/partners/{child['id']}/tokens").json["tokens"][0]["isValid"]


def test_a_user_token_with_user_token_all_issues_itself_a_token_through_create_user_token(world):
    """§4.2 note 2: POST /users/{id}/tokens accepts user tokens holding user.token:all, as for user.token:create."""
    user, as_user = world.user(name="Jane", scope="account:read user.token:all")
    response = as_user.post(f"/users/{user['id']}/tokens", json={})
    assert response.status_code == 201, response.json
    assert response.json["accessToken"] and response.json["isValid"]
    renewed = world.api.as_(response.json["accessToken"])
    assert renewed.get("/accounts").status_code == 200
