from tests.support.problems import assert_problem


def test_health_identifies_the_simulator(api):
    body = api.get("/_sandbox/health").json
    assert body["status"] == "ok" and body["service"] == "ptas-sandbox"


def test_unknown_path_is_a_problem(api):
    assert_problem(api.get("/nowhere"), 404, "not-found")
