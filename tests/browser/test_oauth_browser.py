"""The OAuth2 flow of spec §1 in a real browser, to each of its three outcomes."""

from urllib.parse import parse_qs, urlsplit

import pytest


def start(remote, user, **body):
    response = remote.post("/oauth", json={"accountTypeId": "dummy-auth", "userId": user["id"], **body})
    assert response.status_code == 201, response.text
    return response.json()


def consent_answer(page):
    return page.expect_response(lambda r: "/oauth/consent/" in r.url and r.request.method == "POST")


def test_approve_returns_to_the_partner_url_with_success(page, live, remote, user):
    flow = start(remote, user, redirectUrl=f"{live}/_sandbox/health?from=oauth")
    page.goto(flow["redirectUrl"])
    assert page.text_content("#provider") == "Dummy provider with OAuth2"
    assert page.text_content("#partner") == "Acme <Shop>"     # shown as text, not markup
    page.shots("consent")
    with consent_answer(page) as answered:
        page.click("#approve")
    page.wait_for_url(f"{live}/_sandbox/health?**")
    page.shots("returned")
    query = {k: v[0] for k, v in parse_qs(urlsplit(page.url).query).items()}
    assert query["from"] == "oauth" and query["reference"] == flow["authReference"] and query["status"] == "Success"
    step = answered.value
    assert step.status == 302
    assert step.headers["x-service-authreference"] == flow["authReference"]
    assert step.headers["x-service-authstatus"] == "Success"
    assert step.headers["x-service-authmessage"] == query["message"]


@pytest.mark.parametrize("choice, status", [("notfound", "NotFoundError"), ("error", "OtherError")])
def test_an_error_outcome_ends_on_the_service_page(page, remote, user, choice, status):
    flow = start(remote, user)
    page.goto(flow["redirectUrl"])
    page.check(f"input[name=outcome][value={choice}]")
    page.fill("#message", "<script>window.hacked = 1</script> try later")
    page.shots("consent-filled")
    with consent_answer(page) as answered:
        page.click("#fail")
    page.wait_for_selector("#result")
    page.shots("service-page")
    assert page.get_attribute("#result", "data-status") == status
    assert page.text_content("#result") == "<script>window.hacked = 1</script> try later"
    assert page.evaluate("window.hacked") is None
    assert answered.value.headers["x-service-authstatus"] == status
    assert answered.value.headers["x-service-authreference"] == flow["authReference"]


def test_deny_ends_in_other_error_at_the_partners_first_redirect_url(page, live, remote, user):
    remote.put("/partners/self", json={"redirectUrls": [f"{live}/_sandbox/health", "https://second.example/"]})
    flow = start(remote, user)
    page.goto(flow["redirectUrl"])
    page.click("#deny")
    page.wait_for_url(f"{live}/_sandbox/health?**")
    page.shots("returned")
    query = parse_qs(urlsplit(page.url).query)
    assert query["status"] == ["OtherError"] and query["reference"] == [flow["authReference"]]
