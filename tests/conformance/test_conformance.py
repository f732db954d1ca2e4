"""The conformance suites against the in-process simulator: every scenario of features/ is a test here.

The harness (targets, scene, step modules) comes in as a plugin, exactly as `ptas conform` loads it, so a
scenario that fails here fails for a QA team running the suites too.
"""

from pytest_bdd import scenarios
from pytest_bdd.feature import get_features
from pytest_bdd.scenario import get_step_function

from ptas_sandbox.conformance import FEATURES

scenarios(FEATURES)


def test_every_step_of_every_feature_is_bound(request):
    """A step without a definition would only fail when its scenario runs; find them all at once, by name."""
    unbound = []
    for feature in get_features([FEATURES]):
        for template in feature.scenarios.values():
            contexts = [c for table in template.examples for c in table.as_contexts()] or [{}]
            for context in contexts:
                for step in template.render(context).steps:
                    if get_step_function(request, step) is None:
                        unbound.append(f"{feature.rel_filename}:{step.line_number}: {step.keyword} {step.name}")
    assert not unbound, "steps without a definition:\n" + "\n".join(sorted(set(unbound)))


def test_every_feature_names_one_area_and_its_spec_section():
    from ptas_sandbox.conformance.tags import AREAS
    for feature in get_features([FEATURES]):
        areas = [t for t in feature.tags if t in AREAS]
        assert len(areas) == 1, f"{feature.rel_filename}: one area tag, got {sorted(feature.tags)}"
        assert any(t.startswith("spec-") for t in feature.tags), f"{feature.rel_filename}: no @spec-N tag"
        for template in feature.scenarios.values():
            kinds = {"contract", "sandbox"} & set(template.tags)
            assert len(kinds) == 1, f"{feature.rel_filename}: {template.name!r} is @contract or @sandbox"
