"""Authentication is the tokens area's rule: hand it to the pipeline, which depends on no area."""

from . import models


def attach(app, sandbox):
    sandbox.authenticate = models.authenticate
    sandbox.read_token = models.read_token
    sandbox.token_uses = sandbox.state.write_behind(models.record_uses)
