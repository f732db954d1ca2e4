"""Where a conformance run receives webhook notifications (spec §6): a receiver the harness runs itself, or, on a
simulator, the simulator's own echo bins.

On a deployment the service must reach the receiver: `--receiver-listen HOST:PORT` says where it listens and
`--receiver-url URL` how the deployment reaches it (a tunnel, a public address); without them the delivery
scenarios skip with that reason. Each scenario receives at a path of its own, so runs never mix notifications.
Captures are bounded; waiting is on a condition the receiver signals, never a polling sleep.
"""

import json
import threading
import time
import uuid
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KEPT = 500                  # captures kept (oldest dropped first)
BODY_LIMIT = 256 * 1024     # a notification larger than this is kept cut


class Receiver:
    """An HTTP server in a thread that answers 204 to every POST and keeps what arrived, per path."""

    def __init__(self, listen="127.0.0.1:0", url=None):
        host, _, port = listen.rpartition(":")
        self.captures = deque(maxlen=KEPT)
        self.arrived = threading.Condition()
        self.clock = None           # real time
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):      # noqa: N802 - the name http.server calls
                length = min(int(self.headers.get("Content-Length") or 0), BODY_LIMIT)
                body = self.rfile.read(length).decode("utf-8", "replace")
                self.send_response(204)
                self.end_headers()
                receiver.keep(self.path, dict(self.headers.items()), body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer((host or "127.0.0.1", int(port or 0)), Handler)
        self.server.daemon_threads = True
        bound_host, bound_port = self.server.server_address[:2]
        self.base = (url or f"http://{bound_host}:{bound_port}").rstrip("/")
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1},
                                       name="ptas-conform-receiver", daemon=True)
        self.thread.start()

    def keep(self, path, headers, body):
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        with self.arrived:
            self.captures.append({"path": path, "headers": headers, "body": body, "json": parsed})
            self.arrived.notify_all()

    def inbox(self):
        """A fresh path of this receiver for one scenario: (callback URL, inbox id)."""
        inbox = uuid.uuid4().hex[:16]
        return f"{self.base}/{inbox}", inbox

    def received(self, inbox):
        with self.arrived:
            return [c["json"] for c in self.captures if c["path"].rstrip("/").endswith("/" + inbox)]

    def use_clock(self, clock):
        """Wait on `clock` (`.monotonic()`, `.sleep(seconds)`), a clock a test moves, as the run's target does:
        while nothing arrives it moves on a second every tenth of a second, so a delivery the target holds back
        (the spec sets no deadline) falls due on it."""
        self.clock = clock

    def wait(self, inbox, enough, budget):
        """What arrived at `inbox` once `enough(notifications)` holds or `budget` seconds have passed."""
        monotonic = self.clock.monotonic if self.clock else time.monotonic
        deadline = monotonic() + budget
        with self.arrived:
            while True:
                got = [c["json"] for c in self.captures if c["path"].rstrip("/").endswith("/" + inbox)]
                left = deadline - monotonic()
                if enough(got) or left <= 0:
                    return got
                if self.clock is None:
                    self.arrived.wait(left)
                    continue
                began = time.monotonic()
                while self.arrived.wait(0.1) and time.monotonic() - began < 0.1:
                    pass        # arrivals for other inboxes: the clock moves on all the same
                self.clock.sleep(min(left, 1.0))

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


class EchoReceiver:
    """On a simulator: its echo bins (docs/design.md), delivered at once with the control API's flush."""

    def __init__(self, scene, base):
        self.scene, self.base = scene, base.rstrip("/")

    def inbox(self):
        inbox = f"conformance-{uuid.uuid4().hex[:12]}"
        return f"{self.base}/_sandbox/echo/{inbox}", inbox

    def received(self, inbox):
        # The control API's paths are fixed (docs/design.md), whatever the target's document lists.
        client, token = self.scene.client, self.scene.token
        self.scene.must(client.request("POST", "/_sandbox/webhooks/flush", token=token), "deliver due notifications")
        reply = self.scene.must(client.request("GET", f"/_sandbox/echo/{inbox}", token=token), "read the echo bin")
        captures = reply.body.get("captures", []) if isinstance(reply.body, dict) else []
        out = []
        for capture in captures:
            try:
                out.append(json.loads(capture.get("body") or "null"))
            except ValueError:
                out.append(None)
        return out

    def wait(self, inbox, enough, budget):
        return self.received(inbox)
