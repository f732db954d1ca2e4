"""The HTTP servers in front of the app (waitress; gunicorn for --workers: `gunicorn_worker`), their own error
answers in ProblemDetails too.

Waitress answers some requests itself, before the app sees them: a malformed request line or header, a bad
Content-Length or chunked encoding, headers over `max_request_header_size`, a body over `max_request_body_size`
(all 400/413/431), and a 500 when the app breaks the WSGI protocol. By default those are text/plain; here they
are RFC 9457 bodies like every other error of the simulator (docs/design.md).

Bounds against callers from outside: a body larger than the largest the app takes (a snapshot,
`BODY_LIMIT`) is refused while it arrives, not spooled to disk up to waitress's 1 GiB; and one peer address
holds at most `connections_per_address` connections (300 half-sent requests from one address took all of
waitress's 100 and health waited). Behind a reverse proxy every connection comes from the proxy: raise the cap
or turn it off (0) there, and let the proxy limit its clients.
"""

import ctypes
import ctypes.util
import json
import os
import sys
import threading

from waitress import create_server as waitress_server
from waitress.channel import ClientDisconnected, HTTPChannel
from waitress.task import ErrorTask

from .problems import TYPE_ROOT

SLUGS = {400: "bad-request", 403: "forbidden", 413: "payload-too-large", 414: "uri-too-long",
         417: "expectation-failed", 431: "header-fields-too-large", 500: "internal-error", 501: "not-implemented"}


def problem_of(error):
    """Status line, headers and body of a waitress error (waitress.utilities.Error) as ProblemDetails."""
    status = f"{error.code} {error.reason}"
    body = {"type": TYPE_ROOT + SLUGS.get(error.code, "bad-request"), "title": error.reason,
            "status": error.code, "detail": f"The HTTP server refused the request: {error.body}"}
    return status, [("Content-Type", "application/problem+json")], json.dumps(body).encode()


class ProblemErrorTask(ErrorTask):
    def execute(self):
        if isinstance(sys.exc_info()[1], ConnectionResetError):
            # the app closed the connection on purpose (an injected `drop` fault, docs/chaos.md): no answer at
            # all, not a 500; waitress closes a connection whose error task reports the client gone
            raise ClientDisconnected
        status, headers, body = problem_of(self.request.error)
        self.status = status
        self.response_headers.extend(headers)
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


BODY_LIMIT = 5 * 1024 * 1024       # the largest body the app takes is a snapshot (4 MiB); waitress: 1 GiB
CONNECTIONS_PER_ADDRESS = 64        # open connections of one peer address (0: no cap)
BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 5\r\n"
        b"Content-Type: application/problem+json\r\nContent-Length: %d\r\n\r\n")


class ProblemChannel(HTTPChannel):
    """waitress's channel with its own errors as ProblemDetails and at most `per_address` connections from one
    peer address (the next gets a 503 and is closed)."""
    error_task_class = ProblemErrorTask
    per_address = 0

    def __init__(self, server, sock, addr, adj, map=None):
        super().__init__(server, sock, addr, adj, map)
        self.peer = addr[0] if isinstance(addr, tuple) and addr else None
        if not self.per_address or self.peer is None:
            return
        counts, lock = connections_of(server)
        with lock:
            over = counts.get(self.peer, 0) >= self.per_address
            if not over:
                counts[self.peer] = counts.get(self.peer, 0) + 1
                self.counted = True
        if over:
            body = problem_body(503, "Service Unavailable", f"{self.per_address} connections from one address are "
                                "open; close some first")
            try:
                sock.send(BUSY % len(body) + body)
            except OSError:
                pass
            self.close()

    def del_channel(self, map=None):
        if getattr(self, "counted", False):
            self.counted = False
            counts, lock = connections_of(self.server)
            with lock:
                counts[self.peer] -= 1
                if not counts[self.peer]:
                    del counts[self.peer]
        super().del_channel(map)


def connections_of(server):
    """The open connections per peer address of a waitress listener (created with it), and their lock."""
    if not hasattr(server, "ptas_connections"):
        server.ptas_connections, server.ptas_connections_lock = {}, threading.Lock()
    return server.ptas_connections, server.ptas_connections_lock


def create_server(app, connections_per_address=CONNECTIONS_PER_ADDRESS, **options):
    """A waitress server for `app` (host, port, threads... as waitress takes them) answering its own errors as
    ProblemDetails, refusing bodies over BODY_LIMIT as they arrive and capping connections per peer address."""
    options.setdefault("ident", "ptas-sandbox")
    options.setdefault("max_request_body_size", BODY_LIMIT)
    server = waitress_server(app, **options)
    channel = type("ProblemChannel", (ProblemChannel,), {"per_address": connections_per_address})
    listeners = [server] if hasattr(server, "channel_class") else list(server.map.values())   # one or several
    for listener in listeners:
        if hasattr(listener, "channel_class"):
            connections_of(listener)
            listener.channel_class = channel
    return server


def limit_malloc_arenas(arenas=2):
    """Fewer glibc malloc arenas for a served sandbox's many threads (waitress, webhook senders): each thread's
    arena keeps its freed memory, so free space in the allocator grows with the threads; fewer arenas keep less
    resident memory (bench/fuzz_rss.py measures it). MALLOC_ARENA_MAX, when set, wins; elsewhere than glibc
    this does nothing."""
    if os.environ.get("MALLOC_ARENA_MAX") or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(-8, int(arenas)))      # M_ARENA_MAX
    except (OSError, AttributeError):
        return False


def problem_body(status, reason, detail):
    return json.dumps({"type": TYPE_ROOT + SLUGS.get(status, "bad-request"), "title": reason, "status": status,
                       "detail": f"The HTTP server refused the request: {detail or reason}"}).encode()
