"""`PROFILE` in the app's config (a profile, or the path of its file) puts the profile layer in front of every
route; without it the simulator answers as it always does."""

from ptas_sandbox.conformance.profile import check, load

from .layer import ProfileLayer


def attach(app, sandbox):
    profile = app.config.get("PROFILE")
    if not profile:
        return
    profile = load(profile) if isinstance(profile, str) else check(profile)
    app.wsgi_app = ProfileLayer(app.wsgi_app, profile)
