"""Plugs fault injection into the request pipeline and the webhook outbox of an app."""

from ..webhooks import models as webhooks
from . import http, models


def attach(app, sandbox):
    app.extensions.setdefault("ptas.interceptors", []).append(http.intercept)
    if models.after_fan_out not in webhooks.FAN_OUT_HOOKS:      # module-level: once per process
        webhooks.FAN_OUT_HOOKS.append(models.after_fan_out)
        webhooks.SIGNING_HOOKS.append(models.before_signing)
        webhooks.LOG_HOOKS.append(models.mark_log)
