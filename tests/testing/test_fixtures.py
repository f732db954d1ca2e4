"""The fixtures for partner developers: the example of docs/fixtures.md runs as a partner would run it."""

import os
import re
import shutil
import socket
import subprocess
import sys

import pytest

from ptas_sandbox.simulator import create_app

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True, scope="module")
def simulator_loaded():
    """Load every area of the simulator before pytester snapshots sys.modules: areas register their operations
    once per process, and pytester would otherwise unload and reload them between runs."""
    create_app({"START_SERVICES": False}).extensions["ptas"].close()

DOCS = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "docs", "fixtures.md")


def example():
    with open(DOCS, encoding="utf-8") as handle:
        return re.search(r"```python\n(.*?)```", handle.read(), re.S).group(1)


def test_the_documented_example_passes_in_a_partners_project(pytester):
    pytester.makepyfile(test_token_refresh=example())
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)


def test_the_clock_fixture_keeps_the_partners_code_on_the_sandbox_clock(pytester):
    pytester.makepyfile(test_clock="""
        import time
        from datetime import datetime, timezone

        def test_clock(ptas_partner, ptas_clock):
            before = time.time()
            ptas_clock.advance(3600)
            assert time.time() - before == 3600
            sandbox_now = ptas_partner.call("GET", "/_sandbox/clock").json()["now"]
            assert datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f") == sandbox_now[:26]
    """)
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_every_partner_gets_a_world_of_its_own(pytester):
    pytester.makepyfile(test_worlds="""
        def test_worlds(ptas_sandbox, ptas_partner, ptas_user):
            other = ptas_sandbox.new_partner("Globex")
            assert other.world_id != ptas_partner.world_id
            assert other.call("GET", f"/users/{ptas_user.id}").status_code == 404
            assert ptas_partner.call("GET", f"/users/{ptas_user.id}").status_code == 200
    """)
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_monotonic_clocks_and_sleep_stay_real_under_the_clock_fixture(pytester):
    pytester.makepyfile(test_poll="""
        import time

        def test_a_deadline_loop_ends(ptas_clock):
            wall = time.time()
            deadline = time.monotonic() + 0.05
            polls = 0
            while time.monotonic() < deadline:
                polls += 1
                time.sleep(0.01)
            assert polls >= 1 and time.time() == wall      # the wall clock stays on the frozen sandbox
    """)
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_advance_on_sleep_moves_the_world_and_the_monotonic_clock(pytester):
    pytester.makepyfile(test_sleep="""
        import time

        def test_sleep(ptas_partner, ptas_clock):
            ptas_clock.advance_on_sleep()
            wall, mono, real = time.time(), time.monotonic(), time.process_time()
            time.sleep(3600)
            assert time.time() - wall == 3600 and time.monotonic() - mono >= 3600
            now = ptas_partner.call("GET", "/_sandbox/clock").json()["now"]
            assert now[11:13] != time.strftime("%H", time.gmtime(wall))
    """)
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_advance_on_sleep_reaches_a_sleep_a_module_imported_by_name(pytester):
    """A client module that did `from time import sleep` (before or after the call) slept for real."""
    pytester.makepyfile(early_client="from time import sleep as pause\n\ndef wait(s):\n    pause(s)\n")
    pytester.makepyfile(test_sleep="""
        import time
        import early_client

        def test_sleep(ptas_partner, ptas_clock):
            ptas_clock.advance_on_sleep()
            from time import sleep
            wall = time.time()
            early_client.wait(1)             # a second each: on a regression, they sleep for real, briefly
            sleep(1)
            assert time.time() - wall == 2      # freezegun holds the wall clock: only a moved world moves it
    """)
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
    import time
    assert time.sleep.__module__ == "time"       # put back after the test


def test_replies_offer_json_like_requests_and_the_journal_verifies(pytester):
    pytester.makepyfile(test_journal="""
        import pytest

        def test_journal(ptas_partner):
            created = ptas_partner.call("POST", "/users", json={"name": "Jane"})
            assert created.status_code == 201 and created.json()["name"] == "Jane" and created.ok
            assert [e["operationId"] for e in ptas_partner.requests(operationId="CreateUser")] == ["CreateUser"]
            assert ptas_partner.count(operationId="CreateUser", requestBody={"name": "Jane"}) == 1
            ptas_partner.verify(operationId="CreateUser")
            with pytest.raises(AssertionError, match="expected exactly 2 call.*CreateUser"):
                ptas_partner.verify(times=2, operationId="CreateUser")
    """)
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_the_same_fixtures_run_against_a_served_sandbox(pytester, tmp_path):
    process = subprocess.Popen([sys.executable, "-m", "ptas_sandbox.cli", "serve", "--port", "0", "--quiet",
                                "--state", ":memory:"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, cwd=tmp_path, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        url = re.search(r"simulator on (http://\S+)", process.stdout.readline()).group(1)
        pytester.makepyfile(test_token_refresh=example())
        pytester.makepyfile(test_where="""
            def test_where(ptas_sandbox, ptas_partner):
                assert ptas_sandbox.url == "%s"
                assert not hasattr(ptas_sandbox, "app")
        """ % url)
        pytester.makepyfile(test_failing="def test_failing(ptas_partner):\n    assert False\n")
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--ptas-url", url)
        result.assert_outcomes(passed=5, failed=1)
        # the kept world of the failed test, and how to look into it after the run
        result.stdout.fnmatch_lines(["*the worlds of failed tests*",
                                     f"test_failing.py::test_failing: ptas requests --url {url} --token *"])
    finally:
        process.terminate()
        process.wait(10)


def test_a_ptas_url_where_nothing_answers_is_one_clear_error(pytester):
    pytester.makepyfile(test_one="def test_one(ptas_partner):\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--ptas-url", "127.0.0.1:9")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.strip()]
    assert errors == ["ERROR: --ptas-url http://127.0.0.1:9: no sandbox answers (nothing listens there); start one "
                      "with `make serve` (or `ptas serve`), or leave --ptas-url out to run one in the test process"]
    assert "Traceback" not in result.stdout.str()


def test_a_partners_world_is_deleted_after_a_passing_test_and_kept_after_a_failing_one(pytester):
    pytester.makepyfile(test_worlds="""
        partners = {}

        def test_passes(ptas_partner):
            partners["passed"] = ptas_partner

        def test_fails(ptas_partner):
            partners["failed"] = ptas_partner
            assert False, "kept for the inspector"

        def test_what_is_left(ptas_sandbox):
            assert partners["passed"].call("GET", "/_sandbox/clock").status_code == 401
            assert partners["failed"].call("GET", "/_sandbox/clock").status_code == 200
    """)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*the worlds of failed tests*", "They ended with this test process's sandbox*"])


def test_the_clock_fixture_leaves_pytests_timing_on_the_real_clock(pytester):
    """A frozen wall clock days from now must not reach --durations or the JUnit times: they stay real seconds."""
    pytester.makepyfile(test_frozen="""
        from datetime import timedelta

        def test_days_pass(ptas_clock):
            ptas_clock.advance(timedelta(days=3))
    """)
    junit = pytester.path / "junit.xml"
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--durations=0", "--durations-min=0",
                                          f"--junitxml={junit}")
    result.assert_outcomes(passed=1)
    durations = [float(s) for s in re.findall(r"^(\d+\.\d+)s (?:setup|call|teardown)", result.stdout.str(), re.M)]
    assert durations and max(durations) < 60, result.stdout.str()
    times = [float(t) for t in re.findall(r'time="([\d.]+)"', junit.read_text())]
    assert times and max(times) < 60, times


BLIND_CI = os.path.join(os.path.dirname(__file__), "blind_ci")


def test_the_gate_passes_the_careful_client_and_fails_the_naive_one_in_every_scenario(pytester):
    """A partner's CI written blind (tests/testing/blind_ci/MANIFEST.md): the careful client passes the report's
    gate in every scenario, the naive one fails it in every one, each time for what it did."""
    shutil.copytree(os.path.join(BLIND_CI, "partner_client"), pytester.path / "partner_client")
    shutil.copy(os.path.join(BLIND_CI, "sync_cases.py"), pytester.path / "test_sync.py")
    # The recorded reports, not the terminal's text: pytest words its summary differently when CI is set.
    recorded = pytester.inline_run("-p", "no:cacheprovider", "-p", "no:randomly")
    calls = {report.nodeid.split("::")[1]: report for report in recorded.getreports("pytest_runtest_logreport")
             if report.when == "call"}
    assert len(calls) == 10, sorted(calls)
    for test, report in calls.items():
        assert report.outcome == ("passed" if "[careful]" in test else "failed"), (test, report.longreprtext)
    told = {"test_sync_no_faults[naive]": "pagination-ignored",
            "test_sync_injected_429[naive]": "retry-after-ignored",
            "test_sync_global_rate_limit[naive]": "retry-after-ignored",
            "test_sync_server_errors[naive]": "carried-on-after-failure",
            "test_sync_dropped_connection[naive]": "stopped-after-failure"}
    for test, rule in told.items():
        assert rule in calls[test].longreprtext, (test, rule)


def test_the_in_process_sandbox_serves_on_the_port_ptas_port_names(pytester):
    with socket.socket() as held:
        # Held bound (not listening) with SO_REUSEADDR until the sandbox takes it: the kernel gives the port to no
        # other socket meanwhile, and the server's own SO_REUSEADDR bind may share it (Linux).
        held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]
        pytester.makepyfile(test_port=f"""
            import requests

            def test_port(ptas_sandbox):
                assert ptas_sandbox.url == "http://127.0.0.1:{port}"
                assert requests.get(ptas_sandbox.url + "/_sandbox/health", timeout=10).status_code == 200
        """)
        pytester.runpytest_inprocess("-p", "no:cacheprovider", "--ptas-port", str(port)).assert_outcomes(passed=1)


def test_a_ptas_port_in_use_or_beside_a_ptas_url_is_one_clear_error(pytester):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        pytester.makepyfile(test_port="def test_port(ptas_sandbox):\n    ptas_sandbox.url\n")
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--ptas-port", str(port))
        result.assert_outcomes(errors=0, failed=1)
        result.stdout.fnmatch_lines([f"*cannot listen on 127.0.0.1:{port} (*); choose another with --ptas-port*"])
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--ptas-port", "8080", "--ptas-url", "x:1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--ptas-port is the in-process sandbox's port" in result.stderr.str()
