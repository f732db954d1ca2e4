"""What `ptas serve` needs beyond waitress: the state file's lock and N worker processes under gunicorn.

The lock belongs to one server launch, not one process: the launching process takes it (flock on
`<state>.lock`, holding its pid) before any worker starts, and the workers it forks share it. A second launch
on the same state file is told which process holds it and exits 2. A PostgreSQL store has no file to lock:
several launches (on several machines) share it by design.
"""

import fcntl
import os
import sys

_held = []      # the lock file stays open (and locked) for the life of the launch


def lock_state(state):
    """Lock a SQLite state file for this launch, creating it 0600 (it holds the signing secret); exit 2 when
    another server holds it."""
    if state == ":memory:" or state.startswith(("postgresql://", "postgres://")):
        return
    os.makedirs(os.path.dirname(os.path.abspath(state)), exist_ok=True)
    os.close(os.open(state, os.O_CREAT | os.O_RDWR, 0o600))
    os.chmod(state, 0o600)
    path = state + ".lock"
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        print(f"ptas serve: the state file {state} is in use by another server (process {holder}); stop it, or "
              "give this one another --state", file=sys.stderr, flush=True)
        sys.exit(2)
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    _held.append(fd)


def run_gunicorn(config, host, port, workers, threads=8, on_ready=None, connections_per_address=None):
    """N worker processes, each with its own app (and store connections, and dispatcher) made after the fork,
    each serving with waitress (`simulator.gunicorn_worker`)."""
    from gunicorn.app.base import BaseApplication

    from ptas_sandbox.simulator.gunicorn_worker import WaitressWorker
    from ptas_sandbox.simulator.serving import LaunchConnections

    launch = LaunchConnections()        # before the fork: every worker shares it
    settings = {"launch": launch}
    if connections_per_address is not None:
        settings["per_address"] = connections_per_address
    worker = type("WaitressWorker", (WaitressWorker,), settings)

    class Sandbox(BaseApplication):
        def load_config(self):
            settings = {"bind": f"[{host}]:{port}" if ":" in host else f"{host}:{port}", "workers": workers,
                        "worker_class": worker, "threads": threads, "accesslog": None,
                        "errorlog": "-", "loglevel": "warning", "proc_name": "ptas-sandbox",
                        "graceful_timeout": 5, "timeout": 120}
            if on_ready is not None:
                settings["when_ready"] = on_ready
            for key, value in settings.items():
                self.cfg.set(key, value)

        def load(self):
            from ptas_sandbox.simulator import create_app
            from ptas_sandbox.simulator.serving import freeze_start_up
            app = create_app(config)
            freeze_start_up()
            return app

    try:
        Sandbox().run()
    finally:
        launch.remove()
