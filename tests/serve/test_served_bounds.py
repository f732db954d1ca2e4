"""What one client from outside can take of `ptas serve`'s HTTP server (issue 11): connections per address, and
bodies refused as they arrive rather than spooled to disk."""

import json
import socket
import subprocess
import sys

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


MALLOC_PROBE = """
import ctypes, sys
from ptas_sandbox.simulator.serving import tune_malloc

class Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]

libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
libc.mallinfo2.restype = Mallinfo2
if sys.argv[1] == "tuned":
    assert tune_malloc()
libc.free(libc.malloc(4 << 20))       # a large block freed: glibc's default raises its mmap threshold past it
before = libc.mallinfo2().hblks
block = libc.malloc(256 << 10)
print(libc.mallinfo2().hblks - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
def test_a_served_sandbox_maps_large_blocks_after_large_frees():
    """A large block freed must not move later large blocks into the heap, where their holes stay resident
    (serving.tune_malloc): the block after a freed 4 MiB one is still mapped on its own."""
    def mapped(mode):
        return int(subprocess.run([sys.executable, "-c", MALLOC_PROBE, mode], capture_output=True, text=True,
                                  check=True).stdout)
    assert mapped("default") == 0       # the probe sees glibc's default: the threshold moved past 256 KiB
    assert mapped("tuned") == 1
