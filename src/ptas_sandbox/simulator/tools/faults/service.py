"""Plugs fault injection into the request pipeline and the webhook outbox of an app (hooks.py: intercept, fan_out,
signing, delivery_log)."""

import functools

from . import http, models


def attach(app, sandbox):
    waits = http.WallWaits()        # the app's calls waiting out wall-clock latency, per world
    sandbox.hooks.intercept.append(functools.partial(http.intercept, waits=waits))
    sandbox.hooks.fan_out.append(models.after_fan_out)
    sandbox.hooks.signing.append(models.before_signing)
    sandbox.hooks.delivery_log.append(models.mark_log)
