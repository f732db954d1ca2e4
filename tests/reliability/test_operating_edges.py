"""Operating edges a company-wide sandbox meets (issue 24): a 413 is journaled and logs no traceback, the
inspector's 401 says how to authenticate, and an unknown docs asset is a ProblemDetails 404."""

import logging

from tests.support.problems import assert_problem


def test_a_body_over_the_limit_is_journaled_as_its_413_without_a_traceback(world, caplog):
    with caplog.at_level(logging.INFO):
        refused = world.api.post("/users", data=b'{"name": "' + b"x" * (600 * 1024) + b'"}',
                                 headers={"Content-Type": "application/json"})
    assert_problem(refused, 413)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info], caplog.text
    journal = world.api.get("/_sandbox/requests").json["requests"]
    assert ("CreateUser", 413) in [(entry["operationId"], entry["status"]) for entry in journal]


def test_the_inspectors_401_names_how_to_authenticate(api):
    page = api.get("/_sandbox/inspect")
    assert page.status_code == 401
    challenge = page.headers["WWW-Authenticate"]
    assert challenge.startswith("Bearer ") and "X-Sandbox-Admin-Key" in challenge


def test_an_unknown_docs_asset_is_a_problem_details_404(api):
    assert_problem(api.get("/docs/assets/nope"), 404)
    assert api.get("/docs/assets/start.js").status_code == 200
