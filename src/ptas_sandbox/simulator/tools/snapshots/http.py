"""HTTP layer of snapshots: `GET /_sandbox/snapshot` exports the caller's world, `POST /_sandbox/snapshots`
loads a document into a new world (docs/chaos.md)."""

from ... import scopes
from ...auth import world_key
from ...operations import NO_AUTH, WORLD_AUTH, Answer, component, operation
from ...partners import models as partners
from ...pipeline import admin_key_given, bearer_world
from ...problems import Forbidden
from ...tokens import models as tokens
from ..control.models import clock_of
from . import models

SNAPSHOT = {"type": "object", "description": "A world as one versioned document (docs/chaos.md)",
                       "properties": {"format": {"const": models.FORMAT}, "version": {"enum": list(models.READS)},
                                      "simulator": {"type": "string"}, "createdAt": {"type": "string"},
                                      "world": {"type": "object"}, "counters": {"type": "object"},
                                      "tables": {"type": "object"}},
                       "required": ["format", "version", "world", "tables"]}
component("Snapshot", SNAPSHOT)
EXAMPLE = {"format": models.FORMAT, "version": models.VERSION, "world": {
    "seed": 7, "clock": {"now": "2026-01-05T09:00:00.0000000Z", "frozen": True}}, "counters": {"partner": 1},
    "tables": {"partners": [{"id": "00000000-0000-4000-8000-00000000000a", "parent_id": None, "name": "Acme",
                             "email": "dev@acme.example", "redirect_urls": "[]", "user_token_expiry": 86400,
                             "ui_settings": "{}", "created_at": 1767603600000000,
                             "updated_at": 1767603600000000}]}}
component("SnapshotLoaded", {"type": "object", "properties": {
    "partner": {"type": "object"}, "accessToken": {"type": "string"},
    "worldKey": {"type": "string", "description": "the harness's key to the new world's control API"},
    "world": {"type": "object"}, "tokens": {"type": "object", "additionalProperties": {"type": "string"},
                                            "description": "token id -> a fresh access token, for every live "
                                                           "token of the snapshot"}},
    "required": ["partner", "accessToken", "world", "tokens"]})


@operation("SandboxGetSnapshot", "GET", "/_sandbox/snapshot", tokens=WORLD_AUTH, control=True,
           responses={200: "Snapshot"})
def get_snapshot(call):
    """The caller's world as one versioned JSON document: clock, partners, users, tokens (ids and expiry),
    accounts, transactions, webhooks, pending deliveries."""
    if partners.root_of(call.sandbox.store, call.ctx.world.id) != call.principal:
        raise Forbidden("Only a token of the world's root partner can export it.")
    return models.export(call.sandbox.store, call.sandbox.hooks, call.ctx.world, call.ctx.now)


def sign(ctx, row):
    """A fresh access token for a token row of the snapshot: same id, subject, scope and expiry."""
    return ctx.signer.issue(token_id=row["id"], subject=row.get("user_id") or row["partner_id"], kind=row["kind"],
                            world=ctx.world.id, scope=row["scope"], issued_at=row["created_at"],
                            expires_at=row["expires_at"])


def new_world(request):
    """A plain load makes a world (the admin key's, on a shared sandbox); a replace is checked by `replaceable`."""
    return request.args.get("replace", "").lower() not in ("true", "1")


@operation("SandboxLoadSnapshot", "POST", "/_sandbox/snapshots", tokens=NO_AUTH, control=True, admin=new_world,
           query={"replace": {"type": "boolean", "description": "put the snapshot in place of the world that "
                              "holds its root partner (the one it was saved from, or loaded into before), with the "
                              "same ids; needs a root partner token of that world (Authorization) or the admin key"}},
           body=SNAPSHOT, example=EXAMPLE,
           responses={201: "SnapshotLoaded", 401: "ProblemDetails", 403: "ProblemDetails"})
def load_snapshot(call):
    """Load a snapshot (the JSON document of GET /_sandbox/snapshot) into a new world of this sandbox, or with
    `replace=true` in place of the world it came from."""
    replace = (lambda world_id: replaceable(call, world_id)) if call.query.get("replace") else None
    world, root, access = models.load(call.sandbox, call.body, sign, replace=replace)
    ctx = call.sandbox.ctx(world)
    root_live = [t for t in tokens.unrevoked_partner_tokens(ctx.store, world.id, root["id"]) if t["id"] in access]
    if root_live:
        token_id = max(root_live, key=lambda t: t["expires_at"])["id"]
        token, secret = tokens.record(tokens.unrevoked(ctx.store, world.id, token_id), ctx.now), access[token_id]
    else:
        with call.sandbox.store.transaction():
            issued = tokens.issue(ctx, partner_id=root["id"], kind="partner", scope=scopes.ROOT_SCOPE.split(),
                                  expires_in=call.sandbox.config["INITIAL_TOKEN_LIFETIME"], name="snapshot access")
        token, secret = issued, issued["accessToken"]
        access[token.get("id") or "snapshot access"] = secret
    partner = partners.record(call.sandbox.store.one("SELECT * FROM partners WHERE id = ?", (root["id"],)))
    return Answer(201, {"partner": partner, "accessToken": secret, "token": token, "tokens": access,
                        "worldKey": world_key(call.sandbox.signer, world.id),
                       "world": {"id": world.id, "seed": world.seed, "clock": clock_of(call.sandbox, world)}})


def replaceable(call, world_id):
    """The world a snapshot may replace: the admin key's to replace, or the caller's when its bearer token is a
    root partner token of that world that may steer it (as the control API asks); else 401/403, nothing lost."""
    sandbox = call.sandbox
    world = sandbox.worlds.get(world_id)
    if admin_key_given(sandbox, call.request.headers):
        return world
    claims, ctx = bearer_world(sandbox, call.request.environ)
    if ctx.world.id != world_id:
        raise Forbidden("Replacing a world needs a root partner token of the world that holds the snapshot's "
                        "partners (or the admin key).")
    sandbox.hooks.tokens.control(ctx, claims)
    return world
