"""Spec §5 statements the area tests left implicit: the initial partner token is short-lived and expires; only
the main partner issues a child partner's tokens; a partner token manages accounts directly."""

from tests.support.accounts import DUMMY_CREDENTIALS
from tests.support.problems import assert_problem

YEAR = 365 * 86400


def test_the_initial_partner_token_is_short_lived_and_expires(world):
    initial = world.body["token"]
    assert 3600 < initial["expiresIn"] < YEAR and initial["id"]        # revocable (rule 3), shorter than a year
    keeper = world.new_token("partner:update partner:read", expires_in=YEAR)
    world.api.advance(initial["expiresIn"])
    assert_problem(world.api.get("/partners/self"), 401)
    listed = {t["id"]: t for t in world.api.as_(keeper).get("/partners/self/tokens").json["tokens"]}
    assert listed[initial["id"]]["isExpired"] and not listed[initial["id"]]["isValid"]


def test_an_expired_token_creates_no_new_token(world):
    """Rule 2: once every partner:update token has expired, only the support team can issue a new one."""
    short = world.new_token("partner:update", expires_in=600)
    world.api.advance(601)
    assert_problem(world.api.as_(short).post("/partners/self/tokens", json={"scope": "partner:update"}), 401)


def test_a_child_partner_cannot_issue_tokens_for_itself_only_its_main_partner_can(world):
    child = world.api.post("/partners", json={"name": "On-premise 1"}).json
    own = world.api.post(f"/partners/{child['id']}/tokens", json={"scope": "partner:create partner:read"}).json
    response = world.api.as_(own["accessToken"]).post(f"/partners/{child['id']}/tokens", json={})
    assert response.status_code in (403, 404), response.json
    replacement = world.api.post(f"/partners/{child['id']}/tokens", json={"scope": "partner:read"})
    assert replacement.status_code == 201
    assert world.api.as_(replacement.json["accessToken"]).get("/partners/self").json["id"] == child["id"]


def test_a_partner_token_manages_its_users_accounts_directly(world):
    user, _ = world.user(name="Jane")
    created = world.api.post("/accounts", json={"accountTypeId": "dummy", "userId": user["id"],
                                                "credentials": DUMMY_CREDENTIALS})
    assert created.status_code == 201, created.json
    path = f"/accounts/{created.json['id']}"
    assert world.api.get(path).status_code == 200
    assert world.api.put(path, json={"name": "Bakery"}).json["name"] == "Bakery"
    assert world.api.delete(path).status_code == 204
    assert_problem(world.api.get(path), 404)
