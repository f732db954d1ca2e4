"""The inspector in a real browser: hostile captures and webhook names show as text, and nothing they carry runs."""

import requests

HOSTILE = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'


def test_the_inspector_shows_hostile_input_as_text_and_runs_nothing(page, live, remote):
    requests.post(f"{live}/_sandbox/echo/evil", data=HOSTILE, headers={"Content-Type": "text/html"}, timeout=10)
    remote.post("/webhooks", json={"name": HOSTILE, "callbackUrl": f"{live}/_sandbox/echo/evil",
                                   "events": ["AccountCreated"]})
    remote.post("/testevents/accountcreated")
    remote.post("/_sandbox/webhooks/flush")
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(f"{live}/_sandbox/inspect?bin=evil&token={remote.token}")
    page.shots("inspector")
    text = page.inner_text("body")
    assert HOSTILE in text and "AccountCreated (test)" in text and "succeeded" in text
    assert page.evaluate("window.pwned") is None and not dialogs
    assert page.locator("img").count() == 0 and page.locator("script").count() == 0
