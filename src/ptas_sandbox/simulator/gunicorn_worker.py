"""The gunicorn worker `ptas serve --workers` runs: waitress (`serving.create_server`) on the sockets gunicorn's
arbiter opened. The arbiter forks, watches and respawns the worker processes; inside each, waitress reads
requests in its event loop, so the `--workers` mode refuses and bounds exactly what the one-process server does
(framing, body limit, request deadline), the per-address cap counts the connections of every worker, and no
slow client holds a thread. A module of its own so the one-process server never imports gunicorn: a twentieth
of the start-up."""

import os

from gunicorn.workers.base import Worker
from waitress import wasyncore

from .serving import CONNECTIONS_PER_ADDRESS, create_server


class WaitressWorker(Worker):
    """One worker process: waitress with `threads` threads, telling the arbiter it is alive once a second."""
    per_address = CONNECTIONS_PER_ADDRESS
    launch = None       # serving.LaunchConnections, made by the launching process: the cap across workers

    def run(self):
        if self.launch is not None:
            self.launch.claim()
        server = create_server(self.wsgi, sockets=[listener.sock for listener in self.sockets],
                               threads=self.cfg.threads, connections_per_address=self.per_address,
                               launch=self.launch)
        loop_map = server.map if hasattr(server, "map") else server._map
        try:
            while self.alive and self.ppid == os.getppid():
                self.notify()
                wasyncore.loop(timeout=1.0, map=loop_map, use_poll=True, count=1)
        finally:
            wasyncore.close_all(loop_map)
            server.task_dispatcher.shutdown(timeout=self.cfg.graceful_timeout)
