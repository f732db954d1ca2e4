"""CPU per request of a profiled simulator (tools/profile), against the plain one: GET /users (a list of 20) and
GET /users/{id}, in-process through the WSGI test client on a SQLite file, with no profile, with a profile that
renames and reshapes (lists under `items`, creates answering 200), and with one that also numbers ids (a read of
the store's id table per answer). Thread CPU time of this thread, rounds interleaved: quote the ratios, not the
times (a shared machine). `python -m bench profile_layer`. Not a test.
"""

import os
import statistics
import tempfile
import time

from ptas_sandbox import profile as profiles
from ptas_sandbox.simulator import create_app

N = int(os.environ.get("PTAS_BENCH_REQUESTS", 500))
ROUNDS = int(os.environ.get("PTAS_BENCH_ROUNDS", 3))
KINDS = ("user", "partner", "token", "account", "webhook")


def profile(numbered):
    choices = {"createStatus": {"value": {"CreateUser": 200}},
               "lists": {"value": {"GetUsers": {"shape": "object", "key": "items"}}}}
    if numbered:
        choices["ids"] = {"value": {"format": "integer", "malformedStatus": 404,
                                    "kinds": {k: {"form": "integer", "json": "string"} for k in KINDS}}}
    for entry in choices.values():
        entry.update(says="bench", evidence=[])
    return {"format": profiles.FORMAT, "version": profiles.VERSION, "target": "bench", "unknown": {},
            "choices": choices}


def sandbox(config):
    app = create_app({"STATE": os.path.join(tempfile.mkdtemp(), "s.db"), "RATE_LIMIT": 10 ** 9,
                      "START_SERVICES": False, **config})
    client = app.test_client()
    auth = {"Authorization": "Bearer " + client.post("/_sandbox/partners", json={"name": "B"}).json["accessToken"]}
    users = [client.post("/partner/v2/users", json={"name": f"U{n}"}, headers=auth).json["id"] for n in range(20)]
    return app, client, auth, users[0]


def cpu_per_request(client, auth, path):
    start = time.thread_time()
    for _ in range(N):
        response = client.get(path, headers=auth)
        assert response.status_code == 200, response.get_data(as_text=True)
    return (time.thread_time() - start) / N * 1e6


def main():
    setups = {"plain": {}, "profiled": {"PROFILE": profile(False)},
              "profiled, numbered ids": {"PROFILE": profile(True)}}
    made = {name: sandbox(config) for name, config in setups.items()}
    figures = {(name, what): [] for name in setups for what in ("list", "one")}
    for _ in range(ROUNDS):
        for name, (_, client, auth, user) in made.items():
            figures[(name, "list")].append(cpu_per_request(client, auth, "/partner/v2/users"))
            figures[(name, "one")].append(cpu_per_request(client, auth, f"/partner/v2/users/{user}"))
    for what, label in (("list", "GET /users (20)"), ("one", "GET /users/{id}")):
        plain = statistics.median(figures[("plain", what)])
        for name in setups:
            us = statistics.median(figures[(name, what)])
            print(f"{label:18} {name:24} {us:8.0f} us CPU/request  {us / plain:5.2f}x plain")
    for app, *_ in made.values():
        app.extensions["ptas"].close()


if __name__ == "__main__":
    main()
