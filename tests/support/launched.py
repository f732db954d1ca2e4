"""`ptas serve` in a subprocess in either of its modes: one waitress process, or `--workers 2` (gunicorn's
arbiter, waitress in each worker). Reliability tests run the same attack against both."""

import os
import re
import socket
import subprocess
import sys
import time

import requests

MODES = ("one-process", "workers")


class Launched:
    """A served sandbox on 127.0.0.1:`port`, on a SQLite file in `cwd` unless `--store` is among the options.
    Started and waited for; with `ready=False` only started (a launch expected to refuse), `ready()` waits.
    It listens on a port of its own choosing (`--port 0`) and names it on its first line: a port picked here and
    handed over could be taken by another process in between."""

    port: int
    base: str

    def __init__(self, cwd, mode, *options, env=None, ready=True):
        store = [] if "--store" in options else ["--store", str(cwd / "sandbox.db")]
        workers = ["--workers", "2"] if mode == "workers" else []
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ptas_sandbox.cli", "serve", "--port", "0", "--quiet", *store,
             *workers, *options], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})})
        self.first = self.process.stdout.readline()
        if ready:
            self.ready()

    def ready(self):
        listening = re.search(r"simulator on http://127\.0\.0\.1:(\d+)", self.first)
        assert listening, self.first + self.rest()
        self.port = int(listening.group(1))
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 60
        while True:         # gunicorn's workers may still be importing when the launcher says it listens
            try:
                if requests.get(f"{self.base}/_sandbox/health", timeout=5).status_code == 200:
                    return self
            except requests.ConnectionError:
                assert time.monotonic() < deadline, self.rest()
            time.sleep(0.05)

    def rest(self):
        return self.process.stdout.read() if self.process.poll() is not None else ""

    def connect(self, source="127.0.0.1", timeout=30):
        return socket.create_connection(("127.0.0.1", self.port), timeout=timeout, source_address=(source, 0))

    def stop(self):
        """Stop it (SIGTERM, then SIGKILL): what it printed since the first line; "" when stopped already."""
        if self.process.stdout.closed:
            return ""
        self.process.terminate()
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
        output = self.process.stdout.read()
        self.process.stdout.close()
        return output
