"""Real local HTTP receivers for the webhook tests: healthy, failing, slow, silent, or not there at all.

Each listens on 127.0.0.1 port 0 (the system picks a free port, so runs side by side never collide) and
records what it got with the real arrival time.
"""

import socket
import threading
import time

from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

# The deadline of a webhook attempt in every test but those about deadlines: a healthy receiver on a loaded
# machine is never cut off.
LONG = 60

class Receiver:
    """A werkzeug server answering `status`, after holding each request up to `hold` seconds (or until
    `release()`): slow receivers are receivers that hold longer than the dispatcher's timeout."""

    def __init__(self, status=200, hold=0.0, answer="received", host="127.0.0.1"):
        self.status, self.hold, self.answer = status, hold, answer
        self.requests = []
        self.arrived = threading.Event()
        self._count = threading.Condition()
        self._released = threading.Event()
        self.host = host
        self.server = make_server(host, 0, self._app, threaded=True)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return f"http://{self.host}:{self.server.server_port}/hook"

    def _app(self, environ, start_response):
        request = Request(environ)
        with self._count:
            self.requests.append({"headers": dict(request.headers), "body": request.get_data(),
                                  "at": time.perf_counter()})
            self._count.notify_all()
        self.arrived.set()
        if self.hold:
            self._released.wait(self.hold)
        return Response(self.answer, self.status)(environ, start_response)

    def wait_for(self, n, timeout=10):
        """True once `n` requests have arrived (waits on the arrivals, never a fixed sleep)."""
        with self._count:
            return self._count.wait_for(lambda: len(self.requests) >= n, timeout)

    def release(self):
        self._released.set()

    def close(self):
        self.release()
        self.server.shutdown()
        self.server.server_close()


class Silent:
    """A socket that accepts connections into its backlog and never answers a byte."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/hook"

    def close(self):
        self.sock.close()


def refused_url():
    """A loopback URL where nothing listens (the port was just free), so connecting is refused."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}/hook"


class Served:
    """An app behind a real werkzeug server on 127.0.0.1 port 0; `close()` stops the server and the sandbox."""

    def __init__(self, app, request_handler=None):
        self.app = app
        self.server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=request_handler)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.server_port}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.app.extensions["ptas"].close()
