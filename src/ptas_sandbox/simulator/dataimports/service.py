"""Imports run on the world clock: register the catch-up that Sandbox.catch_up runs before each operation."""

from . import models


def attach(app, sandbox):
    sandbox.catch_ups.append(models.catch_up)
