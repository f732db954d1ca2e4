"""HTTP layer of the webhook side of the control API: the echo receiver, the delivery log, flush."""

from flask import current_app

from ptas_sandbox.jwt_text import JWT, masked

from ...auth import WORLD_KEY
from ...operations import NO_AUTH, WORLD_AUTH, Answer, component, operation
from ...pipeline import admin_key_given, bearer_world
from ...problems import InvalidParameter, PayloadTooLarge, Unauthorized
from ...timestamps import render
from ...webhooks import deliveries as delivery_log
from . import models

ECHO_STATUSES = (200, 201, 202, 500, 502, 503, 504)   # what a receiver typically answers, success or failure
CAPTURE = component("EchoCapture", {
    "type": "object",
    "description": "One request the echo receiver got; `body` is base64 when `bodyEncoding` is base64.",
    "properties": {"id": {"type": "integer"}, "bin": {"type": "string"}, "method": {"type": "string"},
                   "path": {"type": "string"}, "query": {"type": "string"}, "headers": {"type": "object"},
                   "contentType": {"type": ["string", "null"]}, "body": {"type": "string"},
                   "bodyEncoding": {"enum": ["utf-8", "base64"]},
                   "receivedAt": {"type": "string", "format": "date-time"}},
    "required": ["id", "bin", "method", "headers", "body", "bodyEncoding", "receivedAt"],
})
component("EchoBin", {"type": "object", "properties": {
    "bin": {"type": "string"}, "captures": {"type": "array", "items": CAPTURE}}, "required": ["bin", "captures"]})
component("EchoReceipt", {"type": "object", "properties": {"captured": {"type": "integer"}, "bin": {"type": "string"}},
                          "required": ["captured", "bin"]})
ATTEMPT = component("DeliveryAttempt", {
    "type": "object",
    "description": "One attempt to deliver a notification: what was sent, what came back, and what happens next.",
    "properties": {
        "id": {"type": "string"}, "webhookId": {"type": "string"}, "eventId": {"type": "string"},
        "eventType": {"type": "string"}, "isTest": {"type": "boolean"}, "attempt": {"type": "integer"},
        "status": {"enum": ["pending", "sending", "succeeded", "failed", "cancelled"]}, "url": {"type": "string"},
        "dueAt": {"type": "string", "format": "date-time"},
        "attemptedAt": {"type": ["string", "null"], "format": "date-time"},
        "request": {"type": "object", "properties": {"headers": {"type": ["object", "null"]},
                                                     "body": {"type": "string"}}},
        "response": {"type": ["object", "null"], "properties": {
            "status": {"type": "integer"}, "headers": {"type": "object", "additionalProperties": {"type": "string"}},
            "body": {"type": ["string", "null"], "description": "the first 256 bytes of the answer"}}},
        "error": {"type": ["string", "null"]}, "durationMs": {"type": ["number", "null"]},
        "nextRetryAt": {"type": ["string", "null"], "format": "date-time"}, "final": {"type": "boolean"}},
    "required": ["id", "webhookId", "eventId", "eventType", "attempt", "status", "dueAt", "request", "final"],
})
component("DeliveryLog", {"type": "object", "properties": {
    "deliveries": {"type": "array", "items": ATTEMPT},
    "backoffSeconds": {"type": "array", "items": {"type": "integer"}}},
    "required": ["deliveries", "backoffSeconds"]})
component("FlushResult", {"type": "object", "properties": {
    "attempted": {"type": "integer", "description": "attempts this flush started"},
    "inFlight": {"type": "integer", "description": "attempts of the world still on the wire when it answered: 0 "
                 "once every attempt has an outcome; more when the flush stopped waiting (after the flush wait, "
                 "or at once when two other flushes of the world were already waiting)"},
    "pending": {"type": "integer", "description": "attempts waiting for a later time (retries)"},
    "nextDueAt": {"type": ["string", "null"], "format": "date-time"}},
    "required": ["attempted", "inFlight", "pending", "nextDueAt"]})


@operation("SandboxEchoCapture", "POST", "/_sandbox/echo/{bin}", tokens=NO_AUTH, control=True, body={},
           body_required=False, consumes="*/*", example={"id": "evt-1", "eventType": "AccountCreated"},
           responses={200: "EchoReceipt"})
def echo_capture(call):
    """A built-in webhook receiver: keeps any request and answers 200 (`?status=503` and the like: that status,
    to exercise retries; undocumented as a parameter so that fuzzers do not take it for a server error)."""
    request = call.request
    status = call.request.args.get("status", "200")
    status = int(status) if status.isascii() and status.isdigit() else status
    if status not in ECHO_STATUSES:
        raise InvalidParameter(f"`status` is one of {', '.join(map(str, ECHO_STATUSES))}.", parameter="status")
    sandbox, headers, raw = call.sandbox, dict(request.headers), call.body or b""
    limit = sandbox.config.get("ECHO_CAPTURE_MAX_BYTES")
    if limit and models.size_of(headers, raw) > limit:
        raise PayloadTooLarge(f"The echo receiver keeps requests of at most {limit} bytes, headers included "
                              "(the operator's --echo-capture-max-bytes).")
    world_id = models.world_of(sandbox.store, headers, raw)
    world = sandbox.worlds.get(world_id) if world_id else None
    # A token sent here by mistake must not be readable by whoever may read the bin (anyone, on a sandbox with no
    # admin key): JWTs are masked, as the journal masks them. A notification carries none.
    headers = {name: masked(value) for name, value in headers.items()}
    if JWT.search(raw.decode("latin-1")):
        raw = masked(raw.decode("utf-8", "replace")).encode()
    received_at = sandbox.worlds.now(world) if world else sandbox.system_time()
    seq = models.capture(sandbox.store, call.params["bin"], request.method, request.path,
                         request.query_string.decode("latin-1"), headers, request.content_type, raw, received_at,
                         world=world_id if world else "", per_bin=sandbox.config.get("ECHO_CAPTURES_PER_BIN"),
                         total_bytes=sandbox.config.get("ECHO_TOTAL_BYTES"),
                         stale_before=stale_before(sandbox))
    return Answer(status, {"captured": seq, "bin": call.params["bin"]})


def stale_before(sandbox):
    period = sandbox.config.get("RETENTION_SECONDS")
    return sandbox.system_time() - period * 1_000_000 if period else None


def readable_worlds(sandbox, request):
    """Whose captures the caller may read (docs/design.md, the control API): a partner token of a world reads that
    world's; the admin key reads all (None); those of no world are the operator's, or anyone's when the sandbox
    has no admin key (a laptop sandbox stays open)."""
    if admin_key_given(sandbox, request.headers):
        return None
    if request.headers.get("Authorization"):
        claims, ctx = bearer_world(sandbox, request.environ)
        if claims["knd"] == WORLD_KEY:
            return [ctx.world.id]
        row = ctx.store.one("SELECT revoked_at FROM tokens WHERE id = ? AND world = ? AND kind = 'partner'",
                            (claims["jti"], ctx.world.id))
        if row is None or row["revoked_at"] is not None:
            raise Unauthorized("Echo captures are read with a partner token of their world (not revoked).")
        return [ctx.world.id]
    if sandbox.config.get("ADMIN_KEY"):
        raise Unauthorized("Echo captures are read with a partner token of the world whose notifications they "
                           "are; captures from outside any world need the admin key (X-Sandbox-Admin-Key).")
    return [""]


@operation("SandboxEchoCaptures", "GET", "/_sandbox/echo/{bin}", tokens=NO_AUTH, control=True,
           responses={200: "EchoBin", 401: "ProblemDetails"})
def echo_captures(call):
    """What the echo receiver got in a bin, oldest first: with a partner token, the notifications of its world;
    with the admin key (or on a sandbox without one, anonymously), requests from outside any world."""
    worlds = readable_worlds(call.sandbox, call.request)
    return {"bin": call.params["bin"], "captures": models.captures(call.sandbox.store, call.params["bin"], worlds)}


@operation("SandboxDeliveries", "GET", "/_sandbox/deliveries", tokens=WORLD_AUTH, control=True,
           query={"webhookId": {"type": "string"}, "eventId": {"type": "string"}}, responses={200: "DeliveryLog"})
def deliveries(call):
    """The delivery log of the caller's world: every attempt, oldest first."""
    store = call.sandbox.store
    with store.transaction():
        delivery_log.fan_out(store, call.sandbox.hooks)
    return {"deliveries": delivery_log.log(store, call.sandbox.hooks, call.ctx.world.id, call.query.get("webhookId"),
                                           call.query.get("eventId")),
            "backoffSeconds": list(delivery_log.BACKOFF_S)}


@operation("SandboxFlushWebhooks", "POST", "/_sandbox/webhooks/flush", tokens=WORLD_AUTH, control=True,
           atomic=False, responses={200: "FlushResult"})
def flush(call):
    """Deliver every notification due now in the caller's world and answer when all have an outcome, waiting at
    most the server's flush wait; a flush of a world two other flushes already wait for starts what is due and
    answers at once (a waiting flush holds a server thread: no world may take them all). `inFlight` says what
    is still on the wire."""
    attempted = current_app.extensions["ptas.webhooks"].flush(call.ctx.world)
    row = call.sandbox.store.one(
        "SELECT SUM(CASE WHEN status = 'pending' THEN 1 ELSE 0 END) AS n, "
        "SUM(CASE WHEN status = 'sending' THEN 1 ELSE 0 END) AS sending, "
        "MIN(CASE WHEN status = 'pending' THEN due_at END) AS next FROM webhook_deliveries "
        "WHERE world = ? AND status IN ('pending', 'sending')", (call.ctx.world.id,))
    return {"attempted": attempted, "inFlight": row["sending"] or 0, "pending": row["n"] or 0,
            "nextDueAt": render(row["next"])}
