"""The faithful-variant matrix: the @contract suites pass against deployments that made other choices the spec
allows (variants.py), each published in its own document, and against all of them at once behind a hidden
control API (a deployment as far as the harness can tell, run in this process without pacing waits)."""

import io
import re
import time

import pytest

from ptas_sandbox.conformance import runner
from ptas_sandbox.simulator import create_app
from tests.support.deployments import Deployment

from .dialects import DIALECTS
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
    Variant,
    problem,
    request_schema,
    stack,
)


@pytest.fixture
def simulator():
    app = create_app({"STATE": ":memory:", "START_SERVICES": False})
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


def test_the_contract_suites_pass_against_every_variant_at_once(simulator, capsys, plain_passed):
    """Every choice of the matrix, stacked on one simulator (the outermost names the operations): each choice's
    path is taken in one run of the whole @contract suite, rather than once per variant (each path once). A
    choice that masked another's would hide it here; none of the matrix touches what another one changes."""
    top = stack(simulator, *(v for v in VARIANTS if v is not OtherNames), OtherNames)
    started = time.monotonic()
    status = runner.run(app=top, tags_expression="contract", operations=top.overrides())
    output = capsys.readouterr().out
    passed, failed = outcome(output)
    assert status == 0 and failed == 0, output[-4000:]
    assert passed == plain_passed, f"{passed} passed, {plain_passed} on the simulator\n{output[-3000:]}"
    assert "not offered by the target" not in output, output[-3000:]
    print(f"every variant at once: {passed} passed in {time.monotonic() - started:.1f} s")


def test_the_contract_suites_pass_against_every_dialect_at_once(simulator, capsys, plain_passed):
    """dialects.py: other JSON writers, HTTP dressing, upper-case ids, links beside a list's entries, booking texts
    that start with a date, a createdAt search by day. Each once failed a scenario that read bytes or member
    order, took any date-shaped text for a date-time, or assumed the simulator's reading of the search."""
    status = runner.run(app=stack(simulator, *DIALECTS), tags_expression="contract")
    output = capsys.readouterr().out
    passed, failed = outcome(output)
    assert status == 0 and failed == 0, output[-4000:]
    assert passed == plain_passed and "not offered by the target" not in output, output[-3000:]


def test_the_contract_suites_pass_against_every_choice_at_once_on_a_deployment(capsys):
    """A default deployment run: the given partner token is "I", /_sandbox is gone, the scenarios that wait for
    time or data included (on the deployment's clock, reusing the two-day-old accounts of its world)."""
    deployment = Deployment().with_history()   # the §8 limit as the spec states it: the run paces itself
    app = stack(deployment.app, FullReplacePut, StringUserToken, ListSummaries, StrictDeployTokens, NoIds,
                MalformedIds400, OtherNames, HiddenSandbox)
    names = app.app   # OtherNames sits under HiddenSandbox
    overrides = names.overrides()
    started = time.monotonic()
    try:
        status = runner.run(app=app, token=deployment.token, tags_expression="contract", operations=overrides,
                            clock=deployment.clock)
    finally:
        deployment.close()
    output = capsys.readouterr().out
    passed, failed = outcome(output)
    assert "deployment" in output.splitlines()[0] and status == 0 and failed == 0, output[-4000:]
    assert passed > 100, output[-3000:]
    assert "not offered by the target" not in output, output[-3000:]
    for area in ("transactions", "reports", "limits"):
        assert re.search(rf"\] PASSED +{area} ", output), f"{area} not checked\n{output[-3000:]}"
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


# -- issue 22: the §4.3 operations of a deployment whose operationIds differ, without --operation -----------------
class LegacyAccounts(Variant):
    """A second GET …/accounts collection in the document (an older version kept): GetAccounts is ambiguous."""

    name = "two account collections"

    def publish(self, document):
        document["paths"]["/partner/v1/accounts"] = {"get": {"operationId": "legacyListAccounts",
                                                             "responses": {"200": {"description": "old"}}}}
        return document


def test_a_deployment_with_other_operation_ids_needs_no_operation_lines_where_its_document_is_plain(capsys):
    deployment = Deployment()
    app = stack(deployment.app, OtherNames, HiddenSandbox)
    try:
        status = runner.run(app=app, token=deployment.token, tags_expression="contract and (accounts or users)",
                            clock=deployment.clock, quick=True)
    finally:
        deployment.close()
    output = capsys.readouterr().out
    assert status == 0 and "not offered by the target" not in output, output[-3000:]
    assert "found GetAccounts at GET /partner/v2/accounts (the only GET of that shape" in output
    assert "--operation '" not in output


def test_an_ambiguous_operation_is_never_guessed_and_the_printed_line_can_be_filled_in_a_file(capsys, tmp_path):
    deployment = Deployment()
    app = stack(deployment.app, OtherNames, LegacyAccounts, HiddenSandbox)
    try:
        runner.run(app=app, token=deployment.token, tags_expression="contract and accounts", clock=deployment.clock,
                   quick=True)
        output = capsys.readouterr().out
        line = next(line for line in output.splitlines() if line.startswith("  --operation 'GetAccounts="))
        assert "# one of: GET /partner/v2/accounts, GET /partner/v1/accounts" in line, line
        assert re.search(r"\] SKIPPED +accounts +.*\n +not offered by the target: .*GetAccounts", output)
        (tmp_path / "operations.txt").write_text(line.replace("/PATH", "/partner/v2/accounts") + "\n# done\n")
        status = runner.run(app=app, token=deployment.token, tags_expression="contract and accounts",
                            clock=deployment.clock, quick=True,
                            operations=runner.read_operations(str(tmp_path / "operations.txt")))
    finally:
        deployment.close()
    output = capsys.readouterr().out
    assert status == 0 and "not offered by the target" not in output, output[-3000:]


# -- spec §5 rule 6: a user token lasts the partner's userTokenExpirySeconds, where the harness can ask for it ------
RENEWALS = ("A token the partner issues for its user lasts the partner's user token lifetime",
            "A token a user issues for itself lasts the partner's user token lifetime")
EXPIRY = "A user token is refused once the partner's user token lifetime has passed"


class RenewalsRequireALifetime(Variant):
    """CreateUserToken and CreateOwnUserToken require expiresIn (spec §4.2: their payloads are not shown): the
    harness cannot ask for the partner's default lifetime there."""

    name = "renewals require expiresIn"

    def publish(self, document):
        for operation in ("CreateUserToken", "CreateOwnUserToken"):
            schema = request_schema(document, operation)
            schema["required"] = sorted(set(schema.get("required", [])) | {"expiresIn"})
        return document

    def request(self, operation, environ, body):
        if operation in ("CreateUserToken", "CreateOwnUserToken") and "expiresIn" not in (body or {}):
            return problem(400, "expiresIn is required")
        return body


class UserTokensAtLeastAMinute(Variant):
    """userTokenExpirySeconds of at least 60 (spec §2 shows the setting, no range for it)."""

    name = "userTokenExpirySeconds >= 60"

    def publish(self, document):
        schema = request_schema(document, "UpdatePartner")
        schema["properties"]["userTokenExpirySeconds"] = {"type": "integer", "minimum": 60}
        return document

    def request(self, operation, environ, body):
        if operation == "UpdatePartner" and isinstance(body, dict) and body.get("userTokenExpirySeconds", 60) < 60:
            return problem(400, "userTokenExpirySeconds must be at least 60")
        return body


@pytest.mark.parametrize("variant, skipped", [(RenewalsRequireALifetime, RENEWALS), (UserTokensAtLeastAMinute,
                                                                                     (EXPIRY,))],
                         ids=["renewals_require_a_lifetime", "user_tokens_at_least_a_minute"])
def test_a_user_token_lifetime_the_harness_cannot_set_is_not_checked_rather_than_failed(simulator, capsys, variant,
                                                                                      skipped):
    status = runner.run(app=variant(simulator), tags_expression="contract and users")
    output = capsys.readouterr().out
    assert status == 0 and outcome(output)[1] == 0, output[-4000:]
    for scenario in skipped:
        assert re.search(rf"\] SKIPPED +users +{re.escape(scenario)}\n", output), output[-4000:]
    for scenario in set(RENEWALS + (EXPIRY,)) - set(skipped):
        assert re.search(rf"\] PASSED +users +{re.escape(scenario)}\n", output), output[-4000:]
