"""HTTP layer of the token operations (spec §4.1): own tokens and the tokens of child partners."""

from .. import scopes
from ..operations import PARTNER_ONLY, Answer, component, operation
from ..partners import models as partners
from ..problems import not_found
from . import models

TOKEN = component("Token", {
    "type": "object",
    "description": "The token record of spec §2; `id` only for partner tokens living over one hour, "
                   "`accessToken` only in the creating response.",
    "properties": {
        "id": {"type": "string"}, "name": {"type": ["string", "null"]},
        "createdAt": {"type": "string", "format": "date-time"}, "expiresIn": {"type": "integer"},
        "expiresAt": {"type": "string", "format": "date-time"}, "isRevoked": {"type": "boolean"},
        "isExpired": {"type": "boolean"}, "isValid": {"type": "boolean"}, "scope": {"type": "string"},
        "lastUsedAt": {"type": ["string", "null"], "format": "date-time"},
        "revokedAt": {"type": ["string", "null"], "format": "date-time"},
        "accessToken": {"type": "string"},
    },
    "required": ["name", "createdAt", "expiresIn", "expiresAt", "isRevoked", "isExpired", "isValid", "scope",
                 "lastUsedAt", "revokedAt"],
})
component("TokenList", {"type": "object", "properties": {"tokens": {"type": "array", "items": TOKEN}},
                        "required": ["tokens"]})


def create_request(kind):
    """Spec §2 token create request, its scope limited to what a `kind` token may hold."""
    return {"type": "object", "description": "Spec §2 token create request.", "properties": {
        "name": {"type": ["string", "null"], "maxLength": 200},
        "expiresIn": {"type": "integer", "minimum": 1, "maximum": LONGEST_S, "description": "lifetime in seconds"},
        "scope": {"type": "string", "pattern": scopes.pattern(kind), "description": "space-separated scopes"}}}


LONGEST_S = 100 * 365 * 86400   # a documented bound, so a huge expiresIn is refused up front (docs/design.md)
CREATE = create_request("partner")
OWN_EXAMPLE = {"name": "backend (long-lived)", "expiresIn": 31536000,
               "scope": "partner:all user:all account:all transaction:all"}


@operation("GetOwnPartnerTokens", "GET", "/partners/self/tokens", tokens=PARTNER_ONLY,
           scopes=("partner:read",), responses={200: "TokenList"})
def get_own_partner_tokens(call):
    """List the calling partner's tokens (spec §4.1 rule 3: needs partner:read or partner:all)."""
    return {"tokens": models.partner_tokens(call.ctx, call.principal.partner_id)}


@operation("CreateOwnPartnerToken", "POST", "/partners/self/tokens", tokens=PARTNER_ONLY,
           scopes=("partner:update",), body={**CREATE, "required": ["expiresIn", "scope"]},
           example=OWN_EXAMPLE, responses={201: "Token"})
def create_own_partner_token(call):
    """Create a token for the calling partner; it grants only scopes the calling token holds."""
    body = call.body
    scope = models.granted_scope(call.principal, body["scope"], "partner")
    token = models.issue(call.ctx, partner_id=call.principal.partner_id, kind="partner", scope=scope,
                         expires_in=models.lifetime(body.get("expiresIn")), name=models.name_of(body.get("name")),
                         created_by=call.principal.token_id)
    return Answer(201, token)


@operation("RevokePartnerOwnToken", "DELETE", "/partners/self/tokens/{tokenId}", tokens=PARTNER_ONLY,
           scopes=("partner:update",), responses={200: "Token"})
def revoke_partner_own_token(call):
    """Revoke one of the calling partner's tokens; never the calling token itself (spec §3)."""
    return models.revoke(call.ctx, call.principal.partner_id, call.params["tokenId"], call.principal.token_id)


def child_of(call):
    return partners.get_owned(call.ctx, call.principal.partner_id, call.params["id"])


@operation("GetPartnerTokens", "GET", "/partners/{id}/tokens", tokens=PARTNER_ONLY, scopes=("partner:read",),
           responses={200: "TokenList"})
def get_partner_tokens(call):
    """List the tokens of a child partner."""
    return {"tokens": models.partner_tokens(call.ctx, child_of(call)["id"])}


@operation("CreatePartnerToken", "POST", "/partners/{id}/tokens", tokens=PARTNER_ONLY,
           scopes=("partner:create",), body=CREATE, body_required=False,
           example={"name": "on-premise installation", "expiresIn": 15768000,
                    "scope": "partner:read partner:update user:all account:all transaction:all"},
           responses={201: "Token"})
def create_partner_token(call):
    """Create a token for a child partner (default lifetime 6 months, spec §4.1 rule 2).

    A deploy token (only partner:create) may do this only for a child it created itself (spec §5 rule 4).
    """
    child = child_of(call)
    if call.principal.is_deploy_token and child["created_by"] != call.principal.token_id:
        raise not_found("partner", call.params["id"])
    body = call.body
    scope = scopes.parse(body["scope"], "partner") if "scope" in body else scopes.ROOT_SCOPE.split()
    token = models.issue(call.ctx, partner_id=child["id"], kind="partner", scope=scope,
                         expires_in=models.lifetime(body.get("expiresIn"), models.CHILD_DEFAULT_LIFETIME_S),
                         name=models.name_of(body.get("name")), created_by=call.principal.token_id)
    return Answer(201, token)


@operation("RevokePartnerToken", "DELETE", "/partners/{id}/tokens/{tokenId}", tokens=PARTNER_ONLY,
           scopes=("partner:update",), responses={200: "Token"})
def revoke_partner_token(call):
    """Revoke a token of a child partner."""
    return models.revoke(call.ctx, child_of(call)["id"], call.params["tokenId"], call.principal.token_id)
