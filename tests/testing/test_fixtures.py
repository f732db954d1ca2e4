"""The fixtures for partner developers: the example of docs/fixtures.md runs as a partner would run it."""

import os
import re

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
    result.assert_outcomes(passed=3)


def test_the_clock_fixture_keeps_the_partners_code_on_the_sandbox_clock(pytester):
    pytester.makepyfile(test_clock="""
        import time
        from datetime import datetime, timezone

        def test_clock(ptas_partner, ptas_clock):
            before = time.time()
            ptas_clock.advance(3600)
            assert time.time() - before == 3600
            sandbox_now = ptas_partner.call("GET", "/_sandbox/clock").json["now"]
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
