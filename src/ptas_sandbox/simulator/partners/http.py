"""HTTP layer of the partner operations: own settings (UpdatePartner) and child partners.

DeleteChildPartner is in users/http.py: deleting a partner deletes its users, and users sit above partners.
"""

from ..operations import PARTNER_ONLY, Answer, component, operation
from . import models

# No additionalProperties: false, though an unknown key is refused (models.styling names it): the schema is also
# the response's, and spec §9.2 lets every response grow new properties (UI_SETTINGS_IN closes it for requests).
STYLING = {"type": "object", "description": "the hosted pages' look",
           "properties": {key: {"type": "string", "maxLength": 120, "pattern": shape.pattern,
                                "description": f"e.g. {models.EXAMPLES[shape]}",
                                "x-problem": f"`{key}` must be like {models.EXAMPLES[shape]}."}
                          for key, shape in models.STYLING.items()}}
UI_SETTINGS = {"type": "object", "properties": {
    "styling": STYLING,
    "frameAncestors": {"type": "array", "maxItems": 20, "items": {"type": "string", "pattern": models.ORIGIN.pattern},
                       "description": "origins that may show the hosted pages in a frame (CSP frame-ancestors); "
                                      "none by default"}}}
# What a request may send: the styling properties only (partners.models refuses others); a response's schema stays
# open (spec §9 rule 2).
UI_SETTINGS_IN = {**UI_SETTINGS, "properties": {**UI_SETTINGS["properties"],
                                                "styling": {**STYLING, "additionalProperties": False}}}
PARTNER = component("Partner", {
    "type": "object",
    "properties": {
        "id": {"type": "string"}, "name": {"type": "string"}, "email": {"type": ["string", "null"]},
        "redirectUrls": {"type": "array", "items": models.URL_FIELD},
        "userTokenExpirySeconds": {"type": "integer"},
        "uiSettings": UI_SETTINGS,
        "createdAt": {"type": "string", "format": "date-time"},
        "updatedAt": {"type": "string", "format": "date-time"},
    },
    "required": ["id", "name", "email", "redirectUrls", "userTokenExpirySeconds", "uiSettings"],
})
component("PartnerList", {"type": "object", "properties": {"partners": {"type": "array", "items": PARTNER}},
                          "required": ["partners"]})
SETTINGS = {
    "type": "object",
    "properties": {
        "name": models.NAME_FIELD,
        "email": models.EMAIL_FIELD,
        "redirectUrls": {"type": "array", "items": models.URL_FIELD, "maxItems": 20},
        "userTokenExpirySeconds": {"type": "integer", "minimum": 1, "maximum": 3_153_600_000},
        "uiSettings": UI_SETTINGS_IN,
    },
}
EXAMPLE = {"name": "Acme Shop Software", "email": "integrations@acme.example",
           "redirectUrls": ["https://acme.example/oauth/done"], "userTokenExpirySeconds": 86400,
           "uiSettings": {"styling": {"primaryColor": "#0b5fff", "fontFamily": "Inter, sans-serif"}}}


@operation("CreatePartner", "POST", "/partners", tokens=PARTNER_ONLY, scopes=("partner:create",),
           body=SETTINGS, body_required=False, example={**EXAMPLE, "name": "Acme Store Berlin"},
           responses={201: "Partner"})
def create_partner(call):
    """Create a child partner of the calling partner."""
    child = models.create(call.ctx, call.body, parent_id=call.principal.partner_id,
                          created_by=call.principal.token_id)
    return Answer(201, models.record(child))


@operation("GetPartners", "GET", "/partners", tokens=PARTNER_ONLY, scopes=("partner:read",),
           responses={200: "PartnerList"})
def get_partners(call):
    """List the calling partner's child partners."""
    return {"partners": [models.record(r) for r in models.children(call.ctx, call.principal.partner_id)]}


@operation("GetOwnPartner", "GET", "/partners/self", tokens=PARTNER_ONLY, scopes=("partner:read",),
           responses={200: "Partner"})
def get_own_partner(call):
    """Read the calling partner's own settings."""
    return models.record(models.require(call.ctx, call.principal.partner_id))


@operation("UpdatePartner", "PUT", "/partners/self", tokens=PARTNER_ONLY, scopes=("partner:update",),
           body=SETTINGS, example=EXAMPLE, responses={200: "Partner"})
def update_partner(call):
    """Update the calling partner's own settings; settings left out of the body keep their value."""
    return models.record(models.update(call.ctx, call.principal.partner_id, call.body))


@operation("GetPartner", "GET", "/partners/{id}", tokens=PARTNER_ONLY, scopes=("partner:read",),
           responses={200: "Partner"})
def get_partner(call):
    """Read a child partner."""
    return models.record(models.get_owned(call.ctx, call.principal.partner_id, call.params["id"]))


@operation("UpdateChildPartner", "PUT", "/partners/{id}", tokens=PARTNER_ONLY, scopes=("partner:update",),
           body=SETTINGS, example={"name": "Acme Store Berlin-Mitte"}, responses={200: "Partner"})
def update_child_partner(call):
    """Update a child partner's settings, its name included (spec §9, 2.1.4)."""
    child = models.get_owned(call.ctx, call.principal.partner_id, call.params["id"])
    return models.record(models.update(call.ctx, child["id"], call.body))
