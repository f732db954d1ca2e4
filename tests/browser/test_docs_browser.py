"""The API reference page in a real browser: Swagger UI renders our OpenAPI 3.1 document from assets served by
the sandbox itself (nothing fetched from elsewhere), and the home page links the docs, inspector and health."""

from urllib.parse import urlsplit


def test_docs_render_every_operation_offline(page, live):
    hosts = set()
    page.on("request", lambda request: hosts.add(urlsplit(request.url).netloc))
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{live}/docs")
    page.wait_for_selector("text=CreateUser", timeout=60_000)     # 1.5 MB of script to parse on a busy machine
    page.shots("docs")
    text = page.inner_text("body")
    assert "Unable to render" not in text and "Payment Transactions Aggregation Service" in text
    assert "OAS 3.1" in text
    assert "SandboxRequests" in text and "SandboxCountRequests" in text
    assert hosts == {urlsplit(live).netloc} and not errors
    # The spec's areas first, the sandbox's own operations last, its pages (the inspector) not at all.
    sections = [h.inner_text().split("\n")[0] for h in page.locator(".opblock-tag-section h3").all()]
    assert sections[0] == "Partners" and sections[-1] == "Sandbox", sections
    assert "SandboxInspectRequests" not in text
    page.click("button.authorize")
    schemes = [h.inner_text() for h in page.locator(".auth-container h4").all()]
    assert schemes and schemes[0].startswith("bearerAuth"), schemes


def test_an_operation_shows_its_working_example(page, live):
    page.goto(f"{live}/docs#/Sandbox/SandboxCountRequests")
    page.wait_for_selector("text=requestBody", timeout=60_000)
    assert "CreateUser" in page.inner_text("#swagger-ui")


def test_the_home_page_links_docs_inspector_and_health(page, live):
    page.goto(live + "/")
    for name, path in (("API reference", "/docs"), ("Inspector", "/_sandbox/inspect"), ("Health", "/_sandbox/health")):
        assert page.get_attribute(f"a:has-text('{name}')", "href") == path
    page.click("a:has-text('Health')")
    assert '"status": "ok"' in page.inner_text("body") or '"status":"ok"' in page.inner_text("body")
