"""`make test`: what it runs and prints. Its last line speaks for every pass: every test on SQLite (two
processes side by side), the store's tests on PostgreSQL, and the folders that exercise the request state's
strategy again on the store-exact one. Run here with a stand-in for the venv's Python that records each pytest
run and writes its JUnit file, so the recipe itself runs, in seconds."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import summary

ROOT = Path(__file__).parents[2]


def junit(path, tests, failures=0, errors=0, skipped=0):
    path.write_text(f'<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="{tests}" '
                    f'failures="{failures}" errors="{errors}" skipped="{skipped}"/></testsuites>')
    return path


def test_the_last_line_sums_up_both_passes(tmp_path, capsys):
    summary.main([f"every test on SQLite={junit(tmp_path / 'a.xml', 1400, skipped=2)}",
                  f"the store's tests on PostgreSQL={junit(tmp_path / 'b.xml', 630, failures=1, errors=1)}"])
    assert capsys.readouterr().out == ("make test: every test on SQLite: 1398 passed, 0 failed, 2 skipped; "
                                       "the store's tests on PostgreSQL: 628 passed, 2 failed, 0 skipped\n")


def test_a_pass_that_did_not_run_says_so(tmp_path, capsys):
    summary.main([f"every test on SQLite={junit(tmp_path / 'a.xml', 3, failures=1)}",
                  f"the store's tests on PostgreSQL={tmp_path / 'missing.xml'}"])
    assert capsys.readouterr().out.endswith("the store's tests on PostgreSQL: did not run\n")


def test_a_pass_run_as_two_processes_is_summed_and_did_not_run_when_either_is_missing(tmp_path, capsys):
    rest, beside = junit(tmp_path / "a.xml", 1000, skipped=3), junit(tmp_path / "b.xml", 700, failures=2, skipped=1)
    summary.main([f"every test on SQLite={rest}+{beside}", f"half={rest}+{tmp_path / 'missing.xml'}"])
    assert capsys.readouterr().out == ("make test: every test on SQLite: 1694 passed, 2 failed, 4 skipped; "
                                       "half: did not run\n")


STAND_IN = """\
#!/bin/sh
# The venv's Python for `make test`: a pytest run is recorded and writes a JUnit file of 10 tests (failing when
# FAIL names part of its arguments); anything else is the real Python.
if [ "$1 $2" = "-m pytest" ]; then
  echo "PTAS_TEST_STORE=${PTAS_TEST_STORE:-} $*" >> "$RUNS"
  failures=0
  case "$*" in *"$FAIL"*) [ -n "$FAIL" ] && failures=1;; esac
  for arg; do case "$arg" in --junitxml=*) junit="${arg#--junitxml=}";; esac; done
  printf '<testsuites><testsuite tests="10" failures="%s" errors="0" skipped="1"/></testsuites>' "$failures" > "$junit"
  echo "10 tests ran"
  exit "$failures"
fi
exec {python} "$@"
"""


@pytest.fixture
def make_test(tmp_path):
    """`make test` with the stand-in Python (a venv of its own, its stamp fresh) and without the prerequisites
    that install or lint: (exit status, what it printed, the pytest runs it made)."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(STAND_IN.replace("{python}", sys.executable))
    python.chmod(0o755)
    digest = subprocess.run(["cksum", "pyproject.toml"], cwd=ROOT, capture_output=True, text=True).stdout.split()[0]
    (venv / f".test-{digest}").touch()
    runs = tmp_path / "runs"

    def run(fail="", lint="echo linted"):
        done = subprocess.run(["make", "--no-print-directory", "-o", "browser", "-o", "postgresql", "-o", "check",
                               "test", f"VENV={venv}", f"JUNIT={tmp_path}/junit", f"OPENAPI_LINT={lint}"],
                              cwd=ROOT, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "RUNS": str(runs), "FAIL": fail})
        return done.returncode, done.stdout, runs.read_text().splitlines()      # make's own error: stderr
    return run


def test_make_test_runs_each_pass_once_and_sums_them_up_last(make_test):
    status, output, runs = make_test()
    assert status == 0, output
    assert output.splitlines()[-1] == (
        "make test: every test on SQLite: 18 passed, 0 failed, 2 skipped; "
        "the store's tests on PostgreSQL: 9 passed, 0 failed, 1 skipped; "
        "the store-exact strategy on SQLite: 9 passed, 0 failed, 1 skipped")
    assert len(runs) == 4
    exact = [run for run in runs if "--request-state exact" in run]
    postgresql = [run for run in runs if run.startswith("PTAS_TEST_STORE=postgresql ")]
    assert len(exact) == len(postgresql) == 1
    assert exact[0].split("--junitxml=")[1].split()[1:] == [
        "tests/core", "tests/limits", "tests/tokens", "tests/journal", "tests/reliability"]
    every = [run for run in runs if run not in exact + postgresql]
    assert any("--ignore=tests/conformance --ignore=tests/profiles" in run for run in every)
    assert any(run.endswith("tests/conformance tests/profiles") for run in every)


@pytest.mark.parametrize("failing", ["--request-state exact", "tests/conformance tests/profiles"])
def test_a_failing_pass_fails_make_test_and_is_counted(make_test, failing):
    status, output, _ = make_test(fail=failing)
    assert status != 0
    assert "1 failed" in output.splitlines()[-1]


def test_a_failing_first_pass_stops_before_the_others(make_test):
    status, output, runs = make_test(fail="--ignore=tests/conformance")
    assert status != 0 and len(runs) == 2
    assert output.splitlines()[-1].endswith(
        "the store's tests on PostgreSQL: did not run; the store-exact strategy on SQLite: did not run")


def test_make_test_lints_the_openapi_document_with_spectral_and_fails_on_a_warning():
    done = subprocess.run(["make", "-n", "openapi-lint", "-o", ".spectral/node_modules/.bin/spectral"], cwd=ROOT,
                          capture_output=True, text=True)
    assert "--fail-severity=warn" in done.stdout and "--ruleset .spectral.yaml" in done.stdout
    assert "spectral:oas" in (ROOT / ".spectral.yaml").read_text()
    assert subprocess.run(["make", "-n", "test"], cwd=ROOT, capture_output=True, text=True).stdout.count(
        "openapi-lint") == 1


def test_a_failing_openapi_lint_fails_make_test_and_shows_why_after_every_pass(make_test):
    status, output, runs = make_test(lint="sh -c 'echo \"1:1 warning oas3-schema\"; exit 1'")
    assert status != 0 and len(runs) == 4
    lines = output.splitlines()
    assert "1:1 warning oas3-schema" in output
    assert lines[-2].startswith("make test: every test on SQLite: 18 passed")
    assert lines[-1] == "make test: the OpenAPI lint failed (" + lines[-1].split("(", 1)[1]
