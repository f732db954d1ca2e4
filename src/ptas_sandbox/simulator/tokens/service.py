"""Authentication is the tokens area's rule: it fills the hooks' `TokenRules` (hooks.py), so the pipeline and the
request state depend on no area."""

from ..hooks import TokenRules
from . import models


def attach(app, sandbox):
    uses = sandbox.state.write_behind(models.record_uses)
    sandbox.hooks.tokens = TokenRules(
        authenticate=models.authenticate, read=models.read_token, control=models.control_principal,
        used=lambda ctx, principal: uses.add((principal.token_id, ctx.world.id, ctx.now)))
