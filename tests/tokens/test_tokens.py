"""Token operations: spec §2 (token record), §3 (states), §4.1 (endpoints and rules), §5, §8."""

import pytest

from tests.support.problems import assert_problem

RECORD_FIELDS = {"name", "createdAt", "expiresIn", "expiresAt", "isRevoked", "isExpired", "isValid", "scope",
                 "lastUsedAt", "revokedAt"}


def create(world, scope="partner:read", expires_in=7200, name="t", api=None):
    return (api or world.api).post("/partners/self/tokens", json={"name": name, "expiresIn": expires_in,
                                                                  "scope": scope})


def test_created_token_is_valid_and_carries_its_access_token_once(world):
    response = create(world, scope="partner:read user:read", expires_in=7200, name="reporting")
    assert response.status_code == 201
    token = response.json
    assert RECORD_FIELDS <= token.keys() and token["accessToken"].count(".") == 2
    assert token["isValid"] and not token["isRevoked"] and not token["isExpired"]
    assert token["name"] == "reporting" and token["scope"] == "partner:read user:read"
    assert token["expiresIn"] == 7200 and token["lastUsedAt"] is None and token["revokedAt"] is None
    listed = world.api.get("/partners/self/tokens").json["tokens"]
    assert all("accessToken" not in t for t in listed)
    assert token["id"] in [t.get("id") for t in listed]


def test_token_works_for_what_its_scope_grants(world):
    token = create(world, scope="partner:read").json["accessToken"]
    assert world.api.as_(token).get("/partners/self").status_code == 200


def test_only_tokens_living_over_an_hour_get_an_id(world):
    assert "id" not in create(world, expires_in=3600).json
    assert "id" in create(world, expires_in=3601).json
    listed = world.api.get("/partners/self/tokens").json["tokens"]
    assert [("id" in t, t["expiresIn"]) for t in listed[1:]] == [(False, 3600), (True, 3601)]


def test_expiry_follows_the_world_clock(world):
    token = create(world, expires_in=7200).json
    world.api.advance(7199)
    assert world.api.as_(token["accessToken"]).get("/partners/self").status_code == 200
    world.api.advance(1)
    assert_problem(world.api.as_(token["accessToken"]).get("/partners/self"), 401)
    listed = {t.get("id"): t for t in world.api.get("/partners/self/tokens").json["tokens"]}
    expired = listed[token["id"]]
    assert expired["isExpired"] and not expired["isValid"] and not expired["isRevoked"]


def test_revoked_token_is_refused_and_shows_when(world):
    token = create(world).json
    response = world.api.delete(f"/partners/self/tokens/{token['id']}")
    assert response.status_code == 200
    assert response.json["isRevoked"] and not response.json["isValid"] and response.json["revokedAt"]
    assert_problem(world.api.as_(token["accessToken"]).get("/partners/self"), 401)
    listed = {t.get("id"): t for t in world.api.get("/partners/self/tokens").json["tokens"]}
    assert listed[token["id"]]["revokedAt"] == response.json["revokedAt"]


def test_a_token_cannot_revoke_itself(world):
    own_id = world.body["token"]["id"]
    assert_problem(world.api.delete(f"/partners/self/tokens/{own_id}"), 409, "conflict")
    assert world.api.get("/partners/self").status_code == 200


def test_another_token_can_revoke_the_initial_one(world):
    successor = create(world, scope="partner:all", expires_in=31536000).json["accessToken"]
    initial_id = world.body["token"]["id"]
    assert world.api.as_(successor).delete(f"/partners/self/tokens/{initial_id}").status_code == 200
    assert_problem(world.api.get("/partners/self"), 401)


def test_short_lived_tokens_have_no_id_to_revoke(world):
    create(world, expires_in=600)
    assert_problem(world.api.delete("/partners/self/tokens/anything"), 404)


def test_revoking_another_partners_token_is_not_found(world, other_world):
    foreign = other_world.body["token"]["id"]
    assert_problem(world.api.delete(f"/partners/self/tokens/{foreign}"), 404)
    assert other_world.api.get("/partners/self").status_code == 200


def test_last_used_at_records_use_on_the_world_clock(world):
    token = create(world).json
    world.api.advance(30)
    world.api.as_(token["accessToken"]).get("/partners/self")
    listed = {t.get("id"): t for t in world.api.get("/partners/self/tokens").json["tokens"]}
    clock = world.api.get("/_sandbox/clock").json["now"]
    assert listed[token["id"]]["lastUsedAt"] == clock


def test_a_refused_request_leaves_last_used_at_as_it_was(world):
    """Reading the token and recording its use are one statement, inside the admission a refusal rolls back."""
    expiring, revoked, narrow = (create(world, expires_in=60, name="expiring").json,
                                 create(world, name="revoked").json,
                                 create(world, scope="partner:update", name="narrow").json)
    assert world.api.delete(f"/partners/self/tokens/{revoked['id']}").status_code == 200
    world.api.advance(120)
    for token, path, status in ((expiring, "/partners/self", 401), (revoked, "/partners/self", 401),
                                (narrow, "/partners/self/tokens", 403)):
        assert_problem(world.api.as_(token["accessToken"]).get(path), status)
    listed = {t["name"]: t for t in world.api.get("/partners/self/tokens").json["tokens"]}
    assert {name: listed[name]["lastUsedAt"] for name in ("expiring", "revoked", "narrow")} == \
        {"expiring": None, "revoked": None, "narrow": None}


def test_listing_tokens_with_update_scope_only_is_forbidden(world):
    updater = world.api.as_(create(world, scope="partner:update").json["accessToken"])
    assert_problem(updater.get("/partners/self/tokens"), 403)
    assert create(world, api=updater, scope="partner:update").status_code == 201


@pytest.mark.parametrize("scope", ["partner:read", "partner:all"])
def test_listing_tokens_needs_read_or_all(world, scope):
    reader = world.api.as_(create(world, scope=scope).json["accessToken"])
    assert reader.get("/partners/self/tokens").status_code == 200


def test_creating_own_tokens_needs_partner_update(world):
    reader = world.api.as_(create(world, scope="partner:read").json["accessToken"])
    assert_problem(create(world, api=reader), 403)


def test_a_token_grants_only_scopes_it_holds(world):
    narrow = world.api.as_(create(world, scope="partner:update user:read").json["accessToken"])
    assert_problem(create(world, api=narrow, scope="partner:update user:all"), 403)
    assert create(world, api=narrow, scope="user:read").status_code == 201


@pytest.mark.parametrize("expires_in", [0, -5, 1.5, "3600", True, None, 10**12])
def test_bad_lifetimes_are_refused(world, expires_in):
    before = len(world.api.get("/partners/self/tokens").json["tokens"])
    assert_problem(create(world, expires_in=expires_in), 400)
    assert len(world.api.get("/partners/self/tokens").json["tokens"]) == before


def test_a_one_year_token_is_fine(world):
    token = create(world, expires_in=31536000).json
    assert token["expiresIn"] == 31536000 and token["isValid"]


@pytest.mark.parametrize("scope", ["", "partner", "partner:write", "bogus:read", "partner:read  user:read",
                                   "account:all;drop", 42])
def test_unknown_or_malformed_scopes_are_refused(world, scope):
    assert_problem(create(world, scope=scope), 400)


def test_user_only_scopes_are_accepted_for_partner_tokens_where_the_table_allows(world):
    assert create(world, scope="account:read transaction:read userui:read").status_code == 201


# Child-partner tokens (spec §4.1 GetPartnerTokens, CreatePartnerToken, RevokePartnerToken; rule 2).

@pytest.fixture
def child(world):
    return world.api.post("/partners", json={"name": "Store"}).json


def test_child_tokens_default_to_six_months(world, child):
    token = world.api.post(f"/partners/{child['id']}/tokens", json={}).json
    assert token["expiresIn"] == 15_768_000 and "id" in token
    as_child = world.api.as_(token["accessToken"])
    assert as_child.get("/partners/self").json["id"] == child["id"]


def test_child_tokens_are_listed_and_revoked_by_the_parent(world, child):
    token = world.api.post(f"/partners/{child['id']}/tokens", json={"expiresIn": 86400,
                                                                    "scope": "partner:read"}).json
    listed = world.api.get(f"/partners/{child['id']}/tokens").json["tokens"]
    assert [t["id"] for t in listed] == [token["id"]] and "accessToken" not in listed[0]
    revoked = world.api.delete(f"/partners/{child['id']}/tokens/{token['id']}").json
    assert revoked["isRevoked"]
    assert_problem(world.api.as_(token["accessToken"]).get("/partners/self"), 401)


def test_child_tokens_need_partner_create(world, child):
    reader = world.api.as_(create(world, scope="partner:read").json["accessToken"])
    assert_problem(reader.post(f"/partners/{child['id']}/tokens", json={}), 403)


def test_child_token_scopes_are_checked(world, child):
    assert_problem(world.api.post(f"/partners/{child['id']}/tokens", json={"scope": "nope:read"}), 400)


def test_tokens_of_a_partner_that_is_not_a_child_are_not_found(world, other_world, child):
    foreign = other_world.partner["id"]
    assert_problem(world.api.get(f"/partners/{foreign}/tokens"), 404)
    assert_problem(world.api.post(f"/partners/{foreign}/tokens", json={}), 404)
    assert_problem(world.api.get(f"/partners/{world.partner['id']}/tokens"), 404)


def test_a_child_cannot_reach_its_parent_or_siblings(world, child):
    sibling = world.api.post("/partners", json={"name": "Other store"}).json
    as_child = world.api.as_(world.api.post(f"/partners/{child['id']}/tokens", json={}).json["accessToken"])
    assert_problem(as_child.get(f"/partners/{world.partner['id']}"), 404)
    assert_problem(as_child.get(f"/partners/{sibling['id']}"), 404)
    assert_problem(as_child.get(f"/partners/{sibling['id']}/tokens"), 404)
    assert as_child.get("/partners").json == {"partners": []}


# The deploy token (spec §5 rule 4): only partner:create.

def test_deploy_token_creates_children_and_their_first_token_only(world, child):
    deploy = world.api.as_(create(world, scope="partner:create", expires_in=86400).json["accessToken"])
    mine = deploy.post("/partners", json={"name": "On-premise"})
    assert mine.status_code == 201
    assert deploy.post(f"/partners/{mine.json['id']}/tokens", json={}).status_code == 201
    assert_problem(deploy.post(f"/partners/{child['id']}/tokens", json={}), 404)
    for path in ("/partners/self", "/partners", f"/partners/{mine.json['id']}", "/partners/self/tokens"):
        assert_problem(deploy.get(path), 403)
    assert_problem(deploy.post("/users", json={}), 403)
