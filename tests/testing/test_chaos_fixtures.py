"""The `ptas_faults` and `ptas_report` fixtures: the worked example of docs/chaos.md runs as a partner would."""

import os
import re

import pytest

from ptas_sandbox.simulator import create_app

pytest_plugins = ["pytester"]

DOCS = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "docs", "chaos.md")


@pytest.fixture(autouse=True, scope="module")
def simulator_loaded():
    """Load every area before pytester snapshots sys.modules (areas register their operations once)."""
    create_app({"START_SERVICES": False}).extensions["ptas"].close()


def example():
    with open(DOCS, encoding="utf-8") as handle:
        return re.search(r"```python\n(.*?)```", handle.read(), re.S).group(1)


def test_the_documented_backoff_test_passes_in_a_partners_project(pytester):
    pytester.makepyfile(test_backoff=example())
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_the_documented_backoff_test_fails_a_client_without_backoff(pytester):
    """The example can fail: a Backend that retries at once gets caught by its own assertions."""
    naive = example().replace("time.sleep(int(response.headers.get(\"Retry-After\", \"1\")))", "pass")
    pytester.makepyfile(test_backoff=naive)
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1, failed=1)


def test_faults_of_every_kind_through_the_fixture(pytester):
    pytester.makepyfile(test_kinds="""
        import pytest

        def test_kinds(ptas_partner, ptas_faults, ptas_report):
            made = ptas_faults.add("reorder", event="AccountCreated", max_hold_seconds=60)
            assert made["effect"] == {"type": "reorder", "maxHoldSeconds": 60}
            ptas_faults.latency(3, operation="GetUsers")
            ptas_faults.drop(after=True, path="/users")
            assert len(ptas_faults.list()) == 3
            ptas_faults.clear()
            assert ptas_faults.list() == []
            ptas_report.assert_clean()
            with pytest.raises(AssertionError):
                ptas_faults.status(418)
    """)
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
