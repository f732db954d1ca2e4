"""The gunicorn worker `ptas serve --workers` runs, its own refusals as ProblemDetails. A module of its own so
the one-process server (waitress) never imports gunicorn: a twentieth of the start-up."""

from gunicorn import util as gunicorn_util
from gunicorn.workers.gthread import ThreadWorker

from .serving import problem_body


def write_problem(sock, status_int, reason, mesg):
    """gunicorn's `util.write_error` (an HTML page), as ProblemDetails."""
    body = problem_body(status_int, reason, mesg)
    head = (f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\nContent-Type: application/problem+json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n")
    gunicorn_util.write_nonblock(sock, head.encode("latin-1") + body)


class ProblemThreadWorker(ThreadWorker):
    """gunicorn's gthread worker (what `ptas serve --workers` runs) whose own refusals are ProblemDetails: the
    worker process is ours, so its error writer is replaced there."""

    def init_process(self):
        gunicorn_util.write_error = write_problem
        super().init_process()

    def handle_error(self, req, client, addr, exc):
        if isinstance(exc, ConnectionResetError):     # an injected `drop`: close without an answer, no 500
            return
        super().handle_error(req, client, addr, exc)
