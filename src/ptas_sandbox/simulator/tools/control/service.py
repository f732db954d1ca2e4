"""Retention runs on the world clock: a catch-up stage (hooks.py) that Simulator.catch_up runs before each operation
of a world."""

import functools

from ...hooks import CatchUp
from . import models


def attach(app, sandbox):
    last_pruned = {}    # world id -> world time of its last prune, in this process
    sandbox.hooks.catch_up.append(CatchUp(run=functools.partial(models.prune_expired, last_pruned=last_pruned),
                                          due=functools.partial(models.prune_due, last_pruned=last_pruned)))
    sandbox.worlds.forgetting.append(lambda world_id: last_pruned.clear() if world_id is None
                                     else last_pruned.pop(world_id, None))
