"""A profile reaches the simulator the ways a developer starts one: `ptas serve --profile` and the fixtures'
`--ptas-profile` (a partner's own tests against its staging environment's choices)."""

import io
from urllib.parse import parse_qsl, urlsplit

import pytest

from ptas_sandbox import profile as profiles
from ptas_sandbox.cli import main as ptas
from ptas_sandbox.conformance import runner
from ptas_sandbox.conformance.profile_learn import learn
from ptas_sandbox.conformance.targets import in_process
from ptas_sandbox.simulator import create_app
from tests.support.pages import post_form

from .variants import Creates200

pytest_plugins = ["pytester"]

PARTNER_TEST = '''
def test_create_user(ptas_partner):
    reply = ptas_partner.call("POST", "/users", json={"name": "Jane"})
    assert reply.status_code == EXPECTED, reply.text
'''


@pytest.fixture(scope="module")
def creates_200(tmp_path_factory):
    """The profile of a deployment whose creates answer 200."""
    app = create_app({"STATE": ":memory:", "START_SERVICES": False})
    try:
        path = tmp_path_factory.mktemp("profiles") / "staging.json"
        profiles.dump(learn(in_process(Creates200(app))), path)
        return path
    finally:
        app.extensions["ptas"].close()


@pytest.mark.parametrize("with_profile", [True, False], ids=["--ptas-profile", "no profile"])
def test_the_fixtures_answer_as_the_profiled_deployment(pytester, creates_200, with_profile):
    pytester.makepyfile(test_partner=PARTNER_TEST.replace("EXPECTED", "200" if with_profile else "201"))
    options = ["--ptas-profile", str(creates_200)] if with_profile else []
    pytester.runpytest_inprocess("-p", "no:cacheprovider", *options).assert_outcomes(passed=1)


def test_serve_refuses_a_file_that_is_not_a_profile_in_one_line(tmp_path, capsys):
    bad = tmp_path / "staging.json"
    bad.write_text('{"format": "ptas-deployment-profile", "version": 99, "choices": {}}')
    with pytest.raises(SystemExit) as exit:
        ptas(["serve", "--state", ":memory:", "--port", "0", "--profile", str(bad)])
    err = capsys.readouterr().err
    assert exit.value.code == 2 and "version 99" in err and len(err.strip().splitlines()) == 1


def strict_profile():
    """A profile that knows one choice only: deploy tokens do not create child partners' tokens."""
    return {"format": profiles.FORMAT, "version": profiles.VERSION, "target": "staging", "unknown": {},
            "choices": {"deployTokens": {"value": {"createsChildTokens": False, "status": 403},
                                         "says": "a deploy token creates child partners only", "evidence": []}}}


def test_a_profile_changes_only_what_it_knows_and_never_vouches_for_a_forged_token():
    import jwt
    app = create_app({"STATE": ":memory:", "START_SERVICES": False, "PROFILE": strict_profile()})
    try:
        client = app.test_client()
        root = client.post("/_sandbox/partners", json={"name": "P"}).json["accessToken"]
        auth = {"Authorization": f"Bearer {root}"}
        deploy = client.post("/partner/v2/partners/self/tokens", headers=auth,
                             json={"name": "deploy", "scope": "partner:create", "expiresIn": 7200})
        assert deploy.status_code == 201      # the simulator's own status: the profile does not know it
        child = client.post("/partner/v2/partners", json={"name": "Child", "email": "c@partner.example"},
                            headers={"Authorization": f"Bearer {deploy.json['accessToken']}"})
        assert child.status_code == 201
        path = f"/partner/v2/partners/{child.json['id']}/tokens"
        body = {"name": "t", "scope": "partner:read", "expiresIn": 7200}
        refused = client.post(path, json=body, headers={"Authorization": f"Bearer {deploy.json['accessToken']}"})
        assert refused.status_code == 403 and refused.content_type == "application/problem+json"
        forged = jwt.encode({**jwt.decode(deploy.json["accessToken"], options={"verify_signature": False})},
                            "a secret that is not the sandbox's own, 32+ bytes", algorithm="HS256")
        assert client.post(path, json=body, headers={"Authorization": f"Bearer {forged}"}).status_code == 401
        assert client.post(path, json=body, headers=auth).status_code == 201
        assert client.get("/partner/v2/users/not-an-id", headers=auth).status_code == 404
    finally:
        app.extensions["ptas"].close()


def test_learning_on_a_deployment_uses_the_given_token_and_leaves_nothing_behind(tmp_path):
    """Deployment mode (no control API, one partner token, paced on a clock the test moves): the probes' users,
    webhook, child partner and account are deleted and their deploy token revoked."""
    from ptas_sandbox.conformance import runner
    from tests.support.deployments import Deployment, HideSandbox
    deployment = Deployment()
    try:
        path = tmp_path / "staging.json"
        status = runner.run(app=HideSandbox(deployment.app), token=deployment.token, clock=deployment.clock,
                            tags_expression="contract and users and not slow", profile_out=str(path),
                            out=io.StringIO())
        profile = profiles.load(path)
        assert status == 0 and profiles.known(profile, "put")["mode"] == "merge"
        assert deployment.token[-12:] not in path.read_text()
        client, auth = deployment.app.test_client(), {"Authorization": f"Bearer {deployment.token}"}
        for listing, key in (("/partner/v2/users", "users"), ("/partner/v2/webhooks", "webhooks"),
                             ("/partner/v2/partners", "partners"), ("/partner/v2/accounts", "accounts")):
            left = [e for e in client.get(listing, headers=auth).json[key]
                    if "ptas profile" in str(e) and not e.get("deletedAt")]       # deleted users stay listed
            assert left == [], listing
        tokens = client.get("/partner/v2/partners/self/tokens", headers=auth).json["tokens"]
        assert all(t["isRevoked"] for t in tokens if t["name"] == "ptas profile deploy")
    finally:
        deployment.close()


def test_a_429_answers_as_the_profile_says(tmp_path):
    profile = strict_profile()
    profile["choices"] = {"rateLimit": {"value": {"status": 429, "headers": [], "members": ["status", "title"]},
                                        "says": "a 429 carries no rate-limit header", "evidence": []}}
    app = create_app({"STATE": ":memory:", "START_SERVICES": False, "RATE_LIMIT": 2, "PROFILE": profile})
    plain = create_app({"STATE": ":memory:", "START_SERVICES": False, "RATE_LIMIT": 2})
    try:
        for served, retry_after in ((app, False), (plain, True)):
            client = served.test_client()
            auth = {"Authorization": "Bearer " + client.post("/_sandbox/partners", json={"name": "P"}).json[
                "accessToken"]}
            replies = [client.get("/partner/v2/partners/self", headers=auth) for _ in range(3)]
            assert [r.status_code for r in replies] == [200, 200, 429]
            assert ("Retry-After" in replies[-1].headers) is retry_after
    finally:
        app.extensions["ptas"].close()
        plain.extensions["ptas"].close()


def test_an_operation_the_deployment_serves_elsewhere_is_not_at_the_simulators_path():
    profile = strict_profile()
    profile["choices"] = {"operations": {"value": {"GetUsers": {"method": "GET", "path": "/v2/users",
                                                                "operationId": "listUsers"}},
                                         "says": "GetUsers lives at GET /v2/users", "evidence": []}}
    app = create_app({"STATE": ":memory:", "START_SERVICES": False, "PROFILE": profile})
    try:
        client = app.test_client()
        auth = {"Authorization": "Bearer " + client.post("/_sandbox/partners", json={"name": "P"}).json["accessToken"]}
        assert client.get("/v2/users", headers=auth).json == {"users": []}
        moved = client.get("/partner/v2/users", headers=auth)
        assert moved.status_code == 404 and moved.content_type == "application/problem+json"
        assert client.post("/partner/v2/users", json={"name": "Ann"}, headers=auth).status_code == 201
        document = client.get("/openapi.json").json
        assert document["paths"]["/v2/users"]["get"]["operationId"] == "listUsers"
        assert "get" not in document["paths"]["/partner/v2/users"]
    finally:
        app.extensions["ptas"].close()


@pytest.mark.parametrize("variant, headers", [
    ("RateLimitHeaders", ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "retry-after"]),
    ("NoRetryAfter", []),       # the run backs off with no word of when, and learns that the 429 says none
])
def test_a_429_met_by_the_run_is_served_as_the_deployment_shapes_it(tmp_path, variant, headers):
    """The run meets the deployment's 429 (a limit of 2 reads of transactions per minute, waited out on a clock
    the test moves); the profiled simulator, under the same limit, answers the spec client's third read with the
    same headers and members, where the plain simulator answers otherwise."""
    from tests.support.deployments import Clock

    from . import variants
    from .spec_client import SpecClient
    from .test_profiles import world_token
    RateLimitHeaders = getattr(variants, variant)
    made = []

    def app(**config):
        made.append(create_app({"STATE": ":memory:", "START_SERVICES": False, **RateLimitHeaders.config, **config}))
        return made[-1]
    try:
        clock, path = Clock(), tmp_path / "staging.json"
        inner = app(SYSTEM_TIME=clock)
        out = io.StringIO()
        status = runner.run(app=RateLimitHeaders(inner), tags_expression="contract and transactions", clock=clock,
                            profile_out=str(path), out=out)
        assert status == 0, out.getvalue()[-3000:]
        rate = profiles.known(profiles.load(path), "rateLimit")
        assert rate == {"status": 429, "headers": headers, "members": ["detail", "instance", "status", "title", "type"],
                        **({"retryAfter": "seconds"} if "retry-after" in headers else {})}
        answers = []
        for target in (RateLimitHeaders(app()), app(PROFILE=str(path)), app()):
            inner_app = getattr(target, "app", target)
            answers.append([seen for seen in SpecClient(target, world_token(inner_app)).run()
                            if len(seen) > 1 and seen[1] == 429])
        deployment, profiled, plain = answers
        assert deployment and deployment == profiled and plain != deployment, (deployment, profiled, plain)
    finally:
        for each in made:
            each.extensions["ptas"].close()


def numbered_profile():
    """A profile whose deployment numbers its records per kind (learned so by IntegerIds in test_profiles.py)."""
    kinds = {kind: {"form": "integer", "json": "string"}
             for kind in ("user", "account", "partner", "webhook", "useruisession")}
    return {"format": profiles.FORMAT, "version": profiles.VERSION, "target": "staging", "unknown": {},
            "choices": {"ids": {"value": {"format": "integer", "malformedStatus": 404, "kinds": kinds},
                                "says": "ids are integers", "evidence": []}}}


def test_numbered_ids_reach_webhook_payloads_stay_after_a_restart_and_stay_in_their_world(durable_store):
    from ptas_sandbox.conformance.steps.account_types import form_for
    from ptas_sandbox.webhooks import verify

    config = {"STATE": durable_store, "START_SERVICES": False, "PROFILE": numbered_profile()}
    app = create_app(config)
    client = app.test_client()
    token = client.post("/_sandbox/partners", json={"name": "P"}).json["accessToken"]
    auth = {"Authorization": f"Bearer {token}"}
    user = client.post("/partner/v2/users", json={"name": "Ann"}, headers=auth).json
    hook = client.post("/partner/v2/webhooks", headers=auth, json={
        "callbackUrl": "http://localhost/_sandbox/echo/ids", "events": ["AccountCreated"]}).json
    dummy = client.get("/partner/v2/accounttypes/dummy", headers=auth).json
    account = client.post("/partner/v2/accounts", headers=auth, json={
        "accountTypeId": "dummy", "userId": user["id"], "credentials": form_for(dummy)})
    assert (user["id"], hook["id"], account.status_code, account.json["id"], account.json["userId"]) == \
        ("1", "1", 201, "1", "1"), account.json
    assert client.post("/_sandbox/webhooks/flush", headers=auth).status_code == 200
    [capture] = client.get("/_sandbox/echo/ids", headers=auth).json["captures"]
    stamp = int(capture["headers"]["Webhook-Timestamp"])
    payload = verify(hook["secret"], capture["headers"], capture["body"], now=stamp)   # signed as it is sent
    assert payload["data"]["account"]["id"] == "1" and payload["data"]["userId"] == "1"
    session = client.post("/partner/v2/userui", headers=auth, json={"redirectUrl": "https://app.example/done"}).json
    registered = post_form(client, urlsplit(session["url"]).path, {"name": "Bo", "email": "bo@example.test"})
    assert session["id"] == "1" and registered.status_code == 302       # the person's browser, with no token
    assert dict(parse_qsl(urlsplit(registered.headers["Location"]).query)) == {
        "sessionId": "1", "status": "Completed", "userId": "2"}
    app.extensions["ptas"].close()

    again = create_app(config).test_client()          # the same state: the numbers mean the same records
    assert again.get("/partner/v2/users/1", headers=auth).json["name"] == "Ann"
    assert again.get("/partner/v2/accounts", headers=auth).json["accounts"][0]["userId"] == "1"
    assert again.get("/partner/v2/users/2", headers=auth).json["name"] == "Bo"
    assert again.get("/partner/v2/users/3", headers=auth).status_code == 404          # never given
    assert again.get("/partner/v2/users/not-a-number", headers=auth).status_code == 404
    other = again.post("/_sandbox/partners", json={"name": "Q"}).json["accessToken"]
    assert again.get("/partner/v2/users/1", headers={"Authorization": f"Bearer {other}"}).status_code == 404


@pytest.mark.parametrize("members", [["detail", "status", "title", "type"],
                                     ["detail", "instance", "status", "title", "traceId", "type"]])
def test_a_refusal_of_the_layers_own_has_the_members_the_deployment_gave_in_that_situation(members):
    """A malformed id refused with 400: the members the deployment's own refusal had, whatever other problems
    had (a deployment's refusal may be built apart from its other problems, or as they are)."""
    profile = {"format": profiles.FORMAT, "version": profiles.VERSION, "target": "staging", "unknown": {},
               "choices": {"ids": {"value": {"format": "uuid", "malformedStatus": 400}, "says": "", "evidence": []},
                           "problems": {"value": {"members": ["detail", "instance", "status", "title", "traceId",
                                                              "type"],
                                                  "types": {"malformed-id": "about:blank"},
                                                  "situations": {"malformed-id": members}},
                                        "says": "", "evidence": []}}}
    app = create_app({"STATE": ":memory:", "START_SERVICES": False, "PROFILE": profile})
    client = app.test_client()
    token = client.post("/_sandbox/partners", json={"name": "P"}).json["accessToken"]
    refused = client.get("/partner/v2/users/not-an-id", headers={"Authorization": f"Bearer {token}"})
    assert refused.status_code == 400 and sorted(refused.json) == members and refused.json["type"] == "about:blank"
    assert refused.json.get("instance", "/partner/v2/users/not-an-id") == "/partner/v2/users/not-an-id"
    app.extensions["ptas"].close()
