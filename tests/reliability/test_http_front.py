"""The HTTP front against hostile and slow clients (issue 24), in both modes of `ptas serve`: one waitress
process and `--workers 2`. Ambiguous framing is a 400 and the end of the connection, an oversized chunked body
a 413 that is never cut and processed, per-address caps hold, and trickling clients hold no thread: a
bystander is served while 200 of them sit on the server. Outcomes only ("served", "refused"); latency
figures are bench/slow_clients.py's."""

import json
import logging
import re
import select
import socket
import time

import requests

from ptas_sandbox.simulator.serving import BODY_LIMIT, QueueNotes, create_server

SMUGGLED = (b"POST /partner/v2/users HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n")
AMBIGUOUS = [
    SMUGGLED,
    b"POST /partner/v2/users HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n"
    b"0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
    b"POST /partner/v2/users HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
    b"POST /partner/v2/users HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n Transfer-Encoding: chunked\r\n"
    b"Content-Length: 0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
    # chunked applied twice (RFC 9112 6.1): a server on the path may decode it once, or twice
    b"POST /partner/v2/users HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, chunked\r\n\r\n"
    b"3\r\nabc\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
    b"POST /partner/v2/users HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n"
    b"\r\n3\r\nabc\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
    # which host is meant (RFC 9112 3.2): two Host headers, or none on HTTP/1.1
    b"GET /_sandbox/health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /_sandbox/health HTTP/1.1\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
    # lines ended by a bare LF or a bare CR (RFC 9112 2.2): waitress waited for a CRLF CRLF that never came
    b"GET /_sandbox/health HTTP/1.1\nHost: x\n\nGET /smuggled HTTP/1.1\nHost: x\n\n",
    b"GET /_sandbox/health HTTP/1.1\r\nHost: x\rX-Hidden: y\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
]


def everything(sock):
    """All bytes the server sends until it closes the connection."""
    chunks = []
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def test_ambiguous_framing_is_a_400_that_closes_the_connection_and_serves_nothing_behind_it(launched):
    server = launched()
    for request in AMBIGUOUS:
        with server.connect() as sock:
            sock.sendall(request)
            got = everything(sock)
        head, _, rest = got.partition(b"\r\n\r\n")
        length = int(re.search(rb"Content-Length: (\d+)", head).group(1))
        assert head.split(b" ", 2)[1] == b"400" and rest[length:] == b"", got     # nothing smuggled behind it
        assert b"Content-Type: application/problem+json" in head and b"Connection: close" in head
        assert json.loads(rest[:length])["status"] == 400


def world(server):
    made = requests.post(f"{server.base}/_sandbox/partners", json={}, timeout=30)
    assert made.status_code == 201
    return {"Authorization": f"Bearer {made.json()['accessToken']}"}


def test_an_oversized_chunked_body_is_413_and_never_cut_and_processed(launched):
    """Under gunicorn's gthread worker a 1.2 MB chunked body beginning with a valid one was cut at the limit
    and created what it began with (201)."""
    server = launched()
    auth = world(server)
    start = json.dumps({"name": "cut short", "email": "cut@example.com"}).encode()
    head = (b"POST /partner/v2/users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Authorization: " + auth["Authorization"].encode() + b"\r\nTransfer-Encoding: chunked\r\n\r\n")
    padding = b" " * 65536
    with server.connect() as sock:
        sock.sendall(head + b"%x\r\n%s\r\n" % (len(start), start))
        sent = len(start)
        try:
            while sent < 2 * BODY_LIMIT and not select.select([sock], [], [], 0)[0]:
                sock.sendall(b"%x\r\n%s\r\n" % (len(padding), padding))
                sent += len(padding)
        except (BrokenPipeError, ConnectionResetError):
            pass                            # refused while the body still came
        got = everything(sock)
    assert sent < 2 * BODY_LIMIT, "the server read on past its limit"
    if got:                                 # a reset may beat the answer to the client; the state says the rest
        assert got.split(b" ", 2)[1] == b"413", got[:200]
    users = requests.get(f"{server.base}/partner/v2/users", headers=auth, timeout=30)
    assert users.status_code == 200 and users.json()["users"] == [], users.text


def trickle(server, source, count):
    """`count` connections from `source` that send the start of a request and then nothing."""
    held = []
    for _ in range(count):
        sock = server.connect(source)
        sock.sendall(b"POST /partner/v2/users HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nX-Slow: ")
        held.append(sock)
    return held


def test_200_trickling_connections_from_4_addresses_leave_a_bystander_served(launched):
    """gthread gave each connection a thread while it read headers (16 such connections stalled every
    client); waitress stopped accepting at 100 connections. Each address here stays under the per-address cap."""
    server = launched()
    held = []
    try:
        for source in ("127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"):
            held += trickle(server, source, 50)
        for sock in held[::10]:             # still trickling: one more header byte on some of them
            sock.sendall(b"x")
        auth = world(server)
        for _ in range(20):
            assert requests.get(f"{server.base}/partner/v2/partners/self", headers=auth,
                                timeout=30).status_code == 200
            assert requests.get(f"{server.base}/_sandbox/health", timeout=30).status_code == 200
    finally:
        for sock in held:
            sock.close()


def test_the_per_address_cap_holds_in_both_modes(launched):
    """With a cap of 4, one address holds at most 4 connections, across every worker process under --workers
    (each worker counted its own: an address held 4 x N); the rest are answered 503 at once. Two workers
    accepting at the same instant may pass the cap by one."""
    server = launched("--connections-per-address", "4")
    slack = 1 if launched.mode == "workers" else 0
    held = trickle(server, "127.0.0.6", 20)
    try:
        refused, deadline = set(), time.monotonic() + 30
        while len(refused) < 20 - 4 - slack and time.monotonic() < deadline:
            readable, _, _ = select.select([s for s in held if s not in refused], [], [], 1)
            for sock in readable:
                if everything(sock).split(b" ", 2)[1:2] == [b"503"]:
                    refused.add(sock)
        assert len(refused) >= 20 - 4 - slack
        with server.connect("127.0.0.7") as other:         # another address is served all the while
            other.sendall(b"GET /_sandbox/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert everything(other).split(b" ", 2)[1] == b"200"
    finally:
        for sock in held:
            sock.close()


def test_a_request_trickling_past_its_deadline_loses_its_connection(monkeypatch):
    """A client that keeps sending a header byte now and then keeps its socket no longer than REQUEST_DEADLINE
    (waitress's idle timeout alone never fires while bytes come)."""
    from ptas_sandbox.simulator import create_app, serving
    from tests.support.served import Served

    monkeypatch.setattr(serving, "REQUEST_DEADLINE", 0.2)
    app = create_app({"STATE": ":memory:", "START_SERVICES": False})
    served = Served(app, threads=2, cleanup_interval=1)
    try:
        with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:
            sock.sendall(b"GET /_sandbox/health HTTP/1.1\r\nHost: x\r\n")
            closed = False
            for _ in range(300):            # a byte every 0.1 s: never idle, never done
                try:
                    sock.sendall(b"X-A: b\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    closed = True
                    break
                if select.select([sock], [], [], 0.1)[0]:
                    closed = everything(sock) == b""
                    break
            assert closed, "the trickling request kept its connection"
    finally:
        served.stop()
        app.extensions["ptas"].close()


def test_the_connections_of_a_worker_that_died_stop_counting_when_the_next_starts():
    """kill -9 leaves a worker's row in the launch's table; the worker started in its place clears it."""
    import os

    from ptas_sandbox.simulator.serving import LaunchConnections

    launch = LaunchConnections()
    try:
        child = os.fork()
        if child == 0:                      # a worker that holds three connections and dies without a word
            launch.claim()
            launch.add("10.0.0.1", 3)
            os._exit(0)
        os.waitpid(child, 0)
        assert launch.held("10.0.0.1") == 3
        assert launch.claim() is not None       # the next worker
        assert launch.held("10.0.0.1") == 0
        launch.add("10.0.0.1", 1)
        assert launch.held("10.0.0.1") == 1 and launch.held("10.0.0.2") == 0
    finally:
        launch.remove()


def test_clients_that_pipeline_requests_and_read_no_answer_hold_no_thread(monkeypatch):
    """Every thread wrote to a client that reads nothing, waiting for its full output buffer to drain: the server
    answered no one until those clients went. A stalled channel is closed after SEND_STALL."""
    from ptas_sandbox.simulator import create_app, serving
    from tests.support.served import Served

    monkeypatch.setattr(serving, "SEND_STALL", 0.5)
    app = create_app({"STATE": ":memory:", "START_SERVICES": False})
    served = Served(app, threads=2, cleanup_interval=1, outbuf_high_watermark=256 * 1024)
    silent = []
    try:
        for _ in range(2):          # as many as the server has threads
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect(("127.0.0.1", int(served.port)))
            sock.sendall(b"GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n" * 40)     # ~10 MB of answers, unread
            silent.append(sock)
        bystander = requests.get(f"http://127.0.0.1:{served.port}/_sandbox/health", timeout=60)
        assert bystander.status_code == 200
    finally:
        for sock in silent:
            sock.close()
        served.stop()
        app.extensions["ptas"].close()



def test_waitress_s_queue_depth_is_said_once_a_minute_not_once_a_request():
    """A busy server had waitress log a line per request waiting for a thread: an unbounded log."""
    logger = logging.getLogger("waitress.queue")
    before = list(logger.filters)
    try:
        for _ in range(2):          # every server made installs the one filter
            create_server(lambda environ, start_response: [], host="127.0.0.1", port=0).close()
        notes = [f for f in logger.filters if isinstance(f, QueueNotes)]
        assert len(notes) == 1
    finally:
        logger.filters[:] = before
    now = [100.0]
    notes = QueueNotes(every_s=60, clock=lambda: now[0])

    def record(depth):
        return logging.LogRecord("waitress.queue", logging.WARNING, __file__, 0, "Task queue depth is %d", (depth,),
                                 None)
    said = [r.getMessage() for r in map(record, range(1, 1001)) if notes.filter(r)]
    assert said == ["Task queue depth is 1"]
    now[0] += 60
    said = [r.getMessage() for r in map(record, [7, 8]) if notes.filter(r)]
    assert said == ["Task queue depth is 7 (999 such lines left out before this one)"]


def test_a_request_of_another_http_version_is_a_505_not_answered_as_http_1_0():
    """waitress answered `HTTP/2.0` or `HTTP/3.1` as if the client spoke HTTP/1.0."""
    from ptas_sandbox.simulator import create_app
    from tests.support.served import Served

    app = create_app({"STATE": ":memory:", "START_SERVICES": False})
    served = Served(app, threads=2)
    try:
        for version in (b"2.0", b"3.1", b"0.9"):
            with socket.create_connection(("127.0.0.1", int(served.port)), timeout=30) as sock:
                sock.sendall(b"GET /_sandbox/health HTTP/" + version + b"\r\nHost: x\r\n\r\n")
                got = everything(sock)
            head, _, body = got.partition(b"\r\n\r\n")
            assert head.split(b" ", 2)[1] == b"505", got
            assert json.loads(body)["status"] == 505 and b"application/problem+json" in head
    finally:
        served.stop()
        app.extensions["ptas"].close()


def test_a_crlf_split_between_two_reads_of_the_head_is_no_bare_cr():
    from waitress.adjustments import Adjustments

    from ptas_sandbox.simulator.serving import FramingParser

    parser = FramingParser(Adjustments())
    for part in (b"GET /_sandbox/health HTTP/1.1\r", b"\nHost: x\r", b"\n\r", b"\n"):
        assert parser.received(part) == len(part)
    assert parser.completed and parser.error is None and parser.headers["HOST"] == "x"
    parser = FramingParser(Adjustments())
    parser.received(b"GET /_sandbox/health HTTP/1.1\r")
    parser.received(b"Host: x\r\n\r\n")
    assert parser.completed and parser.error.code == 400
