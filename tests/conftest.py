"""Fixtures of the project's own tests: a fresh in-memory simulator per test, on a system clock that stands still.

`api` reads as behaviour: `api.as_(token).get("/partners/self")`; `world` is a new sandbox world with its root
partner token, made through the control API exactly as a partner developer would.
"""

from dataclasses import dataclass

import pytest

from ptas_sandbox.simulator import create_app
from ptas_sandbox.simulator.timestamps import parse

START = parse("2026-01-05T09:00:00Z")


class SystemTime:
    """A stand-in for the system clock that moves only when a test says so (worlds add their own offsets)."""

    def __init__(self, start=START):
        self.now = start

    def __call__(self):
        return self.now

    def tick(self, seconds):
        self.now += int(seconds * 1_000_000)


class Api:
    """A test client speaking to the simulator as one bearer, with the service prefix applied."""

    def __init__(self, client, token=None, prefix="/partner/v2"):
        self.client, self.token, self.prefix = client, token, prefix

    def as_(self, token):
        return Api(self.client, token, self.prefix)

    def call(self, method, path, **kw):
        headers = dict(kw.pop("headers", {}))
        if self.token and "Authorization" not in headers:
            headers["Authorization"] = f"Bearer {self.token}"
        url = path if path.startswith("/_sandbox") or path.startswith("/openapi") else self.prefix + path
        return self.client.open(url, method=method, headers=headers, **kw)

    def get(self, path, **kw):
        return self.call("GET", path, **kw)

    def post(self, path, **kw):
        return self.call("POST", path, **kw)

    def put(self, path, **kw):
        return self.call("PUT", path, **kw)

    def patch(self, path, **kw):
        return self.call("PATCH", path, **kw)

    def delete(self, path, **kw):
        return self.call("DELETE", path, **kw)

    def advance(self, seconds):
        response = self.post("/_sandbox/clock", json={"advance": seconds})
        assert response.status_code == 200, response.json
        return response.json


@dataclass
class World:
    api: Api            # speaking as the root partner's initial token
    token: str
    partner: dict
    body: dict

    def new_token(self, scope, expires_in=86400, name=None):
        """A fresh token of the root partner holding only `scope`."""
        response = self.api.post("/partners/self/tokens", json={"scope": scope, "expiresIn": expires_in,
                                                                 "name": name})
        assert response.status_code == 201, response.json
        return response.json["accessToken"]

    def user(self, **body):
        """A new user of the root partner; returns (user record, user Api)."""
        response = self.api.post("/users", json=body)
        assert response.status_code == 201, response.json
        return response.json, self.api.as_(response.json["token"]["accessToken"])


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


def new_world(api, **body):
    response = api.post("/_sandbox/partners", json=body)
    assert response.status_code == 201, response.json
    token = response.json["accessToken"]
    return World(api.as_(token), token, response.json["partner"], response.json)


@pytest.fixture
def world(api):
    return new_world(api, name="Acme", email="dev@acme.example")


@pytest.fixture
def other_world(api):
    return new_world(api, name="Globex")


def assert_problem(response, status, slug=None):
    """An RFC 9457 body with the right status (and problem type, when given)."""
    assert response.status_code == status, (response.status_code, response.get_data(as_text=True))
    assert response.mimetype == "application/problem+json"
    body = response.json
    assert body["status"] == status and body["title"] and body["type"]
    if slug:
        assert body["type"].endswith(":" + slug), body["type"]
    return body
