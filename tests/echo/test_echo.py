"""The echo receiver and the inspector page (docs/design.md, the control API): capture anything, show it escaped."""

import base64

import pytest

from tests.support.problems import assert_problem


def test_echo_keeps_method_headers_body_and_time_of_any_content_type(api):
    api.post("/_sandbox/echo/bin-1", data="plain words", headers={"Content-Type": "text/plain", "X-Trace": "7"})
    api.post("/_sandbox/echo/bin-1", data={"a": "1"})
    api.post("/_sandbox/echo/bin-1", json={"hello": "world"})
    captures = api.get("/_sandbox/echo/bin-1").json["captures"]
    assert [c["contentType"] for c in captures] == ["text/plain", "application/x-www-form-urlencoded",
                                                    "application/json"]
    assert [c["body"] for c in captures] == ["plain words", "a=1", '{"hello": "world"}']
    assert all(c["method"] == "POST" and c["bodyEncoding"] == "utf-8" and c["receivedAt"].endswith("Z")
               for c in captures)
    assert captures[0]["headers"]["X-Trace"] == "7"


def test_a_token_sent_to_the_echo_is_kept_masked(api, world):
    """Whoever may read a bin (anyone, on a sandbox with no admin key) must not read a token sent there."""
    api.post("/_sandbox/echo/oops", json={"token": world.token}, headers={"Authorization": f"Bearer {world.token}"})
    [capture] = api.get("/_sandbox/echo/oops").json["captures"]
    assert world.token not in str(capture)
    assert capture["headers"]["Authorization"] == "Bearer [redacted]" and "[redacted]" in capture["body"]


def test_echo_keeps_binary_bodies_as_base64(api):
    raw = bytes(range(256))
    api.post("/_sandbox/echo/bin", data=raw, headers={"Content-Type": "application/octet-stream"})
    [capture] = api.get("/_sandbox/echo/bin").json["captures"]
    assert capture["bodyEncoding"] == "base64" and base64.b64decode(capture["body"]) == raw


def test_echo_answers_with_the_status_asked_for(api):
    response = api.post("/_sandbox/echo/bin?status=503", json={})
    assert response.status_code == 503 and response.json["captured"]
    assert len(api.get("/_sandbox/echo/bin").json["captures"]) == 1


@pytest.mark.parametrize("status", ["99", "404", "many"])
def test_echo_refuses_a_status_it_does_not_offer(api, status):
    assert_problem(api.post(f"/_sandbox/echo/bin?status={status}", json={}), 400, "invalid-parameter")
    assert api.get("/_sandbox/echo/bin").json["captures"] == []


def test_bins_are_separate(api):
    api.post("/_sandbox/echo/left", json={"side": "left"})
    assert api.get("/_sandbox/echo/right").json == {"bin": "right", "captures": []}


def test_any_path_segment_names_a_bin(api):
    api.post("/_sandbox/echo/caf%C3%A9%20bin", json={})
    assert len(api.get("/_sandbox/echo/café bin").json["captures"]) == 1


def test_a_body_over_the_limit_is_refused(api):
    assert_problem(api.post("/_sandbox/echo/big", data=b"x" * (1024 * 1024 + 1),
                            headers={"Content-Type": "text/plain"}), 413)
    assert api.get("/_sandbox/echo/big").json["captures"] == []


def test_echo_routes_are_documented(api):
    paths = api.get("/openapi.json").json["paths"]
    assert paths["/_sandbox/echo/{bin}"]["post"]["operationId"] == "SandboxEchoCapture"
    assert "*/*" in paths["/_sandbox/echo/{bin}"]["post"]["requestBody"]["content"]
    for path in ("/_sandbox/deliveries", "/_sandbox/webhooks/flush"):
        assert path in paths


