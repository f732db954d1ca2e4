"""Account-type rules: the catalogue of catalogue/account_types.json, overlaid per world by provider states.

A provider outage set through the control API changes a type's `state`, `errors` and `warnings` in one world
only (an override row); every live partner of that world gets an AccountTypeUpdated event.
"""

import json
from functools import lru_cache

from ptas_sandbox.data import data

from ..operations import NOT_BLANK
from ..problems import BadRequest, Forbidden, not_found

SCHEMA = """
CREATE TABLE IF NOT EXISTS account_type_states (
    world TEXT NOT NULL,
    type_id TEXT NOT NULL,
    state TEXT NOT NULL,
    errors TEXT NOT NULL,
    warnings TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (world, type_id)
);
"""

# Spec §3: the values of `state` are not shown; the simulator's choice (docs/design.md).
STATES = ("Operational", "Degraded", "Outage", "Discontinued")
CLOSED_TO_NEW_ACCOUNTS = ("Discontinued",)
FIELD_TYPES = ("Text", "Secret", "Number", "Choice", "File", "Auth")
PUBLIC = ("id", "name", "accountFields", "transactionFields", "helpUrls", "hasPspReports", "state", "errors",
          "warnings", "isDummy")


class UnknownAccountType(BadRequest):
    slug, title = "unknown-account-type", "Unknown account type"


class AccountTypeNotAvailable(Forbidden):
    slug, title = "account-type-not-available", "The account type does not take new accounts"


@lru_cache(maxsize=1)
def catalogue():
    """{type id: catalogue entry} with the transaction field sets resolved; read once per process."""
    raw = json.loads(data("catalogue", "account_types.json").read_text())
    sets = raw["transactionFieldSets"]
    entries = {}
    for entry in raw["accountTypes"]:
        entry = dict(entry)
        if isinstance(entry["transactionFields"], str):
            entry["transactionFields"] = sets[entry["transactionFields"]]
        entries[entry["id"]] = entry
    return entries


def provider(type_id):
    """How the dummy provider behind a type delivers data (not part of the public record)."""
    return catalogue()[type_id]["provider"]


def _override(ctx, type_id):
    return ctx.store.one("SELECT * FROM account_type_states WHERE world = ? AND type_id = ?", (ctx.world.id, type_id))


@lru_cache(maxsize=None)
def _public_text(type_id):
    """A type's public record as JSON text: parsing it gives each caller a copy of its own (a caller may change
    what it gets) in a tenth of a deep copy's time, which every import and every new account pays."""
    return json.dumps({k: catalogue()[type_id][k] for k in PUBLIC})


def record(entry, override=None):
    body = json.loads(_public_text(entry["id"]))
    if override is not None:
        body.update(state=override["state"], errors=json.loads(override["errors"]),
                    warnings=json.loads(override["warnings"]))
    return body


def require(ctx, type_id):
    """GetAccountType's record in the caller's world; an unknown id is 404."""
    entry = catalogue().get(type_id)
    if entry is None:
        raise not_found("account type", type_id)
    return record(entry, _override(ctx, type_id))


def all(ctx):
    overrides = {r["type_id"]: r for r in ctx.store.all("SELECT * FROM account_type_states WHERE world = ?",
                                                           (ctx.world.id,))}
    return [record(e, overrides.get(i)) for i, e in catalogue().items()]


def for_new_account(ctx, type_id):
    """The type a CreateAccount names: unknown is a bad body (400), not a missing resource."""
    if type_id not in catalogue():
        raise UnknownAccountType(f"`accountTypeId` {type_id!r} is not an account type; GetAccountTypes lists them.")
    account_type = require(ctx, type_id)
    if account_type["state"] in CLOSED_TO_NEW_ACCOUNTS:
        raise AccountTypeNotAvailable(f"Account type {type_id!r} is {account_type['state']}: it takes no new accounts.")
    return account_type


def set_state(ctx, type_id, values):
    """A provider outage (or its end) in this world: state, errors and warnings; AccountTypeUpdated to each
    live partner of the world, so one world's outage never shows in another."""
    current = require(ctx, type_id)
    state = values.get("state", current["state"])
    if state not in STATES:
        raise BadRequest(f"`state` must be one of {', '.join(STATES)}.")
    errors = values.get("errors", current["errors"])
    warnings = values.get("warnings", current["warnings"])
    ctx.store.execute(
        "INSERT INTO account_type_states (world, type_id, state, errors, warnings, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (world, type_id) DO UPDATE SET state = excluded.state, "
        "errors = excluded.errors, warnings = excluded.warnings, updated_at = excluded.updated_at",
        (ctx.world.id, type_id, state, json.dumps(errors), json.dumps(warnings), ctx.now))
    updated = require(ctx, type_id)
    for partner in ctx.store.all("SELECT id FROM partners WHERE world = ? AND deleted_at IS NULL ORDER BY rowid",
                                 (ctx.world.id,)):
        ctx.emit("AccountTypeUpdated", partner["id"], {"accountType": updated})
    return updated


BASE64 = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{4}|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2}==)$"


def credentials_schema(entry):
    """JSON Schema of the `credentials` an account of this type takes: the accountFields as a document rule
    (Auth fields are completed by OAuth2, not sent). File values are base64; its length bounds the file size."""
    properties, required = {}, []
    for field in entry["accountFields"]:
        kind = field["Type"]
        if kind == "Auth":
            continue
        if kind in ("Text", "Secret"):
            schema = {"type": "string", "minLength": 1, "maxLength": 2000, "pattern": NOT_BLANK}
        elif kind == "Number":
            schema = {"type": "number"}
        elif kind == "Choice":
            schema = {"type": "string", "enum": field["options"]}
        else:
            schema = {"type": "string", "contentEncoding": "base64", "pattern": BASE64,
                      "maxLength": -(-field["maxSizeBytes"] // 3) * 4, "contentMediaType": field["accept"][0]}
        schema["description"] = field["label"] + (f" (deprecated: {field['deprecationReason']})"
                                                  if field["isDeprecated"] else "")
        if field["isDeprecated"]:
            schema["deprecated"] = True
        properties[field["name"]] = schema
        if field["isRequired"]:
            required.append(field["name"])
    # No additionalProperties restriction (spec §9 rule 2): a property the type does not name is ignored.
    return {"type": "object", "properties": properties, "required": required}


def uses_oauth(entry):
    """Spec §1: a type uses OAuth2 when one of its accountFields has Type Auth."""
    return any(f["Type"] == "Auth" for f in entry["accountFields"])
