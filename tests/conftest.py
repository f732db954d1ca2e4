"""Fixtures of the project's own tests: a fresh in-memory simulator per test, on a system clock that stands still.

`api` reads as behaviour: `api.as_(token).get("/partners/self")`; `world` is a new sandbox world with its root
partner token, made through the control API exactly as a partner developer would. Helpers that are not
fixtures live in `tests/support/` (client, worlds, problems, accounts, receivers).
"""

import gc
import os
import threading

import pytest
from werkzeug.serving import make_server

from ptas_sandbox.simulator import create_app
from tests.support.client import Api
from tests.support.worlds import SystemTime, new_world

# The conformance harness (targets, scene, step modules, the feature tags as markers), as `ptas conform` loads it.
pytest_plugins = ["ptas_sandbox.conformance.harness"]


@pytest.fixture
def system_time():
    return SystemTime()


# The store engine the tests run on: SQLite by default; `PTAS_TEST_STORE=postgresql` runs them on a throw-away
# PostgreSQL cluster (`make test` does both passes), a fresh database per test.
STORE_ENGINE = os.environ.get("PTAS_TEST_STORE", "sqlite")


@pytest.fixture(scope="session")
def pg_cluster():
    from tests.support.pgcluster import Cluster
    cluster = Cluster().start()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def pg_databases(pg_cluster):
    """Databases with every table, emptied between tests (emptying is ~0.1 s, a CREATE DATABASE ~1.5 s)."""
    from tests.support.pgcluster import Databases
    return Databases(pg_cluster, lambda url: create_app({"STATE": url, "START_SERVICES": False}))


def _pg_database(request):
    databases = request.getfixturevalue("pg_databases")
    url = databases.take()
    request.addfinalizer(lambda: databases.give_back(url))
    return url


@pytest.fixture
def store_location(request):
    """Where a test's sandbox keeps its state: `:memory:`, or a fresh PostgreSQL database."""
    return _pg_database(request) if STORE_ENGINE == "postgresql" else ":memory:"


@pytest.fixture
def new_store_location(request):
    """A function giving a fresh, empty store location on each call (replays compare two fresh sandboxes)."""
    return lambda: _pg_database(request) if STORE_ENGINE == "postgresql" else ":memory:"


@pytest.fixture
def durable_store(request, tmp_path):
    """A store that outlives its app (restart tests, several processes): a SQLite file or a PostgreSQL database."""
    return _pg_database(request) if STORE_ENGINE == "postgresql" else str(tmp_path / "sandbox.db")


def pytest_configure(config):
    """What is loaded by now (the package, pytest, its plugins) lives to the end: the collector stops walking it
    again at every full collection, which a run of thousands of apps triggers often."""
    gc.collect()
    gc.freeze()


# The request state's strategy (simulator/requeststate/) of every app a test makes through these fixtures: in
# memory (a SQLite store this process owns: the default), or straight in the store as several workers and
# PostgreSQL run it. `--request-state exact` runs the tests on the second: `make test-exact` runs the folders that
# exercise the strategy so (core, limits, tokens, journal, reliability). A served sandbox takes the strategy its
# launch gives it; a test of one strategy alone names it (`SHARED_STORE`).
STRATEGIES = ("memory", "exact")


def pytest_addoption(parser):
    parser.addoption("--request-state", choices=STRATEGIES, default="memory",
                     help="the request state's strategy of the tests' apps (simulator/requeststate/)")


# Each path once: the PostgreSQL pass (PTAS_TEST_STORE=postgresql) and the store-exact pass (--request-state exact)
# run again only the tests whose fixtures take the store or the strategy they change; any other test would take the
# same path as on the first pass.
STORE_FIXTURES = {"store_location", "new_store_location", "durable_store", "pg_databases", "pg_cluster"}


def pytest_collection_modifyitems(config, items):
    takes = set(STORE_FIXTURES) if STORE_ENGINE == "postgresql" else set()
    if config.getoption("request_state") == "exact":
        takes.add("request_state")
    if not takes:
        return
    kept = [item for item in items if takes & set(getattr(item, "fixturenames", ()))]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept


def pytest_generate_tests(metafunc):
    if "request_state" in metafunc.fixturenames:
        metafunc.parametrize("request_state", [metafunc.config.getoption("request_state")], scope="session")


@pytest.fixture(scope="session")
def state_config(request_state):
    """What a test's app config says of its request state's strategy: {"SHARED_STORE": True} on the exact path
    (a SQLite store shared as `--workers` shares it), {} in memory (this process owns its store)."""
    return {"SHARED_STORE": True} if request_state == "exact" else {}


@pytest.fixture
def config(system_time, store_location, state_config):
    return {"SYSTEM_TIME": system_time, "START_SERVICES": False, "STATE": store_location, **state_config}


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


@pytest.fixture
def live(app):
    """The test's app served over HTTP on 127.0.0.1 (a thread of this process); its base URL."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join()
