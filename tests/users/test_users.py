"""Users and user tokens (spec §1 capability 2, §2 user, §4.2 notes 1-3, §4.3, §5 rule 6)."""

import pytest

from tests.support.problems import assert_problem


def test_create_user_returns_id_and_first_token_with_the_default_scope(world):
    response = world.api.post("/users", json={"name": "Jane's Bakery", "email": "jane@bakery.example"})
    assert response.status_code == 201
    user = response.json
    assert user["id"] and user["name"] == "Jane's Bakery" and user["email"] == "jane@bakery.example"
    assert user["token"]["scope"] == "account:all transaction:all" and user["token"]["accessToken"]
    assert "user.token:create" not in user["token"]["scope"]


def test_email_is_optional(world):
    user = world.api.post("/users", json={"name": "No mail"}).json
    assert user["email"] is None
    assert world.api.post("/users").status_code == 201


def test_the_partner_chooses_the_first_tokens_scope(world):
    user = world.api.post("/users", json={"scope": "account:read transaction:read user.token:create"}).json
    assert user["token"]["scope"] == "account:read transaction:read user.token:create"


@pytest.mark.parametrize("scope", ["partner:read", "user:all", "userui:create", "nonsense", ""])
def test_user_tokens_cannot_carry_partner_scopes(world, scope):
    assert_problem(world.api.post("/users", json={"scope": scope}), 400)
    assert world.api.get("/users").json["users"] == []


def test_users_are_read_listed_and_searched(world):
    jane, _ = world.user(name="Jane's Bakery", email="jane@bakery.example")
    bob, _ = world.user(name="Bob's Bikes", email="bob@bikes.example")
    assert world.api.get(f"/users/{jane['id']}").json["email"] == "jane@bakery.example"
    names = lambda q: [u["name"] for u in world.api.get("/users", query_string=q).json["users"]]
    assert names({}) == ["Jane's Bakery", "Bob's Bikes"]
    assert names({"name": "Bob's Bikes"}) == ["Bob's Bikes"]
    assert names({"email": "jane@bakery.example"}) == ["Jane's Bakery"]
    assert names({"search": "BIKE"}) == ["Bob's Bikes"]
    assert names({"search": "example"}) == ["Jane's Bakery", "Bob's Bikes"]
    assert names({"search": "nobody"}) == []


def test_update_user(world):
    user, _ = world.user(name="Jane")
    updated = world.api.put(f"/users/{user['id']}", json={"name": "Jane Doe", "email": "jd@x.example"}).json
    assert (updated["name"], updated["email"]) == ("Jane Doe", "jd@x.example")
    assert_problem(world.api.put(f"/users/{user['id']}", json={"email": "nope"}), 400)
    assert world.api.get(f"/users/{user['id']}").json["email"] == "jd@x.example"


def test_deleted_users_are_listed_with_deleted_at_and_their_tokens_stop(world):
    user, as_user = world.user(name="Jane", scope="account:all user.token:create")
    assert "deletedAt" not in world.api.get(f"/users/{user['id']}").json
    deleted = world.api.delete(f"/users/{user['id']}")
    assert deleted.status_code == 204 and deleted.data == b""
    assert "Content-Type" not in deleted.headers, deleted.headers     # no body, so no media type of one
    listed = world.api.get("/users").json["users"]
    assert listed[0]["id"] == user["id"] and listed[0]["deletedAt"].endswith("Z")
    assert world.api.get(f"/users/{user['id']}").json["deletedAt"] == listed[0]["deletedAt"]
    assert_problem(as_user.post("/users/self/tokens", json={}), 401)
    assert_problem(world.api.delete(f"/users/{user['id']}"), 404)
    assert_problem(world.api.post(f"/users/{user['id']}/tokens", json={}), 404)


@pytest.mark.parametrize("op", ["GET", "PUT", "DELETE"])
def test_users_of_another_partner_are_not_found(world, other_world, op):
    theirs, _ = other_world.user(name="Theirs")
    response = world.api.call(op, f"/users/{theirs['id']}", json={"name": "x"} if op == "PUT" else None)
    assert_problem(response, 404)
    assert other_world.api.get(f"/users/{theirs['id']}").json["name"] == "Theirs"


def test_child_partners_have_their_own_users(world):
    child = world.api.post("/partners", json={"name": "Store"}).json
    as_child = world.api.as_(world.api.post(f"/partners/{child['id']}/tokens", json={}).json["accessToken"])
    theirs = as_child.post("/users", json={"name": "Child's user"}).json
    assert world.api.get("/users").json["users"] == []
    assert_problem(world.api.get(f"/users/{theirs['id']}"), 404)


@pytest.mark.parametrize("scope,allowed", [
    ("user:create", True), ("user:all", True), ("user.token:create", True), ("user.token:all", True),
    ("user:read", False), ("partner:all", False),
])
def test_create_user_token_by_the_partner_needs_its_scopes(world, scope, allowed):
    user, _ = world.user()
    response = world.api.as_(world.new_token(scope)).post(f"/users/{user['id']}/tokens", json={})
    if allowed:
        assert response.status_code == 201 and response.json["scope"] == "account:all transaction:all"
    else:
        assert_problem(response, 403)


def test_new_user_token_defaults_to_the_partners_user_token_lifetime(world):
    world.api.put("/partners/self", json={"userTokenExpirySeconds": 1800})
    user, _ = world.user()
    token = world.api.post(f"/users/{user['id']}/tokens", json={"scope": "account:read"}).json
    assert token["expiresIn"] == 1800 and token["scope"] == "account:read"


def test_a_user_refreshes_its_own_token_only_with_user_token_scope(world):
    user, plain = world.user()
    assert_problem(plain.post(f"/users/{user['id']}/tokens", json={}), 403)
    assert_problem(plain.post("/users/self/tokens", json={}), 403)
    user, refresher = world.user(scope="account:read user.token:create")
    token = refresher.post(f"/users/{user['id']}/tokens", json={}).json
    assert token["scope"] == "account:read user.token:create"
    assert refresher.post("/users/self/tokens", json={"expiresIn": 60}).json["expiresIn"] == 60


def test_a_user_token_makes_tokens_living_at_most_the_partners_user_token_lifetime(world):
    """Spec §5 rule 6: user tokens live the partner's userTokenExpirySeconds; a user token handed to an end user
    must not mint itself a longer one (the partner, spec §8, still chooses any lifetime)."""
    world.api.put("/partners/self", json={"userTokenExpirySeconds": 600})
    user, refresher = world.user(scope="account:read user.token:create")
    for path in ("/users/self/tokens", f"/users/{user['id']}/tokens"):
        for too_long in (3153600000, 601):
            refused = refresher.post(path, json={"expiresIn": too_long})
            assert_problem(refused, 400)
            assert "600 seconds" in refused.json["detail"] and "userTokenExpirySeconds" in refused.json["detail"]
        assert refresher.post(path, json={"expiresIn": 600}).json["expiresIn"] == 600
        assert refresher.post(path, json={}).json["expiresIn"] == 600
    by_partner = world.api.post(f"/users/{user['id']}/tokens", json={"expiresIn": 31536000})
    assert by_partner.status_code == 201 and by_partner.json["expiresIn"] == 31536000


def test_a_user_token_grants_only_what_it_holds(world):
    _, refresher = world.user(scope="account:read user.token:all")
    assert_problem(refresher.post("/users/self/tokens", json={"scope": "account:all"}), 403)
    assert refresher.post("/users/self/tokens", json={"scope": "account:read"}).status_code == 201


def test_a_user_cannot_make_tokens_for_another_user(world):
    other, _ = world.user(name="Other")
    _, refresher = world.user(scope="account:read user.token:all")
    assert_problem(refresher.post(f"/users/{other['id']}/tokens", json={}), 404)


def test_self_tokens_are_for_users_only(world):
    assert_problem(world.api.post("/users/self/tokens", json={}), 403)


@pytest.mark.parametrize("scope", ["user:read", "user:update", "user:delete", "user:create"])
def test_each_user_scope_allows_its_action_and_no_other(world, scope):
    user, _ = world.user(name="Jane")
    api = world.api.as_(world.new_token(scope))
    results = {
        "user:read": api.get(f"/users/{user['id']}").status_code,
        "user:update": api.put(f"/users/{user['id']}", json={"name": "J"}).status_code,
        "user:create": api.post("/users", json={"name": "New"}).status_code,
        "user:delete": api.delete(f"/users/{user['id']}").status_code,
    }
    assert {s for s, code in results.items() if code != 403} == {scope}


def test_user_statistics_count_accounts_and_their_transactions(world):
    """Spec §1 capability 2: user information and statistics can be read."""
    from tests.support.accounts import connect
    user, as_user = world.user(name="Jane")
    empty = world.api.get(f"/users/{user['id']}").json["statistics"]
    assert empty == {"accounts": 0, "transactions": 0, "first": None, "last": None}
    account = connect(as_user)
    world.api.advance(3600)
    stats = world.api.get(f"/users/{user['id']}").json["statistics"]
    account_stats = as_user.get(f"/accounts/{account['id']}").json["statistics"]
    assert account_stats["count"] > 0
    assert stats == {"accounts": 1, "transactions": account_stats["count"], "first": account_stats["first"],
                     "last": account_stats["last"]}
