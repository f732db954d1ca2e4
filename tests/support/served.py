"""An app served by waitress (`ptas serve`'s server, ProblemDetails for its own errors) in a thread of the test,
stopped cleanly: its loop is closed from the loop's own thread (closing its sockets from the test's thread races
its select(), an EBADF in the server thread)."""

import socket
import threading

from waitress import wasyncore

from ptas_sandbox.simulator.serving import create_server


class Served:
    def __init__(self, app, threads=8, **options):
        self.server = create_server(app, host="127.0.0.1", port=0, threads=threads, **options)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        self.port = self.server.effective_port
        self.base = f"http://127.0.0.1:{self.port}"

    def stop(self, timeout=30):
        try:
            self.server.trigger.pull_trigger(lambda: wasyncore.close_all(self.server._map))
        except OSError:
            # Its trigger already closed (seen once, on a loaded machine, after every assertion of the module had
            # passed): the loop cannot be woken to close itself, and closing its sockets from here races it.
            # It is a daemon thread; its worker threads are stopped below.
            self.server.task_dispatcher.shutdown()
            return
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the server loop did not end"
        self.server.task_dispatcher.shutdown()


def answer(sock):
    """Read a whole HTTP answer from a socket until the server closes it: (status, headers, body)."""
    chunks = []
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    return int(lines[0].split()[1]), dict(line.split(": ", 1) for line in lines[1:]), body


def raw(port, request, timeout=10):
    """Send bytes as they are and read the whole answer: (status, headers, body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request)
        return answer(sock)
