"""Retention runs on the world clock: a catch-up stage (hooks.py) that Simulator.catch_up runs before each operation
of a world."""

from . import models


class Retention:
    """The catch_ups stage (hooks.py) of retention: prunes what a world's clock has left behind."""

    def __init__(self):
        self.last_pruned = {}    # world id -> world time of its last prune, in this process

    def due(self, ctx):
        return models.prune_due(ctx, last_pruned=self.last_pruned)

    def run(self, ctx):
        models.prune_expired(ctx, last_pruned=self.last_pruned)


def attach(app, sandbox):
    sandbox.hooks.catch_ups.append(Retention())
