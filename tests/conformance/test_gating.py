"""The totals a CI gates on: a scenario the target or its data kept from being checked counts apart from one this
run's budget or options left out, fails the run (exit 1) and says so in the last line; both are `skipped` in
JUnit and in the summary."""

import json
from types import SimpleNamespace
from xml.etree import ElementTree

import pytest

from ptas_sandbox.conformance import runner
from ptas_sandbox.conformance.report import Reporter
from ptas_sandbox.conformance.unchecked import BY_RUN, BY_TARGET, cause

pytest_plugins = ["pytester"]

SCENARIOS = '''
import pytest

from ptas_sandbox.conformance.unchecked import left_out_by_run, not_applicable, target_does_not_allow


@pytest.mark.users
def test_a_choice_the_spec_leaves_open():
    """Users: a lifetime the target does not take"""
    not_applicable("the target does not take userTokenExpirySeconds 5 (the spec shows no minimum)")


@pytest.mark.tokens
def test_passes():
    """Tokens: a check that holds"""


@pytest.mark.reports
def test_no_data():
    """Reports: a check the data never came for"""
    target_does_not_allow("no reports arrived within 600 s (check with: --max-wait 2400)")


@pytest.mark.reports
def test_nothing_to_inspect():
    """Reports: a check whose answer leaves nothing to inspect"""
    pytest.skip("the account's transactions fit on one page: no second page to read")


@pytest.mark.webhooks
def test_no_receiver():
    """Webhooks: a delivery without a receiver"""
    pytest.skip("no webhook receiver: pass --receiver-listen HOST:PORT")


@pytest.mark.limits
def test_over_budget():
    """Limits: a wait the budget cannot cover"""
    left_out_by_run("needs 86400 s of waiting; 600 s were left")
'''


def stub_target():
    return SimpleNamespace(pace=None, describe=lambda: "a stub target", held=SimpleNamespace(left={}),
                           simulator=True, budget=None)


@pytest.fixture
def reported(pytester, tmp_path):
    import io
    out = io.StringIO()
    reporter = Reporter(out)
    reporter.target = stub_target()
    pytester.makeini("[pytest]\nmarkers =\n    users\n    tokens\n    reports\n    webhooks\n    limits\n")
    pytester.makepyfile(test_scenarios=SCENARIOS)
    pytester.runpytest_inprocess("-p", "no:cacheprovider", plugins=[reporter])
    reporter.write_reports(str(tmp_path))
    return reporter, out, tmp_path


def test_a_skip_is_the_targets_unless_an_option_of_the_run_would_check_it():
    assert cause("the account's transactions fit on one page") == BY_TARGET
    assert cause("@slow: waits for time or data to pass; --quick leaves it out (check with: a run without "
                 "--quick)") == BY_RUN
    assert cause("needs 60 s of waiting; 10 s of the run's 600 s were left (check with: --max-wait 650)") == BY_RUN
    assert cause("not offered by the target: GetAccounts") == BY_RUN      # --operation names it


def test_the_two_kinds_have_their_own_totals_and_the_targets_fail_the_run(reported):
    reporter, out, folder = reported
    assert reporter.unchecked_by() == {BY_TARGET: 2, BY_RUN: 2}
    assert reporter.gating_failed()
    last = reporter.last_line()
    assert last.startswith("1 passed, 0 failed, 4 not checked (2 because of the target or its data, which fails "
                           "the run; 2 left out by this run's budget or options), 1 not applicable to this "
                           "target"), last
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["totals"] == {"passed": 1, "failed": 0, "notChecked": 4, "notCheckedByTarget": 2,
                                 "leftOutByRun": 2, "notApplicable": 1}
    assert sorted(row.get("cause", "") for row in summary["scenarios"]) == ["", "", "run", "run", "target", "target"]
    assert {(entry["area"], entry["cause"]) for entry in summary["notChecked"]} == {
        ("reports", BY_TARGET), ("webhooks", BY_RUN), ("limits", BY_RUN)}
    text = (folder / "summary.txt").read_text()
    gating = text.index("NOT CHECKED because of the target or its data")
    assert gating < text.index("left out by this run's budget or options, by area")
    assert "no reports arrived" in text[gating:text.index("left out by this run's budget or options, by area")]
    skipped = [case for case in ElementTree.parse(folder / "junit.xml").getroot().iter("testcase")
               if case.find("skipped") is not None]
    assert len(skipped) == 4


def test_the_exit_status_is_1_when_the_target_kept_scenarios_from_being_checked(reported):
    reporter, out, _ = reported
    chosen = SimpleNamespace(simulator=True)
    options = runner.Options(out=out)
    assert runner.conclude(options, chosen, reporter, pytest.ExitCode.OK) == 1
    assert out.getvalue().strip().splitlines()[-1] == reporter.last_line()
    # the same run with only the run's own left-outs passes the gate
    reporter.causes = {node: BY_RUN for node in reporter.causes}
    assert runner.conclude(options, chosen, reporter, pytest.ExitCode.OK) == 0


def test_a_faithful_simulator_leaves_no_test_notification_unchecked(capsys, tmp_path):
    status = runner.run(tags_expression="webhooks", only=["A test AccountTypeUpdated notification reaches the "
                                                          "receiver"], report_dir=str(tmp_path))
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert status == 0 and last == "1 passed, 0 failed, 0 not checked", last
