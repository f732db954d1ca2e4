"""What one client from outside can take of `ptas serve`'s HTTP server (issue 11): connections per address, and
bodies refused as they arrive rather than spooled to disk."""

import json
import socket

import pytest
import requests

from ptas_sandbox.simulator import create_app
from ptas_sandbox.simulator.serving import BODY_LIMIT, connections_of
from tests.support.served import Served, answer

CAP = 4
LONG = 60


@pytest.fixture
def served():
    app = create_app({"STATE": ":memory:", "START_SERVICES": False})
    served = Served(app, threads=4, connections_per_address=CAP)
    yield served.server
    served.stop()
    app.extensions["ptas"].close()


def connect(server, source="127.0.0.1"):
    return socket.create_connection(("127.0.0.1", server.effective_port), timeout=LONG, source_address=(source, 0))


HEALTH = b"GET /_sandbox/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


def test_one_address_holding_half_sent_requests_leaves_the_server_to_others(served):
    """Waitress takes 100 connections in all; 300 half-sent requests from one address took them and health
    waited. One address now holds CAP; the next gets a 503, and another address is served."""
    hogs = [connect(served) for _ in range(CAP)]
    try:
        for hog in hogs:
            hog.sendall(b"GET /_sandbox/health HTTP/1.1\r\nHost: x\r\n")       # and never the end of it
        with connect(served) as extra:      # answered at once (a request sent first may meet a reset instead)
            status, headers, body = answer(extra)
        assert status == 503 and headers["Content-Type"] == "application/problem+json"
        assert json.loads(body)["status"] == 503 and headers["Retry-After"]
        with connect(served, source="127.0.0.2") as other:
            other.sendall(HEALTH)
            assert answer(other)[0] == 200
    finally:
        for hog in hogs:
            hog.close()
    for _ in range(1000):       # each try is a round trip: the server notices the closes in its own time
        with connect(served) as again:
            try:
                again.sendall(HEALTH)
                if answer(again)[0] == 200:
                    break
            except ConnectionResetError:        # still over the cap: refused before the request was read
                continue
    else:
        pytest.fail("the address's closed connections were never given back")
    counts, _ = connections_of(served)
    assert sum(counts.values()) <= 1, counts         # nothing kept for connections gone


def test_a_body_over_the_limit_is_refused_while_it_arrives(served):
    """waitress spooled up to 1 GiB of a chunked body to disk before the app's 1 MiB limit answered 413."""
    sent = []

    def body():
        chunk = b"x" * (1 << 20)
        for _ in range(4 * BODY_LIMIT // len(chunk)):
            sent.append(len(chunk))
            yield chunk
    try:
        response = requests.post(f"http://127.0.0.1:{served.effective_port}/_sandbox/echo/big", data=body(),
                                 headers={"Content-Type": "text/plain"}, timeout=LONG)
    except requests.ConnectionError:
        response = None         # closed while the body was still coming: refused all the same
    if response is not None:
        assert response.status_code == 413
        assert response.headers["Content-Type"] == "application/problem+json"
    assert sum(sent) < 4 * BODY_LIMIT, "the server stopped reading before the end"
