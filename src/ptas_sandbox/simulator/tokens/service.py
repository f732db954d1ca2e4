"""Authentication is the tokens area's rule: it fills the pipeline's authenticate stage (hooks.py), so the
pipeline depends on no area."""

from . import models


class TokenAuthenticator:
    """The tokens table decides who calls: the API's principal, and the control API's root partner."""

    def authenticate(self, ctx, claims):
        return models.authenticate(ctx, claims)

    def authenticate_control(self, ctx, claims):
        return models.control_principal(ctx, claims)


def attach(app, sandbox):
    sandbox.hooks.authenticator = TokenAuthenticator()
