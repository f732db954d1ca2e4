"""The hosted pages' safety and looks where only a browser can tell (issue 11 item 7): Enter in the consent
page's message field never approves, a quoted fontFamily applies, and framing follows the partner's list."""

import threading

import pytest
from werkzeug.serving import make_server
from werkzeug.wrappers import Response


def consent_url(remote, user):
    response = remote.post("/oauth", json={"accountTypeId": "dummy-auth", "userId": user["id"]})
    assert response.status_code == 201, response.text
    return response.json()


def test_enter_in_the_message_field_ends_with_the_error_not_an_approval(page, remote, user):
    flow = consent_url(remote, user)
    page.goto(flow["redirectUrl"])
    page.fill("#message", "Try again tomorrow")
    page.shots("typed")
    with page.expect_navigation():
        page.press("#message", "Enter")
    page.wait_for_selector("#result")
    page.shots("after-enter")
    assert page.get_attribute("#result", "data-status") == "NotFoundError"
    assert page.text_content("#result") == "Try again tomorrow"


@pytest.mark.parametrize("family, expected", [('"Open Sans", sans-serif', '"Open Sans", sans-serif'),
                                              ("'Fira Sans', serif", '"Fira Sans", serif')])
def test_a_quoted_font_family_applies(page, remote, family, expected):
    remote.put("/partners/self", json={"uiSettings": {"styling": {"fontFamily": family}}})
    page.goto(remote.post("/userui", json={}).json()["url"])
    page.shots("styled")
    assert page.eval_on_selector("body", "b => getComputedStyle(b).fontFamily") == expected


@pytest.fixture
def framer():
    """Another origin (its own port) whose page frames a URL given in its query."""
    def app(environ, start_response):
        from urllib.parse import parse_qs
        target = parse_qs(environ.get("QUERY_STRING", ""))["src"][0]
        html = f'<!doctype html><title>partner app</title><iframe id="hosted" src="{target}" width="600" height="600">'
        return Response(html, mimetype="text/html")(environ, start_response)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def test_only_the_partners_listed_origins_can_frame_its_pages(page, remote, framer):
    url = remote.post("/userui", json={}).json()["url"]
    page.goto(f"{framer}/?src={url}")
    page.wait_for_load_state("load")
    page.shots("refused")
    [hosted] = [f for f in page.frames if f != page.main_frame]
    assert hosted.query_selector("#register") is None, "the page did not render inside another site's frame"

    remote.put("/partners/self", json={"uiSettings": {"frameAncestors": [framer]}})
    url = remote.post("/userui", json={}).json()["url"]
    page.goto(f"{framer}/?src={url}")
    frame = page.frame_locator("#hosted")
    frame.locator("#name").fill("Framed Jane")
    frame.locator("#register").click()
    frame.locator("#result").wait_for()
    page.shots("allowed")
    assert "Framed Jane" in frame.locator("#result").text_content()
