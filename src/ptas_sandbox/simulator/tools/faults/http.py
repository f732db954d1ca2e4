"""HTTP layer of fault injection: the control operations (`/_sandbox/faults`) and the shaping of an API answer
a fault asks for (a problem, a dropped connection, a cut or garbled body, a 500 after success)."""

import socket
import threading
import time

from flask import Response

from ...operations import WORLD_AUTH, Answer, component, operation
from ...partners import models as partners
from ...problems import Forbidden, Problem
from ...worlds import LATEST_CLOCK
from ..journal import models as journal
from . import models

MATCH = {"type": "object", "additionalProperties": False, "description": "which calls or notifications "
         "(every one when empty); API effects take operationId, method, path, token; webhook effects "
         "webhookId, eventType", "properties": {
             "operationId": {"type": "string", "maxLength": 100, "description": "e.g. GetTransactions"},
             "method": {"type": "string", "enum": ["GET", "POST", "PUT", "PATCH", "DELETE",
                                                   "get", "post", "put", "patch", "delete"]},
             "path": {"type": "string", "maxLength": 300, "description": "a path pattern, with or without the "
                      "prefix: `*` or `{name}` is one segment, `**` any rest, e.g. /accounts/*/transactions"},
             "token": {"type": "string", "maxLength": 100, "description": "the id of the calling token"},
             "webhookId": {"type": "string", "maxLength": 100},
             "eventType": {"type": "string", "maxLength": 100}}}


def effect(kind, description, **properties):
    return {"type": "object", "description": description, "additionalProperties": False,
            "properties": {"type": {"const": kind}, **properties}, "required": ["type", *[
                p for p, s in properties.items() if s.pop("required", False)]]}


SECONDS = {"type": "number", "exclusiveMinimum": 0, "maximum": 86400 * 30, "required": True}
EFFECT = {"oneOf": [
    effect("status", "answer this status with a ProblemDetails body, without running the operation (a 429 "
           "comes before the rate-limit budget is used)", status={"enum": list(models.STATUSES), "required": True},
           retryAfter={"type": "integer", "minimum": 0, "maximum": 86400,
                       "description": "seconds; default 60 on a 429, 30 on a 503"}),
    {**effect("latency", "the call takes this long: on the world clock (it moves) or the wall clock (at most "
              f"{models.MAX_WALL_SECONDS} s)", seconds=dict(SECONDS), clock={"enum": ["world", "wall"]}),
     "if": {"properties": {"clock": {"const": "wall"}}, "required": ["clock"]},
     "then": {"properties": {"seconds": {"maximum": models.MAX_WALL_SECONDS}}}},
    effect("drop", "close the connection without an answer; with `after`, once the operation has completed",
           after={"type": "boolean"}),
    effect("truncate", "the operation runs; its answer's body is cut in half"),
    effect("malformed", "the operation runs; its answer's body is not JSON"),
    effect("success-then-500", "the operation runs and completes, then the answer is a 500"),
    effect("duplicate", "the notification is sent twice (or 1 + copies times), with the same webhook-id",
           copies={"type": "integer", "minimum": 1, "maximum": 5}),
    effect("delay", "the notification goes out this many seconds late (world clock)", seconds=dict(SECONDS)),
    effect("reorder", "the notification is held back and sent after the next one to its webhook (at most "
           f"maxHoldSeconds, default {models.REORDER_HOLD_SECONDS}, later)",
           maxHoldSeconds={"type": "integer", "minimum": 1, "maximum": 86400}),
    effect("bad-signature", "the notification's first attempt carries an invalid webhook-signature"),
], "x-problem": "`effect.type` is one of " + ", ".join(models.API_EFFECTS + models.WEBHOOK_EFFECTS) +
   ", with that effect's fields only."}
FAULT = component("SandboxFault", {"type": "object", "properties": {
    "id": {"type": "string"}, "target": {"enum": ["api", "webhook"]}, "match": MATCH, "effect": {"type": "object"},
    "times": {"type": "integer"}, "remaining": {"type": "integer"}, "probability": {"type": "number"},
    "seed": {"type": "integer"}, "matched": {"type": "integer"}, "injected": {"type": "integer"},
    "createdAt": {"type": "string", "format": "date-time"}}, "required": ["id", "target", "match", "effect"]})
component("SandboxFaultList", {"type": "object", "properties": {
    "faults": {"type": "array", "items": FAULT}, "injections": {"type": "array", "items": {"type": "object"}}},
    "required": ["faults", "injections"]})
API_KEYS = {"propertyNames": {"enum": ["operationId", "method", "path", "token"]}}
WEBHOOK_KEYS = {"propertyNames": {"enum": ["webhookId", "eventType"]}}
BODY = {"type": "object", "additionalProperties": False, "required": ["effect"], "x-problem": (
    "API effects match by operationId, method, path and token; webhook effects by webhookId and eventType."),
    "if": {"properties": {"effect": {"properties": {"type": {"enum": list(models.WEBHOOK_EFFECTS)}},
                                     "required": ["type"]}}, "required": ["effect"]},
    "then": {"properties": {"match": WEBHOOK_KEYS}}, "else": {"properties": {"match": API_KEYS}},
    "properties": {
    "match": MATCH, "effect": EFFECT,
    "times": {"type": "integer", "minimum": 1, "maximum": 10000,
              "description": "inject into the next N matching calls (default 1 without a probability)"},
    "probability": {"type": "number", "minimum": 0, "maximum": 1,
                    "description": "inject into each matching call with this chance, drawn from `seed`: a run "
                                   "replays exactly"},
    "seed": {"type": "integer", "minimum": 0, "maximum": 2**53, "description": "default: the world seed"}}}


def root_only(call):
    """Control rights (docs/design.md): faults steer the whole world, so only its root partner's tokens may."""
    if partners.root_of(call.sandbox.store, call.ctx.world.id) != call.principal:
        raise Forbidden("Only a token of the world's root partner can steer its faults.")


@operation("SandboxCreateFault", "POST", "/_sandbox/faults", tokens=WORLD_AUTH, control=True, body=BODY,
           example={"match": {"operationId": "GetTransactions"},
                    "effect": {"type": "status", "status": 503, "retryAfter": 30}, "times": 2},
           responses={201: "SandboxFault"})
def create_fault(call):
    """Make matching calls (or notifications) of the caller's world misbehave (docs/chaos.md)."""
    root_only(call)
    return Answer(201, models.create(call.ctx, call.body))


@operation("SandboxGetFaults", "GET", "/_sandbox/faults", tokens=WORLD_AUTH, control=True,
           responses={200: "SandboxFaultList"})
def get_faults(call):
    """The world's faults, with what each matched and injected, and the newest injections."""
    root_only(call)
    return {"faults": models.listing(call.ctx),
            "injections": models.injections(call.sandbox.store, call.ctx.world.id)}


@operation("SandboxDeleteFault", "DELETE", "/_sandbox/faults/{id}", tokens=WORLD_AUTH, control=True,
           responses={204: None})
def delete_fault(call):
    """Remove one fault; its past injections stay in the log."""
    root_only(call)
    models.delete(call.ctx, call.params["id"])
    return Answer(204)


@operation("SandboxDeleteFaults", "DELETE", "/_sandbox/faults", tokens=WORLD_AUTH, control=True,
           responses={200: {"type": "object", "properties": {"deleted": {"type": "integer"}}}})
def delete_faults(call):
    """Remove every fault of the world: the service behaves again."""
    root_only(call)
    return {"deleted": models.delete_all(call.ctx)}


# --- injecting into an API call ---------------------------------------------------------------------------

class Injected(Problem):
    """A problem the world asked for; its status is the fault's."""
    slug, title = "injected-fault", "Injected fault"

    def __init__(self, status, retry_after=None):
        self.status = status
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        titles = {429: "Rate limit exceeded", 500: "Internal error", 502: "Bad gateway",
                  503: "Service unavailable", 504: "Gateway timeout"}
        super().__init__(f"{titles[status]} (a fault injected by the sandbox; see GET /_sandbox/faults).",
                         headers=headers, injected=True)
        self.title = titles[status]


class ConnectionDropped(ConnectionResetError):
    """Raised from a response body to close the connection without an answer (in-process: reaches the caller)."""


class WallWaits:
    """Calls of each world waiting out a wall-clock latency: each holds a server thread, so a world's ten
    concurrent calls under a 30 s latency fault would hold every thread and starve health. At most `cap`
    of a world's calls wait at once; a further one goes through without the wait."""

    def __init__(self):
        self._lock = threading.Lock()
        self._waiting = {}      # world id -> calls sleeping (no key at zero: bounded by the calls in flight)

    def enter(self, world_id, cap):
        with self._lock:
            if self._waiting.get(world_id, 0) >= cap:
                return False
            self._waiting[world_id] = self._waiting.get(world_id, 0) + 1
            return True

    def leave(self, world_id):
        with self._lock:
            self._waiting[world_id] -= 1
            if not self._waiting[world_id]:
                del self._waiting[world_id]


class Injection:
    """One fault applied to one API call: `before` runs ahead of the operation, `shape` on its answer."""

    def __init__(self, fault, sleep, waits=None, cap=2):
        self.fault, self.effect, self.sleep = fault, fault.effect, sleep
        self.waits, self.cap = waits or WallWaits(), cap
        journal.annotate("injected", {"faultId": fault.id, **self.effect})      # the journal says it was on purpose

    def before(self, sandbox, ctx, environ):
        """The context to go on with, or an answer instead of the operation (a problem is raised)."""
        kind = self.effect["type"]
        if kind == "status":
            raise Injected(self.effect["status"], self.effect.get("retryAfter"))
        if kind == "drop" and not self.effect.get("after"):
            return ctx, dropped(environ)
        if kind == "latency":
            if self.effect.get("clock") == "wall":
                if not self.waits.enter(ctx.world.id, self.cap):
                    journal.annotate("injected", {"faultId": self.fault.id, **self.effect, "skipped": (
                        f"{self.cap} calls of this world already wait on the wall clock; this one did not")})
                    return ctx, None
                try:
                    self.sleep(min(self.effect["seconds"], models.MAX_WALL_SECONDS))
                finally:
                    self.waits.leave(ctx.world.id)
            else:
                # the wait ends at the end of the clock's range: an ordinary call never becomes the clock's 400
                wait = min(round(self.effect["seconds"] * 1_000_000), max(0, LATEST_CLOCK - ctx.now))
                world = sandbox.worlds.move(ctx.world, advance=wait)
                sandbox.catch_up(world)
                return sandbox.ctx(world), None
        return ctx, None

    def shape(self, response, environ):
        kind = self.effect["type"]
        if kind == "drop":
            return dropped(environ)
        if kind == "success-then-500":
            raise Injected(500)
        if kind in ("truncate", "malformed"):
            body = response.get_data()
            response.set_data(body[:len(body) // 2] if kind == "truncate" else
                              b"<html><body>upstream error</body></html>" + body[:8])
        return response


def dropped(environ):
    """A response that closes the connection: the server's socket is shut where the server exposes it
    (werkzeug, gunicorn); elsewhere (waitress) the head goes out and the body never comes."""
    sock = environ.get("werkzeug.socket") or environ.get("gunicorn.socket")

    def body():
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        yield b""
        raise ConnectionDropped("the sandbox dropped the connection (an injected fault)")

    return Response(body(), 200, {"Content-Length": "64"}, mimetype="application/json", direct_passthrough=True)


def intercept(sandbox, ctx, op, claims, request, waits=None):
    """The pipeline's hook: the fault to inject into this call (counted and logged), or None. A world without
    API faults costs one read (none while the process remembers it: requeststate.memory), no write transaction."""
    if not sandbox.state.remember(("faults", ctx.world.id, "api"), ctx.world.id,
                                  lambda: models.has_live(sandbox.store, ctx.world.id, "api")):
        return None
    with sandbox.store.transaction():
        sandbox.worlds.writes(ctx.world.id)
        fault = models.for_call(sandbox.store, ctx.world.id, ctx.now, op.id, request.method, request.path,
                                sandbox.config["PREFIX"], claims.get("jti"))
    if fault is None:
        return None
    return Injection(fault, sandbox.config.get("FAULT_SLEEP") or time.sleep, waits,
                     int(sandbox.config.get("FAULT_WALL_WAITS_PER_WORLD", 2)))
