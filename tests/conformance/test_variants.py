"""The faithful-variant matrix: the @contract suites pass against deployments that made other choices the spec
allows (variants.py), each published in its own document, and against all of them at once behind a hidden
control API (a deployment as far as the harness can tell, run in this process without pacing waits)."""

import io
import re
import time

import pytest

from ptas_sandbox.conformance import runner
from ptas_sandbox.simulator import create_app

from .variants import (
    VARIANTS,
    FullReplacePut,
    HiddenSandbox,
    ListSummaries,
    MalformedIds400,
    NoIds,
    OtherNames,
    StrictDeployTokens,
    StringUserToken,
    stack,
)


@pytest.fixture
def simulator():
    app = create_app({"STATE": ":memory:", "START_SERVICES": False})
    yield app
    app.extensions["ptas"].close()


@pytest.fixture
def roomy():
    """A simulator whose one world takes the whole run: the §8 limit raised, so nothing waits on a 429."""
    app = create_app({"STATE": ":memory:", "START_SERVICES": False, "RATE_LIMIT": 1_000_000})
    yield app
    app.extensions["ptas"].close()


@pytest.fixture(scope="module")
def plain_passed():
    """How many @contract scenarios pass against the simulator as it is: a variant must pass as many (none
    turned into a skip), the first user token's record checks included."""
    app = create_app({"STATE": ":memory:", "START_SERVICES": False})
    out = io.StringIO()
    try:
        runner.run(app=app, tags_expression="contract", out=out)
    finally:
        app.extensions["ptas"].close()
    return outcome(out.getvalue())[0]


def outcome(output):
    last = output.strip().splitlines()[-1]
    passed, failed = map(int, re.match(r"(\d+) passed, (\d+) failed", last).groups())
    return passed, failed


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.__name__ for v in VARIANTS])
def test_the_contract_suites_pass_against_a_faithful_variant(simulator, capsys, variant, plain_passed):
    wrapped = variant(simulator)
    overrides = wrapped.overrides() if hasattr(wrapped, "overrides") else None
    started = time.monotonic()
    status = runner.run(app=wrapped, tags_expression="contract", operations=overrides)
    output = capsys.readouterr().out
    passed, failed = outcome(output)
    assert status == 0 and failed == 0, f"{variant.name}: {output[-4000:]}"
    assert passed == plain_passed, f"{variant.name}: {passed} passed, {plain_passed} on the simulator\n{output[-3000:]}"
    assert "not offered by the target" not in output, f"{variant.name}: {output[-3000:]}"
    print(f"{variant.name}: {passed} passed in {time.monotonic() - started:.1f} s")


def test_the_contract_suites_pass_against_every_choice_at_once_on_a_deployment(roomy, capsys):
    """Deployment mode: the given partner token is "I", /_sandbox is gone, only @contract (not @slow) runs."""
    simulator = roomy
    created = simulator.test_client().post("/_sandbox/partners", json={"name": "QA", "email": "qa@example.test"})
    token = created.json["accessToken"]
    app = stack(simulator, FullReplacePut, StringUserToken, ListSummaries, StrictDeployTokens, NoIds, MalformedIds400,
                OtherNames, HiddenSandbox)
    names = app.app   # OtherNames sits under HiddenSandbox
    overrides = names.overrides()
    started = time.monotonic()
    status = runner.run(app=app, token=token, tags_expression="contract", operations=overrides)
    output = capsys.readouterr().out
    passed, failed = outcome(output)
    assert "deployment" in output.splitlines()[0] and status == 0 and failed == 0, output[-4000:]
    assert passed > 100, output[-3000:]
    assert "not offered by the target" not in output, output[-3000:]
    print(f"every choice at once, deployment mode: {passed} passed in {time.monotonic() - started:.1f} s")


def test_a_partial_put_fails_where_put_replaces_the_record(simulator):
    """The full-replace variant is a real difference: a PUT of one property is refused there."""
    client = FullReplacePut(simulator)
    from werkzeug.test import Client
    http = Client(client)
    token = simulator.test_client().post("/_sandbox/partners", json={"name": "P"}).json["accessToken"]
    reply = http.put("/partner/v2/partners/self", json={"email": "x@example.test"},
                     headers={"Authorization": f"Bearer {token}"})
    assert reply.status_code == 400 and "missing" in reply.get_data(as_text=True)


def test_the_other_names_variant_publishes_what_it_renamed(simulator):
    document = OtherNames(simulator).published
    create_account = next(op for item in document["paths"].values() for op in item.values()
                          if isinstance(op, dict) and op.get("operationId") == "svcCreateAccountV2")
    properties = create_account["requestBody"]["content"]["application/json"]["schema"]["properties"]
    assert {"accountType", "ownerId", "settings"} <= set(properties) and "accountTypeId" not in properties
