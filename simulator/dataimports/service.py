"""Imports run on the world clock: register the ticker that Sandbox.settle runs before each operation."""

from . import models


def attach(app, sandbox):
    sandbox.tickers.append(models.settle)
