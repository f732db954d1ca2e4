"""HTTP layer of the accounts: create, read, update, delete, refresh, and the credentials validation methods."""

from ..account_types import models as account_types
from ..dataimports import models as imports
from ..operations import ANY_TOKEN, NOT_BLANK, Answer, component, operation, ref
from ..problems import BadRequest, Conflict
from ..timestamps import parse
from ..users import models as users
from . import models

STATUS = {"type": "array", "items": ref("StatusMessage")}
ACCOUNT_PROPERTIES = {
    "id": {"type": "string"}, "userId": {"type": "string"}, "accountTypeId": {"type": "string"},
    "name": {"type": "string"},
    "credentials": {"type": "object", "description": "Text, Number and Choice values; secrets and files are "
                                                     "never returned"},
    "isOauth": {"type": "boolean"},
    "createdAt": {"type": "string", "format": "date-time"}, "updatedAt": {"type": "string", "format": "date-time"},
    "errors": STATUS, "warnings": STATUS,
    "statistics": {"type": "object", "properties": {
        "count": {"type": "integer"}, "first": {"type": ["string", "null"], "format": "date-time"},
        "last": {"type": ["string", "null"], "format": "date-time"}}, "required": ["count", "first", "last"]}}
ACCOUNT = component("Account", {"type": "object", "properties": ACCOUNT_PROPERTIES,
                                "required": ["id", "userId", "accountTypeId", "errors", "warnings", "statistics"]})
component("AccountChanged", {
    "type": "object", "description": "CreateAccount and UpdateAccount answers (spec §9 2.8.2).",
    "properties": {**ACCOUNT_PROPERTIES,
                   "warnings": {"type": "array", "items": {"type": "string"}, "deprecated": True,
                                "description": "Deprecated: the warning messages only; read warningDetails"},
                   "warningDetails": STATUS},
    "required": ["id", "userId", "accountTypeId", "errors", "warnings", "warningDetails", "statistics"]})
component("AccountList", {"type": "object", "properties": {"accounts": {"type": "array", "items": ACCOUNT}},
                          "required": ["accounts"]})
component("CredentialsValidation", {"type": "object", "properties": {
    "isValid": {"type": "boolean"},
    "errors": {"type": "array", "items": {"type": "object", "properties": {
        "field": {"type": ["string", "null"]}, "code": {"type": "string"}, "message": {"type": "string"}}}},
    "warnings": STATUS}, "required": ["isValid", "errors", "warnings"]})
CREDENTIALS = {"type": "object", "description": "accountFields name -> value; File values as base64 strings"}
NAME = {"type": "string", "minLength": 1, "maxLength": 200, "pattern": NOT_BLANK}


def create_request():
    """CreateAccount's body; `credentials` follow the named type's accountFields (one if/then per type)."""
    rules = []
    for type_id, entry in account_types.catalogue().items():
        oauth = account_types.uses_oauth(entry)
        credentials = account_types.credentials_schema(entry)
        then = {"properties": {"credentials": credentials},
                "required": ["authReference"] if oauth else (["credentials"] if credentials["required"] else [])}
        if not oauth:
            then["not"] = {"required": ["authReference"]}
        rules.append({"if": {"properties": {"accountTypeId": {"const": type_id}}}, "then": then})
    return {"type": "object", "required": ["accountTypeId"], "allOf": rules, "properties": {
        "accountTypeId": {"type": "string", "enum": list(account_types.catalogue())},
        "userId": {"type": "string", "minLength": 1,
                   "description": "required with a partner token: the user who owns the account"},
        "name": NAME, "credentials": CREDENTIALS,
        "authReference": {"type": "string", "minLength": 1,
                          "description": "OAuth2 types: from CreateOauthRedirectUrl"}}}


CREATE = create_request()
UPDATE = {"type": "object", "properties": {
    "name": NAME,
    "credentials": {**CREDENTIALS, "description": "merged over the stored credentials, then checked whole"},
    "authReference": {"type": "string", "description": "OAuth2 types: from CreateAccountOauthRedirectUrl"}}}
DUMMY = {"accountTypeId": "dummy", "name": "My dummy shop",
         "credentials": {"username": "jane", "password": "s3cret"}}


@operation("CreateAccount", "POST", "/accounts", tokens=ANY_TOKEN, scopes=("account:create",), body=CREATE,
           example=DUMMY, responses={201: "AccountChanged"})
def create_account(call):
    """Connect a payment-provider account for a user; the first import starts at once."""
    user_id = users.owner(call.ctx, call.principal, call.body.get("userId"))
    return Answer(201, models.create(call.ctx, partner_id=call.principal.partner_id, user_id=user_id,
                                    values=call.body))


@operation("GetAccounts", "GET", "/accounts", tokens=ANY_TOKEN, scopes=("account:read",),
           query={"userId": {"type": "string", "description": "partner tokens: only this user's accounts"},
                  "accountTypeId": {"type": "string"}}, responses={200: "AccountList"})
def get_accounts(call):
    """The caller's accounts: a user's own, or those of the partner's users (optionally one user's)."""
    rows = models.search(call.ctx, call.principal, call.query.get("userId"), call.query.get("accountTypeId"))
    return {"accounts": [models.record(call.ctx, r) for r in rows]}


@operation("GetAccount", "GET", "/accounts/{id}", tokens=ANY_TOKEN, scopes=("account:read",),
           responses={200: "Account"})
def get_account(call):
    """One account with its errors, warnings and transaction statistics (count, first, last)."""
    return models.record(call.ctx, models.get_owned(call.ctx, call.principal, call.params["id"]))


@operation("UpdateAccount", "PUT", "/accounts/{id}", tokens=ANY_TOKEN, scopes=("account:update",), body=UPDATE,
           example={"name": "Dummy shop (renamed)", "credentials": {"password": "n3w-s3cret"}},
           responses={200: "AccountChanged"})
def update_account(call):
    """Rename an account or change its credentials (OAuth2 types: reconnect with a new authReference)."""
    row = models.get_owned(call.ctx, call.principal, call.params["id"])
    return models.update(call.ctx, row, call.body)


@operation("DeleteAccount", "DELETE", "/accounts/{id}", tokens=ANY_TOKEN, scopes=("account:delete",),
           responses={204: None})
def delete_account(call):
    """Delete an account with its transactions, reports and data imports."""
    models.delete(call.ctx, models.get_owned(call.ctx, call.principal, call.params["id"]))
    return Answer(204)


@operation("TriggerAccountRefresh", "POST", "/accounts/{id}/refresh", tokens=ANY_TOKEN,
           scopes=("account:update",), body={"type": "object", "required": ["startDate"], "properties": {
               "startDate": {"type": "string", "format": "date-time",
                             "description": "re-read transactions from this date (not in the future)"}}},
           example={"startDate": "2026-01-01T00:00:00Z"}, responses={202: "DataImport"})
def trigger_account_refresh(call):
    """Re-read the account's transactions from a start date, as a new data import."""
    row = models.get_owned(call.ctx, call.principal, call.params["id"])
    try:
        since = parse(call.body["startDate"])
    except ValueError as error:
        raise BadRequest(f"`startDate` is not a date: {error}.") from None
    if since > call.ctx.now:
        raise BadRequest("`startDate` is in the future: the provider has nothing to re-read there yet.")
    if imports.running(call.ctx, row):
        raise Conflict("An import of this account is running; refresh when it has finished.")
    return Answer(202, imports.record(imports.start(call.ctx, row, "Refresh", since=since)))


@operation("ValidateAccountCredentials", "POST", "/accounttypes/{id}/validate", tokens=ANY_TOKEN,
           scopes=("account:create", "account:update"), body={
               "type": "object", "required": ["credentials"], "properties": {"credentials": CREDENTIALS}},
           example={"credentials": {"username": "jane", "password": "s3cret"}},
           responses={200: "CredentialsValidation"})
def validate_account_credentials(call):
    """Check credentials for an account type before creating an account: form and provider acceptance.

    Any well-formed question gets 200: problems are the answer (`isValid` false, `errors`), not an error."""
    account_type = account_types.require(call.ctx, call.params["id"])
    return models.validate(account_type, call.body["credentials"])


@operation("ValidateExistingAccountCredentials", "POST", "/accounts/{id}/validate", tokens=ANY_TOKEN,
           scopes=("account:read", "account:update"), body={"type": "object", "properties": {
               "credentials": {**CREDENTIALS, "description": "optional changes, merged over the stored ones"}}},
           body_required=False, example={"credentials": {"password": "n3w-s3cret"}},
           responses={200: "CredentialsValidation"})
def validate_existing_account_credentials(call):
    """Check an account's stored credentials (with optional changes) against its provider, changing nothing."""
    import json
    row = models.get_owned(call.ctx, call.principal, call.params["id"])
    changes = call.body.get("credentials") or {}
    if not isinstance(changes, dict):
        raise BadRequest("`credentials` must be an object.")
    merged = {**json.loads(row["credentials"]), **changes}
    return models.validate(account_types.require(call.ctx, row["type_id"]),
                           {k: v for k, v in merged.items() if v is not None})
