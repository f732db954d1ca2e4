"""`ptas serve`'s access log: one line per request (`--quiet` turns it off), secrets in query strings and the keys
of hosted pages masked."""

import sys
import time

from ptas_sandbox.jwt_text import REDACTED
from ptas_sandbox.simulator.timestamps import render
from ptas_sandbox.simulator.tools.journal.models import redact_query


def shown(path):
    """The path with control characters and spaces percent-encoded again: waitress decodes `%0a`, and a client
    could otherwise write a line of its own (a forged request) into the log."""
    return "".join(f"%{ord(c):02X}" if c.isspace() or not c.isprintable() else c for c in path)


class AccessLog:
    """WSGI middleware: `TIME CLIENT METHOD PATH STATUS DURATION` once the response is sent."""

    def __init__(self, app, clock, stream=None):
        self.app, self.clock, self.stream = app, clock, stream or sys.stdout
        url_map = getattr(app, "url_map", None)     # the app's routes, to find a page's key in a path
        self.routes = url_map.bind("log") if url_map is not None else None

    def unkeyed(self, path, method):
        """The path with the `key` of a route that takes one masked: a hosted page's URL (an Account UI or User
        UI page, an OAuth consent) is all a browser needs to act on it, so an operator's log must not hold it."""
        if self.routes is None:
            return path
        try:
            _, args = self.routes.match(path, method=method)
        except Exception:      # no route, a redirect, a method not allowed: no key to find
            return path
        key = args.get("key")
        return path.replace(key, REDACTED) if isinstance(key, str) and key else path

    def __call__(self, environ, start_response):
        started = time.perf_counter()
        seen = {}

        def record_status(status, headers, exc_info=None):
            seen["status"] = status.split(" ", 1)[0]
            return start_response(status, headers, exc_info)

        body = self.app(environ, record_status)
        try:
            yield from body
        finally:
            if hasattr(body, "close"):
                body.close()
            query = redact_query(environ.get("QUERY_STRING", ""))
            path = self.unkeyed(environ.get("PATH_INFO", ""), environ.get("REQUEST_METHOD", "GET"))
            path = shown(path + (f"?{query}" if query else ""))
            print(f"{render(self.clock())[:23]}Z {environ.get('REMOTE_ADDR', '-')} {environ.get('REQUEST_METHOD')} "
                  f"{path} {seen.get('status', '-')} {(time.perf_counter() - started) * 1000:.1f}ms",
                  file=self.stream, flush=True)
