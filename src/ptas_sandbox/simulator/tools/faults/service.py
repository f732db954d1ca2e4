"""Plugs fault injection into the request pipeline and the webhook outbox of an app."""

import functools

from ...webhooks import models as webhooks
from . import http, models


def attach(app, sandbox):
    waits = http.WallWaits()        # the app's calls waiting out wall-clock latency, per world
    app.extensions.setdefault("ptas.interceptors", []).append(functools.partial(http.intercept, waits=waits))
    if models.after_fan_out not in webhooks.FAN_OUT_HOOKS:      # module-level: once per process
        webhooks.FAN_OUT_HOOKS.append(models.after_fan_out)
        webhooks.SIGNING_HOOKS.append(models.before_signing)
        webhooks.LOG_HOOKS.append(models.mark_log)
