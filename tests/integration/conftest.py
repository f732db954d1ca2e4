"""The sandbox behind the integration clients' runs (served as `ptas serve` serves it), one per module, and a
run of one client in a fresh world of it (`RUNS`: no faults, then each fault type)."""

import pytest

from tests.integration.clients.harness import Run, Sandbox


@pytest.fixture(scope="module")
def sandbox():
    sandbox = Sandbox()
    yield sandbox
    sandbox.close()


@pytest.fixture
def run(request, sandbox):
    run = Run(request.param, sandbox=sandbox)
    yield run
    run.close()
