"""The running simulator of one app (`Simulator`): its configuration, store, worlds, signer and rate limiter, in
one object. Kept in `app.extensions["ptas"]` and reached through `current_sandbox()` (handlers: `call.sandbox`);
domain code gets a `Ctx` from it. (`Sandbox` is the partner-side name: ptas_sandbox.testing's client.)
"""

import itertools
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any

from flask import current_app

from .auth import Principal, Signer
from .context import Ctx
from .ratelimit import RateLimiter
from .store import open_store
from .worlds import World, Worlds


def _no_authentication(ctx: Ctx, claims: Mapping[str, Any]) -> Principal:
    raise RuntimeError("no area handed authentication to the pipeline (tokens/service.py attaches it)")


def system_microseconds() -> int:
    """The only reading of the system clock in the simulator; worlds offset or freeze it."""
    return time.time_ns() // 1000


class Simulator:
    def __init__(self, config: dict[str, Any], schemas: list[str],
                 upgrades: dict[str, dict[str, str]] | None = None) -> None:
        self.config = config
        self.system_time = config.get("SYSTEM_TIME") or system_microseconds
        self.store = open_store(config["STATE"], schemas, upgrades)
        self.worlds = Worlds(self.store, self.system_time, config["SEED"], config.get("MAX_WORLDS"))
        secret = config.get("SECRET") or self.store.signing_secret(lambda: secrets.token_urlsafe(48))
        self.signer = Signer(secret)
        self.limiter = RateLimiter(self.store, config["RATE_LIMIT"], config["RATE_WINDOW_SECONDS"],
                                   config["OPERATION_LIMITS"])
        self._traces = itertools.count(1)
        self.services: list[Any] = []   # background parts (the webhook dispatcher), started and stopped with the app
        # Stages the areas hand to the pipeline (their service.py), so the pipeline depends on no area:
        self.authenticate: Callable[[Ctx, Mapping[str, Any]], Principal] = _no_authentication   # tokens area
        self.catch_ups: list[Callable[[Ctx], None]] = []    # bring a world's lazy processes (imports) to its clock
        self.catch_up_due: list[Callable[[Ctx], bool]] = []   # cheap reads: is any catch-up work due?

    def ctx(self, world: World) -> Ctx:
        return Ctx(self.store, world, self.worlds.now(world), self.signer, self.config)

    def catch_up(self, world: World) -> None:
        """Let everything that runs on the world clock catch up with it (imports finish, events fire).

        Called before every operation of the world and after every clock move, so reading at time T shows
        what would have happened by T, with no sleeping threads.
        """
        if self.catch_ups:
            ctx = self.ctx(world)
            if self.catch_up_due and len(self.catch_up_due) == len(self.catch_ups) and \
                    not any(due(ctx) for due in self.catch_up_due):
                return
            with self.store.transaction():
                self.worlds.lock(world.id)
                for catch_up in self.catch_ups:
                    catch_up(ctx)

    def trace_id(self) -> str:
        return f"{next(self._traces):016x}"

    def close(self) -> None:
        for service in reversed(self.services):
            service.stop()
        self.store.close()


def current_sandbox() -> Simulator:
    return current_app.extensions["ptas"]
