"""The HTTP servers in front of the app (waitress; gunicorn for --workers: `gunicorn_worker`), their own error
answers in ProblemDetails too.

Waitress answers some requests itself, before the app sees them: a malformed request line or header, a bad
Content-Length or chunked encoding, headers over `max_request_header_size`, a body over `max_request_body_size`
(all 400/413/431), and a 500 when the app breaks the WSGI protocol. By default those are text/plain; here they
are RFC 9457 bodies like every other error of the simulator (DESIGN.md, errors and bad input).
"""

import json
import sys

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


class ProblemChannel(HTTPChannel):
    error_task_class = ProblemErrorTask


def create_server(app, **options):
    """A waitress server for `app` (host, port, threads... as waitress takes them) answering its own errors as
    ProblemDetails."""
    options.setdefault("ident", "ptas-sandbox")
    server = waitress_server(app, **options)
    listeners = [server] if hasattr(server, "channel_class") else list(server.map.values())   # one or several
    for listener in listeners:
        if hasattr(listener, "channel_class"):
            listener.channel_class = ProblemChannel
    return server


def problem_body(status, reason, detail):
    return json.dumps({"type": TYPE_ROOT + SLUGS.get(status, "bad-request"), "title": reason, "status": status,
                       "detail": f"The HTTP server refused the request: {detail or reason}"}).encode()
