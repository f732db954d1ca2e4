"""Shared by the clients of this folder: a webhook receiver of the partner's own on 127.0.0.1 and a
Standard-Webhooks signature check written from docs/webhooks.md (no import of the sandbox's code)."""

import base64
import hashlib
import hmac
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PREFIX = "/partner/v2"


class Receiver:
    """An HTTP server on 127.0.0.1 (port chosen by the OS); `handle(headers, body) -> status`."""

    def __init__(self, handle):
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                headers[":path"] = self.path
                status = outer.handle(headers, body)
                self.send_response(status)
                if 300 <= status < 400:
                    self.send_header("Location", self.path.replace("/old/", "/hooks/"))
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.handle = handle
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/hooks/ptas"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def signature_ok(secret, headers, body):
    """webhook-signature is `v1,<base64 HMAC-SHA256>` (possibly several, space-separated) over
    `{webhook-id}.{webhook-timestamp}.{raw body}`; the key is the base64 after `whsec_`, else the UTF-8 bytes."""
    wid, ts, sig = headers.get("webhook-id"), headers.get("webhook-timestamp"), headers.get("webhook-signature")
    if not (wid and ts and sig and secret):
        return False
    key = base64.b64decode(secret[len("whsec_"):]) if secret.startswith("whsec_") else secret.encode()
    expected = base64.b64encode(hmac.new(key, f"{wid}.{ts}.".encode() + body, hashlib.sha256).digest()).decode()
    for part in sig.split():
        version, _, value = part.partition(",")
        if version == "v1" and hmac.compare_digest(value, expected):
            return True
    return False


class Inbox:
    """A careful receiver: refuses (400) a wrong signature, keeps each event once (by webhook-id), acknowledges
    at once (204); 503 until it knows its secret (the service retries)."""

    def __init__(self):
        self.secret = None
        self.events = {}
        self.lock = threading.Lock()
        self.arrived = threading.Condition(self.lock)

    def __call__(self, headers, body):
        if self.secret is None:
            return 503
        if not signature_ok(self.secret, headers, body):
            return 400
        try:
            event = json.loads(body)
        except ValueError:
            return 400
        with self.lock:
            self.events.setdefault(headers["webhook-id"], event)
            self.arrived.notify_all()
        return 204

    def imports_of(self, account_id):
        with self.lock:
            return sum(1 for e in self.events.values() if e.get("eventType") == "TransactionsImported"
                       and ((e.get("data") or {}).get("account") or {}).get("id") == account_id)


def jwt_claims(token):
    try:
        payload = token.split(".")[1]
        return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError):
        return {}


def retry_after(status, headers, default):
    if status in (429, 503):
        value = (headers.get("Retry-After") or "").strip()
        if value.isdigit():
            return max(int(value), 1)
    return default
