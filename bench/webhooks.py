"""Webhook delivery latency on loopback, and whether one dead receiver slows deliveries to a live one.

The simulator runs behind waitress (as `ptas serve` runs it) with its background dispatcher; a partner
subscribes a live local receiver. Each sample is one test event (POST /testevents/accountcreated): latency is
from the moment the API answered (the event is in the outbox) to the moment the receiver got the notification.
Two runs, interleaved in rounds: the live receiver alone, and the live receiver with a dead one (a socket that
never answers) subscribed to the same events alongside. Run: `python -m bench.webhooks [events]`.
"""

import json
import logging
import socket
import statistics
import sys
import threading
import time

import requests
from waitress import create_server
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from ptas_sandbox.simulator import create_app


class LiveReceiver:
    """Records the arrival time of each notification by event id."""

    def __init__(self):
        self.arrivals = {}
        self.cond = threading.Condition()
        self.server = make_server("127.0.0.1", 0, self.app, threaded=True)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"

    def app(self, environ, start_response):
        at = time.perf_counter()
        event_id = json.loads(Request(environ).get_data())["id"]
        with self.cond:
            self.arrivals[event_id] = at
            self.cond.notify_all()
        return Response("ok")(environ, start_response)

    def wait(self, event_id, timeout=10):
        with self.cond:
            self.cond.wait_for(lambda: event_id in self.arrivals, timeout)
            return self.arrivals.get(event_id)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def measure(session, base, headers, receiver, n):
    latencies = []
    for _ in range(n):
        response = session.post(f"{base}/partner/v2/testevents/accountcreated", headers=headers)
        answered = time.perf_counter()
        response.raise_for_status()
        arrived = receiver.wait(response.json()["id"])
        if arrived is None:
            raise RuntimeError("a notification never arrived")
        latencies.append((arrived - answered) * 1000)
    return latencies


def world(session, base, *urls):
    token = session.post(f"{base}/_sandbox/partners", json={"name": "Bench"}).json()["accessToken"]
    headers = {"Authorization": f"Bearer {token}"}
    for url in urls:
        session.post(f"{base}/partner/v2/webhooks", headers=headers,
                     json={"callbackUrl": url, "events": ["AccountCreated"]}).raise_for_status()
    return headers


def main(n=None):
    logging.getLogger("werkzeug").setLevel(logging.ERROR)   # the receiver's access log is noise here
    n = n or (int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 400)
    app = create_app({"RATE_LIMIT": 10**9, "START_SERVICES": True, "WEBHOOK_TIMEOUT_SECONDS": 2})
    server = create_server(app, host="127.0.0.1", port=0, threads=8)
    threading.Thread(target=server.run, daemon=True).start()
    base = f"http://127.0.0.1:{server.effective_port}"
    live = LiveReceiver()
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    dead.listen(1024)
    dead_url = f"http://127.0.0.1:{dead.getsockname()[1]}/hook"
    session = requests.Session()
    alone = world(session, base, live.url)
    beside_dead = world(session, base, live.url, dead_url)
    runs = {"live receiver alone": [], "live beside a dead receiver": []}
    for _ in range(4):   # interleaved rounds, so machine noise hits both alike
        runs["live receiver alone"] += measure(session, base, alone, live, n // 4)
        runs["live beside a dead receiver"] += measure(session, base, beside_dead, live, n // 4)
    session.close()
    server.close()
    app.extensions["ptas"].close()
    live.close()
    dead.close()
    p50 = {}
    for name, latencies in runs.items():
        p50[name] = statistics.median(latencies)
        print(f"{name:30} event -> receipt  p50 {p50[name]:6.2f} ms   p99 {percentile(latencies, 0.99):6.2f} ms"
              f"   ({len(latencies)} events)")
    ratio = p50["live beside a dead receiver"] / p50["live receiver alone"]
    print(f"live-receiver p50 with / without a dead receiver alongside: {ratio:.2f} (aim: close to 1, <= 1.5)")
    return ratio


if __name__ == "__main__":
    main()
