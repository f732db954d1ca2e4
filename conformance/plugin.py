"""The pytest plugin registered by the package (loaded in every pytest run, so it stays light).

It registers the tags of the conformance features as markers and offers fixtures for partner developers
(`docs/fixtures.md`); the fixtures import the simulator only when a test asks for one.
"""

import pytest


def pytest_configure(config):
    from .tags import markers
    for line in markers():
        config.addinivalue_line("markers", line)


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_bdd_apply_tag(tag, function):
    """`@spec-4.1` traces a scenario to a section of the spec: kept in the reports, not made a marker."""
    if tag.startswith("spec-"):
        return function
    return None
