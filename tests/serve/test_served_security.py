"""A served sandbox (issue 11 items 1, 4, 6): the admin key guards new worlds, a server without --seed picks
its own, and what the HTTP server refuses before the app sees it is ProblemDetails too."""

import json
import os
import re
import subprocess
import sys
import time

import pytest
import requests

from ptas_sandbox.simulator import create_app
from tests.support.client import Api
from tests.support.served import Served, raw
from tests.support.worlds import new_world


def serve(tmp_path, *options, env=None):
    """`ptas serve` in a subprocess: (process, base URL, first line)."""
    process = subprocess.Popen([sys.executable, "-m", "ptas_sandbox.cli", "serve", "--port", "0", "--state",
                                ":memory:", *options], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               cwd=tmp_path, env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})})
    first = process.stdout.readline()
    match = re.search(r"simulator on (http://\S+)", first)
    assert match, first
    return process, match.group(1), first


def stop(process):
    process.terminate()
    process.wait(10)


def test_servers_without_a_seed_pick_their_own_and_print_it_and_a_given_seed_reproduces(tmp_path, config):
    runs = [serve(tmp_path) for _ in range(2)]
    try:
        seeds = [int(re.search(r"seed (\d+), random: --seed \1 reproduces it", first).group(1))
                 for _, _, first in runs]
        ids = [requests.post(f"{base}/_sandbox/partners", json={}, timeout=5).json()["world"]["id"]
               for _, base, _ in runs]
        assert seeds[0] != seeds[1] and ids[0] != ids[1]
    finally:
        for process, _, _ in runs:
            stop(process)
    app = create_app({**config, "SEED": seeds[0]})
    try:
        assert new_world(Api(app.test_client())).body["world"]["id"] == ids[0]
    finally:
        app.extensions["ptas"].close()


def test_a_served_sandbox_with_an_admin_key_creates_worlds_only_for_its_holder(tmp_path):
    process, base, first = serve(tmp_path, env={"PTAS_ADMIN_KEY": "operator-key-0123456789"})
    try:
        assert "operator-key" not in first + process.stdout.readline()       # the key itself is never printed
        refused = requests.post(f"{base}/_sandbox/partners", json={}, timeout=5)
        assert refused.status_code == 401 and refused.headers["Content-Type"] == "application/problem+json"
        assert requests.post(f"{base}/_sandbox/scenarios/default", timeout=5).status_code == 401
        made = requests.post(f"{base}/_sandbox/partners", json={}, timeout=5,
                             headers={"X-Sandbox-Admin-Key": "operator-key-0123456789"})
        assert made.status_code == 201
    finally:
        stop(process)


@pytest.fixture(scope="module")
def served_app():
    app = create_app({"STATE": ":memory:", "START_SERVICES": False})
    # a small header limit, so the oversized request fits in one read (a larger one is cut off with a reset)
    served = Served(app, threads=2, max_request_header_size=4096)
    yield served.port
    served.stop()
    app.extensions["ptas"].close()


@pytest.mark.parametrize("request_bytes, status", [
    (b"POST /_sandbox/partners HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n", 400),
    (b"POST /_sandbox/partners HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n", 400),
    (b"GET /_sandbox/health HTTP/1.1\r\nHost: x\r\nNo colon in this header\r\n\r\n", 400),
    (b"GET /_sandbox/health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 5000 + b"\r\n\r\n", 431),
    (b"POST /_sandbox/partners HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
    (b"POST /_sandbox/partners HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
], ids=["content-length-text", "content-length-negative", "header-without-colon", "headers-too-large",
        "bad-chunk", "unknown-transfer-encoding"])
def test_what_the_http_server_refuses_is_problem_details(served_app, request_bytes, status):
    got, headers, body = raw(served_app, request_bytes + b"\r\n")
    assert got == status, body
    assert headers["Content-Type"] == "application/problem+json"
    problem = json.loads(body)
    assert problem["status"] == status and problem["title"] and problem["type"].startswith("urn:ptas-sandbox:")
    assert "refused" in problem["detail"]


def test_the_served_app_still_answers_normally(served_app):
    status, headers, body = raw(served_app, b"GET /_sandbox/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert status == 200 and json.loads(body)["status"] == "ok"


def test_what_the_server_refuses_under_workers_is_problem_details_too(tmp_path):
    # gunicorn's arbiter binds port 0 once, before its workers fork: they share it, and the first line names it
    process, base, _ = serve(tmp_path, "--workers", "2", "--state", str(tmp_path / "w.db"))
    port = int(base.rsplit(":", 1)[1])
    try:
        deadline = time.monotonic() + 60
        while True:                         # the workers may still be importing when the launcher says it listens
            try:
                if requests.get(f"{base}/_sandbox/health", timeout=5).status_code == 200:
                    break
            except requests.ConnectionError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        for request_bytes, status in [
                (b"GET /_sandbox/health HTTP/1.1\r\nHost: x\r\nNo colon in this header\r\n\r\n", 400),
                (b"POST /_sandbox/partners HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                 b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400)]:
            got, headers, body = raw(port, request_bytes)
            assert got == status, body
            assert headers["Content-Type"] == "application/problem+json"
            assert json.loads(body)["status"] == status
        token = requests.post(f"{base}/_sandbox/partners", json={}, timeout=5).json()["accessToken"]
        auth = {"Authorization": f"Bearer {token}"}
        requests.post(f"{base}/_sandbox/faults", headers=auth, json={"effect": {"type": "drop"}}, timeout=5)
        with pytest.raises(requests.ConnectionError):      # a dropped connection, not a 500
            requests.get(f"{base}/partner/v2/users", headers=auth, timeout=5)
    finally:
        stop(process)


def test_a_dropped_connection_fault_closes_the_connection_without_a_500(served_app):
    """docs/chaos.md: `drop` closes the connection without an answer (waitress alone answered it 500)."""
    base = f"http://127.0.0.1:{served_app}"
    token = requests.post(f"{base}/_sandbox/partners", json={}, timeout=5).json()["accessToken"]
    auth = {"Authorization": f"Bearer {token}"}
    assert requests.post(f"{base}/_sandbox/faults", headers=auth, json={"effect": {"type": "drop"}},
                         timeout=5).status_code == 201
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{base}/partner/v2/users", headers=auth, timeout=5)
    assert requests.get(f"{base}/partner/v2/users", headers=auth, timeout=5).status_code == 200
