"""What the pytest fixtures of plugin.py hand to partner developers: a sandbox (in this process, or a served or
remote one at `--ptas-url`, with the same API), a partner of a fresh world, a user, the world's request journal,
and the world clock with the partner's own code kept on it (docs/fixtures.md)."""

import json as jsonlib
import sys
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

PREFIX = "/partner/v2"
ADMIN_HEADER = "X-Sandbox-Admin-Key"


class Reply:
    """An answer with the `requests` habits: `.status_code`, `.headers`, `.text`, `.content`, `.json()`, `.ok`."""

    def __init__(self, status_code, headers, content):
        self.status_code, self.headers, self.content = status_code, headers, content

    @property
    def text(self):
        return self.content.decode("utf-8", "replace")

    @property
    def ok(self):
        return self.status_code < 400

    def json(self):
        return jsonlib.loads(self.content)

    def raise_for_status(self):
        if not self.ok:
            raise AssertionError(f"HTTP {self.status_code}: {self.text[:500]}")

    def __repr__(self):
        return f"<Reply [{self.status_code}]>"


def full_path(path, prefix=PREFIX):
    return path if path.startswith("/_sandbox") else prefix + path


class Sandbox:
    """The simulator in this process: `call` goes through the WSGI app without a socket; `url` serves it on
    127.0.0.1 and `port` (0: an ephemeral one; started the first time it is asked for) for code that speaks HTTP."""

    def __init__(self, config=None, admin_key=None, port=0):
        from ptas_sandbox.simulator import create_app
        self.app = create_app({"STATE": ":memory:", "START_SERVICES": False, **(config or {})})
        self.client = self.app.test_client()
        self.prefix = PREFIX
        self.admin_key = admin_key or self.app.config.get("ADMIN_KEY")
        self.port = port
        self._server = self._thread = None

    @property
    def url(self):
        """The base URL; paths of the service are under `url + prefix` (`/partner/v2`)."""
        if self._server is None:
            from werkzeug.serving import WSGIRequestHandler, make_server

            class Quiet(WSGIRequestHandler):
                def log_request(self, *args, **kwargs):
                    pass
            try:
                self._server = make_server("127.0.0.1", self.port, self.app, threaded=True, request_handler=Quiet)
            except (OSError, SystemExit) as error:     # werkzeug exits on a port in use, having said so
                why = getattr(error, "strerror", None) or "in use"
                raise RuntimeError(f"the in-process sandbox cannot listen on 127.0.0.1:{self.port} ({why}); "
                                   "choose another with --ptas-port") from None
            self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                            daemon=True)
            self._thread.start()
        return f"http://127.0.0.1:{self._server.server_port}"

    def call(self, method, path, token=None, **kw):
        """A call; `path` is under the service prefix unless it starts with /_sandbox. Keywords as `requests`
        takes them (`json`, `params`, `headers`, `data`)."""
        headers = dict(kw.pop("headers", None) or {})
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if "params" in kw:
            kw["query_string"] = kw.pop("params")
        response = self.client.open(full_path(path, self.prefix), method=method, headers=headers, **kw)
        return Reply(response.status_code, response.headers, response.get_data())

    def new_partner(self, name="Partner under test", email="dev@partner.example"):
        headers = {ADMIN_HEADER: self.admin_key} if self.admin_key else {}
        response = self.call("POST", "/_sandbox/partners", json={"name": name, "email": email}, headers=headers)
        assert response.status_code == 201, response.text
        body = response.json()
        return Partner(self, body["accessToken"], body["partner"], body["world"]["id"], body["worldKey"])

    def close(self):
        if self._server is not None:
            self._server.shutdown()
            self._thread.join()
        self.app.extensions["ptas"].close()


class RemoteSandbox(Sandbox):
    """A served or remote sandbox at `url` (`pytest --ptas-url URL`): the same API over HTTP. Each partner
    still gets a world of its own, so tests never see each other's data on a shared server."""

    def __init__(self, url, admin_key=None):
        import requests
        self._url = url.rstrip("/")
        self.prefix = PREFIX
        self.admin_key = admin_key
        self.session = requests.Session()

    @property
    def url(self):
        return self._url

    def call(self, method, path, token=None, **kw):
        headers = dict(kw.pop("headers", None) or {})
        if token:
            headers["Authorization"] = f"Bearer {token}"
        response = self.session.request(method, self._url + full_path(path, self.prefix), headers=headers,
                                        timeout=30, **kw)
        return Reply(response.status_code, response.headers, response.content)

    def close(self):
        self.session.close()


HARNESS_HEADER = "X-Sandbox-World-Key"


@dataclass
class Partner:
    """The root partner of a fresh world and its initial partner token (every partner scope and more), and the
    world key: the harness's own authority over the world's control API (`/_sandbox/...`), which nothing the
    software under test does with its tokens takes away."""
    sandbox: Sandbox
    token: str
    record: dict
    world_id: str
    world_key: str

    @property
    def id(self):
        return self.record["id"]

    def call(self, method, path, **kw):
        """A call with the initial token; a control call (`/_sandbox/...`) with the world key."""
        return self.sandbox.call(method, path, token=self.world_key if path.startswith("/_sandbox") else self.token,
                                 **kw)

    def setup_call(self, method, path, **kw):
        """A call the test makes to set the world up, not the software under test: marked with the world key,
        so the integration report does not judge it."""
        kw["headers"] = {**(kw.get("headers") or {}), HARNESS_HEADER: self.world_key}
        return self.call(method, path, **kw)

    def delete_world(self):
        """Delete the world with everything in it, freeing its place on a shared sandbox (`--max-worlds`); a
        world already gone (deleted, or the whole sandbox reset) is no error."""
        response = self.call("DELETE", "/_sandbox/world")
        assert response.status_code in (204, 401), response.text

    def new_token(self, scope, expires_in=86400, name=None):
        """Another token of this partner holding `scope` (space-separated); a setup call, not judged."""
        response = self.setup_call("POST", "/partners/self/tokens", json={"scope": scope, "expiresIn": expires_in,
                                                                           "name": name})
        assert response.status_code == 201, response.text
        return response.json()["accessToken"]

    def new_user(self, name="Jane's Bakery", email=None, scope=None):
        """A user of this partner with its first user token; a setup call, not judged."""
        body = {"name": name, "email": email}
        if scope:
            body["scope"] = scope
        response = self.setup_call("POST", "/users", json=body)
        assert response.status_code == 201, response.text
        record = response.json()
        return User(self, record["id"], record["token"]["accessToken"], record)

    # -- the world's request journal ----------------------------------------------------------------------------
    def requests(self, **filters):
        """Journal entries of the world, newest first: `operationId`, `status` ("4xx" or 429), `tokenId`,
        `since`, `until`, `pageSize` as GET /_sandbox/requests takes them."""
        response = self.call("GET", "/_sandbox/requests", params={"pageSize": 1000, **filters})
        assert response.status_code == 200, response.text
        return response.json()["requests"]

    def count(self, **pattern):
        """How many calls of the world match (WireMock's verify): `operationId`, `method`, `path`,
        `pathPattern`, `status`, `tokenId`, `requestBody` (contained), `since`, `until`, `marked`."""
        response = self.call("POST", "/_sandbox/requests/count", json=pattern)
        assert response.status_code == 200, response.text
        return response.json()["count"]

    def verify(self, times=None, **pattern):
        """Assert the world saw calls matching `pattern`: exactly `times` of them, or at least one."""
        found = self.count(**pattern)
        if (found != times) if times is not None else found == 0:
            recent = "\n".join(f"  #{e['id']} {e['status']} {e['method']} {e['path']} ({e['operationId']})"
                               for e in self.requests(pageSize=10))
            wanted = f"exactly {times}" if times is not None else "at least one"
            raise AssertionError(f"expected {wanted} call(s) matching {pattern}, the journal has {found}; "
                                 f"latest calls:\n{recent}")
        return found


@dataclass
class User:
    partner: Partner
    id: str
    token: str
    record: dict

    def call(self, method, path, **kw):
        return self.partner.sandbox.call(method, path, token=self.token, **kw)


# What times a test run (pytest's durations and --junitxml times, pytest-timeout's deadlines): freezegun neither
# patches these modules' time functions nor answers their calls with the frozen instant. Only these: freezegun
# looks a few frames up the stack, and a wider prefix ("_pytest.") would unfreeze the test function itself.
PYTEST_TIMING = ("_pytest.timing", "pytest_timeout")


class Clock:
    """The partner's world clock, frozen, with freezegun holding this process's wall clock at the same instant:
    code under test that reads `datetime.now()` or `time.time()` sees what the sandbox sees, and both move
    together. `time.monotonic()`, `time.perf_counter()` and `time.sleep()` stay real, so a "poll for 3 s" loop
    ends. `advance_on_sleep()` makes a sleep of this thread move both clocks instead of waiting (a Retry-After
    of 60 s passes at once)."""

    def __init__(self, partner):
        try:
            from freezegun import api
        except ImportError:
            raise RuntimeError("ptas_clock needs freezegun, which the conform extra installs: "
                               "pip install 'ptas-sandbox[conform]'") from None
        self.partner = partner
        self._freezer = self._frozen = None
        self._api = api
        self._slept = 0.0               # seconds skipped by advance_on_sleep: the monotonic clocks move as much
        self._sleeper = None            # the thread whose sleeps move the clock
        self._move({"freeze": True})

    def _move(self, body):
        response = self.partner.call("POST", "/_sandbox/clock", json=body)
        assert response.status_code == 200, response.text
        now = datetime.strptime(response.json()["now"][:26] + "+0000", "%Y-%m-%dT%H:%M:%S.%f%z")
        if self._freezer is None:
            from freezegun import freeze_time
            self._freezer = freeze_time(now, ignore=list(PYTEST_TIMING))
            self._frozen = self._freezer.start()
            self._real_monotonic_clocks()
        else:
            self._frozen.move_to(now)
        return now

    def _real_monotonic_clocks(self):
        """freezegun freezes the monotonic clocks too, and a deadline loop on them never ends: put real ones
        back (plus what advance_on_sleep skipped)."""
        api, skipped = self._api, lambda: self._slept
        time.monotonic = lambda: api.real_monotonic() + skipped()
        time.perf_counter = lambda: api.real_perf_counter() + skipped()
        if hasattr(api, "real_monotonic_ns"):
            time.monotonic_ns = lambda: api.real_monotonic_ns() + int(skipped() * 1e9)
            time.perf_counter_ns = lambda: api.real_perf_counter_ns() + int(skipped() * 1e9)

    def now(self):
        """The sandbox's now, as an aware UTC datetime."""
        return datetime.now(timezone.utc)

    def advance(self, seconds):
        """Move time forward (seconds, or a timedelta): tokens expire, imports progress, webhooks fall due."""
        if isinstance(seconds, timedelta):
            seconds = seconds.total_seconds()
        return self._move({"advance": seconds})

    def set(self, moment):
        """Jump to an instant (never backwards)."""
        text = moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f0Z")
        return self._move({"set": text})

    def advance_on_sleep(self):
        """From now on, `time.sleep(n)` in this thread returns at once, having moved the world clock, this
        process's wall clock and its monotonic clocks n seconds ahead (other threads sleep for real).

        The sleep is replaced where a module holds it too (`from time import sleep`, imported before or after),
        as freezegun replaces the clocks it freezes; a reference kept elsewhere (a default argument, an
        attribute of an object made earlier) is out of reach and sleeps for real."""
        if self._sleeper is not None:
            return self
        self._sleeper = threading.current_thread()
        self._real_sleep = real_sleep = time.sleep

        def sleep(seconds):
            if threading.current_thread() is not self._sleeper:
                return real_sleep(seconds)
            if seconds > 0:
                self._slept += seconds
                self.advance(seconds)
            return None
        self._holders = [(module, name) for module in list(sys.modules.values())
                         if module is not time and not getattr(module, "__name__", "").startswith(PYTEST_TIMING)
                         for name, value in list(getattr(module, "__dict__", {}).items()) if value is real_sleep]
        time.sleep = sleep
        for module, name in self._holders:
            setattr(module, name, sleep)
        return self

    def stop(self):
        if self._sleeper is not None:
            time.sleep = self._real_sleep
            for module, name in self._holders:
                setattr(module, name, self._real_sleep)
            self._sleeper = None
        if self._freezer is not None:
            self._freezer.stop()         # puts back the real clocks, monotonic ones included
            self._freezer = None


class Inbox:
    """A webhook receiver of the sandbox (its echo bin): point a webhook's callbackUrl at `url`, then read
    `notifications()`; due notifications are delivered first, so a test never sleeps."""

    def __init__(self, partner, name=None):
        import uuid
        self.partner = partner
        self.name = name or f"inbox-{uuid.uuid4().hex[:12]}"
        # The served address: once anything reaches the sandbox over HTTP (ptas_sandbox.url), the simulator
        # delivers every callback over the network, so an in-process-only address would stop working.
        self.url = f"{partner.sandbox.url}/_sandbox/echo/{self.name}"

    def requests(self):
        """Every request received: method, headers, body (text), time."""
        flushed = self.partner.call("POST", "/_sandbox/webhooks/flush")
        assert flushed.status_code == 200, flushed.text
        response = self.partner.call("GET", f"/_sandbox/echo/{self.name}")
        assert response.status_code == 200, response.text
        return response.json()["captures"]

    def notifications(self):
        """The JSON bodies received, oldest first."""
        return [jsonlib.loads(r["body"]) for r in self.requests() if r.get("body")]
