"""The one client interface of the harness: a transport (WSGI in-process, or HTTP) plus good manners.

Good manners on a shared target: pace under the global limit of spec §8 (100 requests per 60 s) on the client
side, honour 429 with `Retry-After`, and keep every reply so a step can check all of them (date-times).
"""

import json as jsonlib
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime

from .redact import excerpt
from .resolver import Operations

NOTHING = object()
# 429s in a row, each met again after waiting its Retry-After, that end the run: the target's window does not move
# (a frozen clock, or a limit far below the pace), and waiting longer would only make the run go silent.
STUCK_AFTER = 3
# A 429 that says nothing of when to come back (the spec does not show the 429's response, so a faithful target may
# leave out Retry-After): waits doubling from 1 s until this much was waited in all, longer than §8's windows of
# 60 seconds, before the 429 is the answer.
UNTOLD_WAIT = 64.0
# A wait for the pace this long or longer is said (a paced run is never silent for a minute), and said again at
# least every SAID_EVERY seconds while it lasts.
SAID_WAIT = 5.0
SAID_EVERY = 15.0


class RateLimitStuck(RuntimeError):
    """The target kept answering 429 after each Retry-After: the run stops with that said."""


class Limited(RuntimeError):
    """A 429 asking for a longer wait than the client waits (`max_retry_after`, two of §8's windows): the limit of
    that operation is not the global one (spec §8: additional limits of some methods, values not shown), so the
    scenario needing the call is not checked, rather than failed, and the run goes on with the others."""


@dataclass
class RunState:
    """What every client of one run shares: whether the run is stopping (Ctrl-C: no more waiting, no retries),
    the 429s met in a row, and where a line about a long wait goes (`say(seconds, why)`)."""
    stopping: bool = False
    refusals: int = 0
    say: object = None
    sent: int = 0                   # requests sent to the target so far (the progress lines count them)

    def waiting(self, seconds, why):
        if self.say is not None and seconds >= SAID_WAIT:
            self.say(seconds, why)


@dataclass
class Exchange:
    method: str
    path: str
    status: int
    headers: dict            # lower-case names
    text: str
    body: object = None      # parsed JSON, when the body is JSON
    operation: str | None = None

    @property
    def content_type(self):
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    @property
    def ok(self):
        return 200 <= self.status < 300

    def describe(self):
        """One line for failure messages: the body's excerpt has its tokens masked before it is cut."""
        return f"{self.operation or self.method + ' ' + self.path} answered {self.status}: {excerpt(self.text, 400)}"


def parse_json(text):
    try:
        return jsonlib.loads(text) if text.strip() else None
    except ValueError:
        return None


class WsgiTransport:
    """In-process: a WSGI application (the simulator, or one wrapped to misbehave) through Werkzeug's client."""

    def __init__(self, app):
        from werkzeug.test import Client
        self.app = app
        self._client = Client(app)

    def send(self, method, path, headers, data, query):
        response = self._client.open(path, method=method, headers=headers, data=data, query_string=query)
        try:
            text = response.get_data(as_text=True)
            return response.status_code, {k.lower(): v for k, v in response.headers.items()}, text
        finally:
            response.close()


class HttpTransport:
    """Over the network, with `requests`; `base_url` may carry a path of its own."""

    def __init__(self, base_url, timeout=60):
        import requests
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._session = requests.Session()

    def send(self, method, path, headers, data, query):
        response = self._session.request(method, self.base_url + path, headers=headers, data=data, params=query,
                                         timeout=self.timeout, allow_redirects=False)
        return response.status_code, {k.lower(): v for k, v in response.headers.items()}, response.text

    def close(self):
        self._session.close()


class Throttle:
    """A sliding window on the client side: at most `limit` requests in any `window` seconds."""

    def __init__(self, limit=90, window=60.0, clock=time.monotonic, sleep=time.sleep, state=None):
        self.limit, self.window, self.clock, self.sleep = limit, window, clock, sleep
        self.state = state or RunState()
        self._sent = deque()
        self._lock = threading.Lock()

    def wait(self):
        with self._lock:
            while True:
                now = self.clock()
                while self._sent and self._sent[0] <= now - self.window:
                    self._sent.popleft()
                if len(self._sent) < self.limit or self.state.stopping:
                    self._sent.append(now)
                    return
                pause = self._sent[0] + self.window - now
                self.state.waiting(pause, f"the pace of {self.limit} requests per {self.window:g} s (--pace)")
                self.sleep(min(pause, SAID_EVERY))

    def quiet_in(self):
        """Seconds until none of the requests this pace counted is within the window any more."""
        with self._lock:
            return max(0.0, self._sent[-1] + self.window - self.clock()) if self._sent else 0.0

    def exhaust(self):
        """Count the window as full from now: requests sent past the pace (a rate-limit check) spent it."""
        with self._lock:
            now = self.clock()
            self._sent = deque([now] * self.limit)


@dataclass
class Client:
    transport: object
    operations: Operations
    throttle: Throttle | None = None
    sleep: object = time.sleep
    max_retry_after: float = 120.0
    replies: list = field(default_factory=list)
    state: RunState = field(default_factory=RunState)

    def call(self, operation_id, token=None, params=None, query=None, json=NOTHING, headers=None, **options):
        """Call an operation by its operationId; the path comes from the target's OpenAPI document."""
        method, path = self.operations.resolve(operation_id, params)
        return self.request(method, path, token=token, query=query, json=json, headers=headers,
                            operation=operation_id, **options)

    def request(self, method, path, token=None, query=None, json=NOTHING, headers=None, data=None,
                operation=None, honour_429=True, paced=True, record=True):
        headers = dict(headers or {})
        if token is not None:
            headers.setdefault("Authorization", f"Bearer {token}")
        if json is not NOTHING:
            data = jsonlib.dumps(json)
            headers.setdefault("Content-Type", "application/json")
        headers.setdefault("Accept", "application/json, application/problem+json")
        state = self.state
        attempt, untold = 0, 0.0
        while True:
            if paced and self.throttle:
                self.throttle.wait()
            status, response_headers, text = self.transport.send(method, path, headers, data, query)
            state.sent += 1
            if status != 429:
                if honour_429:
                    state.refusals = 0
                break
            if not honour_429 or state.stopping:
                break
            told = retry_after(response_headers)
            if told is None:                # no word of when: back off, doubling, up to UNTOLD_WAIT in all
                pause = min(2.0 ** attempt, self.max_retry_after)
                if untold + pause > UNTOLD_WAIT + 1:
                    break
                untold += pause
            elif told > self.max_retry_after:
                raise Limited(f"{operation or method + ' ' + path} answered 429 with a Retry-After of {told:g} s, "
                              f"longer than the run waits for one call ({self.max_retry_after:g} s): a limit of that "
                              "operation (spec §8: additional limits apply to some methods, values not shown)")
            else:
                if attempt >= 3:
                    break
                if attempt > 0:
                    state.refusals += 1
                if state.refusals >= STUCK_AFTER:
                    raise RateLimitStuck(
                        f"the target answered 429 to {method} {path} again after each of {state.refusals} waits of "
                        "its Retry-After: its rate-limit window does not move (a frozen clock?) or its limit is far "
                        "below the pace (--pace); the run stops here")
                pause = min(told, self.max_retry_after)
            attempt += 1
            state.waiting(pause, f"a 429 of {method} {path} ({'Retry-After' if told is not None else 'backing off'})")
            self.sleep(pause)
        reply = Exchange(method, path, status, response_headers, text, parse_json(text), operation)
        if record:
            self.replies.append(reply)
        return reply


def retry_after(headers):
    """Seconds to wait after a 429, as the target says: `Retry-After` (seconds, or an HTTP date), else a
    rate-limit reset header (`RateLimit-Reset`, `X-RateLimit-Reset`: seconds from now, or a Unix time); None when
    it says nothing readable. A date or a Unix time is on the target's clock, so it is measured from the answer's
    own `Date` (RFC 9110 §6.6.1): this machine's clock may be minutes off the target's, either way."""
    value = headers.get("retry-after", "")
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    answered = http_date(headers.get("date", ""))
    now = time.time() if answered is None else answered
    until = http_date(value)
    if until is not None:
        return max(0.0, until - now)
    for name in ("ratelimit-reset", "x-ratelimit-reset"):
        try:
            reset = float(headers.get(name, ""))
        except ValueError:
            continue
        # a Unix time is larger than any sensible wait (2001 onwards); anything else counts seconds from now
        return max(0.0, reset - now) if reset > 1e9 else max(0.0, reset)
    return None


def http_date(text):
    """An HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`) in Unix seconds, or None."""
    try:
        return parsedate_to_datetime(text).timestamp()
    except (TypeError, ValueError):
        return None
