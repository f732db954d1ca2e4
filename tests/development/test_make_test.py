"""`make test`'s last line speaks for every pass: every test on SQLite (two processes side by side), the store's
tests on PostgreSQL and on SQLite's store-exact path."""

import re
from pathlib import Path

from tests.support import summary

MAKEFILE = (Path(__file__).parents[2] / "Makefile").read_text()


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


def test_the_makefile_prints_it_last_and_keeps_the_passes_status():
    recipe = MAKEFILE.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert re.search(r"tests\.support\.summary [^\n]*(\\\n[^\n]*)*; exit \$\$status\Z", recipe)
    for junit_file in ("postgresql", "exact"):
        assert f"--junitxml=$(JUNIT)-{junit_file}.xml" in recipe and f"=$(JUNIT)-{junit_file}.xml\"" in recipe
    # every test on SQLite: the slowest directories in a process of their own, the rest without them, one label
    assert "--junitxml=$(JUNIT)-sqlite.xml $(BESIDE_TESTS:%=--ignore=%)" in recipe
    assert "--junitxml=$(JUNIT)-beside.xml \\\n\t    $(BESIDE_TESTS)" in recipe
    assert "=$(JUNIT)-sqlite.xml+$(JUNIT)-beside.xml\"" in recipe
    # the background passes' status counts: the recipe waits for them and fails when any pass failed
    assert "wait $$exact; ex=$$?" in recipe and "[ $$pg = 0 ] && [ $$ex = 0 ]" in recipe
    assert "wait $$beside; bs=$$?" in recipe and "[ $$rest = 0 ] && [ $$bs = 0 ]" in recipe


def test_make_test_lints_the_openapi_document_with_spectral_and_fails_on_a_warning():
    prerequisites = MAKEFILE.split("\ntest:", 1)[1].split("\n", 1)[0]
    assert "openapi-lint" in prerequisites.split()
    lint = MAKEFILE.split("\nopenapi-lint:", 1)[1].split("\n\n", 1)[0]
    assert "--fail-severity=warn" in lint and "--ruleset .spectral.yaml" in lint and "/openapi.json" in lint
    assert "spectral:oas" in (Path(__file__).parents[2] / ".spectral.yaml").read_text()
