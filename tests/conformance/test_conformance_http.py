"""The conformance suites over HTTP: against a served simulator (one `ptas conform` subprocess), and against
the same simulator dressed as a deployment (control API hidden, only a base URL and a partner token)."""

import json
import os
import re
import subprocess
import sys
import threading

import pytest
import requests
from werkzeug.serving import WSGIRequestHandler, make_server

from ptas_sandbox.conformance import runner
from ptas_sandbox.simulator import create_app


class Quiet(WSGIRequestHandler):
    def log_request(self, *args, **kwargs):
        pass


class Served:
    """A WSGI app on 127.0.0.1 and an ephemeral port, in a thread, for the length of a test."""

    def __init__(self, app):
        self.server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=Quiet)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.thread.join()


class WithoutControlApi:
    """What a deployment looks like: no /_sandbox/... at all."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        if environ.get("PATH_INFO", "").startswith("/_sandbox"):
            start_response("404 Not Found", [("Content-Type", "application/problem+json")])
            return [b'{"status": 404, "title": "Not found"}']
        return self.app(environ, start_response)


@pytest.fixture
def simulator_app(request):
    app = create_app({"STATE": ":memory:", "START_SERVICES": False, **getattr(request, "param", {})})
    yield app
    app.extensions["ptas"].close()


def test_ptas_conform_passes_against_a_served_simulator_given_a_url_and_a_token(simulator_app, tmp_path):
    served = Served(simulator_app)
    try:
        token = requests.post(served.url + "/_sandbox/partners", json={}, timeout=10).json()["accessToken"]
        result = subprocess.run(
            [sys.executable, "-m", "ptas_sandbox.cli", "conform", "--target", served.url, "--token", token,
             "--report-dir", str(tmp_path)],
            capture_output=True, text=True, timeout=540, env={**os.environ, "PTAS_TOKEN": ""})
    finally:
        served.stop()
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    last = output.strip().splitlines()[-1]
    # every scenario the simulator can be checked on is checked there: a faithful target's run is gateable as is
    assert re.fullmatch(r"[1-9]\d* passed, 0 failed, 0 not checked", last), last
    assert "(simulator, token " in output                      # detected by /_sandbox/health
    assert token not in output
    for name in ("junit.xml", "cucumber.json", "summary.txt", "summary.json"):
        text = (tmp_path / name).read_text()
        assert token not in text, name
    cucumber = json.loads((tmp_path / "cucumber.json").read_text())
    assert {"tokens", "spec-4.1"} <= {t["name"].lstrip("@") for f in cucumber for t in f.get("tags", [])}
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["areas"]["tokens"]["passed"] > 10 and "failed" not in summary["areas"]["tokens"]


# One world serves the whole deployment-style run: lift its limit so the run need not pace at 90 requests a minute.
@pytest.mark.parametrize("simulator_app", [{"RATE_LIMIT": 100_000}], indirect=True)
def test_a_deployment_runs_only_contract_scenarios_and_cleans_up_after_itself(simulator_app, tmp_path,
                                                                                 monkeypatch, capsys):
    client = simulator_app.test_client()
    world = client.post("/_sandbox/partners", json={"name": "Deployment"}).json
    token = world["accessToken"]
    served = Served(WithoutControlApi(simulator_app))
    monkeypatch.setenv("PTAS_CONFORM_PACE", "100000")
    try:
        status = runner.run(target=served.url, token=token, tags_expression="contract", report_dir=str(tmp_path),
                            quick=True)
    finally:
        served.stop()
    output = capsys.readouterr().out
    assert status == 0, output[-4000:]
    assert "(deployment, token " in output and token not in output
    assert "@slow: waits for time or data to pass; --quick leaves it out" in output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert all(s["outcome"] != "failed" for s in summary["scenarios"])
    assert any(s["outcome"] == "passed" and s["area"] == "auth" for s in summary["scenarios"])

    me = {"Authorization": f"Bearer {token}"}
    tokens = client.get("/partner/v2/partners/self/tokens", headers=me).json["tokens"]
    assert tokens[0]["name"] == "initial token" and tokens[0]["isValid"]       # the given token is never revoked
    left = [t["name"] for t in tokens[1:] if "id" in t and not t["isRevoked"] and not t["isExpired"]]
    assert left == []                                                          # tokens it made are revoked
    assert client.get("/partner/v2/partners", headers=me).json["partners"] == []
    assert client.get("/partner/v2/accounts", headers=me).json["accounts"] == []
    assert all(u.get("deletedAt") for u in client.get("/partner/v2/users", headers=me).json["users"])
    partner = client.get("/partner/v2/partners/self", headers=me).json
    assert partner["email"] == world["partner"]["email"] and partner["redirectUrls"] == []
