"""Data-import rules: each import run of an account, progressing lazily on the world clock. No Flask here.

An import delivers the transactions that happened before its cut-off (`until`) and completes `initialSeconds`
(first import, refresh) or `incrementalSeconds` (scheduled) after it started; after the first one, the provider
is polled every `intervalSeconds`. `catch_up(ctx)` runs before every operation of the world and after every clock
move: it starts the polls that are due (a clock jump over many intervals becomes one catch-up import) and
completes due imports (materializing transactions, reports, TransactionsImported). With nothing due it costs
two indexed queries.
"""

import json

from ..account_types import models as account_types
from ..problems import not_found
from ..providers import models as providers
from ..reports import models as reports
from ..timestamps import SECOND, render
from ..transactions import models as transactions

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


def record(row):
    """A data import (spec §2, §7 rule 4): its run, its range, what it brought, and its errors and warnings."""
    return {
        "id": row["id"], "accountId": row["account_id"], "userId": row["user_id"], "kind": row["kind"],
        "status": row["status"], "startedAt": render(row["started_at"]), "finishedAt": render(row["finished_at"]),
        "from": render(row["from_at"]), "until": render(row["until_at"]),
        "transactionCount": row["transaction_count"], "reportIds": json.loads(row["report_ids"]),
        "errors": json.loads(row["errors"]), "warnings": json.loads(row["warnings"]),
    }


def running(ctx, account):
    return ctx.store.one("SELECT * FROM data_imports WHERE account_seq = ? AND status = 'Running'",
                         (account["seq"],))


def start(ctx, account, kind, *, at=None, since=None):
    """A new import run: the first one, a scheduled poll (cut-off `at`) or a refresh from `since`."""
    options = json.loads(account["options"])
    at = ctx.now if at is None else at
    took = options["incrementalSeconds" if kind == "Scheduled" else "initialSeconds"] * SECOND
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


def catch_up(ctx):
    """Bring the world's imports up to its clock (the ticker registered in service.py)."""
    for _ in range(100):
        busy = start_due_polls(ctx)
        due = ctx.store.all("SELECT * FROM data_imports WHERE world = ? AND status = 'Running' AND due_at <= ? "
                            "ORDER BY due_at, id", (ctx.world.id, ctx.now))
        for row in due:
            complete(ctx, row)
        if not busy and not due:
            return


def start_due_polls(ctx):
    started = 0
    for account in ctx.store.all("SELECT a.*, u.deleted_at AS user_deleted_at FROM accounts a JOIN users u ON "
                                 "u.id = a.user_id WHERE a.world = ? AND a.next_import_at <= ? ORDER BY a.seq",
                                 (ctx.world.id, ctx.now)):
        if account["user_deleted_at"] is not None:     # a deleted user's accounts are no longer polled
            ctx.store.update("accounts", {"seq": account["seq"]}, next_import_at=None)
            continue
        if running(ctx, account):
            continue
        interval = json.loads(account["options"])["intervalSeconds"] * SECOND
        boundary = account["next_import_at"] + (ctx.now - account["next_import_at"]) // interval * interval
        start(ctx, account, "Scheduled", at=boundary)
        ctx.store.update("accounts", {"seq": account["seq"]}, next_import_at=boundary + interval)
        started += 1
    return started


def complete(ctx, run):
    """Finish an import at its due time: deliver its range, or fail on a provider outage or bad credentials."""
    from ..accounts import models as accounts
    account = ctx.store.one("SELECT * FROM accounts WHERE seq = ?", (run["account_seq"],))
    account_type = account_types.get(ctx, account["type_id"])
    options = json.loads(account["options"])
    finished = run["due_at"]
    errors, warnings, count, report_ids, next_at = [], [], 0, [], account["next_import_at"]
    rejected = providers.rejects(json.loads(account["credentials"]))
    if account_type["state"] == "Outage":
        errors = account_type["errors"] or [{"code": "ProviderUnavailable", "message": f"{account_type['name']} "
                                              "is unavailable; the import is retried at the next poll."}]
        next_at = next_at or run["until_at"] + options["intervalSeconds"] * SECOND
    elif rejected:
        errors = [{"code": rejected["code"], "message": rejected["message"]}]
        next_at = None      # the provider refuses until the credentials are updated (UpdateAccount)
    else:
        count = transactions.deliver(ctx, account, run)
        report_ids = reports.report_finished_days(ctx, account, account_type, run)
        if account_type["state"] == "Degraded":
            warnings = account_type["warnings"] + account_type["errors"]
        next_at = next_at or run["until_at"] + options["intervalSeconds"] * SECOND
    ctx.store.update("data_imports", {"id": run["id"]}, status="Failed" if errors else "Completed",
                     finished_at=finished, transaction_count=count, report_ids=json.dumps(report_ids),
                     errors=json.dumps(errors), warnings=json.dumps(warnings))
    ctx.store.update("accounts", {"seq": account["seq"]}, next_import_at=next_at)
    account = accounts.set_errors(ctx, accounts.load(ctx, account["id"]), errors)
    done = ctx.store.one("SELECT * FROM data_imports WHERE id = ?", (run["id"],))
    report = reports.record(reports.load(ctx, report_ids[-1])) if report_ids else None
    ctx.emit("TransactionsImported", account["partner_id"], {
        "account": accounts.record(ctx, account), "userId": account["user_id"], "dataImport": record(done),
        "report": report, "transactionCount": count})


def visible(ctx, principal, import_id):
    row = ctx.store.one("SELECT * FROM data_imports WHERE id = ? AND world = ? AND partner_id = ?",
                        (import_id, ctx.world.id, principal.partner_id))
    if row is None or (principal.kind == "user" and row["user_id"] != principal.user_id) or \
            ctx.store.one("SELECT deleted_at FROM users WHERE id = ?", (row["user_id"],))["deleted_at"]:
        raise not_found("data import", import_id)
    return row


def search(ctx, principal, account_id=None, user_id=None):
    from ..accounts import models as accounts
    return accounts.of_caller(ctx, principal, "data_imports", "t.started_at, t.id", user_id=user_id,
                              account_id=account_id)
