"""`PROFILE` in the app's config (a profile, or the path of its file) makes the profile layer the outermost stage
of every request (hooks.py), and its refusals a `refuse` hook; without it the simulator answers as it always
does."""

from ptas_sandbox.profile import check, load

from ...auth import bearer
from ...problems import Problem
from .layer import ProfileLayer


def attach(app, sandbox):
    profile = app.config.get("PROFILE")
    if not profile:
        return
    profile = load(profile) if isinstance(profile, str) else check(profile)

    def claims(authorization):
        """A token this sandbox signed says what it may do; anything else is the simulator's to refuse (401)."""
        try:
            return sandbox.signer.verify(bearer(authorization))
        except Problem:
            return {}
    layer = ProfileLayer(None, profile, claims, sandbox.store, sandbox.trace_id, sandbox.system_time,
                         app.config["PREFIX"])
    sandbox.hooks.outermost.append(layer.wrap)
    sandbox.hooks.refuse.append(layer.refuse_at)
    if layer.ids.active:       # webhook notifications name records as the API does
        sandbox.hooks.notification.append(lambda store, world, body: layer.ids.notification(world, body))
