"""The pytest plugin the package registers (`pytest11`): fixtures for partner developers, nothing else.

It is loaded in every pytest run of a project that installs ptas-sandbox, so it registers no markers and only
the `--ptas-url`/`--ptas-port`/`--ptas-admin-key`/`--ptas-profile` options, and imports the simulator only when a
test asks for a fixture (docs/fixtures.md). The conformance suites' markers and options live in
`ptas_sandbox.conformance.harness`, loaded only by conformance runs.
"""

import os

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("ptas-sandbox", "ptas-sandbox fixtures")
    group.addoption("--ptas-url", metavar="URL",
                    help="run the ptas_* fixtures against a served or remote sandbox; default: a sandbox in the "
                         "test process")
    group.addoption("--ptas-port", type=int, default=0, metavar="PORT",
                    help="the port the in-process sandbox serves `ptas_sandbox.url` on, for code whose settings name "
                         "one; default: any free port")
    group.addoption("--ptas-profile", metavar="FILE",
                    help="the in-process sandbox answers as the deployment this profile was learned from "
                         "(docs/profiles.md); a served sandbox takes it from `ptas serve --profile`")
    group.addoption("--ptas-admin-key", default=os.environ.get("PTAS_ADMIN_KEY"), metavar="KEY",
                    help="the sandbox's admin key, where creating worlds needs it (or PTAS_ADMIN_KEY)")


KEPT = pytest.StashKey[list]()     # (test id, partner) of the worlds failed tests left


def pytest_configure(config):
    """A `--ptas-url` where no sandbox answers is one line before any test runs, not an error per test."""
    config.stash[KEPT] = []
    url, port = config.getoption("ptas_url", None), config.getoption("ptas_port", 0)
    if not 0 <= port <= 65535:
        raise pytest.UsageError(f"--ptas-port {port}: a port is 0 (any free port) to 65535")
    if not url:
        return
    if port:
        raise pytest.UsageError("--ptas-port is the in-process sandbox's port; a sandbox at --ptas-url has its own")
    import requests  # late, as the simulator: a run that does not ask for a served sandbox never needs it
    if "://" not in url:
        url = "http://" + url
    config.option.ptas_url = url = url.rstrip("/").removesuffix("/partner/v2")
    try:
        requests.get(f"{url}/_sandbox/health", timeout=10).raise_for_status()
    except requests.RequestException as error:
        reason = "nothing listens there" if isinstance(error, requests.ConnectionError) else type(error).__name__
        raise pytest.UsageError(f"--ptas-url {url}: no sandbox answers ({reason}); start one with `make serve` "
                                "(or `ptas serve`), or leave --ptas-url out to run one in the test process") from None


# Prefixed so they never clash with a project's own fixtures.
@pytest.fixture(scope="session")
def ptas_sandbox(pytestconfig):
    """The simulator in the test process, or the one at `--ptas-url` (one per test session; every partner
    gets a world of its own)."""
    from ptas_sandbox.testing.partner_kit import RemoteSandbox, Sandbox
    url, key = pytestconfig.getoption("ptas_url"), pytestconfig.getoption("ptas_admin_key")
    profile = pytestconfig.getoption("ptas_profile")
    config = {"PROFILE": profile} if profile else None
    port = pytestconfig.getoption("ptas_port")
    sandbox = RemoteSandbox(url, admin_key=key) if url else Sandbox(config, admin_key=key, port=port)
    yield sandbox
    sandbox.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Notes a test that failed, so `ptas_partner` leaves its world for the inspector and the journal."""
    outcome = yield
    if outcome.get_result().failed:
        item.ptas_failed = True


@pytest.fixture
def ptas_partner(ptas_sandbox, request):
    """A partner of a fresh sandbox world, with its initial partner token (`.token`). The world is deleted after
    the test, so a suite does not fill a shared sandbox; a failed test's world stays to be looked into (the
    server makes room with it once nobody has called it for its --world-idle-hours)."""
    partner = ptas_sandbox.new_partner()
    yield partner
    if not getattr(request.node, "ptas_failed", False):
        partner.delete_world()
    else:
        request.config.stash[KEPT].append((request.node.nodeid, partner))


def pytest_terminal_summary(terminalreporter, config):
    """Where the worlds of failed tests are, and the commands that show what happened in them."""
    kept = config.stash.get(KEPT, [])
    if not kept:
        return
    url = config.getoption("ptas_url")
    terminalreporter.section("ptas-sandbox: the worlds of failed tests")
    if not url:
        terminalreporter.write_line("They ended with this test process's sandbox. To look into them after a run, "
                                    "run against a served one: `ptas serve`, then pytest --ptas-url URL.")
        return
    for nodeid, partner in kept:
        terminalreporter.write_line(f"{nodeid}: ptas requests --url {url} --token {partner.world_key}  "
                                    "(or ptas inspect, ptas report)")


@pytest.fixture
def ptas_user(ptas_partner):
    """A user of `ptas_partner` with its first user token (`.id`, `.token`)."""
    return ptas_partner.new_user()


@pytest.fixture
def ptas_clock(ptas_partner):
    """The partner's world clock, frozen, with this process's wall clock frozen at the same instant (freezegun);
    monotonic clocks and sleep stay real unless `ptas_clock.advance_on_sleep()`."""
    from ptas_sandbox.testing.partner_kit import Clock
    clock = Clock(ptas_partner)
    yield clock
    clock.stop()


@pytest.fixture
def ptas_inbox(ptas_partner):
    """A webhook receiver in the sandbox: `.url` for a callbackUrl, `.notifications()` of what arrived."""
    from ptas_sandbox.testing.partner_kit import Inbox
    return Inbox(ptas_partner)


@pytest.fixture
def ptas_faults(ptas_partner):
    """The faults of `ptas_partner`'s world: `.status(503, operation="GetTransactions", retry_after=30)`,
    `.latency(...)`, `.drop(...)`, `.add(effect, ...)`, `.injections()`; cleared after the test."""
    from ptas_sandbox.testing.chaos import Faults
    faults = Faults(ptas_partner)
    yield faults
    faults.clear()


@pytest.fixture
def ptas_report(ptas_partner):
    """The integration report of `ptas_partner`'s world: `.findings()`, `.rules()`, `.assert_clean()`."""
    from ptas_sandbox.testing.chaos import Report
    return Report(ptas_partner)
