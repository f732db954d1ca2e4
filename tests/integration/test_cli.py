"""`ptas faults`, `ptas report` and `ptas snapshot` against a served sandbox, as a partner's CI would run them."""

import json
import xml.etree.ElementTree as ET

import pytest
import requests

from ptas_sandbox.cli import main
from ptas_sandbox.simulator import create_app
from tests.support.receivers import Served


@pytest.fixture
def served(system_time):
    served = Served(create_app({"SYSTEM_TIME": system_time, "START_SERVICES": False}))
    yield served
    served.close()


@pytest.fixture
def token(served):
    return requests.post(f"{served.base}/_sandbox/partners", json={}).json()["accessToken"]


def ptas(served, token, *argv):
    return main([*argv[:2], "--url", served.base, "--token", token, *argv[2:]] if argv[0] in ("faults", "snapshot")
                else [argv[0], "--url", served.base, "--token", token, *argv[1:]])


def users(served, token):
    return requests.get(f"{served.base}/partner/v2/users", headers={"Authorization": f"Bearer {token}"}, timeout=10)


def test_faults_added_listed_and_deleted_from_the_command_line(served, token, capsys):
    assert ptas(served, token, "faults", "add", "--effect", "status", "--status", "503", "--retry-after", "7",
                "--operation", "GetUsers", "--times", "2") == 0
    fault_id = capsys.readouterr().out.split()[0]
    answer = users(served, token)
    assert answer.status_code == 503 and answer.headers["Retry-After"] == "7"
    ptas(served, token, "faults", "list")
    assert f"{fault_id}  status status=503 retryAfter=7 on operationId=GetUsers; 1 of 2 left" in capsys.readouterr().out
    ptas(served, token, "faults", "delete", fault_id)
    assert users(served, token).status_code == 200
    ptas(served, token, "faults", "add", "--json", '{"effect": {"type": "drop"}}')
    ptas(served, token, "faults", "delete", "--all")
    assert "deleted 1 fault(s)" in capsys.readouterr().out


def test_a_refused_fault_exits_1_with_the_problem(served, token, capsys):
    assert ptas(served, token, "faults", "add", "--effect", "status", "--status", "418") == 1
    assert "answered 400" in capsys.readouterr().err


def test_report_exit_status_follows_fail_on(served, token, tmp_path, capsys):
    users(served, token)                                  # the initial token in use: a warning
    assert ptas(served, token, "report", "--fail-on", "error") == 0
    assert "initial-token-in-use" in capsys.readouterr().out
    out = tmp_path / "report.xml"
    assert ptas(served, token, "report", "--format", "junit", "--output", str(out)) == 1
    failed = [c.get("name") for c in ET.parse(out).iter("testcase") if c.find("failure") is not None]
    assert failed == ["initial-token-in-use"]
    assert ptas(served, token, "report", "--format", "json", "--fail-on", "never") == 0
    assert json.loads(capsys.readouterr().out)["summary"]["warning"] == 1


def test_a_report_that_cannot_be_made_exits_2_and_still_writes_its_junit_file(served, tmp_path, capsys):
    junit, output = tmp_path / "report.xml", tmp_path / "out.xml"
    assert ptas(served, "not a token", "report", "--junit", str(junit), "--format", "junit", "-o", str(output)) == 2
    assert "could not judge" in capsys.readouterr().err
    for written in (junit, output):
        [case] = ET.parse(written).iter("testcase")
        assert case.find("error").get("message").startswith("the integration report could not be made: ")
        assert ET.parse(written).getroot().get("errors") == "1"


def test_a_snapshot_saved_and_loaded_into_another_sandbox(served, token, system_time, tmp_path, capsys):
    requests.post(f"{served.base}/partner/v2/users", json={"name": "Jane"},
                  headers={"Authorization": f"Bearer {token}"}, timeout=10)
    saved = tmp_path / "world.json"
    assert ptas(served, token, "snapshot", "save", str(saved)) == 0
    other = Served(create_app({"SYSTEM_TIME": system_time, "START_SERVICES": False,
                               "SECRET": "another sandbox's secret, long enough for HS256"}))
    try:
        assert main(["snapshot", "load", "--url", other.base, str(saved)]) == 0
        new_token = capsys.readouterr().out.strip().splitlines()[-1].split()[-1]
        assert [u["name"] for u in users(other, new_token).json()["users"]] == ["Jane"]
    finally:
        other.close()
