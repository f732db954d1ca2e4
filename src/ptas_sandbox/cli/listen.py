"""`ptas listen --forward-to URL`: the world's notifications, forwarded to a local URL, signed, as `stripe listen`.

The sandbox cannot reach a laptop behind NAT, so nothing is asked of the network: a webhook of the world points
at the sandbox's own echo receiver (a fresh bin), and this command flushes due deliveries, reads the bin and
re-sends each notification to `--forward-to` with the sandbox's headers (`webhook-id`, `webhook-timestamp`,
`webhook-signature`) and exact body, so the signature verifies with the secret printed at start. The webhook
is deleted when the command stops.
"""

import base64
import json
import secrets
import time

from ._client import Failed, add_target, run
from .trigger import EVENTS, event_kind

FORWARDED = ("content-type", "webhook-id", "webhook-timestamp", "webhook-signature", "user-agent")


def forward(capture, target):
    """Send one captured notification on, as it came; the receiver's status (or the error) for the log."""
    body = capture.get("body") or ""
    raw = base64.b64decode(body) if capture.get("bodyEncoding") == "base64" else body.encode()
    headers = {k: v for k, v in capture["headers"].items() if k.lower() in FORWARDED}
    # Late, as in _client: building the `ptas` parser must not import requests (`ptas serve` never uses it).
    import requests

    try:
        return str(requests.post(target, data=raw, headers=headers, timeout=10).status_code)
    except requests.RequestException as error:
        return f"failed ({type(error).__name__})"


def event_of(capture):
    try:
        body = json.loads(capture.get("body") or "{}")
        return body.get("eventType", "?"), body.get("id", "?")
    except ValueError:
        return "?", "?"


def listen(sandbox, args):
    kinds = [event_kind(k) for k in args.events.split(",")] if args.events else list(EVENTS)
    bin_ = f"listen-{secrets.token_hex(6)}"
    hook = sandbox.call("POST", "/webhooks", expect=(201,), json={
        "name": "ptas listen", "callbackUrl": f"{sandbox.url}/_sandbox/echo/{bin_}", "events": kinds})
    print(f"Ready: forwarding {', '.join(kinds)} of this world to {args.forward_to}\n"
          f"Webhook signing secret: {hook['secret']}  (Ctrl-C to stop)", flush=True)
    seen, forwarded = 0, 0
    try:
        while args.max_events is None or forwarded < args.max_events:
            sandbox.call("POST", "/_sandbox/webhooks/flush")
            captures = sandbox.call("GET", f"/_sandbox/echo/{bin_}")["captures"]
            for capture in captures:
                if capture["id"] <= seen:
                    continue
                seen = capture["id"]
                kind, event_id = event_of(capture)
                print(f"{capture['receivedAt'][:23]}  {kind} {event_id}  -> {args.forward_to}  "
                      f"{forward(capture, args.forward_to)}", flush=True)
                forwarded += 1
                if args.max_events is not None and forwarded >= args.max_events:
                    break
            else:
                time.sleep(args.interval)   # polling a remote sandbox: nothing else tells us a delivery is due
    finally:
        try:
            sandbox.call("DELETE", f"/webhooks/{hook['id']}", expect=(200, 204))
        except Failed:
            pass


def add(commands):
    p = commands.add_parser("listen", help="forward the world's notifications to a local URL, signed")
    p.add_argument("--forward-to", required=True, metavar="URL", help="where to POST each notification")
    p.add_argument("--events", help=f"comma-separated event kinds (default all: {','.join(EVENTS)})")
    p.add_argument("--interval", type=float, default=1.0, help="seconds between polls (default 1)")
    p.add_argument("--max-events", type=int, help="stop after forwarding this many")
    add_target(p)
    p.set_defaults(func=run("listen", listen))
