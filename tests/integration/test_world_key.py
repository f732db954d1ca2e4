"""The harness's authority is the world key, not the partner's token (issue 21): whatever the software under
test does with its tokens, the CI job and the fixtures still read the report, the journal and the faults, and
steer the clock; the key is no token of the service, so the partner API neither takes nor lists it."""

import xml.etree.ElementTree as ET

import pytest
import requests

from ptas_sandbox.cli import main
from ptas_sandbox.simulator import create_app
from ptas_sandbox.testing.chaos import Report
from ptas_sandbox.testing.partner_kit import Sandbox
from tests.support.receivers import Served


@pytest.fixture
def served(system_time):
    served = Served(create_app({"SYSTEM_TIME": system_time, "START_SERVICES": False}))
    yield served
    served.close()


def new_world(base):
    answer = requests.post(f"{base}/_sandbox/partners", json={}, timeout=10)
    assert answer.status_code == 201
    return answer.json()


def call(base, method, path, token, **kw):
    url = base + (path if path.startswith("/_sandbox") else "/partner/v2" + path)
    return requests.request(method, url, headers={"Authorization": f"Bearer {token}"}, timeout=10, **kw)


def rotate_and_revoke_everything(base, token):
    """What a careful client does (spec §5), and then some: every partner token it did not make is revoked."""
    mine = call(base, "POST", "/partners/self/tokens", token, json={"name": "backend", "expiresIn": 31536000,
                                                                      "scope": "partner:all user:all"}).json()
    for other in call(base, "GET", "/partners/self/tokens", mine["accessToken"]).json()["tokens"]:
        if other["id"] != mine["id"]:
            assert call(base, "DELETE", f"/partners/self/tokens/{other['id']}", mine["accessToken"]).ok
    return mine["accessToken"], mine["id"]


def test_the_world_key_outlives_every_partner_token(served):
    world = new_world(served.base)
    key = world["worldKey"]
    backend, _ = rotate_and_revoke_everything(served.base, world["accessToken"])
    assert call(served.base, "POST", "/_sandbox/clock", key, json={"advance": 400 * 86400}).ok   # all expired
    assert call(served.base, "GET", "/users", backend).status_code == 401
    for method, path, body in (("GET", "/_sandbox/report", None), ("GET", "/_sandbox/requests", None),
                               ("GET", "/_sandbox/faults", None), ("POST", "/_sandbox/clock", {"advance": 60}),
                               ("GET", "/_sandbox/snapshot", None)):
        assert call(served.base, method, path, key, json=body).status_code == 200, path
    renewed = call(served.base, "POST", "/_sandbox/token", key)
    assert renewed.status_code == 201 and call(served.base, "GET", "/users", renewed.json()["accessToken"]).ok


def test_the_world_key_is_no_token_of_the_service(served):
    world = new_world(served.base)
    key = world["worldKey"]
    assert call(served.base, "GET", "/users", key).status_code == 401
    assert call(served.base, "GET", "/partners/self", key).status_code == 401
    listed = call(served.base, "GET", "/partners/self/tokens", world["accessToken"]).json()["tokens"]
    assert len(listed) == 1 and listed[0]["name"] == "initial token"
    report = call(served.base, "GET", "/_sandbox/report", key).json()
    assert report["judged"]["requests"] == 1                # the partner's listing, not the world key's calls
    assert [f["rule"] for f in report["findings"]] == ["initial-token-in-use"]
    other = new_world(served.base)
    assert call(served.base, "GET", "/_sandbox/report", other["worldKey"]).json()["world"] == other["world"]["id"]
    assert call(served.base, "GET", "/_sandbox/requests", key).json()["requests"][0]["token"]["kind"] == "world"


def test_root_tokens_still_steer(served):
    world = new_world(served.base)
    assert call(served.base, "GET", "/_sandbox/report", world["accessToken"]).status_code == 200


def ptas(served, key, *argv):
    return main([argv[0], "--url", served.base, "--token", key, *argv[1:]])


def test_ptas_report_exit_codes_and_junit_always_written(served, tmp_path, capsys):
    world = new_world(served.base)
    key = world["worldKey"]
    junit = tmp_path / "report.xml"
    assert ptas(served, key, "report", "--fail-on", "warning", "--junit", str(junit)) == 0
    assert [c.find("failure") for c in ET.parse(junit).iter("testcase")] == [None] * len(
        list(ET.parse(junit).iter("testcase")))
    call(served.base, "GET", "/users", world["accessToken"])           # the initial token in use: a warning
    assert ptas(served, key, "report", "--fail-on", "warning", "--junit", str(junit)) == 1
    failed = [c.get("name") for c in ET.parse(junit).iter("testcase") if c.find("failure") is not None]
    assert failed == ["initial-token-in-use"]
    assert ptas(served, key, "report", "--fail-on", "error") == 0
    capsys.readouterr()
    rotate_and_revoke_everything(served.base, world["accessToken"])
    junit.unlink()
    assert ptas(served, world["accessToken"], "report", "--junit", str(junit)) == 2     # revoked: cannot judge
    assert "could not judge" in capsys.readouterr().err
    assert [c.find("error") is not None for c in ET.parse(junit).iter("testcase")] == [True]   # CI sees why
    assert ptas(served, "not a token", "report") == 2


def test_ptas_report_cannot_reach_the_sandbox_exits_2(capsys):
    assert main(["report", "--url", "http://127.0.0.1:9", "--token", "x"]) == 2


def test_fixture_setup_calls_are_not_judged_and_from_here_on():
    sandbox = Sandbox()
    try:
        partner = sandbox.new_partner()
        user = partner.new_user()                    # a setup call with the initial token: not judged
        report = Report(partner)
        assert report.findings() == []
        partner.call("GET", "/users")                # the software under test with the initial token
        assert report.rules() == ["initial-token-in-use"]
        assert report.from_here_on().findings() == []
        assert user.call("GET", "/accounts").status_code == 200
        assert report.findings() == [] and report.json()["judged"]["requests"] == 1
        report.after = None
        assert report.json()["judged"]["notJudged"]["harness"] == 1          # new_user's CreateUser
        assert "1 harness call(s)" in report.text()
    finally:
        sandbox.close()


def test_a_forged_harness_mark_is_judged_anyway():
    sandbox = Sandbox()
    try:
        partner, other = sandbox.new_partner(), sandbox.new_partner()
        partner.call("GET", "/users", headers={"X-Sandbox-World-Key": other.world_key})   # another world's key
        partner.call("GET", "/users", headers={"X-Sandbox-World-Key": "made up"})
        assert Report(partner).json()["findings"][0]["count"] == 2
    finally:
        sandbox.close()
