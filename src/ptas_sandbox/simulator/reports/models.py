"""Report rules: types with hasPspReports settle each day in a report; its transactions link to it. No Flask here.

A day's report appears with the first import whose cut-off is past the end of that day; the transactions of the
day then carry its reportId (stored as the day number, so reportId search is a range of the keyset index).
"""

import json
from typing import Any

from ..context import Ctx
from ..problems import not_found
from ..rows import AccountRow, DataImportRow, ReportRow
from ..timestamps import DAY_US, render
from ..worlds import derived_id

SCHEMA = """
CREATE TABLE IF NOT EXISTS reports (
    id TEXT PRIMARY KEY,
    world TEXT NOT NULL,
    partner_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    account_id TEXT NOT NULL,
    account_seq INTEGER NOT NULL,
    day INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    data_import_id TEXT NOT NULL,
    transaction_count INTEGER NOT NULL,
    errors TEXT NOT NULL DEFAULT '[]',
    warnings TEXT NOT NULL DEFAULT '[]',
    UNIQUE (account_seq, day)
);
"""


def report_id(account_id, day):
    return derived_id("report", account_id, day)


def record(row: ReportRow) -> dict[str, Any]:
    """A settlement report (spec §2, §7 rule 4) with its period and errors and warnings."""
    return {"id": row["id"], "accountId": row["account_id"], "userId": row["user_id"],
            "name": f"Settlement report {render(row['day'] * DAY_US)[:10]}",
            "periodStart": render(row["day"] * DAY_US), "periodEnd": render((row["day"] + 1) * DAY_US),
            "createdAt": render(row["created_at"]), "dataImportId": row["data_import_id"],
            "transactionCount": row["transaction_count"], "errors": json.loads(row["errors"]),
            "warnings": json.loads(row["warnings"])}


def get(ctx: Ctx, ident: str) -> ReportRow | None:
    return ctx.store.one("SELECT * FROM reports WHERE id = ? AND world = ?", (ident, ctx.world.id))


def report_finished_days(ctx: Ctx, account: AccountRow, account_type: dict[str, Any],
                         run: DataImportRow) -> tuple[list[tuple[int, str]], int | None]:
    """Reports for every whole day before the run's cut-off not yet reported: [(day, report id)], and the
    account's new `reported_through` (the first day still to report). The caller links the days' transactions."""
    if not account_type["hasPspReports"]:
        return [], account["reported_through"]
    first = account["reported_through"]
    if first is None:
        row = ctx.store.one("SELECT min(created_at) AS t FROM transactions WHERE account = ?", (account["seq"],))
        if row["t"] is None:
            return [], None
        first = row["t"] // DAY_US
    last = run["until_at"] // DAY_US          # days before this one are over
    warnings = account_type["warnings"] + account_type["errors"] if account_type["state"] == "Degraded" else []
    made = []
    for day in range(first, last):
        bounds = (account["seq"], day * DAY_US, (day + 1) * DAY_US)
        count = ctx.store.one("SELECT count(*) AS c FROM transactions WHERE account = ? AND created_at >= ? AND "
                              "created_at < ?", bounds)["c"]
        if not count:
            continue
        ident = report_id(account["id"], day)
        ctx.store.insert("reports", id=ident, world=ctx.world.id, partner_id=account["partner_id"],
                         user_id=account["user_id"], account_id=account["id"], account_seq=account["seq"], day=day,
                         created_at=run["due_at"], data_import_id=run["id"], transaction_count=count,
                         errors="[]", warnings=json.dumps(warnings))
        made.append((day, ident))
    return made, last if last > first else account["reported_through"]


def get_owned(ctx, principal, ident):
    row = get(ctx, ident)
    if row is None or row["partner_id"] != principal.partner_id or \
            (principal.kind == "user" and row["user_id"] != principal.user_id):
        raise not_found("report", ident)
    return row


def of_account(ctx, account):
    return ctx.store.all("SELECT * FROM reports WHERE account_seq = ? ORDER BY day", (account["seq"],))


def forget_account(ctx: Ctx, account: AccountRow) -> None:
    ctx.store.execute("DELETE FROM reports WHERE account_seq = ?", (account["seq"],))
