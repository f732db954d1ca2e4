import re

from flask import url_for

from ptas_sandbox.simulator.openapi import full_path
from ptas_sandbox.simulator.operations import REGISTRY
from tests.support.problems import assert_problem


def test_health_identifies_the_simulator(api):
    body = api.get("/_sandbox/health").json
    assert body["status"] == "ok" and body["service"] == "ptas-sandbox"


def test_unknown_path_is_a_problem(api):
    assert_problem(api.get("/nowhere"), 404, "not-found")


def test_every_route_still_builds_its_url_though_its_builder_is_compiled_late(app):
    """app.LazyBuildRule compiles a route's URL builder on first use (for start-up time): `url_for` must give
    each operation's path, and unknown arguments as a query."""
    with app.test_request_context():
        for op in REGISTRY.values():
            names = re.findall(r"{(\w+)}", op.path)
            wanted = re.sub(r"{(\w+)}", lambda m: f"{m.group(1)}-1", full_path(op, app.config["PREFIX"]))
            assert url_for(op.id, **{n: f"{n}-1" for n in names}) == wanted
            assert url_for(op.id, **{n: f"{n}-1" for n in names}, extra="a b") == wanted + "?extra=a+b"
