"""Browser tests: headless Debian Chromium driven by Playwright's sync API against the simulator served over
HTTP on 127.0.0.1 (ephemeral port) in a thread.

Nothing here skips: without /usr/bin/chromium the launch fails and so do the tests (`make browser` installs
it). Every test snaps each page state as it goes; on failure they and the final state are written to
test-results/<test name>/.
"""

import re
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from tests.support.client import Api, Http

CHROMIUM = "/usr/bin/chromium"
# Without the background-networking flags Chromium floods a closed network (CI's) with connections it cannot make.
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
RESULTS = Path(__file__).resolve().parents[2] / "test-results"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"report_{report.when}", report)


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make browser` installs Debian's chromium for the browser tests.")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield browser
        browser.close()



class Shots:
    """Screenshots of each page state, kept in memory and written only when the test fails."""

    def __init__(self, page):
        self.page, self.taken = page, []

    def __call__(self, label):
        self.taken.append((label, self.page.screenshot(full_page=True)))

    def save(self, folder):
        folder.mkdir(parents=True, exist_ok=True)
        for n, (label, png) in enumerate(self.taken + [("final", self.page.screenshot(full_page=True))], 1):
            (folder / f"{n:02d}-{re.sub(r'[^A-Za-z0-9_.-]+', '-', label)}.png").write_bytes(png)


@pytest.fixture
def page(browser, request):
    context = browser.new_context()
    context.set_default_timeout(30_000)      # a bound, not a pace: a loaded 2-core machine renders slowly
    page = context.new_page()
    page.shots = Shots(page)
    yield page
    report = getattr(request.node, "report_call", None)
    if report is None or report.failed:
        page.shots.save(RESULTS / re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.nodeid))
    context.close()


@pytest.fixture
def remote(live):
    """The root partner of a new world, over HTTP."""
    api = Api(Http(live))
    response = api.post("/_sandbox/partners", json={"name": "Acme <Shop>", "email": "dev@acme.example"})
    assert response.status_code == 201, response.text
    return api.as_(response.json()["accessToken"])


@pytest.fixture
def user(remote):
    response = remote.post("/users", json={"name": "Jane"})
    assert response.status_code == 201, response.text
    return response.json()
