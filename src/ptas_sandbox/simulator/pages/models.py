"""Page rules shared by the hosted pages, no Flask here: the secret key in a page's URL and the partner whose
settings a page wears."""

import hashlib
import hmac

from ..partners import models as partners
from ..problems import Conflict


class Closed(Conflict):
    """A hosted page's session that can no longer be acted on (409), with the heading its page shows: an
    expired link is not "already done"."""

    def __init__(self, detail, heading):
        super().__init__(detail)
        self.heading = heading


def closed(status, detail):
    """The Closed of a session in `status` (Completed, Failed, Expired)."""
    return Closed(detail, {"Completed": "This is already done", "Failed": "This was cancelled",
                           "Expired": "This link has expired"}[status])


def page_key(ctx, purpose, ident):
    """The secret in a hosted page's URL (consent page, Account UI, User UI): an HMAC under the server's
    signing secret, so deterministic for a given sandbox yet unguessable without its secret."""
    secret = ctx.signer.secret.encode() if ctx.signer else b"ptas-sandbox"
    return hmac.new(secret, f"{purpose}/{ctx.world.id}/{ident}".encode(), hashlib.sha256).hexdigest()


def partner_of(ctx, partner_id):
    """The partner a page is shown for, as the API shows it (name, uiSettings: styling, frameAncestors)."""
    return partners.record(partners.require(ctx, partner_id))
