"""Account rules: credentials checked against the account type's accountFields, one account per provider per
user, ownership (a user sees its own accounts, a partner those of its users)."""

import base64
import binascii
import json
from typing import Any

from ..account_types import models as account_types
from ..auth import Principal
from ..context import Ctx
from ..dataimports import models as imports
from ..oauth import models as oauth
from ..problems import BadRequest, Conflict
from ..providers import models as providers
from ..reports import models as reports
from ..rows import AccountRow
from ..timestamps import render
from ..users import models as users

SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    world TEXT NOT NULL,
    partner_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    type_id TEXT NOT NULL,
    name TEXT NOT NULL,
    credentials TEXT NOT NULL,
    auth TEXT,
    options TEXT NOT NULL,
    errors TEXT NOT NULL DEFAULT '[]',
    warnings TEXT NOT NULL DEFAULT '[]',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    delivered INTEGER NOT NULL DEFAULT 0,
    reported_through INTEGER,
    next_import_at INTEGER,
    UNIQUE (world, user_id, type_id)
);
CREATE INDEX IF NOT EXISTS accounts_by_partner ON accounts (world, partner_id, user_id, created_at);
CREATE INDEX IF NOT EXISTS accounts_due ON accounts (world, next_import_at) WHERE next_import_at IS NOT NULL;
"""

SHOWN = ("Text", "Number", "Choice")     # credential values GetAccount shows; secrets and files never leave


class InvalidCredentials(BadRequest):
    slug, title = "invalid-credentials", "The credentials do not fit the account type"


def credential_problems(account_type, values):
    """(cleaned values, problems, warnings) for credentials against the type's accountFields: missing required,
    null, mistyped, a Choice outside its options, a File that is not base64 or too large (callers that merge
    changes drop a null first: there it clears the field). A property the type does not
    name is ignored with a warning, not refused: spec §9 (2.9.0, webhooks 1.2.0) removed additionalProperties."""
    fields = {f["name"]: f for f in account_type["accountFields"]}
    problems, warnings, cleaned = [], [], {}
    if not isinstance(values, dict):
        return {}, [{"field": None, "code": "NotAnObject", "message": "`credentials` must be an object."}], []
    for name in values:
        if name not in fields:
            warnings.append({"field": name, "code": "UnknownField",
                             "message": f"{name!r} is not a field of account type {account_type['id']!r}; ignored."})
    for name, field in fields.items():
        kind, value = field["Type"], values.get(name)
        if kind == "Auth":
            if name in values:
                problems.append({"field": name, "code": "UseAuthReference",
                                 "message": f"{name!r} is completed by OAuth2: send `authReference` instead."})
            continue
        if value is None and name in values:    # as CreateAccount's body schema refuses it: validate agrees
            problems.append({"field": name, "code": "InvalidValue",
                             "message": f"{name!r} is null: give a value, or leave it out."})
            continue
        if value is None:
            if field["isRequired"]:
                problems.append({"field": name, "code": "Required", "message": f"{name!r} is required."})
            continue
        problem = value_problem(field, value)
        if problem:
            problems.append({"field": name, "code": "InvalidValue", "message": problem})
            continue
        cleaned[name] = value
        if field["isDeprecated"]:
            warnings.append({"code": "DeprecatedField",
                             "message": f"{name!r} is deprecated: {field['deprecationReason']}"})
    return cleaned, problems, warnings


def value_problem(field, value):
    name, kind = field["name"], field["Type"]
    if kind in ("Text", "Secret", "Choice", "File") and not isinstance(value, str):
        return f"{name!r} must be a string."
    if kind in ("Text", "Secret") and (not value.strip() or len(value) > 2000):
        return f"{name!r} must be a non-blank string of at most 2000 characters."
    if kind == "Number" and (isinstance(value, bool) or not isinstance(value, (int, float))):
        return f"{name!r} must be a number."
    if kind == "Choice" and value not in field["options"]:
        return f"{name!r} must be one of {', '.join(field['options'])}."
    if kind == "File":
        try:
            content = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return f"{name!r} must be the file's content as a base64 string."
        if not content:
            return f"{name!r} is an empty file."
        if len(content) > field["maxSizeBytes"]:
            return f"{name!r} is {len(content)} bytes; the limit is {field['maxSizeBytes']}."
    return None


def checked_credentials(account_type, values):
    cleaned, problems, warnings = credential_problems(account_type, values)
    if problems:
        raise InvalidCredentials(f"{len(problems)} problem(s) with the credentials: {problems[0]['message']}",
                                 errors=problems)
    return cleaned, warnings


def redeem(ctx, reference, *, partner_id, user_id, account_type_id, account_id=None):
    """Complete the OAuth2 flow (spec §1): the authReference must be one the OAuth2 step issued."""
    return oauth.redeem(ctx, reference, partner_id=partner_id, user_id=user_id, account_type_id=account_type_id,
                        account_id=account_id)


def record(ctx: Ctx, row: AccountRow) -> dict[str, Any]:
    """The account of spec §2: errors, warnings and the statistics object (count, first, last)."""
    account_type = account_types.catalogue()[row["type_id"]]
    kinds = {f["name"]: f["Type"] for f in account_type["accountFields"]}
    values = json.loads(row["credentials"])
    return {
        "id": row["id"],
        "userId": row["user_id"],
        "accountTypeId": row["type_id"],
        "name": row["name"],
        "credentials": {k: v for k, v in values.items() if kinds.get(k) in SHOWN},
        "isOauth": account_types.uses_oauth(account_type),
        "createdAt": render(row["created_at"]),
        "updatedAt": render(row["updated_at"]),
        "errors": json.loads(row["errors"]),
        "warnings": json.loads(row["warnings"]),
        "statistics": providers.statistics(ctx.world.seed, row),
    }


def changed_record(ctx, row):
    """CreateAccount and UpdateAccount answers (spec §9 2.8.2): `warningDetails` has the structured warnings;
    the deprecated `warnings` there keeps its old form, the messages only."""
    body = record(ctx, row)
    body["warningDetails"] = body["warnings"]
    body["warnings"] = [w["message"] for w in body["warningDetails"]]
    return body


def get(ctx: Ctx, account_id: str) -> AccountRow | None:
    return ctx.store.one("SELECT * FROM accounts WHERE id = ? AND world = ?", (account_id, ctx.world.id))


def reload(ctx: Ctx, account_id: str) -> AccountRow:
    """An account this request holds (an import run's, one it just changed), as the store has it now."""
    row = get(ctx, account_id)
    if row is None:      # DeleteAccount forgets the account's runs with it, so no run outlives its account
        raise LookupError(f"account {account_id} is gone while it is being worked on")
    return row


def poll_due(ctx) -> bool:
    """Whether a poll of the world is due: the accounts table alone (the catch-up remembers it until that table is
    written, requeststate.memory), so a user made does not make it read again. A deleted user's due account
    counts: the catch-up then clears its next poll (catchup.service.start_due_polls)."""
    return ctx.store.one("SELECT 1 AS due FROM accounts WHERE world = ? AND next_import_at <= ? LIMIT 1",
                         (ctx.world.id, ctx.now)) is not None


def due_for_poll(ctx):
    """The world's accounts whose next scheduled poll is due, with their user's `user_deleted_at`."""
    return ctx.store.all("SELECT a.*, u.deleted_at AS user_deleted_at FROM accounts a JOIN users u ON "
                         "u.id = a.user_id WHERE a.world = ? AND a.next_import_at <= ? ORDER BY a.seq",
                         (ctx.world.id, ctx.now))


def get_owned(ctx: Ctx, principal: Principal, account_id: str) -> AccountRow:
    """An account the caller may act on: its own (user token) or one of its users' (partner token); 404 else."""
    return users.get_owned_row(ctx, principal, "accounts", account_id, "account")


def search(ctx, principal, user_id=None, type_id=None):
    return users.of_caller(ctx, principal, "accounts", "t.created_at, t.seq", user_id=user_id, type_id=type_id)


def create(ctx, *, partner_id, user_id, values, options=None, preauthorized=False):
    """CreateAccount: check type, credentials and (OAuth2 types) the authReference, then start the first import.

    `values` is the CreateAccount body. Scenarios size the provider with `options` (perDay, historyDays,
    historyTransactions) and start OAuth2 accounts already authorized (`preauthorized`).
    Returns the account as CreateAccount answers it.
    """
    account_type = account_types.for_new_account(ctx, values.get("accountTypeId"))
    cleaned, warnings = checked_credentials(account_type, values.get("credentials") or {})
    if ctx.store.one("SELECT 1 FROM accounts WHERE world = ? AND user_id = ? AND type_id = ?",
                     (ctx.world.id, user_id, account_type["id"])):
        raise Conflict(f"The user already has an account of type {account_type['id']!r} (one per provider).")
    auth = None
    if account_types.uses_oauth(account_type) and preauthorized:
        auth = {"preauthorized": True}
    elif account_types.uses_oauth(account_type):
        if not values.get("authReference"):
            raise BadRequest(f"Account type {account_type['id']!r} uses OAuth2: give the `authReference` from "
                             "CreateOauthRedirectUrl.")
        auth = redeem(ctx, values["authReference"], partner_id=partner_id, user_id=user_id,
                      account_type_id=account_type["id"])
    elif values.get("authReference"):
        raise BadRequest(f"Account type {account_type['id']!r} does not use OAuth2: drop `authReference`.")
    account_id = ctx.new_id("account")
    options = {**account_types.provider(account_type["id"]), **(options or {})}
    ctx.store.insert("accounts", id=account_id, world=ctx.world.id, partner_id=partner_id, user_id=user_id,
                     type_id=account_type["id"], name=(values.get("name") or account_type["name"]).strip(),
                     credentials=json.dumps(cleaned), auth=json.dumps(auth) if auth is not None else None,
                     options=json.dumps(options), warnings=json.dumps(warnings), created_at=ctx.now,
                     updated_at=ctx.now)
    row = reload(ctx, account_id)
    imports.start(ctx, row, "Initial")
    ctx.emit("AccountCreated", partner_id, {"account": record(ctx, row), "userId": user_id})
    return changed_record(ctx, row)


def update(ctx, row, values):
    """UpdateAccount: rename, change credentials (merged over the stored ones and checked whole) or, for
    OAuth2 types, reconnect with a fresh authReference. New credentials clear credential errors and, when
    imports had stopped on them, start a new import."""
    account_type = account_types.require(ctx, row["type_id"])
    columns = {}
    if values.get("name") is not None:
        if not values["name"].strip():
            raise BadRequest("`name` must not be blank.")
        columns["name"] = values["name"].strip()
    reconnected = False
    if values.get("credentials") is not None:
        if not isinstance(values["credentials"], dict):
            raise InvalidCredentials("`credentials` must be an object.")
        merged = {**json.loads(row["credentials"]), **values["credentials"]}
        cleaned, warnings = checked_credentials(account_type, {k: v for k, v in merged.items() if v is not None})
        columns.update(credentials=json.dumps(cleaned), warnings=json.dumps(warnings))
        reconnected = True
    if values.get("authReference"):
        if not account_types.uses_oauth(account_type):
            raise BadRequest(f"Account type {row['type_id']!r} does not use OAuth2: drop `authReference`.")
        auth = redeem(ctx, values["authReference"], partner_id=row["partner_id"], user_id=row["user_id"],
                      account_type_id=row["type_id"], account_id=row["id"])
        columns["auth"] = json.dumps(auth)
        reconnected = True
    if reconnected:
        columns["errors"] = "[]"
    if columns:
        ctx.store.update("accounts", {"id": row["id"]}, updated_at=ctx.now, **columns)
        row = reload(ctx, row["id"])
        if reconnected and row["next_import_at"] is None and not imports.running(ctx, row):
            imports.start(ctx, row, "Initial" if row["delivered"] == 0 else "Scheduled")
        ctx.emit("AccountUpdated", row["partner_id"], {"account": record(ctx, row), "userId": row["user_id"]})
    return changed_record(ctx, row)


def delete(ctx, row):
    """DeleteAccount: the account, its transactions, reports and data imports go; a second delete is 404."""
    body = record(ctx, row)
    reports.forget_account(ctx, row)
    imports.forget_account(ctx, row)
    ctx.store.execute("DELETE FROM accounts WHERE seq = ?", (row["seq"],))
    ctx.emit("AccountDeleted", row["partner_id"], {"account": body, "userId": row["user_id"]})


def validate(account_type, values):
    """The credentials validation operations: well-formed, and accepted by the (dummy) provider."""
    cleaned, problems, warnings = credential_problems(account_type, values)
    if not problems:
        rejected = providers.rejects(cleaned)
        if rejected:
            problems.append(rejected)
    return {"isValid": not problems, "errors": problems, "warnings": warnings}


def set_errors(ctx: Ctx, row: AccountRow, errors: list[dict[str, Any]],
               warnings: list[dict[str, Any]] | None = None) -> AccountRow:
    """Record a problem found by an import (or its end) on the account; AccountUpdated when anything changed."""
    new_errors = json.dumps(errors)
    new_warnings = row["warnings"] if warnings is None else json.dumps(warnings)
    if new_errors == row["errors"] and new_warnings == row["warnings"]:
        return row
    ctx.store.update("accounts", {"seq": row["seq"]}, errors=new_errors, warnings=new_warnings, updated_at=ctx.now)
    row = reload(ctx, row["id"])
    ctx.emit("AccountUpdated", row["partner_id"], {"account": record(ctx, row), "userId": row["user_id"]})
    return row


def set_progress(ctx: Ctx, row: AccountRow, **columns: int | None) -> None:
    """What the import catch-up records on an account: `next_import_at` (the next poll, None: none),
    `delivered` (transactions delivered so far), `reported_through` (the first day not yet reported)."""
    unknown = set(columns) - {"next_import_at", "delivered", "reported_through"}
    if unknown:
        raise ValueError(f"not import progress: {sorted(unknown)}")
    ctx.store.update("accounts", {"seq": row["seq"]}, **columns)
