"""The inspector in a real browser (Debian's Chromium through Playwright, TOOLING.md): hostile captures show
as text and nothing they carry runs."""

import requests
from playwright import sync_api

from ptas_sandbox.simulator import create_app
from tests.receivers import Served

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
HOSTILE = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'


def test_the_inspector_shows_hostile_captures_as_text_and_runs_nothing(system_time):
    served = Served(create_app({"SYSTEM_TIME": system_time, "START_SERVICES": False}))
    try:
        requests.post(f"{served.base}/_sandbox/echo/evil", data=HOSTILE, headers={"Content-Type": "text/html"})
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_page()
            dialogs = []
            page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
            page.goto(f"{served.base}/_sandbox/inspect?bin=evil")
            assert HOSTILE in page.inner_text("body")
            assert page.evaluate("window.pwned") is None and not dialogs
            assert page.locator("img").count() == 0 and page.locator("script").count() == 0
            browser.close()
    finally:
        served.close()
