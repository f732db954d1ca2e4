"""Many clients at once against a served sandbox (waitress, 8 threads, the dispatcher running): no 5xx, every
error a problem document, and no write lost or doubled. The workload is bounded (a few hundred requests) and
the assertions are invariants of the final state, never timings, so a loaded machine only makes it slower."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from ptas_sandbox.simulator import create_app
from ptas_sandbox.simulator.timestamps import SECOND_US, parse
from ptas_sandbox.webhooks import verify
from tests.support.served import Served

WORLDS = 4
WORKERS = 12
ROUND = 10      # of each kind of write per world


class Server:
    def __init__(self, state, rate_limit=10**9, state_config=None):
        self.app = create_app({"STATE": state, "RATE_LIMIT": rate_limit, "START_SERVICES": True,
                               **(state_config or {})})
        self.served = Served(self.app, threads=8)
        self.base = self.served.base
        self.local = threading.local()
        self.sessions = []
        self.failures = []

    def call(self, method, path, token=None, expect=None, **kw):
        """One request from the calling worker's own session; every answer is checked for 5xx and problem+json."""
        session = getattr(self.local, "session", None)
        if session is None:
            session = self.local.session = requests.Session()
            self.sessions.append(session)
        url = self.base + (path if path.startswith("/_sandbox") else "/partner/v2" + path)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        response = session.request(method, url, headers=headers, timeout=60, **kw)
        if response.status_code >= 500:
            self.failures.append(f"{method} {path}: {response.status_code} {response.text[:300]}")
        elif response.status_code >= 400 and response.headers.get("Content-Type") != "application/problem+json":
            self.failures.append(f"{method} {path}: {response.status_code} as {response.headers.get('Content-Type')}")
        if expect is not None and response.status_code not in expect:
            self.failures.append(f"{method} {path}: {response.status_code} not in {expect}: {response.text[:300]}")
        return response

    def close(self):
        for session in self.sessions:       # their kept-alive connections would keep waitress's loop running
            session.close()
        self.served.stop()
        self.app.extensions["ptas"].close()


@pytest.fixture(params=["memory", "durable"])
def server(request, store_location, durable_store, state_config):
    served = Server(store_location if request.param == "memory" else durable_store, state_config=state_config)
    yield served
    served.close()


def run_all(pool, tasks):
    """Run the tasks concurrently and return their results in order (re-raising any exception of a task)."""
    return [future.result() for future in [pool.submit(task) for task in tasks]]


START = "2030-01-01T00:00:00Z"


def new_world(server):
    """A world whose clock is frozen at START, so that only the clock moves of the workload move it."""
    return server.call("POST", "/_sandbox/partners", json={"name": "Load", "start": START, "frozen": True},
                       expect={201}).json()["accessToken"]


def test_a_concurrent_mixed_workload_never_fails_and_loses_or_doubles_nothing(server):
    with ThreadPoolExecutor(WORKERS) as pool:
        roots = run_all(pool, [lambda: new_world(server) for _ in range(WORLDS)])
        doomed = new_world(server)           # reset while the others run
        bins = {root: f"load-{i}" for i, root in enumerate(roots)}
        hooks = run_all(pool, [lambda r=root: server.call(
            "POST", "/webhooks", r, expect={201}, json={"callbackUrl": f"{server.base}/_sandbox/echo/{bins[r]}",
                                                          "events": ["AccountCreated"]}).json()
            for root in roots])
        secrets = dict(zip(roots, (h["secret"] for h in hooks)))

        def make_user(root, i):
            return server.call("POST", "/users", root, expect={201}, json={"name": f"user {i}"}).json()

        def make_token(root, i):
            return server.call("POST", "/partners/self/tokens", root, expect={201},
                               json={"name": f"t{i}", "expiresIn": 7200, "scope": "partner:read"}).json()

        def make_child(root, i):
            return server.call("POST", "/partners", root, expect={201}, json={"name": f"child {i}"}).json()

        def test_event(root):
            return server.call("POST", "/testevents/accountcreated", root, expect={202}).json()

        def advance(root):
            return server.call("POST", "/_sandbox/clock", root, expect={200}, json={"advance": 60})

        def churn_doomed(i):
            if i % 3 == 0:
                return server.call("POST", "/_sandbox/reset", doomed, expect={200})
            return server.call("POST", "/users", doomed, expect={201}, json={"name": "doomed"})

        tasks = []
        for root in roots:
            for i in range(ROUND):
                tasks += [lambda r=root, i=i: ("user", r, make_user(r, i)),
                          lambda r=root, i=i: ("token", r, make_token(r, i)),
                          lambda r=root, i=i: ("child", r, make_child(r, i)),
                          lambda r=root: ("event", r, test_event(r)),
                          lambda r=root: ("clock", r, advance(r)),
                          lambda r=root: ("flush", r, server.call("POST", "/_sandbox/webhooks/flush", r, expect={200})),
                          lambda i=i: ("doomed", None, churn_doomed(i))]
        results = run_all(pool, tasks)
        assert server.failures == []
        made = {kind: {root: [] for root in roots} for kind in ("user", "token", "child", "event")}
        for kind, root, value in results:
            if kind in made:
                made[kind][root].append(value)

        # Revoke half of each world's new tokens, all at once, each twice (one 200, one 409 or 200 again).
        revoked = {root: [t["id"] for t in made["token"][root][::2]] for root in roots}
        run_all(pool, [lambda r=root, t=token_id: server.call("DELETE", f"/partners/self/tokens/{t}", r,
                                                              expect={200, 409})
                       for root in roots for token_id in revoked[root] for _ in range(2)])

        # Two threads race to create the same account: one 201, the rest 409.
        def create_account(root, user_id):
            return server.call("POST", "/accounts", root, expect={201, 409}, json={
                "accountTypeId": "dummy", "name": "Shop", "userId": user_id,
                "credentials": {"username": "jane", "password": "s3cret"}}).status_code
        users = [(root, made["user"][root][0]["id"]) for root in roots]
        statuses = run_all(pool, [lambda r=r, u=u: create_account(r, u) for r, u in users for _ in range(3)])
        accounts = [server.call("GET", "/accounts", r, expect={200}, params={"userId": u}).json() for r, u in users]
        pages = run_all(pool, [lambda r=r, a=a: server.call(
            "GET", f"/accounts/{a['accounts'][0]['id']}/transactions", r, expect={200})
            for (r, _), a in zip(users, accounts) for _ in range(2)])
        run_all(pool, [lambda r=root: server.call("POST", "/_sandbox/webhooks/flush", r, expect={200})
                       for root in roots])

    assert server.failures == []
    for i in range(len(users)):
        assert sorted(statuses[3 * i:3 * i + 3]) == [201, 409, 409]
        assert len(accounts[i]["accounts"]) == 1
    assert all(page.status_code == 200 for page in pages)
    for root in roots:
        listed = [u["id"] for u in server.call("GET", "/users", root).json()["users"]]
        assert sorted(listed) == sorted(u["id"] for u in made["user"][root])
        tokens = {t["id"]: t for t in server.call("GET", "/partners/self/tokens", root).json()["tokens"]}
        created = {t["id"] for t in made["token"][root]}
        assert created <= set(tokens) and len(tokens) == len(created) + 1          # and the root's own token
        assert {i for i in created if tokens[i]["isRevoked"]} == set(revoked[root])
        children = [p["id"] for p in server.call("GET", "/partners", root).json()["partners"]]
        assert sorted(c["id"] for c in made["child"][root]) == sorted(children)
        clock = server.call("GET", "/_sandbox/clock", root).json()
        assert parse(clock["now"]) == parse(START) + ROUND * 60 * SECOND_US     # no advance lost to another
        captures = server.call("GET", f"/_sandbox/echo/{bins[root]}", root).json()["captures"]
        # the age check is about replay; these were signed on a world clock moved ahead, so it is skipped
        received = [verify(secrets[root], c["headers"], c["body"], tolerance_seconds=None) for c in captures]
        tests = sorted(p["id"] for p in received if p.get("isTest"))
        assert tests == sorted(e["id"] for e in made["event"][root])            # each exactly once
        log = server.call("GET", "/_sandbox/deliveries", root).json()["deliveries"]
        # the test events and the AccountCreated of the raced account, each at the first attempt
        assert [(d["attempt"], d["status"]) for d in log] == [(1, "succeeded")] * (len(made["event"][root]) + 1)


def test_flushes_holding_every_server_thread_still_reach_the_echo_on_the_same_server(server):
    """Each flush holds a server thread until its attempts end; attempts at the server's own echo must not
    need one (they timed out behind the flushes, then were retried: the echo got them twice)."""
    worlds = [new_world(server) for _ in range(8)]
    for i, root in enumerate(worlds):
        server.call("POST", "/webhooks", root, expect={201}, json={
            "callbackUrl": f"{server.base}/_sandbox/echo/flush-{i}", "events": ["AccountCreated"]})

    def send_and_flush(root):
        server.call("POST", "/testevents/accountcreated", root, expect={202})
        return server.call("POST", "/_sandbox/webhooks/flush", root, expect={200}).json()

    with ThreadPoolExecutor(16) as pool:
        run_all(pool, [lambda r=root: send_and_flush(r) for root in worlds * 2])
    assert server.failures == []
    for i, root in enumerate(worlds):
        # One flush's answer may count the other's event of its world, made while it answered: only once both
        # are done is nothing left (no retry scheduled, nothing on the wire).
        after = server.call("POST", "/_sandbox/webhooks/flush", root, expect={200}).json()
        assert (after["attempted"], after["inFlight"], after["pending"]) == (0, 0, 0), after
        log = server.call("GET", "/_sandbox/deliveries", root).json()["deliveries"]
        assert [(d["attempt"], d["status"]) for d in log] == [(1, "succeeded")] * 2
        assert len(server.call("GET", f"/_sandbox/echo/flush-{i}", root).json()["captures"]) == 2

def test_concurrent_requests_over_the_rate_limit_get_exactly_the_limit_through(state_config):
    """On a frozen world clock the window never moves: of 40 requests at once, 30 pass and 10 get a 429."""
    served = Server(":memory:", rate_limit=30, state_config=state_config)
    try:
        root = new_world(served)
        with ThreadPoolExecutor(WORKERS) as pool:
            statuses = run_all(pool, [lambda: served.call("GET", "/partners/self", root, expect={200, 429}).status_code
                                      for _ in range(40)])
        assert served.failures == []
        assert sorted(statuses) == [200] * 30 + [429] * 10
    finally:
        served.close()


def test_a_reset_world_hands_out_no_id_it_kept_or_handed_out_before(system_time, state_config):
    """The reset keeps the root partner and its tokens; their ids came from the world's id sequences."""
    client = create_app({"SYSTEM_TIME": system_time, "START_SERVICES": False, **state_config}).test_client()
    token = client.post("/_sandbox/partners", json={"name": "Reset"}).json["accessToken"]
    auth = {"Authorization": f"Bearer {token}"}
    before = client.post("/partner/v2/users", json={"name": "Before"}, headers=auth).json["id"]
    assert client.post("/_sandbox/reset", headers=auth).status_code == 200
    user = client.post("/partner/v2/users", json={"name": "After"}, headers=auth)
    child = client.post("/partner/v2/partners", json={"name": "Child"}, headers=auth)
    mine = client.post("/partner/v2/partners/self/tokens", headers=auth,
                       json={"expiresIn": 7200, "scope": "partner:read"})
    assert (user.status_code, child.status_code, mine.status_code) == (201, 201, 201)
    assert user.json["id"] != before
