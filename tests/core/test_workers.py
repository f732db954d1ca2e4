"""Several processes on one store: `ptas serve --workers 2` (gunicorn) on a SQLite file, or on PostgreSQL in the
PostgreSQL pass. Each worker has its own app, connections and dispatcher; everything per world is in the store,
so the rate limit stays exact, no acknowledged write is lost, and each webhook attempt goes out once. Invariants
of the final state only; the webhook flush control call, not sleeping, waits for deliveries."""

import os
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from tests.support.launched import Launched


@pytest.fixture
def launch(tmp_path):
    launched = []

    def start(store, *options, workers=2):
        """`ptas serve` on `store`, started: `.ready()` waits for it (a second launch may be refused)."""
        server = Launched(tmp_path, "workers" if workers > 1 else "one-process", "--store", store, *options,
                          ready=False)
        launched.append(server)
        return server
    yield start
    for server in launched:
        server.stop()


def call(base, method, path, token=None, **kw):
    url = base + (path if path.startswith("/_sandbox") else "/partner/v2" + path)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return requests.request(method, url, headers=headers, timeout=60, **kw)


def test_a_second_server_on_the_same_state_file_says_who_holds_it_and_exits_2(launch, tmp_path):
    state = str(tmp_path / "team.db")
    first = launch(state).ready()
    second = launch(state, workers=1)
    assert second.process.wait(30) == 2
    message = second.first + second.process.stdout.read()
    assert f"process {first.process.pid}" in message and "in use" in message, message
    for path in (state, state + "-writer"):     # the state, and the file its writers queue on (store.py)
        assert os.stat(path).st_mode & 0o777 == 0o600, f"{path}: the state holds the signing secret: owner only"
    # the two workers of the first launch share its lock: both answer
    world = call(first.base, "POST", "/_sandbox/partners", json={"name": "Still one"}).json()
    assert call(first.base, "GET", "/partners/self", world["accessToken"]).status_code == 200


def test_the_rate_limit_is_exact_across_worker_processes(launch, durable_store):
    server = launch(durable_store, "--rate-limit", "25/3600").ready()
    world = call(server.base, "POST", "/_sandbox/partners", json={"name": "Limited", "frozen": True}).json()
    token = world["accessToken"]
    with ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(lambda _: call(server.base, "GET", "/partners/self", token).status_code,
                                 range(60)))
    assert statuses.count(200) == 25 and statuses.count(429) == 35, statuses


def test_concurrent_mixed_writes_against_two_workers_lose_nothing_and_deliver_each_webhook_once(
        launch, durable_store):
    server = launch(durable_store).ready()
    base = server.base
    worlds = [call(base, "POST", "/_sandbox/partners", json={"name": f"W{i}"}).json() for i in range(3)]
    for i, world in enumerate(worlds):
        assert call(base, "POST", "/webhooks", world["accessToken"], json={
            "callbackUrl": f"{base}/_sandbox/echo/workers-{i}", "events": ["AccountCreated"]}).status_code == 201

    def write(job):
        world, kind, n = job
        token = world["accessToken"]
        if kind == "user":
            response = call(base, "POST", "/users", token, json={"name": f"user {n}"})
            return ("user", world["world"]["id"], response.status_code, response.json().get("id"))
        response = call(base, "POST", "/testevents/accountcreated", token)
        return ("event", world["world"]["id"], response.status_code, None)

    jobs = [(w, kind, n) for w in worlds for kind, count in (("user", 15), ("event", 6)) for n in range(count)]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(write, jobs))
    assert all(status < 500 for _, _, status, _ in results), results
    for i, world in enumerate(worlds):
        token, wid = world["accessToken"], world["world"]["id"]
        created = [ident for kind, w, status, ident in results if kind == "user" and w == wid and status == 201]
        events = [1 for kind, w, status, _ in results if kind == "event" and w == wid and status == 202]
        assert len(created) == 15 and len(events) == 6
        for ident in created:
            assert call(base, "GET", f"/users/{ident}", token).status_code == 200
        listed = call(base, "GET", "/users", token).json()["users"]
        assert sorted(u["id"] for u in listed) == sorted(created)
        assert call(base, "POST", "/_sandbox/webhooks/flush", token).status_code == 200
        log = call(base, "GET", "/_sandbox/deliveries", token).json()["deliveries"]
        assert [(d["attempt"], d["status"]) for d in log] == [(1, "succeeded")] * 6, log
        captures = call(base, "GET", f"/_sandbox/echo/workers-{i}", token).json()["captures"]
        ids = [{k.lower(): v for k, v in c["headers"].items()}["webhook-id"] for c in captures]
        assert len(ids) == 6 and len(set(ids)) == 6, "each notification reached the receiver exactly once"
