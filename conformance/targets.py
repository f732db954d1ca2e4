"""Targets of a conformance run: the in-process simulator, a simulator over HTTP, or a real deployment.

One interface, three backings. A simulator target (detected by `GET /_sandbox/health`) gives each scenario a
fresh world through its control API and moves that world's clock when time must pass; a deployment has only
the partner token it was given, so only `@contract` scenarios run, paced under the global rate limit.
"""

import os

from .client import Client, HttpTransport, Throttle, WsgiTransport, parse_json
from .operations import Operations, load_document
from .redact import mask, remember

# Requests per 60 s the harness allows itself on a shared target: under the spec's 100 (spec §8).
PACE = 90


class TargetError(RuntimeError):
    """The target cannot be used at all (unreachable, no OpenAPI document, no token)."""


class Target:
    def __init__(self, name, transport, operations, *, simulator, token=None, pace=PACE, app=None):
        self.name = name
        self.transport = transport
        self.operations = operations
        self.simulator = simulator      # has the control API: fresh worlds, a movable clock, sandbox choices
        self.token = token              # the partner token given to the run (deployments)
        self.app = app
        self._pace = pace
        # A deployment has one rate-limit window for the whole run; simulator worlds each have their own.
        self._shared_throttle = Throttle(pace) if not simulator and pace else None
        if token:
            remember(token)

    @property
    def in_process(self):
        return isinstance(self.transport, WsgiTransport)

    def client(self):
        """A client for one scenario: paced on anything reached over the network."""
        if self.in_process:
            throttle = None
        else:
            throttle = self._shared_throttle or (Throttle(self._pace) if self._pace else None)
        return Client(self.transport, self.operations, throttle)

    def new_world(self, client, name="Conformance Partner"):
        """A fresh world through the control API: (initial partner token, the whole answer)."""
        reply = client.call("SandboxCreatePartner", json={"name": name, "email": "conformance@example.test"})
        if reply.status != 201 or not isinstance(reply.body, dict) or "accessToken" not in reply.body:
            raise TargetError(f"the simulator did not create a world: {reply.status}")
        return reply.body["accessToken"], reply.body

    def describe(self):
        kind = "in-process simulator" if self.in_process else ("simulator" if self.simulator else "deployment")
        token = f", token {mask(self.token)}" if self.token else ""
        return f"{self.name} ({kind}{token})"

    def close(self):
        if self.app is not None and "ptas" in getattr(self.app, "extensions", {}):
            self.app.extensions["ptas"].close()
        close = getattr(self.transport, "close", None)
        if close:
            close()


def simulator_app():
    from ptas_sandbox.simulator import create_app
    return create_app({"STATE": ":memory:", "START_SERVICES": False})


def in_process(app=None, openapi=None, simulator=True, name="sim"):
    """The simulator (or any WSGI app standing in for it) in this process: no network, no pacing."""
    flask_app = app if app is not None else simulator_app()
    transport = WsgiTransport(flask_app)
    document = load_document(openapi) if openapi else fetch_document(transport, "/openapi.json")
    return Target(name, transport, Operations(document), simulator=simulator, app=flask_app)


def over_http(base_url, token=None, openapi=None, pace=None):
    """A URL: a simulator when `/_sandbox/health` says so, otherwise a deployment that needs a partner token."""
    import requests
    transport = HttpTransport(base_url)
    try:
        status, _, text = transport.send("GET", "/_sandbox/health", {"Accept": "application/json"}, None, None)
    except requests.RequestException as error:
        raise TargetError(f"cannot reach {base_url}: {error.__class__.__name__}") from None
    health = parse_json(text) if status == 200 else None
    simulator = isinstance(health, dict) and health.get("service") == "ptas-sandbox"
    if not simulator and not token:
        raise TargetError("a deployment needs a partner token: --token or PTAS_TOKEN")
    fetch = (lambda url: fetch_document(HttpTransport(url), ""))
    document = load_document(openapi, fetch) if openapi else fetch_document(transport, "/openapi.json")
    if pace is None:
        pace = int(os.environ.get("PTAS_CONFORM_PACE", PACE))
    return Target(base_url, transport, Operations(document), simulator=simulator, token=token, pace=pace)


def fetch_document(transport, path):
    status, _, text = transport.send("GET", path, {"Accept": "application/json"}, None, None)
    document = parse_json(text) if status == 200 else None
    if not isinstance(document, dict) or "paths" not in document:
        raise TargetError(f"no OpenAPI document at {path or 'the given URL'} ({status}); pass --openapi")
    return document


def open_target(target="sim", token=None, openapi=None):
    if target in (None, "", "sim"):
        return in_process(openapi=openapi)
    if target.startswith(("http://", "https://")):
        return over_http(target, token=token, openapi=openapi)
    raise TargetError(f"unknown target {target!r}: `sim` or a base URL")
