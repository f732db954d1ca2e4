"""Scenario rules: a named data file of scenarios/ becomes a new world with a frozen clock at a fixed start,
its root partner, users, accounts (provider sizes included) and provider states, then the clock moves on so
imports finish. The same scenario and seed give the same world, transactions included, byte for byte."""

import json
import logging
import re

from ptas_sandbox.data import data

from ...account_types import models as account_types
from ...accounts import models as accounts
from ...partners import models as partners
from ...problems import not_found
from ...scopes import ROOT_SCOPE
from ...timestamps import SECOND_US, parse
from ...tokens import models as tokens
from ...users import models as users
from ..control import models as control

log = logging.getLogger("ptas")
NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


def names():
    return sorted(p.name[:-5] for p in data("catalogue", "scenarios").iterdir() if p.name.endswith(".json"))


def spec(name):
    if not isinstance(name, str) or not NAME.match(name) or name not in names():
        raise not_found("scenario", name)
    return json.loads(data("catalogue", "scenarios", f"{name}.json").read_text())


def catalogue():
    """[(name, one-line summary)] of every scenario, for `ptas scenarios` and GET /_sandbox/scenarios."""
    return [(name, spec(name)["summary"]) for name in names()]


def load(sandbox, name, seed=None):
    """Load scenario `name` into a new world; answers like SandboxCreatePartner, plus the users and their tokens.

    In steps, each a transaction of its own, so loading never holds the store's turn (on SQLite, every world's
    writers') in one piece: the world with its root partner and provider states; each user with their accounts;
    the scenario's name on the world with its clock's move; then the imports that move made due
    (Simulator.catch_up). Nobody holds the world's token until this answers, and a world without its scenario's
    name is never resumed (`resume`); should a step fail, the world is deleted, and the load leaves the state as
    it was. The same steps in the same order as in one transaction (inside a caller's, they join it), so the
    same scenario and seed give the same rows."""
    plan = spec(name)
    store = sandbox.store

    def made():
        with store.transaction():
            world, ctx, partner, token = control.create_world(sandbox, {
                **plan.get("partner", {}), "seed": plan["seed"] if seed is None else seed,
                "start": parse(plan["start"]), "frozen": True})
            for type_id, state in plan.get("accountTypes", {}).items():
                account_types.set_state(ctx, type_id, state)
        return world, ctx, partner, token

    def person(ctx, partner, values):
        with store.transaction():
            user = users.create(ctx, partners.require(ctx, partner["id"]),
                                {k: values[k] for k in ("name", "email") if k in values})
            for account in values.get("accounts", []):
                accounts.create(ctx, partner_id=partner["id"], user_id=user["id"], preauthorized=True,
                                values={k: v for k, v in account.items() if k != "options"},
                                options=account.get("options"))
        return {"id": user["id"], "name": user["name"], "accessToken": user["token"]["accessToken"]}

    def named(world):
        with store.transaction():
            sandbox.worlds.name_scenario(world.id, name)
            return sandbox.worlds.move(world, advance=round(plan.get("advance", 0) * SECOND_US))

    world, ctx, partner, token = store.retrying(made)
    try:
        people = [store.retrying(lambda values=values: person(ctx, partner, values))
                  for values in plan.get("users", [])]
        world = store.retrying(lambda: named(world))
        store.retrying(lambda: sandbox.catch_up(world))
    except Exception:
        if not store.in_transaction:        # inside a caller's transaction, its rollback takes the world
            try:
                control.delete_world(sandbox, world)
            except Exception as error:      # the store is gone too: the idle world goes with --world-idle-hours
                log.error("a scenario world whose load failed could not be deleted (%s)", error)
        raise
    return {**control.world_body(sandbox, world, partner, token), "scenario": name, "users": people}


def resume(sandbox, name, seed=None):
    """The world of scenario `name` (and `seed`, when given) this state already holds, with a fresh root partner
    token (a token's string is never stored, so the first one cannot be shown again); None when there is none.
    `ptas serve --scenario` on a state file thus keeps one world across restarts instead of adding one each."""
    world = sandbox.worlds.of_scenario(name, seed)
    if world is None:
        return None
    ctx = sandbox.ctx(world)
    with sandbox.store.transaction():
        root = partners.require(ctx, partners.root_of(sandbox.store, world.id))
        token = tokens.issue(ctx, partner_id=root["id"], kind="partner", scope=ROOT_SCOPE.split(),
                             expires_in=sandbox.config["INITIAL_TOKEN_LIFETIME"], name=f"ptas serve --scenario {name}")
        body = control.world_body(sandbox, world, partners.record(root), token)
    return {**body, "scenario": name, "resumed": True}
