"""Bad input gets a clear RFC 9457 error and loses nothing (docs/design.md, spec §7)."""

import pytest

from tests.support.problems import assert_problem
from tests.support.worlds import new_world


def test_malformed_json_is_400(world):
    response = world.api.post("/users", data="{name: 'x'", content_type="application/json")
    assert "not valid JSON" in assert_problem(response, 400, "invalid-body")["detail"]


def test_a_body_that_is_not_json_is_415(world):
    assert_problem(world.api.post("/users", data="name=x", content_type="application/x-www-form-urlencoded"), 415)
    assert_problem(world.api.post("/users", data='{"name": "x"}', content_type="text/plain"), 415)
    assert world.api.get("/users").json["users"] == []


def test_a_body_with_a_content_coding_is_415_not_read_as_it_came(world):
    import gzip
    packed = gzip.compress(b'{"name": "x"}')
    for coding, data in (("gzip", packed), ("deflate", b'{"name": "x"}')):
        response = world.api.post("/users", data=data, content_type="application/json",
                                  headers={"Content-Encoding": coding})
        assert coding in assert_problem(response, 415, "unsupported-content-coding")["detail"]
    assert world.api.get("/users").json["users"] == []
    done = world.api.post("/users", json={"name": "x"}, headers={"Content-Encoding": "identity"})
    assert done.status_code == 201


def test_a_path_with_an_empty_segment_is_404_saying_so_not_a_redirect(world):
    assert "empty segment" in assert_problem(world.api.get("//users"), 404, "not-found")["detail"]
    assert_problem(world.api.post("/users//", json={}), 404, "not-found")


def test_fields_of_the_wrong_type_name_the_field(world):
    body = assert_problem(world.api.post("/partners/self/tokens", json={"expiresIn": "soon", "scope": 7}), 400)
    assert sorted(e["pointer"] for e in body["errors"]) == ["/expiresIn", "/scope"]


@pytest.mark.parametrize("body", [[], "text", 5, None])
def test_a_body_that_is_not_an_object_is_400(world, body):
    assert_problem(world.api.post("/partners/self/tokens", json=body), 400)


def test_a_missing_required_body_is_400(world):
    assert_problem(world.api.post("/partners/self/tokens"), 400, "invalid-body")


def test_bodies_over_the_limit_are_413(world):
    huge = '{"name": "' + "x" * (1024 * 1024) + '"}'
    assert_problem(world.api.post("/users", data=huge, content_type="application/json"), 413)
    assert world.api.get("/users").json["users"] == []


def test_a_wrong_method_is_405_with_allow(world):
    response = world.api.call("PATCH", "/partners/self")
    assert_problem(response, 405)
    assert set(response.headers["Allow"].split(", ")) >= {"GET", "PUT"}


@pytest.mark.parametrize("method,path", [
    ("GET", "/users/jane"), ("DELETE", "/users/jane"), ("GET", "/users/some-id/token"), ("PATCH", "/partners"),
    ("POST", "/webhooks/test-events"), ("POST", "/webhooks/test-account-type-events"),
    ("POST", "/webhooks/test-account-events"), ("POST", "/webhooks/test-import-events"),
])
def test_removed_paths_answer_404(world, method, path):
    assert_problem(world.api.call(method, path, json={}), 404)


def test_an_operation_that_fails_halfway_leaves_nothing_behind(api):
    """CreateUser writes the user, then its token; when the token cannot be issued, the user is not kept."""
    late = new_world(api, start="9940-01-01T00:00:00Z")
    late.api.put("/partners/self", json={"userTokenExpirySeconds": 3_153_600_000})
    assert "9999-12-31" in assert_problem(late.api.post("/users", json={"name": "Too late"}), 400)["detail"]
    assert late.api.get("/users").json["users"] == []


def test_an_unexpected_failure_is_a_500_problem_not_a_stack_trace(app, client):
    def broken():
        raise RuntimeError("boom")
    app.add_url_rule("/_broken", view_func=broken)
    response = client.get("/_broken")
    assert_problem(response, 500)
    assert "boom" not in response.get_data(as_text=True)


def test_problem_bodies_carry_instance_and_trace_id(api):
    body = api.get("/partners/self").json
    assert body["instance"] == "/partner/v2/partners/self" and body["traceId"]


def test_a_body_missing_one_of_several_alternatives_says_which(world):
    _, as_user = world.user()
    body = assert_problem(as_user.post("/accountui", json={}), 400, "invalid-body")
    assert "accountTypeIds" in body["detail"] and "accountId" in body["detail"]
    body = assert_problem(world.api.post("/_sandbox/clock", json={"advance": 1, "set": "2030-01-01T00:00:00Z"}), 400)
    assert body["detail"] == "Either advance the clock or set it, not both."
