"""Targets of a conformance run: the in-process simulator, a simulator over HTTP, or a real deployment.

One interface, three backings. A simulator target (detected by `GET /_sandbox/health`) gives each scenario a
fresh world through its control API and moves that world's clock when time must pass; a deployment has only
the partner token it was given, so only `@contract` scenarios run, paced under the global rate limit.
"""

import os
import time

from .client import Client, HttpTransport, RunState, Throttle, WsgiTransport, parse_json
from .redact import excerpt, mask, remember
from .resolver import Operations, UnknownOperation, load_document
from .waiting import Budget, Held

# Requests per window the harness allows itself on a shared target: under the spec's 100 per 60 s (spec §8).
PACE = (90, 60)
# The operation of the access check: its path is fixed by spec §4.1, and any partner token may try it.
ACCESS_CHECK = ("GetOwnPartnerTokens", "GET", "/partner/v2/partners/self/tokens")


def parse_pace(text):
    """`REQUESTS/SECONDS` (e.g. 90/60, or 450/60 for a deployment with a higher limit); a bare number is per 60 s."""
    if isinstance(text, tuple):
        return text
    count, _, seconds = str(text).partition("/")
    try:
        pace = (int(count), float(seconds or 60))
    except ValueError:
        raise TargetError(f"--pace {text!r}: write REQUESTS/SECONDS, e.g. 90/60") from None
    if pace[0] < 1 or pace[1] <= 0:
        raise TargetError(f"--pace {text!r}: both numbers must be positive")
    return pace


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
        self.options = {}               # what the steps read beyond the target: receiver, budgets (runner sets it)
        self.receiver = None            # the webhook receiver the run listens with (--receiver-listen)
        self.budget = Budget()          # the run's waiting on a deployment (the runner sets --max-wait)
        self.held = Held()              # accounts with data the run reuses, and what it deletes at its end
        self.state = RunState()         # shared by every client: stopping (Ctrl-C), 429s in a row, waits said
        # How the harness waits (pacing, Retry-After, time passing on a deployment): real time, or a clock the
        # project's tests move instead, so the deployment mode runs paced and @slow without real waiting.
        self.monotonic, self.sleep = time.monotonic, time.sleep
        self._pace = parse_pace(pace) if pace else None
        # A deployment has one rate-limit window for the whole run; simulator worlds each have their own.
        self._shared_throttle = None
        if token:
            remember(token)

    @property
    def in_process(self):
        return isinstance(self.transport, WsgiTransport)

    def client(self):
        """A client for one scenario: paced on anything reached over the network."""
        if self.in_process and self.sleep is time.sleep:
            throttle = None
        elif not self.simulator and self._pace:
            # A deployment has one rate-limit window for the whole run; simulator worlds each have their own.
            if self._shared_throttle is None:
                self._shared_throttle = Throttle(*self._pace, clock=self.monotonic, sleep=self.sleep, state=self.state)
            throttle = self._shared_throttle
        else:
            throttle = Throttle(*self._pace, clock=self.monotonic, sleep=self.sleep, state=self.state) \
                if self._pace else None
        return Client(self.transport, self.operations, throttle, sleep=self.sleep, state=self.state)

    def use_clock(self, clock):
        """Wait on `clock` (`.monotonic()`, `.sleep(seconds)`) instead of real time: a paced in-process run."""
        self.monotonic, self.sleep = clock.monotonic, clock.sleep
        if self._pace is None:
            self._pace = PACE

    @property
    def pace(self):
        """(requests, seconds) when the run paces itself in real time (a deployment over the network), else None."""
        return None if self.in_process or self.simulator or self.sleep is not time.sleep else self._pace

    def check_access(self):
        """One request with the given token before any scenario: a refused token or a target that answers
        nothing useful ends the run at once (TargetError) instead of failing every scenario with a 401.
        Returns a note for the output (a token that is valid but lacks partner:read, say)."""
        if not self.token:
            return None
        operation, method, path = ACCESS_CHECK
        client = self.client()
        try:
            method, path = self.operations.resolve(operation)
        except (UnknownOperation, KeyError):
            pass
        try:
            reply = client.request(method, path, token=self.token, operation=operation, honour_429=False)
        except Exception as error:          # noqa: BLE001 - any transport failure means the target is unusable
            raise TargetError(f"cannot reach {self.name}: {error.__class__.__name__}") from None
        if reply.status == 401:
            raise TargetError(f"the target refused the token ({method} {path} answered 401: "
                              f"{excerpt(reply.text, 200)}); check --token or PTAS_TOKEN")
        if reply.status == 403:
            return (f"the token is valid but {operation} answered 403: it lacks partner:read, so scenarios "
                    "that list tokens will fail")
        if reply.status == 404 and not self.simulator:
            raise TargetError(f"{method} {path} answered 404: is {self.name} the service's base URL? "
                              "(spec §4.1 fixes this path under /partner/v2)")
        if reply.status >= 500:
            raise TargetError(f"the target is not healthy: {method} {path} answered {reply.status}: "
                              f"{excerpt(reply.text, 200)}")
        return None

    def new_world(self, client, name="Conformance Partner"):
        """A fresh world through the control API: (initial partner token, the whole answer)."""
        reply = client.call("SandboxCreatePartner", json={"name": name, "email": "conformance@example.test"})
        if reply.status != 201 or not isinstance(reply.body, dict) or "accessToken" not in reply.body:
            raise TargetError(f"the simulator did not create a world: {reply.status}")
        return reply.body["accessToken"], reply.body

    def describe(self):
        kind = ("in-process " if self.in_process else "") + ("simulator" if self.simulator else "deployment")
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


def in_process(app=None, openapi=None, simulator=None, name="sim", token=None, overrides=None):
    """The simulator (or any WSGI app standing in for it) in this process: no network, no pacing. An app that
    hides `/_sandbox` is a deployment, as over HTTP: it needs `token` (the project's tests run the deployment
    mode this way, without waiting on the pace a shared target needs)."""
    flask_app = app if app is not None else simulator_app()
    transport = WsgiTransport(flask_app)
    if simulator is None:
        simulator = is_simulator(transport)
    if not simulator and not token:
        raise TargetError("a deployment needs a partner token: --token or PTAS_TOKEN")
    document = load_document(openapi) if openapi else fetch_document(transport, "/openapi.json")
    return Target(name, transport, Operations(document, overrides), simulator=simulator, app=flask_app,
                  token=token)


def is_simulator(transport):
    """A simulator answers `GET /_sandbox/health` with its name (docs/design.md); a deployment does not."""
    status, _, text = transport.send("GET", "/_sandbox/health", {"Accept": "application/json"}, None, None)
    health = parse_json(text) if status == 200 else None
    return isinstance(health, dict) and health.get("service") == "ptas-sandbox"


def over_http(base_url, token=None, openapi=None, pace=None, as_deployment=False, overrides=None):
    """A URL: a simulator when `/_sandbox/health` says so (unless `as_deployment`), otherwise a deployment that
    needs a partner token."""
    import requests
    transport = HttpTransport(base_url)
    try:
        simulator = is_simulator(transport) and not as_deployment
    except requests.RequestException as error:
        raise TargetError(f"cannot reach {base_url}: {error.__class__.__name__}") from None
    if not simulator and not token:
        raise TargetError("a deployment needs a partner token: --token or PTAS_TOKEN")
    fetch = (lambda url: fetch_document(HttpTransport(url), ""))
    document = load_document(openapi, fetch) if openapi else fetch_document(transport, "/openapi.json")
    if pace is None:
        pace = os.environ.get("PTAS_CONFORM_PACE") or PACE
    return Target(base_url, transport, Operations(document, overrides), simulator=simulator, token=token,
                  pace=pace)


def fetch_document(transport, path):
    status, _, text = transport.send("GET", path, {"Accept": "application/json"}, None, None)
    document = parse_json(text) if status == 200 else None
    if not isinstance(document, dict) or "paths" not in document:
        raise TargetError(f"no OpenAPI document at {path or 'the given URL'} ({status}); pass --openapi")
    return document


def open_target(target="sim", token=None, openapi=None, pace=None, as_deployment=False, overrides=None):
    if target in (None, "", "sim"):
        return in_process(openapi=openapi, simulator=True, overrides=overrides)
    if target.startswith(("http://", "https://")):
        if target.rstrip("/").endswith("/partner/v2"):
            raise TargetError(f"--target {target}: give the service's base URL, without /partner/v2 (the harness "
                              f"finds spec §4.1's paths under it): --target {target.rstrip('/')[:-len('/partner/v2')]}")
        return over_http(target, token=token, openapi=openapi, pace=pace, as_deployment=as_deployment,
                         overrides=overrides)
    raise TargetError(f"unknown target {target!r}: `sim` or a base URL")
