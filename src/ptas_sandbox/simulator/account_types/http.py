"""HTTP layer of the account types: the catalogue any valid token may read, and the control API's outage switch."""

from ..operations import ANY_TOKEN, WORLD_AUTH, component, operation
from . import models

MESSAGE = {"type": "object", "description": "One entry of an `errors` or `warnings` array (spec §7 rule 4).",
           "properties": {"code": {"type": "string"}, "message": {"type": "string"}}, "required": ["code", "message"]}
PROBLEM_ITEM = component("StatusMessage", MESSAGE)
ACCOUNT_FIELD = component("AccountField", {
    "type": "object", "description": "One credential parameter of an account type; build the form from these.",
    "properties": {
        "name": {"type": "string"}, "label": {"type": "string"},
        "Type": {"type": "string", "enum": list(models.FIELD_TYPES)},
        "isRequired": {"type": "boolean"}, "isDeprecated": {"type": "boolean"},
        "deprecationReason": {"type": ["string", "null"]}, "description": {"type": ["string", "null"]},
        "options": {"type": "array", "items": {"type": "string"}, "description": "Choice fields only"},
        "maxSizeBytes": {"type": "integer", "description": "File fields only"},
        "accept": {"type": "array", "items": {"type": "string"}, "description": "File fields only: MIME types"}},
    "required": ["name", "label", "Type", "isRequired", "isDeprecated", "deprecationReason"]})
TRANSACTION_FIELD = component("TransactionField", {
    "type": "object",
    "properties": {"name": {"type": "string"}, "label": {"type": "string"}, "type": {"type": "string"},
                   "isDeprecated": {"type": "boolean"}, "deprecationReason": {"type": ["string", "null"]},
                   "mappedTo": {"type": ["string", "null"], "description": "the fixed transaction field it fills"}},
    "required": ["name", "label", "type", "isDeprecated", "deprecationReason", "mappedTo"]})
STATUS = {"type": "array", "items": PROBLEM_ITEM}
ACCOUNT_TYPE = component("AccountType", {
    "type": "object",
    "properties": {
        "id": {"type": "string"}, "name": {"type": "string"},
        "accountFields": {"type": "array", "items": ACCOUNT_FIELD},
        "transactionFields": {"type": "array", "items": TRANSACTION_FIELD},
        "helpUrls": {"type": "array", "items": {"type": "object", "properties": {
            "label": {"type": "string"}, "url": {"type": "string", "format": "uri"}}}},
        "hasPspReports": {"type": "boolean"},
        "state": {"type": "string", "enum": list(models.STATES)}, "errors": STATUS, "warnings": STATUS,
        "isDummy": {"type": "boolean"}},
    "required": list(models.PUBLIC)})
component("AccountTypeList", {"type": "object", "properties": {
    "accountTypes": {"type": "array", "items": ACCOUNT_TYPE}}, "required": ["accountTypes"]})


@operation("GetAccountTypes", "GET", "/accounttypes", tokens=ANY_TOKEN, responses={200: "AccountTypeList"})
def get_account_types(call):
    """Every account type with the metadata to build an account-creation form (any valid token)."""
    return {"accountTypes": models.all(call.ctx)}


@operation("GetAccountType", "GET", "/accounttypes/{id}", tokens=ANY_TOKEN, responses={200: "AccountType"})
def get_account_type(call):
    """One account type: accountFields, transactionFields, helpUrls and the provider's current state."""
    return models.require(call.ctx, call.params["id"])


@operation("SandboxSetAccountTypeState", "POST", "/_sandbox/accounttypes/{id}", tokens=WORLD_AUTH, control=True,
           body={"type": "object", "minProperties": 1, "additionalProperties": False, "properties": {
               "state": {"type": "string", "enum": list(models.STATES)},
               "errors": {"type": "array", "items": MESSAGE}, "warnings": {"type": "array", "items": MESSAGE}}},
           example={"state": "Outage", "errors": [{"code": "ProviderUnavailable",
                                                   "message": "The provider's API is down."}], "warnings": []},
           responses={200: "AccountType"})
def set_account_type_state(call):
    """Simulate a provider outage (or end one) in the caller's world; its partners get AccountTypeUpdated."""
    return models.set_state(call.ctx, call.params["id"], call.body)
