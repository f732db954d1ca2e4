"""Records every API and control call of a world in its journal, around the request pipeline.

A call belongs to the world of its bearer token (any token signed for a world, expired or revoked included:
a refused call is what a partner most needs to see), or, for `SandboxCreatePartner`, to the world it created.
Calls with no world (a bad token, health, echo captures, hosted pages) are not journaled, nor are reads of
the journal itself and the inspector's own pages, so that watching never fills what is watched.
"""

import logging
import time

from flask import g, request

from ...operations import REGISTRY
from ...pipeline import bearer_claims, request_world
from . import models

NOT_JOURNALED = {"SandboxRequests", "SandboxCountRequests", "SandboxHealth"}


def attach(app, sandbox):
    config = app.config
    # Entries go to the store now, or written behind in batches when the process owns its store (hotstate):
    # the journal's readers are operations that settle it first.
    entries = sandbox.state.write_behind(record_batch)

    def start_entry():
        op = REGISTRY.get(request.endpoint)
        if op is None or op.id in NOT_JOURNALED or op.id.startswith("SandboxInspect"):
            return
        g.ptas_journal = entry = {"op": op, "started": time.perf_counter_ns(), "wall": sandbox.system_time(),
                                  "marks": {}}
        models.PENDING_MARKS.set(entry["marks"])
        claims = bearer_claims(sandbox, request.headers)
        if claims is None:
            return
        world = request_world(sandbox, claims["wld"])     # read once, for the pipeline too
        if world is not None:
            entry.update(world=world.id, at=sandbox.worlds.now(world), token=claims["jti"], kind=claims["knd"])

    def finish_entry(response):
        entry = g.pop("ptas_journal", None)
        if entry is None:
            return
        models.PENDING_MARKS.set(None)
        try:
            write(sandbox, config, entry, response, entries)
        except Exception:      # the journal never turns an answered call into a 500; say so loudly instead
            logging.getLogger("ptas").exception("could not journal %s %s", request.method, request.path)

    sandbox.hooks.before.append(start_entry)
    sandbox.hooks.record.append(finish_entry)      # last: it keeps the marks the `after` stage noted


def record_batch(store, items):
    """Entries written behind, each world's in one go (or one entry as it is made)."""
    worlds = {}
    for world, fields in items:
        worlds.setdefault(world, []).append(fields)
    for world, fields in worlds.items():
        if len(fields) == 1:
            models.record(store, world, **fields[0])
        else:
            models.record_many(store, world, fields)


def write(sandbox, config, entry, response, entries):
    world_id = entry.get("world")
    if world_id is None and entry["op"].id == "SandboxCreatePartner" and response.status_code == 201:
        world_id = (response.get_json(silent=True) or {}).get("world", {}).get("id")
    # A control call may have wiped its world (read it again); any other call's world is the one it read.
    steered = entry["op"].control or "world" not in entry
    world = world_id and (sandbox.worlds.get(world_id) if steered else request_world(sandbox, world_id))
    if not world:                           # no world, or one wiped by this very call
        return
    at = entry.get("at", sandbox.worlds.now(world))
    limit = config["JOURNAL_BODY_LIMIT"]
    streamed = response.is_streamed or response.direct_passthrough
    entries.add((world.id, dict(
        at=at, wall=entry["wall"], operation=entry["op"].id, method=request.method,
        path=request.path, query=request.query_string.decode("latin-1"), status=response.status_code,
        latency_us=(time.perf_counter_ns() - entry["started"]) // 1000, token_id=entry.get("token"),
        token_kind=entry.get("kind"),
        request=models.body_record(request.mimetype, request.get_data(cache=True) if request.content_length else b"",
                                   limit),
        response=models.body_record(response.mimetype, b"" if streamed else response.get_data(), limit),
        marks=entry["marks"], limit=config["JOURNAL_LIMIT"],
        retention_seconds=config["JOURNAL_RETENTION_SECONDS"])))
