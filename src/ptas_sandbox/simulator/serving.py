"""The HTTP front of the app: waitress, in one process and in each `--workers` process (`gunicorn_worker` runs
it under gunicorn's arbiter), its own error answers in ProblemDetails too.

Why waitress in both modes: it reads every request, headers and body, in its event loop, and hands a worker
thread only a complete request, so a client trickling its headers or its body holds a socket and a few
kilobytes, never a thread (a thread-per-connection worker lets a handful of slow clients stall everyone). One
front in both modes also means one framing rule, one body limit and one per-address cap.

Waitress answers some requests itself, before the app sees them: a malformed request line or header, a bad
Content-Length or chunked encoding, headers over `max_request_header_size`, a body over `max_request_body_size`
(all 400/413/431), and a 500 when the app breaks the WSGI protocol. By default those are text/plain; here they
are RFC 9457 bodies like every other error of the simulator (docs/design.md).

Bounds against callers from outside: a body larger than the largest the app takes (a snapshot,
`BODY_LIMIT`) is refused while it arrives, not spooled to disk up to waitress's 1 GiB; and one peer address
holds at most `connections_per_address` connections (300 half-sent requests from one address took all of
waitress's 100 and health waited). Behind a reverse proxy every connection comes from the proxy: raise the cap
or turn it off (0) there, and let the proxy limit its clients.

Framing: a request whose framing two servers could read two ways is refused with 400 and its connection
closed, and nothing after it on that connection is read (a request smuggled behind it would be served): both
Content-Length and Transfer-Encoding, Transfer-Encoding on HTTP/1.0 or given twice (chunked applied twice),
two Host headers or none on HTTP/1.1, folded header lines, and head lines ended by a bare LF or CR. A request
line of another version than HTTP/1.0 or 1.1 is a 505 (waitress would answer it as HTTP/1.0). A chunked body over
the limit is a 413 as it arrives, never cut and processed.

Slow clients: the loop holds up to CONNECTION_LIMIT connections (at waitress's own limit it stops accepting
anyone, so trickling clients would shut everyone out) and polls them with poll(2), not select(2), which fails
past 1,024 descriptors. A request must arrive whole within REQUEST_DEADLINE seconds of its first byte, or its
connection is closed: trickling cannot keep a socket for ever. A client that pipelines requests and reads no
answer loses its connection once its answers fill the output buffer and none of it has gone for SEND_STALL
seconds, which frees the thread waiting to write to it.

Log: waitress says "Task queue depth is N" for each request that has to wait for a thread; a busy server wrote
that line per request (1,455 lines in two seconds of 32 connections). `QueueNotes` lets one through a minute,
with the number it left out.

Arrival: each request's environ carries REQUEST_COMPLETE_NS, `time.perf_counter_ns()` when its last byte was
read (the monotonic clock every process of the machine shares). A request may wait in the queue for a thread
behind others; the integration report judges what a client could have known when it sent a request by this
stamp, not by the moment a thread took the request up.
"""

import ctypes
import ctypes.util
import gc
import json
import logging
import os
import resource
import sys
import threading
import time
import zlib

from waitress import create_server as waitress_server
from waitress.channel import ClientDisconnected, HTTPChannel
from waitress.parser import HTTPRequestParser, ParsingError
from waitress.task import ErrorTask, WSGITask
from waitress.utilities import BadRequest, Error, find_double_newline

from .problems import TYPE_ROOT

SLUGS = {400: "bad-request", 403: "forbidden", 413: "payload-too-large", 414: "uri-too-long",
         417: "expectation-failed", 431: "header-fields-too-large", 500: "internal-error", 501: "not-implemented",
         503: "service-unavailable", 505: "http-version-not-supported"}


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


CONNECTION_LIMIT = 2000            # open connections of one server process
REQUEST_DEADLINE = 30               # seconds from a request's first byte to its last
IDLE_SECONDS = 60                   # a kept-alive connection with no request in flight
SEND_STALL = 30                     # seconds an answer may wait on a client that reads none of it


REQUEST_COMPLETE_NS = "ptas.request_complete_ns"


class VersionNotSupported(Error):
    code = 505
    reason = "HTTP Version Not Supported"


class FramingParser(HTTPRequestParser):
    """waitress's request parser, refusing framings that another server on the path could read differently, and
    stamping when the request was complete."""
    completed_ns = None
    version_refused = False

    def received(self, data):
        if self.body_rcv is None and not self.completed and bare_line_end(self.header_plus + data):
            # waitress ends a head only at CRLF CRLF: a head of bare LFs would wait for its deadline, unanswered
            self.parse_header(b"GET / HTTP/1.0\r\n")     # what waitress does before an error of its own
            self.error = BadRequest("the lines of a request's head end with CRLF; a bare LF or CR is not "
                                    "accepted (RFC 9112 2.2)")
            self.completed = True
            consumed = len(data)
        else:
            consumed = super().received(data)
        if self.version_refused and isinstance(self.error, BadRequest):
            self.error = VersionNotSupported(f"HTTP/{self.version} is not served here; send HTTP/1.1")
        if self.completed and self.completed_ns is None:
            self.completed_ns = time.perf_counter_ns()
        return consumed

    def parse_header(self, header_plus):
        lines = header_plus.split(b"\r\n")
        _, named, version = lines[0].rstrip().rpartition(b" HTTP/")
        if named and version not in (b"1.0", b"1.1"):
            self.version, self.version_refused = version.decode("latin-1"), True
            # waitress would answer any other version as HTTP/1.0: a client of HTTP/2 must not think it was heard
            raise ParsingError("unsupported HTTP version")
        names = set()
        for line in lines[1:]:
            if line[:1] in (b" ", b"\t"):
                raise ParsingError("folded header lines (obs-fold) are not accepted")
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"transfer-encoding" and (name in names or value.lower().count(b"chunked") > 1):
                raise ParsingError("chunked may be applied once, in one Transfer-Encoding header (RFC 9112 6.1)")
            if name == b"host" and name in names:
                raise ParsingError("a request has one Host header (RFC 9112 3.2)")
            names.add(name)
        if b"host" not in names and named and version == b"1.1":
            raise ParsingError("an HTTP/1.1 request needs a Host header (RFC 9112 3.2)")
        if b"transfer-encoding" in names and b"content-length" in names:
            raise ParsingError("a request may not have both Content-Length and Transfer-Encoding")
        if b"transfer-encoding" in names and named and version == b"1.0":
            raise ParsingError("Transfer-Encoding is not defined for HTTP/1.0")
        super().parse_header(header_plus)


def bare_line_end(head):
    """Whether the head so far (up to its blank line, if it has arrived) has an LF without its CR or a CR without
    its LF; a CR that ends `head` may still get its LF."""
    end = find_double_newline(head)
    head = head[:end] if end >= 0 else head[:-1] if head.endswith(b"\r") else head
    pairs = head.count(b"\r\n")
    return head.count(b"\n") != pairs or head.count(b"\r") != pairs


class StampedTask(WSGITask):
    """waitress's WSGI task, handing the app when the request was complete (REQUEST_COMPLETE_NS)."""

    def get_environment(self):
        environ = super().get_environment()
        environ[REQUEST_COMPLETE_NS] = self.request.completed_ns
        return environ


class ProblemChannel(HTTPChannel):
    """waitress's channel with its own errors as ProblemDetails, the framing rules above, at most `per_address`
    connections from one peer address (the next gets a 503 and is closed), and a loop that waits for a task's
    answer rather than spinning on it."""
    error_task_class = ProblemErrorTask
    task_class = StampedTask
    parser_class = FramingParser
    per_address = 0
    request_since = None        # time.monotonic() of the first byte of a request still arriving

    launch = None               # LaunchConnections: the counts of the other processes of a `--workers` launch

    def __init__(self, server, sock, addr, adj, map=None):
        super().__init__(server, sock, addr, adj, map)
        self.peer = addr[0] if isinstance(addr, tuple) and addr else None
        if not self.per_address or self.peer is None:
            return
        counts, lock = connections_of(server)
        with lock:
            held = counts.get(self.peer, 0) if self.launch is None else self.launch.held(self.peer)
            over = held >= self.per_address
            if not over:
                counts[self.peer] = counts.get(self.peer, 0) + 1
                if self.launch is not None:
                    self.launch.add(self.peer, 1)
                self.counted = True
        if over:
            body = problem_body(503, "Service Unavailable", f"{self.per_address} connections from one address are "
                                "open; close some first")
            try:
                sock.send(BUSY % len(body) + body)
            except OSError:
                pass
            self.close()

    def _flush_some_if_lockable(self, do_close=True):
        """The loop's flush while a task answers on this channel waits for the task's turn on the output lock.
        waitress skips instead; the channel stays writable, so the loop polls it again at once and spins, taking
        the GIL from the very thread it waits for: under load that spin cost more CPU than the requests did.
        The wait is short: a task holds the lock only to append and to send on a non-blocking socket, and
        releases it to wait for the loop to drain a full buffer (waitress's own close waits the same way)."""
        with self.outbuf_lock:
            self._flush_some(do_close=do_close)
            if self.total_outbufs_len < self.adj.outbuf_high_watermark:
                self.outbuf_lock.notify()

    def received(self, data):
        if data and self.request is None:
            self.request_since = time.monotonic()
        done = super().received(data)
        if self.request is None:
            self.request_since = None
        return done

    def overdue(self, now):
        """A request has been arriving for longer than REQUEST_DEADLINE."""
        return self.request_since is not None and now - self.request_since > REQUEST_DEADLINE

    def stalled(self, now):
        """Its answers fill the output buffer and none of it has gone for SEND_STALL seconds (`now`: the wall
        clock waitress keeps `last_activity` on): a client pipelining requests and reading no answer. A task
        waiting to write to it holds one of the server's threads, and waitress's idle clean-up passes over a
        channel with requests, so a few such clients would hold every thread for ever."""
        return self.total_outbufs_len > self.adj.outbuf_high_watermark and now - self.last_activity > SEND_STALL

    def del_channel(self, map=None):
        if getattr(self, "counted", False):
            self.counted = False
            counts, lock = connections_of(self.server)
            with lock:
                counts[self.peer] -= 1
                if not counts[self.peer]:
                    del counts[self.peer]
                if self.launch is not None:
                    self.launch.add(self.peer, -1)
        super().del_channel(map)


class LaunchConnections:
    """Open connections per peer address across the worker processes of one `--workers` launch, so the
    per-address cap is the launch's, not each process's. Made by the launching process before it forks: a
    table in shared memory with a row per worker process (each writes only its own row, under its own lock, so
    no lock is shared between processes on the hot path; a connection accepted by two processes at the same
    instant may pass the cap by one). Addresses are counted in buckets of their hash: two addresses in one
    bucket share a cap, which only makes it stricter. A worker claims a row at start, under a `flock` of its
    own descriptor (released if it dies), and clears the rows of processes no longer alive (kill -9), so their
    connections stop counting."""
    ROWS, BUCKETS = 32, 16384

    def __init__(self):
        import multiprocessing
        import tempfile
        self.counts = multiprocessing.RawArray(ctypes.c_int32, self.ROWS * self.BUCKETS)
        self.owners = multiprocessing.RawArray(ctypes.c_int32, self.ROWS)
        descriptor, self.lock_path = tempfile.mkstemp(prefix="ptas-connections-")
        os.close(descriptor)
        self.row = None

    def claim(self):
        """In a worker: a row of its own (None when more than ROWS processes are alive: the cap is then this
        process's alone)."""
        import fcntl
        with open(self.lock_path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            for row in range(self.ROWS):
                owner = self.owners[row]
                if owner and owner != os.getpid() and not alive(owner):
                    self.counts[row * self.BUCKETS:(row + 1) * self.BUCKETS] = [0] * self.BUCKETS
                    self.owners[row] = 0
            for row in range(self.ROWS):
                if not self.owners[row]:
                    self.owners[row] = os.getpid()
                    self.row = row
                    break
        return self.row

    def bucket(self, peer):
        return zlib.crc32(peer.encode()) % self.BUCKETS

    def held(self, peer):
        bucket = self.bucket(peer)
        return sum(self.counts[row * self.BUCKETS + bucket] for row in range(self.ROWS))

    def add(self, peer, n):
        if self.row is not None:
            self.counts[self.row * self.BUCKETS + self.bucket(peer)] += n

    def remove(self):
        try:
            os.unlink(self.lock_path)
        except OSError:
            pass


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def connections_of(server):
    """The open connections per peer address of a waitress listener (created with it), and their lock."""
    if not hasattr(server, "ptas_connections"):
        server.ptas_connections, server.ptas_connections_lock = {}, threading.Lock()
    return server.ptas_connections, server.ptas_connections_lock


class QueueNotes(logging.Filter):
    """At most one of waitress's queue-depth lines per `every_s` seconds (module docstring), saying how many it
    left out since the last."""

    def __init__(self, every_s=60.0, clock=time.monotonic):
        super().__init__()
        self.every_s, self.clock = every_s, clock
        self.last: float | None = None
        self.left_out = 0
        self.lock = threading.Lock()

    def filter(self, record):
        now = self.clock()
        with self.lock:
            if self.last is not None and now - self.last < self.every_s:
                self.left_out += 1
                return False
            self.last, left_out, self.left_out = now, self.left_out, 0
        if left_out:
            record.msg = f"{record.getMessage()} ({left_out} such lines left out before this one)"
            record.args = ()
        return True


def quiet_queue_notes(logger=logging.getLogger("waitress.queue")):
    if not any(isinstance(f, QueueNotes) for f in logger.filters):
        logger.addFilter(QueueNotes())


def create_server(app, connections_per_address=CONNECTIONS_PER_ADDRESS, launch=None, **options):
    """A waitress server for `app` (host, port, threads, or sockets... as waitress takes them) answering its own
    errors as ProblemDetails, refusing ambiguous framing and bodies over BODY_LIMIT as they arrive, capping
    connections per peer address and closing requests that trickle past REQUEST_DEADLINE."""
    options.setdefault("ident", "ptas-sandbox")
    options.setdefault("max_request_body_size", BODY_LIMIT)
    options.setdefault("connection_limit", connection_limit())
    options.setdefault("asyncore_use_poll", True)
    options.setdefault("channel_timeout", IDLE_SECONDS)
    options.setdefault("cleanup_interval", 5)
    quiet_queue_notes()
    server = waitress_server(app, **options)
    channel = type("ProblemChannel", (ProblemChannel,), {"per_address": connections_per_address, "launch": launch})
    listeners = [server] if hasattr(server, "channel_class") else list(server.map.values())   # one or several
    for listener in listeners:
        if hasattr(listener, "channel_class"):
            connections_of(listener)
            listener.channel_class = channel
            listener.maintenance = deadline_keeper(listener)
    return server


def deadline_keeper(listener):
    """waitress's periodic clean-up of idle channels, plus closing those whose request is overdue."""
    idle = listener.maintenance

    def maintenance(now):
        idle(now)
        moment = time.monotonic()
        for channel in list(listener.active_channels.values()):
            if not isinstance(channel, ProblemChannel):
                continue
            if channel.overdue(moment):
                channel.will_close = True
            elif channel.stalled(now):
                channel.handle_close()      # wakes the task waiting to write: its thread is free again
    return maintenance


def connection_limit():
    """CONNECTION_LIMIT, or fewer when the process may not open that many descriptors (sockets, the store,
    logs: a hundred kept aside)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return CONNECTION_LIMIT
    return max(min(CONNECTION_LIMIT, soft - 100), 50)


def raise_descriptor_limit():
    """The soft limit of open descriptors up to the hard one: CONNECTION_LIMIT sockets need more than the
    usual 1,024."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = CONNECTION_LIMIT + 200 if hard == resource.RLIM_INFINITY else min(hard, CONNECTION_LIMIT + 200)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        except (ValueError, OSError):
            pass


def tune_malloc(arenas=2, mmap_threshold=128 * 1024):
    """glibc's allocator set for a server that runs for weeks: fewer arenas for its many threads (waitress,
    webhook senders), as each thread's arena keeps its freed memory; and a fixed mmap threshold. By default glibc
    raises that threshold each time a large block is freed, so later large blocks come from the arenas' heaps,
    where they leave holes that resident memory keeps while the live memory (Python's objects, SQLite's caches)
    stays level; with the threshold fixed they are mapped and given back whole (`python -m bench rss` measures
    the slope). MALLOC_ARENA_MAX and MALLOC_MMAP_THRESHOLD_, when set, win; elsewhere than glibc this does
    nothing."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        # the variable that overrides each setting -> (mallopt's M_ARENA_MAX or M_MMAP_THRESHOLD, the value)
        settings = {"MALLOC_ARENA_MAX": (-8, arenas), "MALLOC_MMAP_THRESHOLD_": (-3, mmap_threshold)}
        return all([bool(libc.mallopt(option, int(value)))
                    for variable, (option, value) in settings.items() if not os.environ.get(variable)])
    except (OSError, AttributeError):
        return False


def freeze_start_up():
    """What start made (the app, its routes, the OpenAPI schemas: objects that live as long as the process) is
    moved out of the collector's sight (`gc.freeze`): every full collection walked all of it again, a pause that
    requests wait through and CPU every request shares (docs/durability.md has the figures)."""
    gc.collect()
    gc.freeze()


def problem_body(status, reason, detail):
    return json.dumps({"type": TYPE_ROOT + SLUGS.get(status, "bad-request"), "title": reason, "status": status,
                       "detail": f"The HTTP server refused the request: {detail or reason}"}).encode()
