"""What the pytest fixtures of plugin.py hand to partner developers: a sandbox in the test process, a partner
of a fresh world, a user, and the world clock with the partner's own code kept on it (docs/fixtures.md)."""

import threading
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

PREFIX = "/partner/v2"


class Sandbox:
    """The simulator in this process: `client` for Flask-style calls, `url` for code that speaks HTTP
    (served on 127.0.0.1 and an ephemeral port, started the first time it is asked for)."""

    def __init__(self, config=None):
        from ptas_sandbox.simulator import create_app
        self.app = create_app({"STATE": ":memory:", "START_SERVICES": False, **(config or {})})
        self.client = self.app.test_client()
        self.prefix = PREFIX
        self._server = self._thread = None

    @property
    def url(self):
        """The base URL; paths of the service are under `url + prefix` (`/partner/v2`)."""
        if self._server is None:
            from werkzeug.serving import WSGIRequestHandler, make_server

            class Quiet(WSGIRequestHandler):
                def log_request(self, *args, **kwargs):
                    pass
            self._server = make_server("127.0.0.1", 0, self.app, threaded=True, request_handler=Quiet)
            self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                            daemon=True)
            self._thread.start()
        return f"http://127.0.0.1:{self._server.server_port}"

    def call(self, method, path, token=None, **kw):
        """A call through the test client; `path` is under the service prefix unless it starts with /_sandbox."""
        headers = dict(kw.pop("headers", {}))
        if token:
            headers["Authorization"] = f"Bearer {token}"
        url = path if path.startswith("/_sandbox") else self.prefix + path
        return self.client.open(url, method=method, headers=headers, **kw)

    def new_partner(self, name="Partner under test", email="dev@partner.example"):
        response = self.call("POST", "/_sandbox/partners", json={"name": name, "email": email})
        assert response.status_code == 201, response.get_data(as_text=True)
        body = response.json
        return Partner(self, body["accessToken"], body["partner"], body["world"]["id"])

    def close(self):
        if self._server is not None:
            self._server.shutdown()
            self._thread.join()
        self.app.extensions["ptas"].close()


@dataclass
class Partner:
    """The root partner of a fresh world and its initial partner token (every partner scope and more)."""
    sandbox: Sandbox
    token: str
    record: dict
    world_id: str

    @property
    def id(self):
        return self.record["id"]

    def call(self, method, path, **kw):
        return self.sandbox.call(method, path, token=self.token, **kw)

    def new_token(self, scope, expires_in=86400, name=None):
        """Another token of this partner holding `scope` (space-separated)."""
        response = self.call("POST", "/partners/self/tokens", json={"scope": scope, "expiresIn": expires_in,
                                                                     "name": name})
        assert response.status_code == 201, response.get_data(as_text=True)
        return response.json["accessToken"]

    def new_user(self, name="Jane's Bakery", email=None, scope=None):
        body = {"name": name, "email": email}
        if scope:
            body["scope"] = scope
        response = self.call("POST", "/users", json=body)
        assert response.status_code == 201, response.get_data(as_text=True)
        return User(self, response.json["id"], response.json["token"]["accessToken"], response.json)


@dataclass
class User:
    partner: Partner
    id: str
    token: str
    record: dict

    def call(self, method, path, **kw):
        return self.partner.sandbox.call(method, path, token=self.token, **kw)


class Clock:
    """The partner's world clock, frozen, with freezegun holding this process at the same instant: code under
    test that reads `datetime.now()` or `time.time()` sees what the sandbox sees, and both move together."""

    def __init__(self, partner):
        self.partner = partner
        self._freezer = self._frozen = None
        self._move({"freeze": True})

    def _move(self, body):
        response = self.partner.call("POST", "/_sandbox/clock", json=body)
        assert response.status_code == 200, response.get_data(as_text=True)
        now = datetime.strptime(response.json["now"][:26] + "+0000", "%Y-%m-%dT%H:%M:%S.%f%z")
        if self._freezer is None:
            from freezegun import freeze_time
            self._freezer = freeze_time(now)
            self._frozen = self._freezer.start()
        else:
            self._frozen.move_to(now)
        return now

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

    def stop(self):
        if self._freezer is not None:
            self._freezer.stop()
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
        assert flushed.status_code == 200, flushed.get_data(as_text=True)
        response = self.partner.sandbox.call("GET", f"/_sandbox/echo/{self.name}")
        assert response.status_code == 200, response.get_data(as_text=True)
        return response.json["captures"]

    def notifications(self):
        """The JSON bodies received, oldest first."""
        import json
        return [json.loads(r["body"]) for r in self.requests() if r.get("body")]
