"""Deployments written blind (issue 37): faithful variants written from the spec's silences by someone who never
read the learner or the profile layer, with a probe of their own (blind_variants.py, blind_probe.py). Each is
profiled as `ptas conform --profile-out` profiles a staging environment; the profiled simulator must then answer
the probe as the deployment does, where the plain simulator does not, and publish what the deployment's own
document publishes."""

import io
import json
import os
import tempfile

import pytest
from werkzeug.test import Client

from ptas_sandbox import profile as profiles
from ptas_sandbox.conformance import runner
from ptas_sandbox.simulator import create_app

from . import blind_probe
from .blind_variants import BLIND

# Variants whose choice is not learned or served yet, with what is missing.
NOT_YET = {
}


def simulator(**config):
    return create_app({"STATE": ":memory:", "START_SERVICES": False, **config})


def world_token(app):
    return app.test_client().post("/_sandbox/partners", json={"name": "Partner"}).json["accessToken"]


def learned_through(deployment, tags="contract and transactions"):
    """The profile `ptas conform --profile-out` learns of `deployment`, running the scenarios `tags` selects."""
    out = io.StringIO()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "profile.json")
        status = runner.run(app=deployment, tags_expression=tags, out=out, profile_out=path)
        assert status == 0, out.getvalue()[-3000:]
        return profiles.load(path)


def document(app):
    return json.loads(Client(app).get("/openapi.json").get_data(as_text=True))


def cases():
    for variant in BLIND:
        marks = [pytest.mark.xfail(strict=True, reason=f"not learned yet: {NOT_YET[variant.__name__]}")] \
            if variant.__name__ in NOT_YET else []
        yield pytest.param(variant, id=variant.__name__, marks=marks)


@pytest.mark.parametrize("variant", list(cases()))
def test_a_deployment_written_blind_is_reproduced(variant):
    config = dict(getattr(variant, "config", {}) or {})
    made = []

    def app(**more):
        made.append(simulator(**config, **more))
        return made[-1]
    try:
        learning = app()
        profile = learned_through(variant(learning))
        inner, profiled, plain = app(), app(PROFILE=profile), app()
        deployment = variant(inner)
        expected = blind_probe.observe(deployment, world_token(inner))
        got = blind_probe.observe(profiled, world_token(profiled))
        assert blind_probe.compare(expected, blind_probe.observe(plain, world_token(plain))), \
            f"{variant.name}: the deployment answers as the plain simulator does"
        differences = blind_probe.compare(expected, got)
        assert not differences, f"{variant.name}: " + "\n".join(
            f"{label}\n  deployment: {want}\n  profiled:   {have}" for label, want, have in differences[:4])
        documents = blind_probe.compare_documents(document(deployment), document(profiled))
        assert not documents, f"{variant.name}: the documents differ: " + "\n".join(
            f"{what}\n  deployment: {want}\n  profiled:   {have}" for what, want, have in documents[:4])
    finally:
        for each in made:
            each.extensions["ptas"].close()
