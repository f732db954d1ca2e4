"""`ptas listen --forward-to URL`: the world's notifications, forwarded to a local URL, signed, as `stripe listen`.

The sandbox cannot reach a laptop behind NAT, so nothing is asked of the network: a webhook of the world points
at the sandbox's own echo receiver (a fresh bin), and this command flushes due deliveries, reads the bin and
re-sends each notification to `--forward-to` with its `webhook-id` and exact body. It signs them again with
this machine's clock: the sandbox signs with the world clock, and after `ptas clock advance` every Standard
Webhooks verifier would refuse that timestamp as a replay. The secret is one per world, kept across runs in
the user's configuration folder (as `stripe listen` keeps its own), so a receiver configured once keeps
verifying. The webhook is deleted when the command stops (Ctrl-C or SIGTERM).
"""

import base64
import json
import os
import secrets
import select
import signal
import socket
import time

from ._client import Failed, add_target, run
from .trigger import EVENTS, event_kind

FORWARDED = ("content-type", "webhook-id", "user-agent")
NAME = "ptas listen"
# Pauses before the second and third try of a forward nothing answered (a receiver restarting takes seconds).
RETRY_WAITS = (1.0, 2.0)
# Polls between two checks that the subscription is still there (a `ptas reset` removes every webhook).
CHECK_EVERY = 5


def secrets_file():
    """Where the per-world secrets live: $XDG_CONFIG_HOME/ptas-sandbox/listen-secrets.json (~/.config/...)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "ptas-sandbox", "listen-secrets.json")


def world_secret(key):
    """The signing secret of one world (`key`: sandbox URL and root partner), made on first use and kept (0600)."""
    path = secrets_file()
    try:
        with open(path, encoding="utf-8") as kept:
            known = json.load(kept)
    except (OSError, ValueError):
        known = {}
    if key not in known:
        known[key] = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            descriptor = os.open(path + ".new", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as out:
                json.dump(known, out, indent=1)
            os.replace(path + ".new", path)
        except OSError as error:
            raise Failed(f"cannot keep the world's signing secret in {path}: {error.strerror or error}", 2) from None
    return known[key], path


def forward(capture, target, secret):
    """Send one captured notification on, signed again now with `secret`; the receiver's status for the log."""
    from ptas_sandbox.webhooks import sign  # late: building the parser must stay light

    body = capture.get("body") or ""
    raw = base64.b64decode(body) if capture.get("bodyEncoding") == "base64" else body.encode()
    headers = {k: v for k, v in capture["headers"].items() if k.lower() in FORWARDED}
    message_id = next((v for k, v in headers.items() if k.lower() == "webhook-id"), "")
    stamp = int(time.time())        # this machine's clock, which the receiver's verifier compares against
    headers.update({"webhook-timestamp": str(stamp), "webhook-signature": sign(secret, message_id, stamp, raw)})
    # Late, as in _client: building the `ptas` parser must not import requests (`ptas serve` never uses it).
    import requests

    for waited in (0.0, *RETRY_WAITS):
        time.sleep(waited)
        try:
            return str(requests.post(target, data=raw, headers=headers, timeout=10).status_code)
        except (requests.ConnectionError, requests.Timeout) as error:
            failure = type(error).__name__
        except requests.RequestException as error:
            return f"failed ({type(error).__name__}: {error})"
    return (f"failed after {1 + len(RETRY_WAITS)} tries ({failure}): nothing answered at {target}; is your server "
            "running there? (--forward-to says where)")


def gone(sandbox, hook):
    """Whether the world no longer has the listener's webhook."""
    listed = sandbox.call("GET", "/webhooks") or {}
    return hook["id"] not in {w.get("id") for w in listed.get("webhooks", []) if isinstance(w, dict)}


def event_of(capture):
    try:
        body = json.loads(capture.get("body") or "{}")
        return body.get("eventType", "?"), body.get("id", "?")
    except ValueError:
        return "?", "?"


class Stop:
    """SIGTERM (a process manager, `kill`) and Ctrl-C ask the loop to stop after the call in hand; the webhook is
    then removed (`finally`). The handler takes no lock: it notes the signal and sends a byte that `wait` selects
    on. Raising from it could land inside the HTTP library while it holds its connection pool's lock, and setting
    a threading.Event could wait for ever on the Event's own lock, which the interrupted main thread may hold
    inside Event.wait. A second signal stops at once (KeyboardInterrupt)."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self):
        self.by = None
        self._previous = {}
        self._woken, self._wake = socket.socketpair()   # a socket pair, not a pipe: select takes it everywhere
        self._wake.setblocking(False)

    def __enter__(self):
        for number in self.SIGNALS:
            self._previous[number] = signal.signal(number, self._ask)
        return self

    def _ask(self, number, _frame):
        if self.by is not None:
            raise KeyboardInterrupt
        self.by = number
        try:
            self._wake.send(b"\0")
        except OSError:     # the pair is full or closed: `is_set` still says so at the next turn
            pass

    def is_set(self):
        return self.by is not None

    def wait(self, seconds):
        """Pause up to `seconds`, less when a signal comes; whether one came."""
        if not self.is_set():
            select.select([self._woken], [], [], seconds)
        return self.is_set()

    def __exit__(self, *_):
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._woken.close()
        self._wake.close()

    def status(self):
        """Ctrl-C ends as an interrupted command does (130); SIGTERM, a managed stop, with 0."""
        return 130 if self.by == signal.SIGINT else 0


def listen(sandbox, args):
    kinds = [event_kind(k) for k in args.events.split(",")] if args.events else list(EVENTS)
    if args.interval <= 0:
        raise Failed(f"--interval {args.interval:g}: give a number of seconds above 0", 2)
    sandbox.need_partner_token()
    partner = sandbox.call("GET", "/partners/self")
    secret, kept_in = world_secret(f"{sandbox.url} {partner['id']}")
    bins = f"{sandbox.url}/_sandbox/echo/listen-"
    for stale in sandbox.call("GET", "/webhooks").get("webhooks", []):
        # a run stopped by SIGKILL (or a lost connection) left its subscription: one listener per world
        if stale.get("name") == NAME and stale.get("callbackUrl", "").startswith(bins):
            sandbox.call("DELETE", f"/webhooks/{stale['id']}", expect=(200, 204))
    bin_ = f"listen-{secrets.token_hex(6)}"
    # Set before the webhook exists and "Ready" is said, so a manager stopping the command at once leaves nothing.
    with Stop() as stop:
        subscription = {"name": NAME, "callbackUrl": f"{sandbox.url}/_sandbox/echo/{bin_}", "events": kinds,
                        "secret": secret}
        hook = sandbox.call("POST", "/webhooks", expect=(201,), json=subscription)
        try:
            print(f"Ready: forwarding {', '.join(kinds)} of this world to {args.forward_to}\n"
                  f"Webhook signing secret: {secret}  (this world's, kept in {kept_in}; Ctrl-C to stop)\n"
                  "Each notification is signed again with this machine's clock, so a Standard Webhooks verifier "
                  "accepts it after the world clock moved.", flush=True)
            hook = poll(sandbox, args, hook, subscription, bin_, secret, stop)
        finally:
            try:
                sandbox.call("DELETE", f"/webhooks/{hook['id']}", expect=(200, 204))
            except Failed:
                pass
    return stop.status()


def poll(sandbox, args, hook, subscription, bin_, secret, stopped):
    """Forward what the bin receives until `stopped` (or --max-events); the subscription it ends with."""
    seen, forwarded, polls = 0, 0, 0
    while not stopped.is_set() and (args.max_events is None or forwarded < args.max_events):
        polls += 1
        if polls % CHECK_EVERY == 0 and gone(sandbox, hook):
            hook = sandbox.call("POST", "/webhooks", expect=(201,), json=subscription)
            print("ptas listen: the world's subscription was gone (a `ptas reset` removes every webhook, or "
                  "someone deleted it): subscribed again, forwarding as before", flush=True)
        sandbox.call("POST", "/_sandbox/webhooks/flush")
        captures = sandbox.call("GET", f"/_sandbox/echo/{bin_}")["captures"]
        for capture in captures:
            if capture["id"] <= seen:
                continue
            seen = capture["id"]
            kind, event_id = event_of(capture)
            print(f"{capture['receivedAt'][:23]}  {kind} {event_id}  -> {args.forward_to}  "
                  f"{forward(capture, args.forward_to, secret)}", flush=True)
            forwarded += 1
            if args.max_events is not None and forwarded >= args.max_events:
                break
        else:
            stopped.wait(args.interval)     # polling a remote sandbox: nothing else tells us a delivery is due
    return hook


def add(commands):
    p = commands.add_parser("listen", help="forward the world's notifications to a local URL, signed")
    p.add_argument("--forward-to", required=True, metavar="URL", help="where to POST each notification")
    p.add_argument("--events", help=f"comma-separated event kinds (default all: {','.join(EVENTS)})")
    p.add_argument("--interval", type=float, default=1.0, help="seconds between polls (default 1)")
    p.add_argument("--max-events", type=int, help="stop after forwarding this many")
    add_target(p, partner=True)
    p.set_defaults(func=run("listen", listen))
