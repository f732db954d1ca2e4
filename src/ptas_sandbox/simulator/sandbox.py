"""The running simulator of one app (`Simulator`): its configuration, store, worlds, signer and rate limiter, in
one object. Kept in `app.extensions["ptas"]` and reached through `current_sandbox()` (handlers: `call.sandbox`);
domain code gets a `Ctx` from it. (`Sandbox` is the partner-side name: ptas_sandbox.testing's client.)
"""

import itertools
import secrets
import time
from collections.abc import Iterator
from typing import Any

from flask import current_app

from .auth import Signer, store_identity
from .context import Ctx
from .hooks import CatchUp, Hooks
from .ratelimit import RateLimiter
from .requeststate import open_state
from .store import open_store
from .worlds import World, Worlds

_DONE = object()


def system_microseconds() -> int:
    """The only reading of the system clock in the simulator; worlds offset or freeze it."""
    return time.time_ns() // 1000


class Simulator:
    def __init__(self, config: dict[str, Any], schemas: list[str],
                 upgrades: dict[str, dict[str, str]] | None = None) -> None:
        self.config = config
        self.system_time = config.get("SYSTEM_TIME") or system_microseconds
        self.store = open_store(config["STATE"], schemas, upgrades)
        self.state = open_state(self.store, config)     # per-request state: in memory, or in the store
        self.worlds = Worlds(self.store, self.system_time, self.state, config["SEED"], config.get("MAX_WORLDS"))
        secret = config.get("SECRET") or self.store.signing_secret(lambda: secrets.token_urlsafe(48))
        self.signer = Signer(secret, store_identity(self.store, self.worlds.any_held))
        self.limiter = RateLimiter(self.store, config["RATE_LIMIT"], config["RATE_WINDOW_SECONDS"],
                                   config["OPERATION_LIMITS"], windows=self.state.rate_windows())
        self._traces = itertools.count(1)
        self.services: list[Any] = []   # background parts (the webhook dispatcher), started and stopped with the app
        self.hooks = Hooks()            # the stages areas and tools fill (their service.py): hooks.py

    def ctx(self, world: World) -> Ctx:
        return Ctx(self.store, world, self.worlds.now(world), self.state, self.signer, self.config)

    def catch_up(self, world: World) -> None:
        """Let everything that runs on the world clock catch up with it (imports finish, events fire).

        Called before every operation of the world and after every clock move, so reading at time T shows
        what would have happened by T, with no sleeping threads.
        """
        stages = self.hooks.catch_up
        if stages:
            ctx = self.ctx(world)
            # Remembered until a writer of the world (or the clock's move) ends: nothing is due before this instant.
            key = ("catch-up", world.id)
            if ctx.now < self.state.remember(key, world.id, lambda: self._quiet_until(ctx)):
                return
            self.state.drop(key)        # looked at again next time (and the stages' own state may move)
            if not any(stage.due(ctx) for stage in stages):
                return
            for stage in stages:
                self._run_stage(stage, ctx)

    def _run_stage(self, stage: CatchUp, ctx: Ctx) -> None:
        """A stage in one write transaction, or a stage in steps (a generator) in one transaction per step, each
        under the world's lock: on SQLite another world's writer gets the store's turn between two steps instead
        of waiting for the whole catch-up. Inside a caller's transaction the steps join it, with the same work in
        the same order, so the rows are the same however the catch-up is cut."""
        steps: Iterator[None] | None = None
        while True:
            with self.store.transaction():
                self.worlds.lock(ctx.world.id)
                if steps is None:
                    steps = stage.run(ctx)
                    if steps is None:
                        return
                if next(steps, _DONE) is _DONE:
                    return

    def _quiet_until(self, ctx: Ctx) -> int:
        """An instant before which no catch-up is due unless the store changes: the first of the state's
        lookaheads (a minute or a second of world time ahead, when it remembers) by which nothing is due (what
        is due at T is due at any later T), else now."""
        for ahead_us in self.state.lookahead_us:
            ahead = Ctx(ctx.store, ctx.world, ctx.now + ahead_us, ctx.state, ctx.signer, ctx.config)
            if not any(stage.due(ahead) for stage in self.hooks.catch_up):
                return ahead.now
        return ctx.now

    def trace_id(self) -> str:
        return f"{next(self._traces):016x}"

    def close(self) -> None:
        for service in reversed(self.services):
            service.stop()
        self.state.close()          # what is written behind goes to the store before it closes
        self.store.close()


def current_sandbox() -> Simulator:
    return current_app.extensions["ptas"]
