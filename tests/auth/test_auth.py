"""Authentication (spec §5 rules 1-2, §7 rules 1-2): bearer JWTs, 401 and 403 with ProblemDetails."""

import base64
import json

import jwt
import pytest

from tests.support.problems import assert_problem


def test_missing_authorization_is_401_with_problem_details(api, world):
    body = assert_problem(api.get("/partners/self"), 401, "unauthorized")
    assert body["instance"] == "/partner/v2/partners/self"


def test_401_says_how_to_authenticate(api, world):
    assert api.get("/partners/self").headers["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize("header", ["Basic abc", "Bearer", "Bearer a b", "Token x.y.z", "Bearer not-a-jwt"])
def test_malformed_authorization_is_401(api, world, header):
    assert_problem(api.get("/partners/self", headers={"Authorization": header}), 401)


@pytest.mark.parametrize("separator", [" ", "\t"])
def test_bearer_and_the_token_are_parted_by_any_one_whitespace_character(api, world, separator):
    """Spec §5 rule 1: "Bearer, one whitespace character, then a JWT"; a tab is one."""
    reply = api.get("/partners/self", headers={"Authorization": f"Bearer{separator}{world.token}"})
    assert reply.status_code == 200, reply.get_data(as_text=True)


def _tamper(token, **claims):
    header, payload, signature = token.split(".")
    data = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    data.update(claims)
    forged = base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()
    return f"{header}.{forged}.{signature}"


def test_tampered_token_is_401(api, world):
    forged = _tamper(world.token, scope="partner:all")
    assert_problem(api.as_(forged).get("/partners/self"), 401)


def test_alg_none_is_401(api, world):
    claims = jwt.decode(world.token, options={"verify_signature": False})
    unsigned = jwt.encode(claims, key=None, algorithm="none")
    assert_problem(api.as_(unsigned).get("/partners/self"), 401)


def test_token_signed_with_another_key_is_401(api, world):
    claims = jwt.decode(world.token, options={"verify_signature": False})
    problem = assert_problem(api.as_(jwt.encode(claims, "x" * 48, algorithm="HS256")).get("/partners/self"), 401)
    assert "this sandbox did not sign it" in problem["detail"]


@pytest.mark.parametrize("pasted", ["abc", "Bearer", "eyJhbGciOiJIUzI1NiJ9.e30", "a.b.c"])
def test_a_token_that_is_no_jwt_is_explained_in_our_words_not_the_librarys(api, world, pasted):
    problem = assert_problem(api.as_(pasted).get("/partners/self"), 401)
    assert "not a JWT" in problem["detail"] and "accessToken" in problem["detail"]
    assert "segments" not in problem["detail"].lower() and "padding" not in problem["detail"].lower()


def test_token_of_another_sandbox_is_401(world, config):
    from ptas_sandbox.simulator import create_app
    from tests.support.client import Api
    from tests.support.worlds import new_world
    other = create_app({**config, "SECRET": "another sandbox's secret, long enough for HS256"})
    foreign = new_world(Api(other.test_client())).token
    assert_problem(world.api.as_(foreign).get("/partners/self"), 401)


def test_a_token_only_ever_acts_in_its_own_world(world, other_world):
    """The world claim cannot be swapped: the signature covers it, and ids of another world are 404."""
    assert_problem(world.api.as_(_tamper(world.token, wld=other_world.body["world"]["id"])).get("/partners/self"), 401)
    assert_problem(world.api.get(f"/partners/{other_world.partner['id']}"), 404)


def test_403_carries_problem_details_naming_the_scope(world):
    reader = world.api.as_(world.new_token("partner:read"))
    body = assert_problem(reader.put("/partners/self", json={"name": "x"}), 403, "forbidden")
    assert body["requiredScopes"] == ["partner:update"]


def test_user_tokens_are_refused_on_partner_operations(world):
    _, as_user = world.user()
    assert_problem(as_user.get("/partners/self"), 403)
    assert_problem(as_user.get("/users"), 403)


def test_tokens_of_a_deleted_user_stop_working(world):
    user, as_user = world.user(scope="account:all transaction:all user.token:create")
    assert as_user.post("/users/self/tokens", json={}).status_code == 201
    world.api.delete(f"/users/{user['id']}")
    assert_problem(as_user.post("/users/self/tokens", json={}), 401)


def test_tokens_of_a_deleted_child_partner_stop_working(world):
    child = world.api.post("/partners", json={"name": "Store"}).json
    token = world.api.post(f"/partners/{child['id']}/tokens", json={}).json["accessToken"]
    assert world.api.delete(f"/partners/{child['id']}").status_code == 204
    assert_problem(world.api.as_(token).get("/partners/self"), 401)


def test_jwt_verification_uses_a_fixed_algorithm_list():
    from ptas_sandbox.simulator.auth import ALGORITHMS
    assert ALGORITHMS == ["HS256"]
