"""The inspector's Report tab in a real browser: a naive call pattern shows up as findings with their evidence,
and the evidence links to the journal entry."""

import re


def test_the_report_tab_shows_findings_and_links_to_the_evidence(page, remote):
    remote.post("/_sandbox/faults", json={"match": {"operationId": "GetUsers"},
                                          "effect": {"type": "status", "status": 503, "retryAfter": 30}})
    remote.get("/users")
    remote.get("/users")                 # no backoff: before Retry-After passed
    link = remote.post("/_sandbox/inspect/links")
    page.goto(link.json()["url"])
    page.wait_for_url(re.compile(r"/_sandbox/inspect/requests"))
    page.click("nav.tabs >> text=Report")
    page.wait_for_selector("#rule-retry-after-ignored")
    page.shots("report")
    finding = page.inner_text("#rule-retry-after-ignored")
    assert "Requests sent before a Retry-After had passed" in finding and "Fix:" in finding
    assert "injected" in finding
    page.click("#rule-retry-after-ignored >> a.path >> nth=0")
    page.wait_for_url(re.compile(r"/_sandbox/inspect/requests\?entry=\d+"))
    assert "GetUsers" in page.inner_text("main")


def test_a_clean_world_reads_as_such(page, remote):
    link = remote.post("/_sandbox/inspect/links")
    page.goto(link.json()["url"])
    page.wait_for_url(re.compile(r"/_sandbox/inspect/requests"))
    page.click("nav.tabs >> text=Report")
    page.wait_for_selector("text=No findings: every rule passed.")
