"""The running sandbox of one app: its configuration, store, worlds, signer and rate limiter, in one object.

Kept in `app.extensions["ptas"]` and reached through `current_sandbox()`; domain code gets a `Ctx` from it.
"""

import itertools
import secrets
import time

from flask import current_app

from .auth import Signer
from .context import Ctx
from .ratelimit import RateLimiter
from .store import Store
from .worlds import Worlds


def system_microseconds():
    """The only reading of the system clock in the simulator; worlds offset or freeze it."""
    return time.time_ns() // 1000


class Sandbox:
    def __init__(self, config, schemas):
        self.config = config
        self.system_time = config.get("SYSTEM_TIME") or system_microseconds
        self.store = Store(config["STATE"], schemas)
        self.worlds = Worlds(self.store, self.system_time, config["SEED"])
        secret = config.get("SECRET") or self.store.meta("signing-secret", lambda: secrets.token_urlsafe(48))
        self.signer = Signer(secret)
        self.limiter = RateLimiter(config["RATE_LIMIT"], config["RATE_WINDOW_SECONDS"], config["OPERATION_LIMITS"])
        self._traces = itertools.count(1)
        self.services = []      # background parts (the webhook dispatcher) started and stopped with the app
        # Stages the areas hand to the pipeline (their service.py), so the pipeline depends on no area:
        self.authenticate = None    # function(ctx, claims) -> Principal: the tokens area's rules
        self.catch_ups = []     # functions(ctx) bringing a world's lazy processes (imports) up to its clock

    def ctx(self, world):
        return Ctx(self.store, world, self.worlds.now(world), self.signer, self.config)

    def catch_up(self, world):
        """Let everything that runs on the world clock catch up with it (imports finish, events fire).

        Called before every operation of the world and after every clock move, so reading at time T shows
        what would have happened by T, with no sleeping threads.
        """
        if self.catch_ups:
            ctx = self.ctx(world)
            with self.store.transaction():
                for catch_up in self.catch_ups:
                    catch_up(ctx)

    def trace_id(self):
        return f"{next(self._traces):016x}"

    def close(self):
        for service in reversed(self.services):
            service.stop()
        self.store.close()


def current_sandbox():
    return current_app.extensions["ptas"]
