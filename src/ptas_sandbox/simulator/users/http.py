"""HTTP layer of the user operations: users of the calling partner and their tokens."""

from ..operations import ANY_TOKEN, PARTNER_ONLY, USER_ONLY, Answer, component, operation, ref
from ..partners import models as partners
from ..problems import not_found
from ..tokens.http import create_request
from . import models

USER = component("User", {
    "type": "object",
    "properties": {"id": {"type": "string"}, "name": {"type": "string"}, "email": {"type": ["string", "null"]},
                   "createdAt": {"type": "string", "format": "date-time"},
                   "updatedAt": {"type": "string", "format": "date-time"},
                   "deletedAt": {"type": "string", "format": "date-time"}},
    "required": ["id", "name", "email"],
})
STATISTICS = {"type": "object", "description": "GetUser only: the user's accounts and their transactions",
              "properties": {"accounts": {"type": "integer"}, "transactions": {"type": "integer"},
                             "first": {"type": ["string", "null"], "format": "date-time"},
                             "last": {"type": ["string", "null"], "format": "date-time"}},
              "required": ["accounts", "transactions", "first", "last"]}
component("UserWithStatistics", {"allOf": [USER, {"type": "object", "properties": {"statistics": STATISTICS},
                                                  "required": ["statistics"]}]})
component("UserCreated", {"allOf": [USER, {"type": "object", "properties": {"token": ref("Token")},
                                           "required": ["token"]}]})
component("UserList", {"type": "object", "properties": {"users": {"type": "array", "items": USER}},
                       "required": ["users"]})
USER_TOKEN = create_request("user")
# Spec §8 lets a partner choose any lifetime; a user token renewing itself keeps to the partner's setting (§5 rule 6).
USER_TOKEN["properties"]["expiresIn"]["description"] = (
    "lifetime in seconds (default: the partner's userTokenExpirySeconds); a user token may ask for at most that")
FIELDS = {"name": partners.NAME_FIELD, "email": partners.EMAIL_FIELD}


@operation("CreateUser", "POST", "/users", tokens=PARTNER_ONLY, scopes=("user:create",),
           body={"type": "object", "properties": {**FIELDS, "scope": USER_TOKEN["properties"]["scope"]}},
           body_required=False,
           example={"name": "Jane's Bakery", "email": "jane@bakery.example", "scope": "account:all transaction:all"},
           responses={201: "UserCreated"})
def create_user(call):
    """Create a user; the response carries the user id and its first user token."""
    partner = partners.require(call.ctx, call.principal.partner_id)
    return Answer(201, models.create(call.ctx, partner, call.body))


@operation("GetUsers", "GET", "/users", tokens=PARTNER_ONLY, scopes=("user:read",),
           query={"name": {"type": "string"}, "email": {"type": "string"}, "search": {"type": "string"}},
           responses={200: "UserList"})
def get_users(call):
    """List the partner's users, deleted ones with deletedAt; filter by name, email or a search text."""
    q = call.query
    rows = models.search(call.ctx, call.principal.partner_id, q.get("name"), q.get("email"), q.get("search"))
    return {"users": [models.record(r) for r in rows]}


@operation("GetUser", "GET", "/users/{id}", tokens=PARTNER_ONLY, scopes=("user:read",),
           responses={200: "UserWithStatistics"})
def get_user(call):
    """Read one user of the partner, with its statistics (spec §1 capability 2)."""
    user = models.record(models.get_owned(call.ctx, call.principal.partner_id, call.params["id"]))
    return {**user, "statistics": models.statistics(call.ctx, user["id"])}


@operation("UpdateUser", "PUT", "/users/{id}", tokens=PARTNER_ONLY, scopes=("user:update",),
           body={"type": "object", "properties": FIELDS}, example={"name": "Jane's Bakery & Café"},
           responses={200: "User"})
def update_user(call):
    """Update a user's name or e-mail."""
    return models.record(models.update(call.ctx, call.principal.partner_id, call.params["id"], call.body))


@operation("DeleteUser", "DELETE", "/users/{id}", tokens=PARTNER_ONLY, scopes=("user:delete",),
           responses={204: None})
def delete_user(call):
    """Delete a user: it stays listed with deletedAt, its tokens stop working."""
    models.delete(call.ctx, call.principal.partner_id, call.params["id"])
    return Answer(204)


@operation("CreateUserToken", "POST", "/users/{id}/tokens", tokens=ANY_TOKEN,
           scopes={"partner": ("user:create", "user.token:create"), "user": ("user.token:create",)},
           body=USER_TOKEN, body_required=False, example={"name": "refresh", "expiresIn": 86400},
           responses={201: "Token"})
def create_user_token(call):
    """A new token for a user (spec §4.2 note 2): by its partner, or by the user itself."""
    partner = partners.require(call.ctx, call.principal.partner_id)
    if call.principal.kind == "user" and call.params["id"] != call.principal.user_id:
        raise not_found("user", call.params["id"])
    user = models.get_owned(call.ctx, partner["id"], call.params["id"], live=True)
    return Answer(201, models.create_token(call.ctx, call.principal, partner, user, call.body))


@operation("CreateOwnUserToken", "POST", "/users/self/tokens", tokens=USER_ONLY,
           scopes=("user.token:create",), body=USER_TOKEN, body_required=False,
           example={"name": "refresh", "expiresIn": 86400}, responses={201: "Token"})
def create_own_user_token(call):
    """A new token for the calling user (spec §4.2 note 3)."""
    partner = partners.require(call.ctx, call.principal.partner_id)
    user = models.get_owned(call.ctx, partner["id"], call.principal.user_id, live=True)
    return Answer(201, models.create_token(call.ctx, call.principal, partner, user, call.body))


@operation("DeleteChildPartner", "DELETE", "/partners/{id}", tokens=PARTNER_ONLY, scopes=("partner:delete",),
           responses={204: None}, area="partners")
def delete_child_partner(call):
    """Delete a child partner with its tokens and users."""
    child = partners.get_owned(call.ctx, call.principal.partner_id, call.params["id"])
    models.delete_partner(call.ctx, child["id"])
    return Answer(204)
