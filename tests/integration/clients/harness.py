"""What a partner's CI gives its client under test: a served sandbox world, the world key kept by the harness,
time that passes when the client sleeps (the world clock moves and due notifications go out), a webhook
receiver of the partner's own, and the faults of a run."""

import json
import threading
import time

import requests
from werkzeug.serving import WSGIRequestHandler, make_server
from werkzeug.wrappers import Request, Response

from ptas_sandbox.simulator import create_app
from ptas_sandbox.webhooks import InvalidSignature, verify
from tests.support.served import Served

API_FAULTS = {
    "status-429": {"type": "status", "status": 429, "retryAfter": 7},
    "status-500": {"type": "status", "status": 500},
    "status-502": {"type": "status", "status": 502},
    "status-503": {"type": "status", "status": 503, "retryAfter": 11},
    "status-504": {"type": "status", "status": 504},
    "latency": {"type": "latency", "seconds": 5},
    "drop": {"type": "drop"},
    "drop-after": {"type": "drop", "after": True},
    "truncate": {"type": "truncate"},
    "malformed": {"type": "malformed"},
    "success-then-500": {"type": "success-then-500"},
}
WEBHOOK_FAULTS = {
    "duplicate": {"type": "duplicate", "copies": 2},
    "delay": {"type": "delay", "seconds": 90},
    "reorder": {"type": "reorder", "maxHoldSeconds": 120},
    "bad-signature": {"type": "bad-signature"},
}
RUNS = ["no-faults", *API_FAULTS, *WEBHOOK_FAULTS]
FLUSHED_WITHIN = 60     # seconds one sleep asks for flushes at most (each waits up to the sandbox's flush wait)


class Quiet(WSGIRequestHandler):
    def log_request(self, *args, **kwargs):
        pass


class Run:
    """One world on a served sandbox, steered with its world key; `fault` names the run's fault type."""

    def __init__(self, fault="no-faults", seed=3, sandbox=None):
        self.sandbox = sandbox or Sandbox()
        self.own = sandbox is None
        self.base = self.sandbox.base
        world = requests.post(f"{self.base}/_sandbox/partners", json={"frozen": True, "seed": seed},
                              timeout=30).json()
        self.token, self.key = world["accessToken"], world["worldKey"]
        self.fault, self.receivers = fault, []
        if fault in API_FAULTS:             # a fifth of every API call, drawn from the seed: the same each run
            self.control("POST", "/_sandbox/faults", json={"effect": API_FAULTS[fault], "probability": 0.2,
                                                           "seed": seed})
        elif fault in WEBHOOK_FAULTS:
            self.control("POST", "/_sandbox/faults", json={"effect": WEBHOOK_FAULTS[fault], "probability": 0.5,
                                                           "seed": seed})

    def control(self, method, path, **kw):
        response = requests.request(method, self.base + path, headers={"Authorization": f"Bearer {self.key}"},
                                    timeout=60, **kw)
        assert response.status_code < 300, response.text
        return response.json() if response.content else None

    def sleep(self, seconds):
        """Time passes for the client: the world clock moves on and what fell due is delivered. A flush answers
        with attempts still on the wire (`inFlight`) once its wait is over, or at once when other flushes of the
        world already wait (a threaded client's threads all sleep): it is asked again until none is."""
        if seconds > 0:
            self.control("POST", "/_sandbox/clock", json={"advance": seconds})
        deadline = time.monotonic() + FLUSHED_WITHIN
        while self.control("POST", "/_sandbox/webhooks/flush")["inFlight"]:
            assert time.monotonic() < deadline, f"deliveries still on the wire after {FLUSHED_WITHIN} s of flushes"

    def clock(self):
        """The world clock's instant, as the sandbox renders it."""
        return self.control("GET", "/_sandbox/clock")["now"]

    def report(self, **params):
        return self.control("GET", "/_sandbox/report", params=params)

    def rules(self):
        return {f["rule"] for f in self.report()["findings"]}

    def receiver(self, handle):
        """A webhook receiver of the partner on 127.0.0.1: `handle(headers, body) -> status` or
        `(status, headers)` (a redirect names its Location)."""
        receiver = Receiver(handle)
        self.receivers.append(receiver)
        return receiver

    def close(self):
        for receiver in self.receivers:
            receiver.close()
        if self.own:
            self.sandbox.close()


class Sandbox(Served):
    """A sandbox served on 127.0.0.1 by `ptas serve`'s HTTP front (waitress: a request queue before the threads,
    and the arrival stamp the report judges concurrency by); every Run on it has a world of its own.
    `rate_limit`: the §8 global limit per 60 s, when a client should meet it sooner than at 100."""

    def __init__(self, rate_limit=100):
        # A flush waits at most 1 s for attempts still running: every receiver here answers at once, so a flush
        # that waits longer is a dispatcher fault, and the clients' runs should not hang on it.
        self.app = create_app({"START_SERVICES": False, "FLUSH_WAIT_SECONDS": 1, "RATE_LIMIT": rate_limit})
        super().__init__(self.app)

    def close(self):
        self.stop()
        self.app.extensions["ptas"].close()


class Receiver:
    def __init__(self, handle):
        self.handle = handle
        self.server = make_server("127.0.0.1", 0, self.app, threaded=True, request_handler=Quiet)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/hooks/ptas"

    def app(self, environ, start_response):
        request = Request(environ)
        answer = self.handle(request.headers, request.get_data())
        status, headers = answer if isinstance(answer, tuple) else (answer, {})
        return Response(status=status, headers=headers)(environ, start_response)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Inbox:
    """A careful receiver: verifies the signature with the webhook's secret (400 when it does not match),
    keeps each event once (deliveries repeat), acknowledges at once."""

    def __init__(self):
        self.secret = None
        self.events = {}
        self.lock = threading.Lock()

    def __call__(self, headers, body):
        if self.secret is None:
            return 503
        try:
            event = verify(self.secret, headers, body, tolerance_seconds=None)
        except InvalidSignature:
            return 400
        with self.lock:
            self.events.setdefault(event["id"], event)
        return 204

    def of_kind(self, kind):
        with self.lock:
            return [e for e in self.events.values() if e["eventType"] == kind]


def parsed(response):
    """The JSON of an answer, or ValueError when the body is cut or garbled."""
    return json.loads(response.content) if response.content else None
