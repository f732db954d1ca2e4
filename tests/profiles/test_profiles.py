"""Deployment → profile → profiled simulator → the same answers, for every faithful variant (issue 27).

Each faithful deployment (the matrix of tests/conformance/variants.py and the ones of variants.py here) is
profiled through the harness as `ptas conform --profile-out` profiles a staging environment; a simulator serves
the profile; a client written from the spec alone (spec_client.py) then makes the same requests of both and must
observe the same answers, where the plain simulator answers otherwise. The @contract suites pass against every
profiled simulator, and a profile learned from the plain simulator changes nothing.
"""

import io
import json
import os
import re
import tempfile

import pytest

from ptas_sandbox import profile as profiles
from ptas_sandbox.cli import main as ptas
from ptas_sandbox.conformance import runner
from ptas_sandbox.simulator import create_app
from tests.conformance.variants import VARIANTS, OtherNames, stack

from .spec_client import SpecClient
from .variants import MORE, AbsoluteTypes, Creates200, DeleteWithBody, Invalid422, ItemsLists, NewestFirst

FAITHFUL = VARIANTS + MORE


def simulator(**config):
    return create_app({"STATE": ":memory:", "START_SERVICES": False, **config})


def overrides_of(deployment):
    return deployment.overrides() if hasattr(deployment, "overrides") else []


def learned_through(deployment):
    """`ptas conform --tags 'contract and transactions' --profile-out FILE` against the deployment: the probes,
    and the pages of transactions the suites read."""
    out = io.StringIO()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "profile.json")
        status = runner.run(app=deployment, tags_expression="contract and transactions", out=out,
                            operations=overrides_of(deployment), profile_out=path)
        assert status == 0, out.getvalue()[-3000:]
        return profiles.load(path)


def world_token(app):
    return app.test_client().post("/_sandbox/partners", json={"name": "Partner"}).json["accessToken"]


def observed(app, token_of, overrides=()):
    return SpecClient(app, token_of, overrides).run()


@pytest.fixture
def apps():
    made = []

    def make(**config):
        app = simulator(**config)
        made.append(app)
        return app
    yield make
    for app in made:
        app.extensions["ptas"].close()


@pytest.fixture(scope="module")
def learned():
    """The profile of a variant, learned once per module (each through a simulator of its own)."""
    cache = {}

    def of(variant):
        if variant not in cache:
            app = simulator()
            try:
                cache[variant] = learned_through(variant(app))
            finally:
                app.extensions["ptas"].close()
        return cache[variant]
    return of


@pytest.fixture(scope="module")
def plain_answers():
    app = simulator()
    try:
        return observed(app, world_token(app))
    finally:
        app.extensions["ptas"].close()


@pytest.mark.parametrize("variant", FAITHFUL, ids=[v.__name__ for v in FAITHFUL])
def test_a_profiled_simulator_answers_as_the_deployment_it_was_learned_from(apps, learned, variant, plain_answers):
    inner = apps()
    deployment = variant(inner)
    profiled = apps(PROFILE=learned(variant))
    overrides = overrides_of(deployment)
    expected = observed(deployment, world_token(inner), overrides)
    got = observed(profiled, world_token(profiled), overrides)
    assert expected != plain_answers, f"{variant.name}: the deployment answers as the plain simulator does"
    differences = [(want, have) for want, have in zip(expected, got) if want != have]
    assert len(expected) == len(got) and not differences, \
        f"{variant.name}: " + "\n".join(f"{w}\n  profiled: {h}" for w, h in differences[:3])


def stacked(*layers):
    """A deployment of several variants' choices at once, each a layer over the next (the outermost names the
    operations): learned and served as one."""
    def deployment(app):
        return stack(app, *layers)
    deployment.name = deployment.__name__ = "+".join(layer.__name__ for layer in layers)
    return deployment


# A profiled simulator runs the @contract suites once per set of choices that can share a deployment (each
# serving path once), not once per variant. The matrix's variants change routes and names, which every scenario
# goes through: the whole suite. The others change statuses and shapes: the suite without the scope table (auth)
# and the version checks, which send the same requests to every route and take half of its time. Those that
# choose another form of the same thing (ids, page references) or that answer from the app itself run alone.
SHAPES = (Creates200, DeleteWithBody, Invalid422, AbsoluteTypes, NewestFirst, ItemsLists)
SUITES = [(stacked(*(v for v in VARIANTS if v is not OtherNames), OtherNames), "contract", 200),
          (stacked(*SHAPES), "contract and not auth and not versioning", 80)] + \
         [(v, "contract and not auth and not versioning", 80) for v in MORE if v not in SHAPES]


def contract_run(app, tags, overrides=()):
    out = io.StringIO()
    status = runner.run(app=app, tags_expression=tags, operations=list(overrides), out=out)
    output = out.getvalue()
    passed, failed = map(int, re.match(r"(\d+) passed, (\d+) failed", output.strip().splitlines()[-1]).groups())
    failures = {line.split("FAILED", 1)[1].strip() for line in output.splitlines() if "] FAILED " in line}
    return status, passed, failures, output


@pytest.mark.parametrize("variant, tags, at_least", SUITES, ids=[v.__name__ for v, _, _ in SUITES])
def test_the_contract_suites_pass_against_a_profiled_simulator(apps, learned, variant, tags, at_least):
    """A profiled simulator is a faithful deployment too: every scenario passes on it, as every one passes on the
    plain simulator (tests/conformance)."""
    deployment = variant(apps())
    profiled = apps(PROFILE=learned(variant))
    status, passed, failures, output = contract_run(profiled, tags, overrides_of(deployment))
    assert not failures and passed > at_least, f"{variant.name}: {output[-3000:]}"
    assert "not offered by the target" not in output, f"{variant.name}: {output[-3000:]}"


def test_a_profile_learned_from_the_plain_simulator_reproduces_it(apps, plain_answers):
    profile = learned_through(apps())
    profiled = apps(PROFILE=profile)
    plain = apps()
    assert profiled.test_client().get("/openapi.json").json == plain.test_client().get("/openapi.json").json
    assert observed(profiled, world_token(profiled)) == plain_answers
    assert profiles.known(profile, "put") == {"mode": "merge", "partialStatus": 200}
    assert profiles.known(profile, "createStatus")["CreateUser"] == 201
    assert profiles.known(profile, "ids") == {"format": "uuid", "malformedStatus": 404}


def test_a_profile_says_each_choice_with_its_evidence_and_holds_no_token(apps):
    profile = learned_through(apps())
    text = json.dumps(profile)
    assert profile["format"] == profiles.FORMAT and profile["version"] == profiles.VERSION
    assert not re.search(r"eyJ[A-Za-z0-9_-]{6,}", text) and "whsec_" not in text
    for name, entry in profile["choices"].items():
        assert entry["says"], name
        if name != "operations":
            assert entry["evidence"] and all("request" in seen and "response" in seen
                                              for seen in entry["evidence"]), name
    # no 429 and no removed path in these suites (the versioning scenarios call those); and what no run observes
    assert set(profile["unknown"]) == {"rateLimit", "removedPaths", "operationLimits", "repeatedRevocation",
                                       "pageSizeBeyond"}
    assert all(why for why in profile["unknown"].values())


def test_the_learned_choices_are_what_each_variant_chose(learned):
    from tests.conformance.variants import (
        FullReplacePut,
        ListSummaries,
        MalformedIds400,
        NoIds,
        OtherNames,
        StrictDeployTokens,
        StringUserToken,
    )

    from .variants import (
        AbsoluteTypes,
        Creates200,
        DeleteAcknowledged,
        DeleteWithBody,
        IntegerIds,
        Invalid422,
        ItemsLists,
        LinkReferences,
        NewestFirst,
        PageNumbers,
        Pages25,
        PrefixedIds,
        SharedNumbers,
    )
    value = lambda variant, name: profiles.known(learned(variant), name)
    assert value(FullReplacePut, "put") == {"mode": "replace", "partialStatus": 400}
    assert value(OtherNames, "operations")["GetUsers"]["operationId"] == "svcGetUsersV2"
    assert value(OtherNames, "operations")["CreateAccount"]["fields"]["accountTypeId"] == "accountType"
    assert value(OtherNames, "records")["GetWebhook"]["Webhook"] == {"callbackUrl": "targetUrl",
                                                                      "events": "eventTypes"}
    assert value(StringUserToken, "userToken") == "string"
    assert value(ListSummaries, "listEntries")["GetPartners"] == {"keys": ["id", "name"]}
    assert value(MalformedIds400, "ids")["malformedStatus"] == 400
    assert value(StrictDeployTokens, "deployTokens") == {"createsChildTokens": False, "status": 403}
    assert value(NoIds, "records")["GetAccount"]["Account"] == {"id": "accountId"}
    assert value(NoIds, "operations")["GetAccount"]["path"] == "/partner/v2/accounts/{accountId}"
    assert value(NoIds, "records")["GetReport"]["Report"] == {"id": "reportRef"}      # from its document
    assert not any(any(c.values()) for c in value(OtherNames, "records").get("GetReport", {}).values())
    assert set(value(Creates200, "createStatus").values()) == {200}
    assert value(DeleteWithBody, "deleteStatus")["DeleteUser"] == {"status": 200, "body": True, "answer": "record"}
    assert value(DeleteAcknowledged, "deleteStatus")["DeleteWebhook"]["answer"] == {
        "template": {"deleted": True, "id": "{id}"}}
    assert value(Invalid422, "invalidBody") == {"status": 422, "notJson": 422}
    assert value(AbsoluteTypes, "problems")["types"]["not-found"] == "https://problems.partner-api.example/not-found"
    assert "traceId" not in value(AbsoluteTypes, "problems")["members"]
    assert set(value(NewestFirst, "listOrder").values()) == {"newest first"}
    assert value(ItemsLists, "lists")["GetUsers"] == {"shape": "object", "key": "items"}
    assert value(Pages25, "paging")["pageSize"] == 25 and value(ItemsLists, "paging")["pageSize"] == 100
    assert value(Pages25, "paging")["referenceForm"] == "offset"
    assert value(PageNumbers, "paging")["referenceForm"] == "page" and value(PageNumbers, "paging")["firstPage"] == 1
    assert value(LinkReferences, "paging")["referenceForm"] == "opaque"
    assert value(LinkReferences, "paging")["url"] == {"absolute": True, "parameter": "pageReference"}
    assert value(ItemsLists, "paging")["referenceForm"] == "opaque"
    numbered = value(IntegerIds, "ids")
    assert numbered["format"] == "integer" and numbered["malformedStatus"] == 404
    assert set(numbered["kinds"]) >= {"user", "account", "partner", "webhook", "token", "transaction",
                                      "accountuisession", "useruisession", "dataimport"}
    assert numbered["kinds"]["user"] == {"form": "integer", "json": "string"} and "sequence" not in numbered
    assert value(SharedNumbers, "ids")["sequence"] == "shared"
    prefixed = value(PrefixedIds, "ids")["kinds"]
    assert prefixed["user"] == {"form": "prefixed", "prefix": "usr_", "rest": "string", "length": 20,
                                "alphabet": "base36"} and prefixed["webhook"]["prefix"] == "whk_"


def test_conform_writes_the_profile_and_prints_it_on_one_screen(apps, tmp_path):
    path = tmp_path / "staging.json"
    out = io.StringIO()
    status = runner.run(app=apps(), tags_expression="contract and users and not slow", out=out,
                        profile_out=str(path))
    text = out.getvalue()
    assert status == 0 and path.exists(), text[-2000:]
    summary = text[text.index("deployment profile of"):text.index("profile written to")]
    # one screen: a line per choice (how answers are dressed among them) and per choice not known
    assert len(summary.splitlines()) <= 30 and "PUT merges" in summary and "not known" in summary


def test_profile_show_and_diff_in_plain_words(learned, tmp_path, capsys):
    from tests.conformance.variants import FullReplacePut, MalformedIds400
    staging, production = tmp_path / "staging.json", tmp_path / "production.json"
    profiles.dump(learned(FullReplacePut), staging)
    profiles.dump(learned(MalformedIds400), production)
    assert ptas(["profile", "show", str(staging)]) == 0
    shown = capsys.readouterr().out
    assert "PUT replaces the record" in shown and "not known" in shown
    assert ptas(["profile", "diff", str(staging), str(staging)]) == 0
    assert "make the same choices" in capsys.readouterr().out
    assert ptas(["profile", "diff", str(staging), str(production)]) == 1
    differences = capsys.readouterr().out
    assert "PUT: merge or replace" in differences and "a malformed id answers 400" in differences
    assert "PUT replaces the record" in differences and "PUT merges" in differences


def test_a_file_that_is_not_a_profile_is_refused_in_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"choices": {}}')
    with pytest.raises(SystemExit) as exit:
        ptas(["profile", "show", str(bad)])
    assert exit.value.code == 2 and "not a deployment profile" in capsys.readouterr().err
    with pytest.raises(profiles.ProfileError):
        simulator(PROFILE=str(bad))


@pytest.mark.parametrize("variant, without_token, without_scope", [
    ("MalformedIds400", 400, 400), ("TokenFirstIds400", 401, 403)])
def test_the_order_of_the_checks_is_learned_and_served(apps, learned, variant, without_token, without_scope):
    """A malformed id answered before or after the token and its scope, as the deployment checks them."""
    from tests.conformance import variants as matrix

    from . import variants as more
    deployment = getattr(matrix, variant, None) or getattr(more, variant)
    profiled = apps(PROFILE=learned(deployment))
    client, token = profiled.test_client(), world_token(profiled)
    narrow = client.post("/partner/v2/partners/self/tokens", headers={"Authorization": f"Bearer {token}"},
                         json={"name": "narrow", "scope": "partner:read", "expiresIn": 3600}).json["accessToken"]
    answers = [client.get("/partner/v2/users/not-an-id", headers=headers).status_code
               for headers in ({}, {"Authorization": f"Bearer {narrow}"}, {"Authorization": f"Bearer {token}"})]
    assert answers == [without_token, without_scope, 400]
