"""HTTP layer of the control API: what a harness needs that the service itself does not offer."""

from ptas_sandbox import __version__

from ...openapi import SPEC_VERSION
from ...operations import NO_AUTH, WORLD_AUTH, Answer, component, operation
from ...partners import models as partners
from ...pipeline import admin_key_given, bearer_world
from ...problems import BadRequest
from ...store import StoreUnavailable
from ...timestamps import parse
from ...tokens.models import control_principal
from . import models

CLOCK = component("Clock", {"type": "object", "properties": {
    "now": {"type": "string", "format": "date-time"}, "frozen": {"type": "boolean"}}, "required": ["now", "frozen"]})
component("SandboxWorld", {"type": "object", "properties": {
    "partner": {"$ref": "#/components/schemas/Partner"}, "accessToken": {"type": "string"},
    "token": {"$ref": "#/components/schemas/Token"},
    "worldKey": {"type": "string", "description": "the harness's key to this world's control API (report, "
                 "journal, faults, clock): no token of the partner, so nothing the partner's software does "
                 "with its tokens takes it away (docs/chaos.md)"},
    "world": {"type": "object", "properties": {"id": {"type": "string"}, "seed": {"type": "integer"},
                                               "clock": CLOCK}}},
    "required": ["partner", "accessToken", "token", "worldKey", "world"]})


# reads_behind=False: health reads nothing written behind; writing it first would queue a probe behind every
# other world's writer for the store's turn.
@operation("SandboxHealth", "GET", "/_sandbox/health", tokens=NO_AUTH, control=True, atomic=False,
           reads_behind=False, responses={
    200: {"type": "object", "properties": {"status": {"type": "string"}, "service": {"type": "string"},
                                           "version": {"type": "string"}, "specVersion": {"type": "string"},
                                           "store": {"type": "string"}}},
    503: "ProblemDetails"})
def health(call):
    """Liveness and the store's readiness (a 503 saying why when it cannot serve: PostgreSQL away, the state
    file read-only, its disk full), and a way for a harness to recognise a simulator target. Outside a store
    transaction, so it takes no writer's turn and answers while the store is gone."""
    problem = call.sandbox.store.health()
    if problem is not None:
        raise StoreUnavailable(problem.detail, cause=problem.cause, store="unavailable")
    return {"status": "ok", "service": "ptas-sandbox", "version": __version__, "specVersion": SPEC_VERSION,
            "store": "ok"}


@operation("SandboxCreatePartner", "POST", "/_sandbox/partners", tokens=NO_AUTH, control=True, admin=True,
           body={"type": "object", "properties": {
               "name": partners.NAME_FIELD,
               "email": partners.EMAIL_FIELD,
               "seed": {"type": "integer", "minimum": 0, "maximum": 2**53},
               "start": {"type": "string", "format": "date-time",
                         "pattern": "^(19[7-9][0-9]|[2-8][0-9]{3}|9[0-8][0-9]{2}|99[0-8][0-9])-",
                         "description": "where the world clock starts (default: now); a world clock stays "
                                        "between 1970-01-01 and 9990-01-01 (UTC)"},
               "frozen": {"type": "boolean", "description": "start with the clock frozen"}}},
           body_required=False, example={"name": "Acme Shop Software", "email": "dev@acme.example"},
           responses={201: "SandboxWorld"})
def create_partner(call):
    """A new world with its root partner and initial partner token, as the support team would issue."""
    values = dict(call.body)
    if "start" in values:
        try:
            values["start"] = parse(values["start"])
        except ValueError as error:
            raise BadRequest(str(error)) from None
    world, _, partner, token = models.create_world(call.sandbox, values)
    return Answer(201, models.world_body(call.sandbox, world, partner, token))


@operation("SandboxGetClock", "GET", "/_sandbox/clock", tokens=WORLD_AUTH, control=True,
           responses={200: "Clock"})
def get_clock(call):
    """The caller's world clock."""
    return models.clock_of(call.sandbox, call.ctx.world)


@operation("SandboxSetClock", "POST", "/_sandbox/clock", tokens=WORLD_AUTH, control=True,
           body={"type": "object", "properties": {
               "freeze": {"type": "boolean"},
               "advance": {"type": "number", "minimum": 0, "maximum": 3_153_600_000,
                           "description": "seconds to move forward"},
               "set": {"type": "string", "format": "date-time",
                       "description": "an instant not before now and not after 9990-01-01"}},
               # A typo (`advnce`) must not be a 200 that did nothing: the control API knows every word it takes.
               "additionalProperties": False,
               "not": {"required": ["advance", "set"]}, "minProperties": 1,
               "x-problem": "Either advance the clock or set it, not both."},
           example={"advance": 3600}, responses={200: "Clock"}, atomic=False)
def set_clock(call):
    """Freeze, unfreeze, advance or set the caller's world clock (never backwards)."""
    body = call.body
    set_to = None
    if "set" in body:
        try:
            set_to = parse(body["set"])
        except ValueError as error:
            raise BadRequest(str(error)) from None
    advance = round(body["advance"] * 1_000_000) if "advance" in body else None
    sandbox, store = call.sandbox, call.sandbox.store
    # The move commits on its own, then what it made due catches up in steps of their own (Simulator.catch_up):
    # a century's imports never hold the store's turn in one piece. Should a step fail, the clock has moved and
    # the world's next request catches up the rest, as every request does.
    world = store.retrying(lambda: sandbox.worlds.move(call.ctx.world, freeze=body.get("freeze"), advance=advance,
                                                       set_to=set_to))
    store.retrying(lambda: sandbox.catch_up(world))
    return models.clock_of(sandbox, world)


@operation("SandboxReset", "POST", "/_sandbox/reset", tokens=NO_AUTH, control=True, responses={200: {
    "type": "object", "properties": {"reset": {"type": "string"}}}, 401: "ProblemDetails", 403: "ProblemDetails"})
def reset(call):
    """Wipe the caller's world back to its root partner and its tokens; with the admin key, every world."""
    sandbox = call.sandbox
    if admin_key_given(sandbox, call.request.headers):
        models.wipe_everything(sandbox)
        return {"reset": "everything"}
    claims, ctx = bearer_world(sandbox, call.request.environ)
    partner_id = control_principal(ctx, claims)      # the root partner's steering tokens only
    models.wipe_world(sandbox, ctx.world, partner_id)
    return {"reset": ctx.world.id}


@operation("SandboxDeleteWorld", "DELETE", "/_sandbox/world", tokens=WORLD_AUTH, control=True,
           responses={204: None})
def delete_world(call):
    """Delete the caller's world with everything in it: its place under the operator's --max-worlds is free
    again (a reset keeps the world). Its tokens and world key are then refused (401)."""
    models.delete_world(call.sandbox, call.ctx.world)
    return Answer(204)


@operation("SandboxRenewToken", "POST", "/_sandbox/token", tokens=WORLD_AUTH, control=True,
           responses={201: "Token"})
def renew_token(call):
    """A fresh root partner token with the calling token's scopes: the way back after the clock moved past
    every root token's expiry (the control API takes expired tokens; the service does not)."""
    claims, _ = bearer_world(call.sandbox, call.request.environ)
    token = models.renew_token(call.sandbox, call.ctx.world, call.principal, claims["jti"])
    return Answer(201, token)
