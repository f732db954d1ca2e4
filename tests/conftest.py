"""Fixtures of the project's own tests: a fresh in-memory simulator per test, on a system clock that stands still.

`api` reads as behaviour: `api.as_(token).get("/partners/self")`; `world` is a new sandbox world with its root
partner token, made through the control API exactly as a partner developer would. Helpers that are not
fixtures live in `tests/support/` (client, worlds, problems, accounts, receivers).
"""

import pytest

from ptas_sandbox.simulator import create_app
from tests.support.client import Api
from tests.support.worlds import SystemTime, new_world

# The conformance harness (targets, scene, step modules, the feature tags as markers), as `ptas conform` loads it.
pytest_plugins = ["ptas_sandbox.conformance.harness"]


@pytest.fixture
def system_time():
    return SystemTime()


@pytest.fixture
def config(system_time):
    return {"SYSTEM_TIME": system_time, "START_SERVICES": False}


@pytest.fixture
def app(config):
    app = create_app(config)
    yield app
    app.extensions["ptas"].close()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def api(client):
    return Api(client)


@pytest.fixture
def world(api):
    return new_world(api, name="Acme", email="dev@acme.example")


@pytest.fixture
def other_world(api):
    return new_world(api, name="Globex")
