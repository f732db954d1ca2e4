"""Authentication is the tokens area's rule: it fills the pipeline's authenticate stage (hooks.py), so the
pipeline depends on no area."""

from . import models


def attach(app, sandbox):
    sandbox.hooks.authenticate = models.authenticate
    sandbox.hooks.authenticate_control = models.control_principal
