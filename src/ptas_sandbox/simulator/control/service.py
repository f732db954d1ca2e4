"""Retention runs on the world clock: a catch-up stage that Simulator.catch_up runs before each operation of a world."""

import functools

from . import models


def attach(app, sandbox):
    sandbox.catch_ups.append(functools.partial(models.prune_expired, last_pruned={}))
