"""Deployments written blind, second round (blind_variants_b.py, with its own probe blind_probe_b.py): faithful
variants written from the spec's silences by someone who had not read the learner or the profile layer. Each is
profiled as `ptas conform --profile-out` profiles a staging environment; the profiled simulator must then answer
the probe as the deployment does, where the plain simulator does not, and publish what the deployment's own
document publishes."""

import pytest

from . import blind_probe_b as probe
from .blind_variants_b import BLIND
from .test_blind_variants import document, learned_through, simulator, world_token

# What the learner reads of the suites' own traffic is the pages of transactions, a 429, the answers to the paths
# the spec removed and what every answer carries beside its body: the transactions, limits and versioning
# scenarios hold all of it, and the probes run after any selection. For these ten variants, learning through them
# gives the profile the whole @contract run gives (`ptas conform --profile-out`'s default: every choice's value
# and every unknown the same), in about half of its time (the module in about 25 s, not 52 s, on two cores).
TAGS = "contract and (transactions or limits or versioning)"

# Variants whose choice no default run observes, with why: strict, so that one learned one day is noticed.
NOT_OBSERVED = {
    "TransactionsOwnLimit": "GetTransactions' own limit (10 per 60 s) is met only by spending it; the run stays "
                            "under every limit on purpose (profile: unknown operationLimits)",
    "PageSizeClamped": "a page size above 250 served as 250: the run asks for no page larger than the largest "
                       "served (profile: unknown pageSizeBeyond; the document's missing maximum is learned)",
    "RevokeTwice409": "revoking a revoked token: the run revokes each token once (profile: unknown "
                      "repeatedRevocation)",
}


def cases(variants, expected_failures, why):
    """The variants as parameters, those in `expected_failures` strict expected failures saying `why` and theirs."""
    for variant in variants:
        reason = expected_failures.get(variant.__name__)
        marks = [pytest.mark.xfail(strict=True, reason=f"{why}: {reason}")] if reason else []
        yield pytest.param(variant, id=variant.__name__, marks=marks)


@pytest.mark.parametrize("variant", list(cases(BLIND, NOT_OBSERVED, "not observed")))
def test_a_deployment_written_blind_is_reproduced(variant, plain_answers_b):
    assert not getattr(variant, "config", None)
    assert_reproduced(variant, lambda app: learned_through(variant(app()), TAGS), plain_answers_b)


def assert_reproduced(variant, learn, plain_answers):
    """The profile `learn(app)` gives (app() makes a simulator) serves the probe's answers and the document's
    observable parts as the deployment does, where the plain simulator answers otherwise."""
    made = []

    def app(**config):
        made.append(simulator(**config))
        return made[-1]
    try:
        profile = learn(app)
        inner, profiled = app(), app(PROFILE=profile)
        deployment = variant(inner)
        expected = probe.observe(deployment, world_token(inner))
        assert probe.compare(expected, plain_answers), f"{variant.name}: the deployment answers as the plain " \
                                                       "simulator does"
        differences = probe.compare(expected, probe.observe(profiled, world_token(profiled)))
        assert not differences, f"{variant.name}: " + "\n".join(
            f"{label}\n  deployment: {want}\n  profiled:   {have}" for label, want, have in differences[:4])
        documents = probe.compare_documents(document(deployment), document(profiled))
        assert not documents, f"{variant.name}: the documents differ: " + "\n".join(
            f"{what}\n  deployment: {want}\n  profiled:   {have}" for what, want, have in documents[:4])
    finally:
        for each in made:
            each.extensions["ptas"].close()
