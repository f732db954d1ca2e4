"""Control rules: a new world with its root partner and initial token, and wiping a world."""

from ... import events, scopes
from ...auth import world_key
from ...partners import models as partners
from ...timestamps import render
from ...tokens import models as tokens
from ...webhooks import deliveries
from ..echo import models as echo


def create_world(sandbox, values):
    """A new world, its root partner and the initial partner token the support team would issue (spec §5 rule 2)."""
    make_room(sandbox)
    seed = values.get("seed")
    world = sandbox.worlds.create(seed=None if seed is None else int(seed), start=values.get("start"),
                                  frozen=values.get("frozen", False))
    ctx = sandbox.ctx(world)
    with sandbox.store.transaction():
        partner = partners.create(ctx, {k: v for k, v in values.items() if k in ("name", "email")})
        token = tokens.issue(ctx, partner_id=partner["id"], kind="partner", scope=scopes.ROOT_SCOPE.split(),
                             expires_in=sandbox.config["INITIAL_TOKEN_LIFETIME"], name="initial token")
    return world, ctx, partners.record(partner), token


def make_room(sandbox):
    """On a full sandbox (the operator's --max-worlds), the world unused longest goes to make room for a new one,
    if nobody has called it for --world-idle-hours: CI jobs that never delete their worlds do not fill a shared
    sandbox for good. Call inside the new world's transaction (control operations settle what is written behind
    first, so every use counts)."""
    worlds, idle_hours = sandbox.worlds, sandbox.config.get("WORLD_IDLE_HOURS")
    if not worlds.max_worlds or not idle_hours or worlds.count() < worlds.max_worlds:
        return
    idle = worlds.unused_longest(since=sandbox.system_time() - round(idle_hours * 3600 * 1_000_000))
    if idle is not None:
        delete_world(sandbox, idle)


def renew_token(sandbox, world, partner_id, token_id):
    """The way back from a clock jump past every root token's expiry (docs/design.md, the control API): a fresh
    token with the calling token's scopes, living INITIAL_TOKEN_LIFETIME from the world's now. Nothing more
    than the caller already holds, so renewing grants no new power."""
    ctx = sandbox.ctx(world)
    old = sandbox.store.one("SELECT scope, name FROM tokens WHERE id = ?", (token_id,)) \
        or {"scope": scopes.ROOT_SCOPE, "name": "token of the world key"}     # the world key holds the world
    return tokens.issue(ctx, partner_id=partner_id, kind="partner", scope=old["scope"].split(),
                        expires_in=sandbox.config["INITIAL_TOKEN_LIFETIME"],
                        name=f"renewed {old['name'] or 'token'}"[:100], created_by=token_id)


def world_tables(store):
    """Every table holding per-world rows (a `world` column), whichever area declared it."""
    return store.tables_with_column("world")


def wipe_world(sandbox, world, root_partner_id):
    """Reset a world to its first moment: the root partner and its tokens stay, everything else goes.

    The id sequences (`counters`) stay too: they drew the kept root partner's and tokens' ids, and restarting
    them would hand those ids out again (a 500 on the UNIQUE key), and an id a client still holds from before
    the reset would name a new, unrelated object. So does the world's last use (`world_use`): a reset is one.
    """
    store = sandbox.store
    with store.transaction():
        hold(sandbox, world.id)
        events.hold_unfanned(store, world.id)
        for table in world_tables(store):
            if table in ("counters", "world_use"):
                continue
            keep = ""
            if table == "partners":
                keep = " AND id != ?"
            elif table == "tokens":
                keep = " AND (partner_id != ? OR kind != 'partner')"
            store.execute(f"DELETE FROM {table} WHERE world = ?{keep}",
                          (world.id, root_partner_id) if keep else (world.id,))
    sandbox.limiter.forget(world.id)


def delete_world(sandbox, world, replaced=False):
    """Remove a world with every row of it, id sequences included, so that a snapshot of it can take its place
    (`POST /_sandbox/snapshots?replace=true`: `replaced`). Joins the caller's transaction: the load replaces, or
    nothing. A world gone for good leaves nothing in this process's memory either."""
    store = sandbox.store
    with store.transaction():
        hold(sandbox, world.id)
        events.hold_unfanned(store, world.id)
        for table in world_tables(store):
            store.execute(f"DELETE FROM {table} WHERE world = ?", (world.id,))
        sandbox.worlds.delete(world.id)
        if not replaced:
            sandbox.worlds.forget(world.id)
    sandbox.limiter.forget(world.id, deleted=not replaced)


def hold(sandbox, world_id):
    """The locks of a world's writers and admissions, in their order (pipeline, LOCK ORDER), before deleting its
    rows: a request of the world finishes first, or starts after the wipe, and never deadlocks with it."""
    sandbox.worlds.lock(world_id)
    sandbox.limiter.lock(world_id)


def wipe_everything(sandbox):
    store = sandbox.store
    with store.transaction():
        for row in store.all("SELECT id FROM worlds ORDER BY id"):
            hold(sandbox, row["id"])
        events.hold_unfanned(store)
        for table in world_tables(store) + ["worlds"]:
            store.execute(f"DELETE FROM {table}")
        store.execute("DELETE FROM counters WHERE world != ''")
        sandbox.worlds.forget()
    sandbox.limiter.forget()


def clock_of(sandbox, world):
    return {"now": render(sandbox.worlds.now(world)), "frozen": world.frozen}


def world_body(sandbox, world, partner, token):
    """What a new world's creator gets: the partner's initial token, and the harness's world key (docs/chaos.md)."""
    return {"partner": partner, "accessToken": token["accessToken"], "token": token,
            "worldKey": world_key(sandbox.signer, world.id),
            "world": {"id": world.id, "seed": world.seed, "clock": clock_of(sandbox, world)}}


PRUNE_EVERY = 3600 * 1_000_000      # world time between two prunes of one world


def prune_due(ctx, last_pruned):
    """Whether the world is due a prune: no store read, so a request with nothing else due opens no write
    transaction for the catch-up (Simulator.catch_up)."""
    period = ctx.config.get("RETENTION_SECONDS")
    return bool(period) and ctx.now - last_pruned.get(ctx.world.id, -PRUNE_EVERY) >= PRUNE_EVERY


def prune_expired(ctx, last_pruned):
    """Retention (the operator's --retention-days): outbox events already fanned out, finished delivery
    attempts and echo captures older than the period on the world's clock go, so nothing grows until a reset.
    Runs as a catch-up stage, at most once per hour of a world's time; `last_pruned` maps world id -> world time."""
    if not prune_due(ctx, last_pruned):
        return
    period = ctx.config["RETENTION_SECONDS"]
    last_pruned[ctx.world.id] = ctx.now
    before = ctx.now - period * 1_000_000
    deliveries.prune(ctx.store, ctx.world.id, before)        # fanned-out events and finished attempts
    echo.prune(ctx.store, ctx.world.id, before)
