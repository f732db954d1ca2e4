"""pytest-bdd finds a step's definition by asking pytest, for every fixture name of the session, which definitions
the scenario sees, and only then trying each step definition's parser on the step's text: for every step of every
scenario (`pytest_bdd.scenario.find_fixturedefs_for_step`). With this project's few hundred fixtures that search
was a third of a whole run's time. Which step definitions a scenario sees depends only on where it lives (its
module), so they are listed once per module and pytest session, in pytest-bdd's own order, and each step tries
only their parsers. pytest-bdd offers no hook for the lookup: the replacement keeps its signature and lists again
whenever the session's fixtures changed."""

import importlib
from collections.abc import Iterator
from typing import Any

from pytest_bdd.compat import get_fixture_names, getfixturedefs

# the module: `pytest_bdd.scenario` as an attribute of the package is the decorator of that name
bdd_scenario = importlib.import_module("pytest_bdd.scenario")
_SEEN = "_ptas_step_definitions"
PYTEST_BDDS = bdd_scenario.find_fixturedefs_for_step     # what it replaces (a test compares the two)


def _step_definitions(fixturemanager: Any, node: Any) -> list[tuple[Any, Any]]:
    """(fixture definition, step context) of every step definition `node` sees, in pytest-bdd's order."""
    names = get_fixture_names(fixturemanager=fixturemanager)
    seen = fixturemanager.__dict__.setdefault(_SEEN, {})
    key = (node.nodeid.split("::", 1)[0], len(names))
    found = seen.get(key)
    if found is None:
        registry = bdd_scenario.step_function_context_registry
        found = seen[key] = [(fixturedef, registry[fixturedef.func]) for name in names
                             for fixturedef in getfixturedefs(fixturemanager, name, node) or []
                             if fixturedef.func in registry]
    return found


def find_fixturedefs_for_step(step: Any, fixturemanager: Any, node: Any) -> Iterator[Any]:
    """pytest-bdd's search, over the step definitions listed once (`_step_definitions`)."""
    for fixturedef, context in _step_definitions(fixturemanager, node):
        if (context.type is None or context.type == step.type) and context.parser.is_matching(step.name):
            yield fixturedef


def install() -> None:
    """Idempotent: the conformance plugin installs it when pytest configures."""
    bdd_scenario.find_fixturedefs_for_step = lambda step, fixturemanager, node: find_fixturedefs_for_step(
        step, fixturemanager, node)
