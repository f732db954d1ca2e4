"""Authentication is the tokens area's rule: it fills the pipeline's authenticate stage (hooks.py), so the
pipeline depends on no area."""

from . import models


def attach(app, sandbox):
    sandbox.hooks.authenticate = models.authenticate
    sandbox.hooks.authenticate_control = models.control_principal
    sandbox.hooks.read_token = models.read_token
    uses = sandbox.state.write_behind(models.record_uses)
    sandbox.hooks.token_used = lambda ctx, principal: uses.add((principal.token_id, ctx.world.id, ctx.now))
