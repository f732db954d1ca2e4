"""The pytest plugin of the conformance suites: target options, the scene of each scenario, the step modules
(every module of `steps/`), and which tags a target can run.

Loaded by `ptas conform` (with `-p`) and by the project's own tests (`pytest_plugins`); never by a partner's
test run, which gets only the fixtures of `ptas_sandbox.testing.plugin`.
"""

import pytest

from . import steplookup, steps, tags, unchecked
from .client import Limited
from .resolver import NotOffered
from .scene import STEP_TEXTS, Scene
from .targets import open_target

# Every module of conformance/steps/ (one per spec area): found, never listed by hand.
pytest_plugins = [f"{steps.__name__}.{name}" for name in steps.modules()]

TARGET_PLUGIN = "ptas-conform-target"


def pytest_configure(config):
    """The feature tags as markers (`--strict-markers`), registered only where the suites run."""
    for line in tags.markers():
        config.addinivalue_line("markers", line)
    steplookup.install()


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_bdd_apply_tag(tag, function):
    """`@spec-4.1` traces a scenario to a section of the spec: kept in the reports, not made a marker."""
    if tag.startswith("spec-"):
        return function
    return None


class ChosenTarget:
    """Registered under TARGET_PLUGIN by a runner that built the target itself (a WSGI app, a broken target)."""

    def __init__(self, target, quick=False, opener=None):
        self._target, self.quick, self.opener = target, quick, opener

    @property
    def target(self):
        if self._target is None:
            self._target = self.opener()
        return self._target

    def release(self):
        """Close a target this plugin opened itself (it opens again when next needed); a given one stays open."""
        if self.opener is not None and self._target is not None:
            self._target.close()
            self._target = None


def pytest_addoption(parser):
    group = parser.getgroup("ptas-conform", "ptas conformance suites")
    group.addoption("--conform-target", default="sim", help="`sim` or the base URL of a target")
    group.addoption("--conform-token", default=None, help="a partner token for a deployment")
    group.addoption("--conform-openapi", default=None, help="the target's OpenAPI document (path or URL)")
    group.addoption("--conform-quick", action="store_true", help="leave out @slow scenarios on a deployment")


def chosen(config):
    plugin = config.pluginmanager.get_plugin(TARGET_PLUGIN) or next(
        (p for p in config.pluginmanager.get_plugins() if isinstance(p, ChosenTarget)), None)
    if plugin is None:
        options = [config.getoption(f"--conform-{name}", default) for name, default in
                   (("target", "sim"), ("token", None), ("openapi", None))]
        plugin = ChosenTarget(None, config.getoption("--conform-quick", False), lambda: open_target(*options))
        config.pluginmanager.register(plugin, TARGET_PLUGIN)
    return plugin


def pytest_unconfigure(config):
    plugin = config.pluginmanager.get_plugin(TARGET_PLUGIN)
    if plugin is not None:
        plugin.release()
        config.pluginmanager.unregister(plugin, TARGET_PLUGIN)


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem):
    """What the target's document does not offer (an operation, a request schema) skips the scenario with the
    reason, and so does an operation's own limit asking for a longer wait than the run makes: the spec cannot be
    checked there, which is not a departure from it."""
    try:
        return (yield)
    except NotOffered as error:
        if not tags.is_scenario(pyfuncitem):
            raise
        pytest.skip(f"not offered by the target: {error}")
    except Limited as error:
        if not tags.is_scenario(pyfuncitem):
            raise
        # Left out by the run, as a wait longer than --max-wait is: the limit is the target's right (spec §8).
        unchecked.left_out_by_run(f"limited by the target: {error} (check with: a run after that wait, or one "
                                  "making fewer of those calls, --tags)")


@pytest.fixture(scope="module")
def conform_target(pytestconfig):
    """The target, for the scenarios of one module: a simulator the harness opened itself closes after them,
    so its background parts never outlive the suites in a longer test run."""
    plugin = chosen(pytestconfig)
    yield plugin.target
    plugin.release()


@pytest.hookimpl(optionalhook=True)
def pytest_bdd_before_scenario(request, feature, scenario):
    """Keep the scenario's step texts as pytest-bdd renders them (its Background's included, an outline's example
    filled in) for Scene.step_texts: which shared records a scenario may use depends on all of its steps."""
    request.node.stash[STEP_TEXTS] = [step.name for step in scenario.steps]


@pytest.fixture
def scene(request, conform_target):
    """The scenario's stage on the target: a fresh world on a simulator, the given token on a deployment."""
    current = Scene(conform_target, request.node, slow_allowed=not chosen(request.config).quick)
    yield current
    current.close()


def pytest_collection_modifyitems(config, items):
    """A deployment runs only @contract scenarios (the rest do not apply to it), @slow ones unless --quick, in
    `tags.run_order`: the waits after the rest, the §8 burst last."""
    if not any(tags.is_scenario(item) for item in items):
        return
    target = chosen(config).target
    if target.simulator:
        return
    keep, drop = [], []
    for item in items:
        reason = tags.unsuitable(item, simulator=False, quick=chosen(config).quick) \
            if tags.is_scenario(item) else None
        (drop if reason else keep).append(item)
        if reason:
            item.stash[tags.DESELECTED] = reason
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = sorted(keep, key=tags.run_order)
