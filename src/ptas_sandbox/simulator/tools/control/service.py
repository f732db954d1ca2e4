"""Retention runs on the world clock: a catch-up stage that Simulator.catch_up runs before each operation of a world."""

import functools

from . import models


def attach(app, sandbox):
    last_pruned = {}    # world id -> world time of its last prune, in this process
    sandbox.catch_ups.append(functools.partial(models.prune_expired, last_pruned=last_pruned))
    sandbox.catch_up_due.append(functools.partial(models.prune_due, last_pruned=last_pruned))
