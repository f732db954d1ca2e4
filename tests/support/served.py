"""An app served by waitress (`ptas serve`'s server, ProblemDetails for its own errors) in a thread of the test,
stopped cleanly: its loop is closed from the loop's own thread (closing its sockets from the test's thread races
its select(), an EBADF in the server thread)."""

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
        self.server.trigger.pull_trigger(lambda: wasyncore.close_all(self.server._map))
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the server loop did not end"
        self.server.task_dispatcher.shutdown()
