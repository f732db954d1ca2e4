"""The simulator dressed as a deployment, in this process: `/_sandbox` hidden, one partner token, and a clock the
test moves, so a deployment-mode run is paced under spec §8 and waits in @slow scenarios without real waiting.

The harness sees only what a QA engineer's run against a staging environment sees: a base URL (here a WSGI app),
its `/openapi.json` and a token. Broken deployments wrap the app in `Rewrite` first.
"""

import json
import math
import time

from werkzeug.test import run_wsgi_app

from ptas_sandbox.conformance import runner
from ptas_sandbox.simulator import create_app


class Clock:
    """The one clock of a test run: the simulator reads it (SYSTEM_TIME), the harness waits on it."""

    def __init__(self):
        self.now_us = time.time_ns() // 1000

    def __call__(self):             # SYSTEM_TIME: microseconds
        return self.now_us

    def monotonic(self):
        return self.now_us / 1_000_000

    def sleep(self, seconds):
        """Whole microseconds, rounded up: a pause of less than one still moves the clock (a waiter computing
        what is left of a window would otherwise wait for ever)."""
        self.now_us += max(0, math.ceil(seconds * 1_000_000))


class HideSandbox:
    """No /_sandbox at all: what a deployment looks like to the harness."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        if environ.get("PATH_INFO", "").startswith("/_sandbox"):
            start_response("404 Not Found", [("Content-Type", "application/problem+json")])
            return [b'{"type": "about:blank", "title": "Not Found", "status": 404}']
        return self.app(environ, start_response)


class Rewrite:
    """Wrap an app; `change(environ, status, headers, body)` may return a new (status, headers, body)."""

    def __init__(self, app, change):
        self.app, self.change = app, change

    def __call__(self, environ, start_response):
        chunks, status, answered = run_wsgi_app(self.app, environ, buffered=True)
        body, headers = b"".join(chunks), answered.to_wsgi_list()
        status, headers, body = self.change(environ, status, headers, body) or (status, headers, body)
        headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
        start_response(status, headers + [("Content-Length", str(len(body)))])
        return [body]


def json_of(body):
    try:
        return json.loads(body)
    except ValueError:
        return None


class Deployment:
    """A fresh simulator on its own clock, with one world whose initial token the run is given."""

    def __init__(self, **config):
        self.clock = Clock()
        # The token a QA team is given lives long: the run's waits (48 h for reports) must not outlive it.
        self.app = create_app({"STATE": ":memory:", "START_SERVICES": False, "SYSTEM_TIME": self.clock,
                               "INITIAL_TOKEN_LIFETIME": 365 * 86400, **config})
        world = self.app.test_client().post("/_sandbox/partners", json={"name": "Staging partner"}).json
        self.token, self.world = world["accessToken"], world

    def with_history(self):
        """The world a staging partner usually has: a user whose dummy and dummy-report accounts were connected
        two days ago, so they hold transactions and reports a default run can reuse."""
        client = self.app.test_client()
        headers = {"Authorization": f"Bearer {self.token}"}
        user = client.post("/partner/v2/users", json={"name": "Earlier shop", "email": "earlier@example.test",
                                                      "scope": "account:all"}, headers=headers)
        assert user.status_code == 201, user.json
        for type_id in ("dummy", "dummy-report"):
            account = client.post("/partner/v2/accounts", json={"accountTypeId": type_id, "userId": user.json["id"],
                                                     "credentials": {"username": "jane", "password": "s3cret"}},
                                  headers=headers)
            assert account.status_code == 201, account.json
        self.clock.sleep(2 * 86400 + 60)
        return self

    def run(self, tags, change=None, wrap=None, quick=False, capsys=None, only=None, report_dir=None, **options):
        """`ptas conform --target URL --token T [--quick]` against this deployment, broken by `change`."""
        app = Rewrite(self.app, change) if change else self.app
        app = wrap(app) if wrap else app
        status = runner.run(app=HideSandbox(app), token=self.token, tags_expression=tags, quick=quick,
                            clock=self.clock, options=options, only=only, report_dir=report_dir)
        return status, (capsys.readouterr().out if capsys else "")

    def close(self):
        self.app.extensions["ptas"].close()
