"""The echo receiver's table gets what older state files lack (the `size` of each capture) at start-up."""

from . import models


def attach(app, sandbox):
    models.migrate(sandbox.store)     # outside a transaction: a failed probe must not abort one
