"""Worlds and time for the project's tests: a system clock that stands still, and a world with its root token."""

from dataclasses import dataclass

from ptas_sandbox.simulator.timestamps import parse
from tests.support.client import Api

START = parse("2026-01-05T09:00:00Z")


class SystemTime:
    """A stand-in for the system clock that moves only when a test says so (worlds add their own offsets)."""

    def __init__(self, start=START):
        self.now = start

    def __call__(self):
        return self.now

    def tick(self, seconds):
        self.now += int(seconds * 1_000_000)


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


def new_world(api, **body):
    response = api.post("/_sandbox/partners", json=body)
    assert response.status_code == 201, response.json
    token = response.json["accessToken"]
    return World(api.as_(token), token, response.json["partner"], response.json)
