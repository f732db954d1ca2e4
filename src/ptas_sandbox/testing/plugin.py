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


# -- fixtures for partner developers (docs/fixtures.md); prefixed so they never clash with a project's own ----
@pytest.fixture(scope="session")
def ptas_sandbox():
    """The simulator in the test process (one per test session; every partner gets a world of its own)."""
    from .partner_kit import Sandbox
    sandbox = Sandbox()
    yield sandbox
    sandbox.close()


@pytest.fixture
def ptas_partner(ptas_sandbox):
    """A partner of a fresh sandbox world, with its initial partner token (`.token`)."""
    return ptas_sandbox.new_partner()


@pytest.fixture
def ptas_user(ptas_partner):
    """A user of `ptas_partner` with its first user token (`.id`, `.token`)."""
    return ptas_partner.new_user()


@pytest.fixture
def ptas_clock(ptas_partner):
    """The partner's world clock, frozen, with this process frozen at the same instant (freezegun)."""
    from .partner_kit import Clock
    clock = Clock(ptas_partner)
    yield clock
    clock.stop()


@pytest.fixture
def ptas_inbox(ptas_partner):
    """A webhook receiver in the sandbox: `.url` for a callbackUrl, `.notifications()` of what arrived."""
    from .partner_kit import Inbox
    return Inbox(ptas_partner)
