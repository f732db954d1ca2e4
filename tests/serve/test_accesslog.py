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


def test_the_key_of_a_hosted_page_is_masked():
    """An Account UI, User UI or OAuth consent page's URL is all a browser needs to act on it."""
    from ptas_sandbox.simulator import create_app
    app = create_app({"START_SERVICES": False})
    log = io.StringIO()
    logged = AccessLog(app, clock=lambda: 1_795_000_000_000_000, stream=log)
    key = "f1e96797c78ddbbea4cc67d2ce7bb6b13d04"
    for path in (f"/partner/v2/accountui/pages/{key}", f"/partner/v2/oauth/consent/{key}",
                 "/partner/v2/partners/self"):
        list(logged({"PATH_INFO": path, "REQUEST_METHOD": "GET", "REMOTE_ADDR": "127.0.0.1", "SERVER_NAME": "x",
                     "SERVER_PORT": "80", "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO()},
                    lambda status, headers, exc_info=None: None))
    lines = log.getvalue().splitlines()
    assert key not in log.getvalue() and "/accountui/pages/[redacted]" in lines[0]
    assert "/oauth/consent/[redacted]" in lines[1] and "/partner/v2/partners/self" in lines[2]
    app.extensions["ptas"].close()
