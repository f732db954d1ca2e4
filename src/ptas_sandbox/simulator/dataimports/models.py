"""Data-import rules: each import run of an account, progressing lazily on the world clock.

An import delivers the transactions that happened before its cut-off (`until`) and completes `initialSeconds`
(first import, refresh) or `incrementalSeconds` (scheduled) after it started; after the first one, the provider
is polled every `intervalSeconds`. This module keeps the import runs (the data_imports table); the catch-up
that starts due polls and completes due runs before every operation is a service above accounts,
transactions and reports: catchup/service.py.
"""

import json
from typing import Any

from ..context import Ctx
from ..problems import not_found
from ..rows import AccountRow, DataImportRow
from ..timestamps import SECOND_US, render
from ..users import models as users

SCHEMA = """
CREATE TABLE IF NOT EXISTS data_imports (
    id TEXT PRIMARY KEY,
    world TEXT NOT NULL,
    partner_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    account_id TEXT NOT NULL,
    account_seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    due_at INTEGER NOT NULL,
    finished_at INTEGER,
    from_at INTEGER,
    until_at INTEGER NOT NULL,
    transaction_count INTEGER NOT NULL DEFAULT 0,
    report_ids TEXT NOT NULL DEFAULT '[]',
    errors TEXT NOT NULL DEFAULT '[]',
    warnings TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX IF NOT EXISTS data_imports_due ON data_imports (world, status, due_at);
CREATE INDEX IF NOT EXISTS data_imports_by_account ON data_imports (account_seq, started_at);
"""
KINDS = ("Initial", "Scheduled", "Refresh")
STATUSES = ("Running", "Completed", "Failed")


def record(row: DataImportRow) -> dict[str, Any]:
    """A data import (spec §2, §7 rule 4): its run, its range, what it brought, and its errors and warnings."""
    return {
        "id": row["id"], "accountId": row["account_id"], "userId": row["user_id"], "kind": row["kind"],
        "status": row["status"], "startedAt": render(row["started_at"]), "finishedAt": render(row["finished_at"]),
        "from": render(row["from_at"]), "until": render(row["until_at"]),
        "transactionCount": row["transaction_count"], "reportIds": json.loads(row["report_ids"]),
        "errors": json.loads(row["errors"]), "warnings": json.loads(row["warnings"]),
    }


def running(ctx: Ctx, account: AccountRow) -> DataImportRow | None:
    return ctx.store.one("SELECT * FROM data_imports WHERE account_seq = ? AND status = 'Running'",
                         (account["seq"],))


def start(ctx: Ctx, account: AccountRow, kind: str, *, at: int | None = None,
          since: int | None = None) -> DataImportRow:
    """A new import run: the first one, a scheduled poll (cut-off `at`) or a refresh from `since`."""
    options = json.loads(account["options"])
    at = ctx.now if at is None else at
    took = options["incrementalSeconds" if kind == "Scheduled" else "initialSeconds"] * SECOND_US
    if kind == "Refresh":
        since_at = since
    elif kind == "Initial":
        since_at = None
    else:
        since_at = ctx.store.one("SELECT max(until_at) AS t FROM data_imports WHERE account_seq = ? AND "
                                 "status = 'Completed'", (account["seq"],))["t"]
    import_id = ctx.new_id("dataimport")
    ctx.store.insert("data_imports", id=import_id, world=ctx.world.id, partner_id=account["partner_id"],
                     user_id=account["user_id"], account_id=account["id"], account_seq=account["seq"], kind=kind,
                     status="Running", started_at=at, due_at=at + took, from_at=since_at, until_at=at)
    return ctx.store.one("SELECT * FROM data_imports WHERE id = ?", (import_id,))


def due(ctx: Ctx, limit: int) -> list[DataImportRow]:
    """The first `limit` of the world's running imports whose time has come, in the order they finish."""
    return ctx.store.all("SELECT * FROM data_imports WHERE world = ? AND status = 'Running' AND due_at <= ? "
                         "ORDER BY due_at, id LIMIT ?", (ctx.world.id, ctx.now, limit))


def finish(ctx: Ctx, run: DataImportRow, *, errors: list[dict[str, Any]], warnings: list[dict[str, Any]],
           transaction_count: int, report_ids: list[str]) -> DataImportRow:
    """Close an import run at its due time: Failed with errors, Completed otherwise; returns the closed row."""
    ctx.store.update("data_imports", {"id": run["id"]}, status="Failed" if errors else "Completed",
                     finished_at=run["due_at"], transaction_count=transaction_count,
                     report_ids=json.dumps(report_ids), errors=json.dumps(errors), warnings=json.dumps(warnings))
    return ctx.store.one("SELECT * FROM data_imports WHERE id = ?", (run["id"],))


def forget_account(ctx: Ctx, account: AccountRow) -> None:
    ctx.store.execute("DELETE FROM data_imports WHERE account_seq = ?", (account["seq"],))


def get_owned(ctx, principal, import_id):
    row = ctx.store.one("SELECT * FROM data_imports WHERE id = ? AND world = ? AND partner_id = ?",
                        (import_id, ctx.world.id, principal.partner_id))
    if row is None or (principal.kind == "user" and row["user_id"] != principal.user_id) or \
            users.is_deleted(ctx, row["user_id"]):
        raise not_found("data import", import_id)
    return row


def search(ctx, principal, account_id=None, user_id=None):
    return users.of_caller(ctx, principal, "data_imports", "t.started_at, t.id", user_id=user_id,
                           account_id=account_id)
