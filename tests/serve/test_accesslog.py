"""`ptas serve`'s access log: one line per request, whatever the request's path spells."""

import io

from ptas_sandbox.cli._accesslog import AccessLog


def test_a_path_cannot_write_a_line_of_its_own_into_the_log():
    """waitress decodes `%0a` in the path: printed as it came, a client forged a request line of its own."""
    def app(environ, start_response):
        start_response("404 Not Found", [])
        return [b""]
    log = io.StringIO()
    logged = AccessLog(app, clock=lambda: 1_795_000_000_000_000, stream=log)
    forged = "/x\n2026-11-26T00:00:00.000Z 10.0.0.1 POST /_sandbox/reset 204 1.0ms\r"
    list(logged({"PATH_INFO": forged, "REQUEST_METHOD": "GET", "REMOTE_ADDR": "127.0.0.1",
                 "QUERY_STRING": "token=secret&a=b c"}, lambda status, headers, exc_info=None: None))
    [line] = log.getvalue().splitlines()
    assert "/x%0A2026-11-26T00:00:00.000Z%2010.0.0.1%20POST%20/_sandbox/reset%20204%201.0ms%0D" in line
    assert line.endswith("404 " + line.rsplit(" ", 1)[1]) and "secret" not in line
