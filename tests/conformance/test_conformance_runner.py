"""`ptas conform`'s exit status and last line: a CI gate must not go green on nothing, or on an unreachable target."""

import socket

from ptas_sandbox.cli import main


def test_a_tag_expression_selecting_nothing_fails(capsys):
    assert main(["conform", "--tags", "@contract and @sandbox"]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert "no scenario was selected (check --tags)" in lines and lines[-1] == "0 passed, 0 failed, 0 not checked"


def test_an_unknown_tag_is_named(capsys):
    assert main(["conform", "--tags", "tokens and not flaky"]) == 2
    assert "unknown tag(s) flaky; tags are contract, sandbox, slow, tokens" in capsys.readouterr().out


def test_an_unreachable_target_is_reported_without_a_traceback(capsys):
    with socket.socket() as probe:          # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert main(["conform", "--target", f"http://127.0.0.1:{port}", "--token", "x" * 40]) == 2
    output = capsys.readouterr().out
    assert "cannot reach" in output and "Traceback" not in output


def test_a_deployment_without_a_token_is_refused(capsys, monkeypatch):
    monkeypatch.delenv("PTAS_TOKEN", raising=False)
    from ptas_sandbox.conformance import runner
    assert runner.run(target="http://127.0.0.1:1") == 2


# -- issue 9 item 7: the runner as a QA engineer expects ------------------------------------------------------
import json as _json  # noqa: E402
import re  # noqa: E402
from xml.etree import ElementTree  # noqa: E402

import pytest  # noqa: E402
from werkzeug.test import run_wsgi_app  # noqa: E402

from ptas_sandbox.conformance import runner  # noqa: E402
from ptas_sandbox.conformance.redact import excerpt  # noqa: E402
from ptas_sandbox.simulator import create_app  # noqa: E402


class Deployment:
    """The simulator as a deployment looks to the harness: /_sandbox hidden; `change` may break a response."""

    def __init__(self, app, change=None):
        self.app, self.change = app, change

    def __call__(self, environ, start_response):
        if environ.get("PATH_INFO", "").startswith("/_sandbox"):
            start_response("404 Not Found", [("Content-Type", "application/problem+json")])
            return [b'{"status": 404, "title": "Not Found"}']
        if self.change is None:
            return self.app(environ, start_response)
        chunks, status, answered = run_wsgi_app(self.app, environ, buffered=True)
        body = self.change(environ, b"".join(chunks))
        headers = [(k, v) for k, v in answered.to_wsgi_list() if k.lower() != "content-length"]
        start_response(status, headers + [("Content-Length", str(len(body)))])
        return [body]


@pytest.fixture
def app():
    simulator = create_app({"STATE": ":memory:", "START_SERVICES": False, "RATE_LIMIT": 100_000})
    yield simulator
    simulator.extensions["ptas"].close()


@pytest.fixture
def token(app):
    return app.test_client().post("/_sandbox/partners", json={}).json["accessToken"]


def test_a_refused_token_ends_the_run_at_once_with_exit_2(app, capsys):
    status = runner.run(app=Deployment(app), token="eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJub2JvZHkifQ.c2lnbmF0dXJlcw")
    output = capsys.readouterr().out
    assert status == 2, output
    assert "the target refused the token" in output and "401" in output and "scenarios selected" not in output
    assert "eyJzdWIiOiJub2JvZHkifQ" not in output


def test_a_deployment_given_no_token_is_refused_before_anything_runs(app, capsys):
    assert runner.run(app=Deployment(app)) == 2
    assert "needs a partner token" in capsys.readouterr().out


def test_a_token_given_for_a_simulator_target_is_checked_and_the_output_says_it_is_not_used(app, token, capsys):
    status = runner.run(app=app, token=token, tags_expression="contract and userui")
    output = capsys.readouterr().out
    assert status == 0, output[-2000:]
    assert "the token was only checked, not used" in output and "--as-deployment" in output


def test_a_missing_field_is_said_in_words_with_the_last_request_and_response(app, token, capsys, tmp_path):
    def without_expires_at(environ, body):
        return re.sub(rb'"expiresAt": "[^"]*", ', b"", body)
    status = runner.run(app=Deployment(app, without_expires_at), token=token, tags_expression="contract and tokens",
                        report_dir=str(tmp_path), quick=True)
    output = capsys.readouterr().out
    assert status == 1
    assert "Traceback" not in output and "KeyError: " not in output and 'File "' not in output
    failure = output[output.index("] FAILED "):]
    assert "at step “" in failure and "expected: " in failure
    assert re.search(r"last request: (GET|POST|PUT|DELETE|PATCH) /partner/v2/", failure), failure[:1500]
    assert re.search(r"last response: \d{3}, traceId \S+", failure) or "last response: 2" in failure, failure[:1500]
    assert token not in output and token[:40] not in output
    junit = (tmp_path / "junit.xml").read_text()
    assert "Traceback" not in junit and token[:40] not in junit
    last = output.strip().splitlines()[-1]
    assert re.match(r"\d+ passed, [1-9]\d* failed, \d+ not checked", last), last


def test_junit_has_one_testsuite_per_area_and_the_feature_as_classname(app, token, capsys, tmp_path):
    status = runner.run(app=Deployment(app), token=token, tags_expression="tokens or limits",
                        report_dir=str(tmp_path), quick=True)
    output = capsys.readouterr().out
    root = ElementTree.parse(tmp_path / "junit.xml").getroot()
    suites = {suite.get("name"): suite for suite in root.iter("testsuite")}
    from ptas_sandbox.conformance.tags import AREAS
    assert "tokens" in suites and set(suites) <= set(AREAS) and len(root.findall("testsuite")) == len(suites)
    features = {case.get("classname") for case in suites["tokens"].iter("testcase")}
    assert "A partner's own tokens" in features and len(features) > 1
    names = [(case.get("classname"), case.get("name")) for case in root.iter("testcase")]
    assert len(names) == len(set(names))
    # @slow left out by --quick: not checked, a skipped testcase saying what would check it
    skipped = [case for case in suites["tokens"].iter("testcase") if case.find("skipped") is not None]
    assert skipped and all("check with: a run without --quick" in case.find("skipped").get("message")
                           for case in skipped)
    # @sandbox on a deployment: not applicable, no testcase at all, counted apart
    inapplicable = [p for p in suites["tokens"].iter("property") if p.get("name").startswith("not applicable")]
    assert inapplicable and int(inapplicable[0].get("value")) > 0
    assert int(suites["tokens"].get("tests")) == len(list(suites["tokens"].iter("testcase")))
    summary = _json.loads((tmp_path / "summary.json").read_text())
    assert summary["areas"]["tokens"]["passed"] > 5
    totals = summary["totals"]
    assert totals["failed"] == 0 and totals["notChecked"] == len(skipped) + len(
        [c for s in suites.values() for c in s.iter("testcase") if c.find("skipped") is not None]) - len(skipped)
    assert totals["notApplicable"] > 0 and summary["lastLine"] == output.strip().splitlines()[-1]
    assert (tmp_path / "summary.txt").read_text().strip().splitlines()[-1] == summary["lastLine"]
    assert "NOT CHECKED in limits, tokens" in summary["lastLine"]
    assert any(entry["area"] == "tokens" and entry["spec"].startswith("§2") and "--quick" in entry["checkWith"]
               for entry in summary["notChecked"])
    # what --quick left out is the run's, not the target's: the gate stays green
    assert totals["leftOutByRun"] == totals["notChecked"] and totals["notCheckedByTarget"] == 0 and status == 0
    # Cucumber JSON says skipped too: never a scenario of passed steps, never one missing
    cucumber = _json.loads((tmp_path / "cucumber.json").read_text())
    elements = [e for f in cucumber for e in f["elements"]]
    unchecked = [e for e in elements if any(step["result"]["status"] == "skipped" for step in e["steps"])]
    assert len(unchecked) == totals["notChecked"]
    assert all(e["steps"] and all(step["result"]["status"] != "passed" for step in e["steps"]) or
               e["steps"][-1]["result"]["status"] == "skipped" for e in unchecked)
    assert len(elements) == totals["passed"] + totals["notChecked"]


def test_a_refused_start_still_writes_a_report_with_one_failed_test(app, capsys, tmp_path):
    bad = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJub2JvZHkifQ.c2lnbmF0dXJlcw"
    assert runner.run(app=Deployment(app), token=bad, report_dir=str(tmp_path / "r")) == 2
    capsys.readouterr()
    root = ElementTree.parse(tmp_path / "r" / "junit.xml").getroot()
    cases = list(root.iter("testcase"))
    assert len(cases) == 1 and "refused the token" in cases[0].find("failure").get("message")
    assert _json.loads((tmp_path / "r" / "summary.json").read_text())["totals"]["failed"] == 1


def test_a_target_given_with_the_service_prefix_is_told_the_base_url(capsys):
    from ptas_sandbox.cli import main as cli
    assert cli(["conform", "--target", "https://staging.example.test/partner/v2/", "--token", "x" * 40]) == 2
    assert "without /partner/v2" in capsys.readouterr().out


def test_a_failure_message_is_the_expectation_not_the_step():
    from ptas_sandbox.conformance.report import failure_message
    assert failure_message("at step “Then x”\nexpected: the token is expired\nlast request: GET /") == \
        "the token is expired"


def test_a_token_cut_by_an_excerpt_shows_none_of_its_payload():
    token = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJwYXJ0bmVyIiwic2NvcGUiOiJwYXJ0bmVyOmFsbCJ9."
             "c2lnbmF0dXJlc2lnbmF0dXJl")
    for cut in (20, 45, 60, 100):
        shown = excerpt('{"accessToken": "' + token + '"}', cut)
        assert "eyJzdWIi" not in shown and "InR5cCI6" not in shown, shown


def test_an_excerpt_of_a_long_body_masks_the_token_it_cuts_and_says_the_bodys_length():
    token = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJwYXJ0bmVyIiwic2NvcGUiOiJwYXJ0bmVyOmFsbCJ9."
             "c2lnbmF0dXJlc2lnbmF0dXJl")
    for before in (250, 290, 299):
        body = '{"a": "' + "x" * before + '", "accessToken": "' + token + '", "page": "' + "y" * 100_000 + '"}'
        shown = excerpt(body, 300)
        assert "eyJzdWIi" not in shown and "InR5cCI6" not in shown, shown
        assert shown.startswith('{"a": "xxx') and shown.endswith(f"… ({len(body)} characters)"), shown


def test_a_paced_run_gives_an_estimate_before_it_starts(capsys):
    from ptas_sandbox.conformance.report import Reporter
    from ptas_sandbox.conformance.waiting import Budget

    class Paced:
        pace = (90, 60.0)
        budget = Budget(600)

        def describe(self):
            return "a deployment"

    class Session:
        items = []
    reporter = Reporter(__import__("sys").stdout)
    reporter.target = Paced()
    Session.items = [type("Item", (), {"nodeid": str(n)})() for n in range(100)]
    reporter.pytest_collection_finish(Session)
    line = capsys.readouterr().out.splitlines()[-1]
    assert line.startswith("estimate: about 300 requests (100 scenarios × ~3) at 90 per 60 s: about ")
    assert "min of paced requests" in line and "plus up to 10 min of waiting" in line
    Paced.state = type("State", (), {"sent": 42})()
    reporter.waiting_said(30, "the pace")
    assert "0/100 scenarios done, 42 of ~300 requests" in capsys.readouterr().out


def test_pace_is_read_as_requests_per_seconds():
    from ptas_sandbox.conformance.targets import TargetError, parse_pace
    assert parse_pace("90/60") == (90, 60.0) and parse_pace("450/60") == (450, 60.0) and parse_pace("50") == (50, 60)
    for bad in ("fast", "0/60", "10/0"):
        with pytest.raises(TargetError):
            parse_pace(bad)


def test_a_receiver_url_without_a_place_to_listen_is_refused(capsys):
    from ptas_sandbox.cli import main as cli
    assert cli(["conform", "--receiver-url", "https://hooks.example.test", "--tags", "webhooks"]) == 2
    assert "--receiver-url needs --receiver-listen" in capsys.readouterr().out


def test_the_receiver_keeps_what_arrives_per_inbox_and_wakes_the_waiter():
    import threading

    import requests

    from ptas_sandbox.conformance.receiver import KEPT, Receiver
    receiver = Receiver("127.0.0.1:0")
    try:
        url, inbox = receiver.inbox()
        other, _ = receiver.inbox()
        threading.Timer(0.05, lambda: requests.post(url, json={"eventType": "AccountCreated"}, timeout=5)).start()
        got = receiver.wait(inbox, lambda notes: len(notes) >= 1, budget=10)
        assert got == [{"eventType": "AccountCreated"}]
        assert requests.post(other, data="not json", timeout=5).status_code == 204
        assert receiver.received(inbox) == [{"eventType": "AccountCreated"}]      # the other inbox is apart
        assert receiver.wait(inbox, lambda notes: len(notes) >= 2, budget=0.01) == got   # the budget ends a wait
        assert receiver.captures.maxlen == KEPT
    finally:
        receiver.close()


# -- issue 22: a run that must stop, stops within seconds and still reports ------------------------------------
from ptas_sandbox.conformance.waiting import Held  # noqa: E402
from tests.support.deployments import Deployment as ClockedDeployment  # noqa: E402


class InterruptAfter:
    """Ctrl-C as the run's process meets it: KeyboardInterrupt from inside a request, after `count` requests (and
    again during the clean-up when `again`)."""

    def __init__(self, app, count, again=False):
        self.app, self.count, self.again, self.seen = app, count, again, 0

    def __call__(self, environ, start_response):
        self.seen += 1
        if self.seen == self.count or (self.again and self.seen == self.count + 1):
            raise KeyboardInterrupt
        return self.app(environ, start_response)


@pytest.mark.parametrize("again", [False, True], ids=["once", "twice"])
def test_ctrl_c_stops_at_once_cleans_up_without_waiting_and_writes_partial_reports(capsys, tmp_path, again):
    deployment = ClockedDeployment()
    try:
        started = deployment.clock.monotonic()
        status = runner.run(app=Deployment(InterruptAfter(deployment.app, 30, again)), token=deployment.token,
                            tags_expression="contract and tokens", clock=deployment.clock,
                            report_dir=str(tmp_path))
        waited = deployment.clock.monotonic() - started
    finally:
        deployment.close()
    output = capsys.readouterr().out
    assert status == 130, output[-3000:]
    assert "interrupted (Ctrl-C): removing what the run made" in output and "Traceback" not in output
    assert waited < 60, f"the run waited {waited:.0f} s on its clock after Ctrl-C"
    summary = _json.loads((tmp_path / "summary.json").read_text())
    assert summary["totals"]["passed"] > 0 and summary["totals"]["notChecked"] > 0
    assert any(s["detail"] == "not run: the run was interrupted (Ctrl-C)" for s in summary["scenarios"])
    assert (tmp_path / "junit.xml").exists() and "NOT CHECKED in tokens" in summary["lastLine"]
    if again:
        assert "clean-up steps left undone after a second Ctrl-C" in (tmp_path / "summary.txt").read_text()
    # what the run did not reach is said once, with every area it leaves out, not once per area
    told = [line for line in output.splitlines() if "— not run: the run was interrupted" in line]
    assert len(told) == 1 and re.match(r"  \d+ scenarios in [a-z_, ]+ — not run", told[0]), told


@pytest.mark.parametrize("stage", ["scenario", "run"])
def test_ctrl_c_during_a_clean_up_stops_the_run_as_interrupted(capsys, monkeypatch, stage):
    """A Ctrl-C met while a scenario's clean-up or the run's last one is under way: the rest of it is left
    (counted), the run stops, and its status says it was interrupted (it went on, and ended 0)."""
    deployment = ClockedDeployment()
    pressed = []

    def press():
        if not pressed:
            pressed.append(True)
            raise KeyboardInterrupt
    if stage == "run":              # Ctrl-C as the run's last clean-up begins
        clean_up = Held.clean_up
        monkeypatch.setattr(Held, "clean_up", lambda self: (self.leftovers.append(press), clean_up(self))[1])
    else:                           # ... or as the first scenario's clean-up begins
        undo = Held.undo
        monkeypatch.setattr(Held, "undo", lambda self, actions: undo(self, [press, *actions] if actions else []))
    try:
        status = runner.run(app=Deployment(deployment.app), token=deployment.token, tags_expression="contract and "
                            "tokens", clock=deployment.clock, quick=True)
    finally:
        deployment.close()
    output = capsys.readouterr().out
    assert pressed and status == 130 and "clean-up steps left undone" in output, output[-3000:]


def test_repeated_429s_on_a_frozen_clock_are_said_and_stop_the_run(capsys):
    deployment = ClockedDeployment(SYSTEM_TIME=lambda: 1_795_000_000_000_000)    # the world's clock stands still
    try:
        status = runner.run(app=Deployment(deployment.app), token=deployment.token, tags_expression="contract",
                            clock=deployment.clock, quick=True)
    finally:
        deployment.close()
    output = capsys.readouterr().out
    assert status == 1, output[-3000:]
    assert "its rate-limit window does not move" in output and "the run stopped early" in output
    assert re.search(r"… waiting \d+ s for a 429 of", output)         # never silent while it waits
    last = output.strip().splitlines()[-1]
    assert re.match(r"\d+ passed, [1-9]\d* failed, [1-9]\d* not checked", last), last


def test_a_run_says_what_it_left_on_the_target(capsys, tmp_path):
    deployment = ClockedDeployment()
    try:
        runner.run(app=Deployment(deployment.app), token=deployment.token, report_dir=str(tmp_path),
                   tags_expression="contract and (tokens or users)", clock=deployment.clock, quick=True)
    finally:
        deployment.close()
    output = capsys.readouterr().out
    left = _json.loads((tmp_path / "summary.json").read_text())["leftOnTarget"]
    assert left.get("users deleted by the run (the service keeps listing them with deletedAt)", 0) > 0, output[-2000:]
    assert any("an hour or less" in what for what in left) and "left on the target by the run:" in output


def test_a_run_against_a_simulator_leaves_no_world_of_a_passing_scenario_behind(app, capsys):
    status = runner.run(app=app, tags_expression="contract and (tokens or users)")
    assert status == 0, capsys.readouterr().out[-2000:]
    sandbox = app.extensions["ptas"]
    sandbox.state.settle()
    assert sandbox.worlds.count() == 0, "each scenario deletes the world it was given"


def test_a_scenario_that_skips_at_a_step_is_skipped_from_that_step_on_in_cucumber_json(app, token, capsys, tmp_path):
    runner.run(app=Deployment(app), token=token, report_dir=str(tmp_path),
               only=["A test AccountCreated notification reaches the receiver"])     # no --receiver-listen
    capsys.readouterr()
    cucumber = _json.loads((tmp_path / "cucumber.json").read_text())
    (element,) = [e for f in cucumber for e in f["elements"]]
    statuses = [step["result"]["status"] for step in element["steps"]]
    assert "skipped" in statuses and "failed" not in statuses, statuses
    first = statuses.index("skipped")
    assert set(statuses[first:]) == {"skipped"} and first < len(statuses) - 1, statuses
    assert _json.loads((tmp_path / "summary.json").read_text())["totals"]["leftOutByRun"] == 1
