"""Plugs fault injection into the request pipeline and the webhook outbox of an app (hooks.py: intercept, fan_out,
signing, delivery_log)."""

from . import http, models


class FaultInterceptor:
    """The interceptors stage (hooks.py): the API faults a world asked for."""

    def __init__(self):
        self.waits = http.WallWaits()        # the app's calls waiting out wall-clock latency, per world

    def intercept(self, sandbox, ctx, op, claims, request):
        return http.intercept(sandbox, ctx, op, claims, request, waits=self.waits)


def attach(app, sandbox):
    sandbox.hooks.interceptors.append(FaultInterceptor())
    sandbox.hooks.fan_out.append(models.after_fan_out)
    sandbox.hooks.signing.append(models.before_signing)
    sandbox.hooks.delivery_log.append(models.mark_log)
