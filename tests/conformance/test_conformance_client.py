"""The harness's own parts: operation resolution through a document, pacing, 429 handling, token masking."""

import pytest

from ptas_sandbox.conformance.client import Client, Limited, RunState, Throttle
from ptas_sandbox.conformance.redact import mask, redact
from ptas_sandbox.conformance.resolver import Operations, UnknownOperation
from ptas_sandbox.conformance.targets import in_process

DOCUMENT = {
    "servers": [{"url": "https://api.example/gateway"}],
    "paths": {
        "/partner/v2/partners/self/tokens/{tokenId}": {"delete": {"operationId": "RevokePartnerOwnToken"}},
        "/v2/users/{userId}": {"get": {"operationId": "ReadUser"}},
        "/v2/users": {"post": {"operationId": "CreateUser"}},
    },
}


class FakeClock:
    def __init__(self):
        self.now, self.slept = 0.0, []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


class Scripted:
    """A transport answering from a script, recording what was sent."""

    def __init__(self, *answers):
        self.answers, self.sent = list(answers), []

    def send(self, method, path, headers, data, query):
        self.sent.append((method, path, headers))
        return self.answers.pop(0)


def test_paths_come_from_the_document_under_its_server_path():
    ops = Operations(DOCUMENT)
    assert ops.resolve("RevokePartnerOwnToken", {"tokenId": "a/b"}) == (
        "DELETE", "/gateway/partner/v2/partners/self/tokens/a%2Fb")
    assert ops.prefix_of("/users") == "/gateway/v2"


def test_an_operation_the_spec_names_only_by_path_is_found_by_method_and_path():
    assert Operations(DOCUMENT).resolve("GetUser", {"id": "u1"}) == ("GET", "/gateway/v2/users/u1")


def test_an_operation_missing_from_the_document_is_reported_as_such():
    with pytest.raises(UnknownOperation, match="CreateAccount"):
        Operations(DOCUMENT).resolve("CreateAccount")


def test_a_document_given_with_openapi_replaces_the_targets_own(tmp_path):
    import json
    path = tmp_path / "openapi.json"
    path.write_text(json.dumps({"paths": {"/elsewhere/partners/self": {"get": {"operationId": "GetOwnPartner"}}}}))
    target = in_process(openapi=str(path))
    try:
        assert target.operations.resolve("GetOwnPartner") == ("GET", "/elsewhere/partners/self")
    finally:
        target.close()


def test_the_throttle_keeps_any_sixty_seconds_under_the_limit():
    clock = FakeClock()
    throttle = Throttle(3, 60, clock=clock, sleep=clock.sleep)
    for _ in range(4):
        throttle.wait()
        clock.now += 1
    assert sum(clock.slept) == 57.0         # the fourth waits until the first leaves the window


def test_a_long_wait_for_the_pace_is_said_again_while_it_lasts():
    """A paced run never goes a minute without a line: the wait is said every 15 s at most."""
    clock, said = FakeClock(), []
    throttle = Throttle(3, 60, clock=clock, sleep=clock.sleep, state=RunState(say=lambda s, why: said.append(s)))
    for _ in range(4):
        throttle.wait()
    assert sum(clock.slept) == 60.0 and max(clock.slept) <= 15.0
    assert said == [60.0, 45.0, 30.0, 15.0], said


def test_a_429_is_retried_after_the_time_it_names():
    clock = FakeClock()
    transport = Scripted((429, {"retry-after": "7"}, '{"status": 429}'), (200, {}, '{"ok": true}'))
    client = Client(transport, Operations(DOCUMENT), sleep=clock.sleep)
    reply = client.request("GET", "/x", token="t")
    assert reply.status == 200 and reply.body == {"ok": True} and clock.slept == [7.0]
    assert len(transport.sent) == 2 and transport.sent[0][2]["Authorization"] == "Bearer t"


def test_a_429_asking_for_more_than_two_windows_is_an_operations_own_limit_and_waited_for_by_nobody():
    """Spec §8: additional limits apply to some methods. A wait of an hour is not spent in part and then counted as
    a window that does not move: the call says it was limited, and the run's other calls go on."""
    clock, state = FakeClock(), RunState()
    transport = Scripted((429, {"retry-after": "3600"}, '{"status": 429}'), (200, {}, "{}"))
    client = Client(transport, Operations(DOCUMENT), sleep=clock.sleep, state=state)
    with pytest.raises(Limited, match="Retry-After of 3600 s, longer than the run waits for one call"):
        client.request("GET", "/x")
    assert clock.slept == [] and state.refusals == 0
    assert client.request("GET", "/x").status == 200


def test_a_429_that_says_nothing_of_when_is_retried_backing_off():
    """The spec does not show the 429's response: a faithful target may leave Retry-After out."""
    clock = FakeClock()
    refused = (429, {}, '{"status": 429}')
    transport = Scripted(refused, refused, refused, (200, {}, "{}"))
    reply = Client(transport, Operations(DOCUMENT), sleep=clock.sleep).request("GET", "/x")
    assert reply.status == 200 and clock.slept == [1.0, 2.0, 4.0]


def test_a_429_without_retry_after_is_the_answer_after_backing_off_longer_than_a_window():
    clock = FakeClock()
    transport = Scripted(*[(429, {}, "")] * 20)
    reply = Client(transport, Operations(DOCUMENT), sleep=clock.sleep).request("GET", "/x")
    assert reply.status == 429 and clock.slept == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0] and sum(clock.slept) > 60


@pytest.mark.parametrize("headers", [{"ratelimit-reset": "30"}, {"x-ratelimit-reset": "30"}])
def test_a_429_with_a_rate_limit_reset_header_waits_that_long(headers):
    clock = FakeClock()
    transport = Scripted((429, headers, ""), (200, {}, "{}"))
    assert Client(transport, Operations(DOCUMENT), sleep=clock.sleep).request("GET", "/x").status == 200
    assert clock.slept == [30.0]


@pytest.mark.parametrize("headers", [
    {"retry-after": "Thu, 26 Nov 2026 12:00:30 GMT", "date": "Thu, 26 Nov 2026 12:00:00 GMT"},
    {"x-ratelimit-reset": "1795694430", "date": "Thu, 26 Nov 2026 12:00:00 GMT"}])
def test_a_429_naming_a_moment_waits_from_the_answers_date_not_this_machines_clock(headers):
    """A target's clock (a deployment's, or a sandbox whose clock moved days ahead) is not this machine's: a
    Retry-After date two days past the local clock means 30 s when the answer's Date is 30 s before it."""
    clock = FakeClock()
    transport = Scripted((429, headers, ""), (200, {}, "{}"))
    assert Client(transport, Operations(DOCUMENT), sleep=clock.sleep).request("GET", "/x").status == 200
    assert clock.slept == [30.0]


def test_a_429_can_be_observed_instead_of_retried():
    transport = Scripted((429, {"retry-after": "7"}, ""))
    reply = Client(transport, Operations(DOCUMENT)).request("GET", "/x", honour_429=False)
    assert reply.status == 429


def test_tokens_are_never_shown_in_full():
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwYXJ0bmVyIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ"
    text = redact(f"failed with token {jwt} in the body")
    assert jwt not in text and mask(jwt) in text and mask(jwt).startswith("eyJhbG")


class Deployment:
    """A target without the control API (only what Scene needs of one)."""
    simulator, token, options = False, "given-token", {}

    def __init__(self, max_wait=600):
        from ptas_sandbox.conformance.waiting import Budget
        self.waited = []
        self.sleep = self.waited.append
        self.budget = Budget(max_wait)

    def client(self):
        return None


class Node:
    def __init__(self, *marks):
        self.marks = marks

    def get_closest_marker(self, name):
        return name if name in self.marks else None


@pytest.mark.parametrize("marks, allowed, reason", [
    ((), True, "only a simulator can move time"),
    (("slow",), False, "--quick leaves it out"),
    (("slow",), True, r"601 s of waiting; 600 s of the run's 600 s were left \(check with: --max-wait 601\)"),
])
def test_time_cannot_pass_on_a_deployment_unless_a_waiting_run_affords_it(marks, allowed, reason):
    from ptas_sandbox.conformance.scene import Scene
    scene = Scene(Deployment(), Node(*marks), slow_allowed=allowed)
    with pytest.raises(pytest.skip.Exception, match=reason):
        scene.time_passes(601 if reason.startswith("601 s") else 6)


def test_a_run_on_a_deployment_really_waits_by_default():
    from ptas_sandbox.conformance import scene as scenes
    target = Deployment()
    scenes.Scene(target, Node("slow"), slow_allowed=True).time_passes(6)
    assert target.waited == [6]            # the target's sleep: time.sleep, unless a test gives it a clock


def test_the_wait_budget_is_one_for_the_whole_run_not_per_scenario():
    from ptas_sandbox.conformance import scene as scenes
    target = Deployment(max_wait=7200)
    scenes.Scene(target, Node("slow"), slow_allowed=True).time_passes(3600)
    scenes.Scene(target, Node("slow"), slow_allowed=True).time_passes(3000)
    assert target.waited == [3600, 3000]
    with pytest.raises(pytest.skip.Exception, match="600 s of the run's 7200 s were left .check with: --max-wait 7201"):
        scenes.Scene(target, Node("slow"), slow_allowed=True).time_passes(601)
    assert target.waited == [3600, 3000]


def test_the_given_token_is_never_revoked_on_a_deployment():
    import base64
    import json

    from ptas_sandbox.conformance.scene import Scene
    payload = base64.urlsafe_b64encode(json.dumps({"jti": "given-id"}).encode()).decode().rstrip("=")
    deployment = Deployment()
    deployment.token = f"eyJhbGciOiJIUzI1NiJ9.{payload}.c2ln"
    scene = Scene(deployment)
    with pytest.raises(AssertionError, match="never revokes the token it was given"):
        scene.call("RevokePartnerOwnToken", params={"tokenId": "given-id"})
