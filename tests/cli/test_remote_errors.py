"""What the remote commands do with the world key, and how they fail: one line and exit 2 for what they cannot
use, a refusal's field errors spelled out, and sandbox tools' own calls left out of the integration report."""

import os
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
import requests

from ptas_sandbox.cli import main
from tests.support.receivers import Receiver


@pytest.fixture
def world(live):
    return requests.post(f"{live}/_sandbox/partners", json={"name": "CLI"}, timeout=10).json()


def ptas(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def not_judged(live, world):
    report = requests.get(f"{live}/_sandbox/report", headers={"Authorization": f"Bearer {world['worldKey']}"},
                          timeout=10).json()
    return report["judged"]["notJudged"]


@pytest.mark.parametrize("command", [["trigger", "AccountCreated"], ["listen", "--forward-to", "http://127.0.0.1:9/"]])
def test_trigger_and_listen_say_in_one_line_that_the_world_key_does_not_open_the_partner_api(
        capsys, live, world, command):
    status, _, err = ptas(capsys, *command, "--url", live, "--token", world["worldKey"])
    assert status == 2 and err.count("\n") == 1 and "partner token" in err and "PTAS_TOKEN" in err
    assert world["worldKey"] not in err


def test_trigger_takes_ptas_token_even_when_ptas_world_key_is_set(capsys, live, world, monkeypatch):
    monkeypatch.setenv("PTAS_TOKEN", world["accessToken"])
    monkeypatch.setenv("PTAS_WORLD_KEY", world["worldKey"])
    status, out, err = ptas(capsys, "trigger", "AccountCreated", "--no-flush", "--url", live)
    assert status == 0 and "AccountCreated test event" in out, err


def test_triggers_calls_with_the_world_key_are_not_judged_as_the_partner_softwares(capsys, live, world):
    before = not_judged(live, world)["harness"]
    status, _, err = ptas(capsys, "trigger", "AccountCreated", "--no-flush", "--url", live,
                          "--token", world["accessToken"], "--world-key", world["worldKey"])
    assert status == 0, err
    assert not_judged(live, world)["harness"] == before + 1


def test_listens_setup_calls_with_the_world_key_are_not_judged(live, world, tmp_path):
    receiver = Receiver()
    process = subprocess.Popen([sys.executable, "-m", "ptas_sandbox.cli", "listen", "--forward-to", receiver.url,
                                "--url", live, "--token", world["accessToken"], "--interval", "0.05"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1", "XDG_CONFIG_HOME": str(tmp_path),
                                    "PTAS_WORLD_KEY": world["worldKey"]})
    try:
        assert process.stdout.readline().startswith("Ready")
        process.terminate()
        assert process.wait(30) == 0
    finally:
        if process.poll() is None:
            process.kill()
        receiver.close()
    # GET /partners/self, GET /webhooks, POST /webhooks and the DELETE when it stops
    assert not_judged(live, world)["harness"] == 4


def test_a_refusals_field_errors_are_printed_one_per_line(capsys, live, world):
    status, _, err = ptas(capsys, "faults", "add", "--effect", "status", "--status", "99", "--url", live,
                          "--token", world["worldKey"])
    lines = err.splitlines()
    assert status == 1 and len(lines) >= 2, err
    assert all(re.fullmatch(r"  \S*: .+", line) for line in lines[1:]), err


class NotJson(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<html>a web site</html>")

    def log_message(self, *args):
        pass


@pytest.fixture
def web_site():
    server = HTTPServer(("127.0.0.1", 0), NotJson)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join()


def test_a_server_answering_200_without_json_is_one_line(capsys, web_site):
    status, _, err = ptas(capsys, "clock", "--url", web_site, "--token", "t")
    assert status == 2 and err.count("\n") == 1 and "did not answer JSON" in err and web_site in err


@pytest.mark.parametrize("argv", [["snapshot", "save", "{missing}/x.json"], ["report", "-o", "{missing}/x"],
                                  ["report", "--junit", "{missing}/x.xml"],
                                  ["requests", "-f", "--interval", "-1"], ["requests", "-f", "--interval", "0"],
                                  ["listen", "--forward-to", "http://127.0.0.1:9/", "--interval", "0"]])
def test_a_path_or_interval_it_cannot_use_is_one_line_and_exit_2(capsys, live, world, tmp_path, argv):
    argv = [a.format(missing=tmp_path / "no" / "such") for a in argv]
    token = world["accessToken"]
    status, out, err = ptas(capsys, *argv, "--url", live, "--token", token)
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err and token not in err + out, err
    assert ("cannot write" in err and "no/such" in err) or "--interval" in err


def test_faults_list_shows_the_recent_injections_its_help_promises(capsys, live, world):
    target = ["--url", live, "--token", world["worldKey"]]
    assert ptas(capsys, "faults", "add", "--effect", "status", "--status", "503", "--operation", "GetUsers",
                *target)[0] == 0
    requests.get(f"{live}/partner/v2/users", headers={"Authorization": f"Bearer {world['accessToken']}"},
                 timeout=10)
    status, out, _ = ptas(capsys, "faults", "list", *target)
    assert status == 0 and "recent injections:" in out
    assert re.search(r"^  \S+  \S+  \w+  GET /partner/v2/users$", out, re.M), out


def test_listen_leaves_the_journal_as_it_was_and_its_calls_show_with_a_flag(capsys, live, world, tmp_path):
    """Its polling (twice a second) is not journaled; its own setup calls are marked `tool`: left out of the
    journal's default view, `ptas requests`, the inspector and the report, listed with --tools."""
    partner = {"Authorization": f"Bearer {world['accessToken']}"}
    key = {"Authorization": f"Bearer {world['worldKey']}"}
    requests.get(f"{live}/partner/v2/partners/self", headers=partner, timeout=10)      # the partner's own call
    journal = lambda **query: requests.get(f"{live}/_sandbox/requests", params=query, headers=key,
                                           timeout=10).json()["requests"]
    before = journal()
    receiver = Receiver()
    process = subprocess.Popen([sys.executable, "-m", "ptas_sandbox.cli", "listen", "--forward-to", receiver.url,
                                "--url", live, "--token", world["accessToken"], "--interval", "0.01"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1", "XDG_CONFIG_HOME": str(tmp_path),
                                    "PTAS_WORLD_KEY": ""})
    try:
        assert process.stdout.readline().startswith("Ready")
        flushes = lambda: requests.post(f"{live}/_sandbox/requests/count", json={"tools": True}, headers=key,
                                        timeout=10).json()["count"]
        polled = flushes()
        process.stdout.readline()           # the secret: by now it polls
        process.terminate()
        assert process.wait(30) == 0
    finally:
        if process.poll() is None:
            process.kill()
        receiver.close()
    assert journal() == before
    everything = journal(tools="true")
    own = [entry for entry in everything if entry["marks"].get("tool") == "ptas listen"]
    assert [e["operationId"] for e in reversed(own)] == ["GetOwnPartner", "GetWebhooks", "CreateWebhook",
                                                          "DeleteWebhook"], own
    polls = ("SandboxFlushWebhooks", "SandboxEchoCaptures")
    assert flushes() == polled + 1 and not [e for e in everything if e["operationId"] in polls]
    status, out, _ = ptas(capsys, "requests", "--url", live, "--token", world["worldKey"])
    assert status == 0 and "ptas listen" not in out and "GetOwnPartner" in out
    status, out, _ = ptas(capsys, "requests", "--tools", "--url", live, "--token", world["worldKey"])
    assert status == 0 and out.count("[ptas listen]") == 4
    report = requests.get(f"{live}/_sandbox/report", headers=key, timeout=10).json()["judged"]
    assert report["requests"] == 1 and report["notJudged"]["tools"] == 4
