"""The harness's step lookup (conformance/steplookup.py) finds, for every step of the suites, the very step
definitions pytest-bdd's own search finds, in the same order."""

import io

from ptas_sandbox.conformance import runner, steplookup
from ptas_sandbox.simulator import create_app


def test_every_step_finds_what_pytest_bdds_own_search_finds(monkeypatch):
    compared, search = [], steplookup.find_fixturedefs_for_step

    def both(step, fixturemanager, node):
        ours = list(search(step, fixturemanager, node))
        theirs = list(steplookup.PYTEST_BDDS(step=step, fixturemanager=fixturemanager, node=node))
        compared.append((step.name, ours == theirs and len(ours) > 0))
        return iter(theirs)

    monkeypatch.setattr(steplookup, "find_fixturedefs_for_step", both)
    monkeypatch.setattr(steplookup.bdd_scenario, "find_fixturedefs_for_step", steplookup.PYTEST_BDDS)
    app = create_app({"STATE": ":memory:", "START_SERVICES": False})
    try:
        out = io.StringIO()
        status = runner.run(app=app, tags_expression="contract and (partners or webhooks)", out=out)
    finally:
        app.extensions["ptas"].close()
    assert status == 0, out.getvalue()[-2000:]
    assert len(compared) > 100 and [name for name, same in compared if not same] == []
