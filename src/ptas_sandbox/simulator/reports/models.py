"""Report rules: types with hasPspReports settle each day in a report; its transactions link to it.

A day's report appears with the first import whose cut-off is past the end of that day (days without
transactions have none); the transactions of the day then carry its reportId. What a report says is arithmetic on
the account's schedule, so the store keeps one row per import that settled days (the days [first_day, end_day)),
not one per day: a century of catch-up costs one row. A report id carries its day in front, like a transaction
id, so GetReport and the reportId search find the day without a lookup table.
"""

import hashlib
import json
from collections.abc import Iterator
from typing import Any

from ..context import Ctx
from ..problems import not_found
from ..providers import models as providers
from ..rows import AccountRow, DataImportRow, ReportRow, SettlementRow
from ..timestamps import DAY_US, render
from ..users import models as users

SCHEMA = """
CREATE TABLE IF NOT EXISTS reports (
    world TEXT NOT NULL,
    partner_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    account_id TEXT NOT NULL,
    account_seq INTEGER NOT NULL,
    first_day INTEGER NOT NULL,
    end_day INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    data_import_id TEXT NOT NULL,
    errors TEXT NOT NULL DEFAULT '[]',
    warnings TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (account_seq, first_day)
);
CREATE INDEX IF NOT EXISTS reports_by_day ON reports (world, first_day);
"""
# A state of an older version kept a row per report day: each becomes a row settling that one day.
UPGRADE = {"reports": {"first_day": "day", "end_day": "day + 1"}}
DAY_BITS = 1 << 32


def report_id(account_id: str, day: int) -> str:
    """`{day:08x}-xxxx-xxxx-xxxx-xxxxxxxxxxxx`: the day in front, then a digest of the account and day, so an id
    is only valid for its account."""
    h = hashlib.sha256(f"report/{account_id}/{day}".encode()).hexdigest()
    return f"{day % DAY_BITS:08x}-{h[:4]}-{h[4:8]}-{h[8:12]}-{h[12:24]}"


def day_of(ident: str) -> int | None:
    """The day a report id names (not yet checked against an account), or None when it is not one."""
    try:
        day = int(ident[:8], 16) if isinstance(ident, str) and len(ident) == 36 and ident[8] == "-" else None
    except ValueError:
        return None
    return None if day is None else day - DAY_BITS if day >= DAY_BITS // 2 else day


def _count(when: providers.Schedule, day: int) -> int:
    return when.count_before((day + 1) * DAY_US) - when.count_before(day * DAY_US)


def _report(row: SettlementRow, day: int, count: int) -> ReportRow:
    return {"id": report_id(row["account_id"], day), "world": row["world"], "partner_id": row["partner_id"],
            "user_id": row["user_id"], "account_id": row["account_id"], "account_seq": row["account_seq"],
            "day": day, "created_at": row["created_at"], "data_import_id": row["data_import_id"],
            "transaction_count": count, "errors": row["errors"], "warnings": row["warnings"]}


def _reports(ctx: Ctx, row: SettlementRow, first: int, end: int) -> Iterator[ReportRow]:
    """The reports of the days [first, end) ∩ the row's days, in day order."""
    when = providers.schedule(ctx.world.seed, row["account_id"], *_schedule_args(ctx, row))
    for day in range(max(first, row["first_day"]), min(end, row["end_day"])):
        count = _count(when, day)
        if count:
            yield _report(row, day, count)


def _schedule_args(ctx: Ctx, row: SettlementRow) -> tuple[int, dict[str, Any]]:
    account = ctx.store.one("SELECT created_at, options FROM accounts WHERE seq = ?", (row["account_seq"],))
    return account["created_at"], json.loads(account["options"])


def record(row: ReportRow) -> dict[str, Any]:
    """A settlement report (spec §2, §7 rule 4) with its period and errors and warnings."""
    return {"id": row["id"], "accountId": row["account_id"], "userId": row["user_id"],
            "name": f"Settlement report {render(row['day'] * DAY_US)[:10]}",
            "periodStart": render(row["day"] * DAY_US), "periodEnd": render((row["day"] + 1) * DAY_US),
            "createdAt": render(row["created_at"]), "dataImportId": row["data_import_id"],
            "transactionCount": row["transaction_count"], "errors": json.loads(row["errors"]),
            "warnings": json.loads(row["warnings"])}


def get(ctx: Ctx, ident: str) -> ReportRow | None:
    """The report with this id in the caller's world, if there is one."""
    day = day_of(ident)
    if day is None:
        return None
    for row in ctx.store.all("SELECT * FROM reports WHERE world = ? AND first_day <= ? AND end_day > ?",
                             (ctx.world.id, day, day)):
        if report_id(row["account_id"], day) == ident:
            return next(_reports(ctx, row, day, day + 1), None)
    return None


def report_finished_days(ctx: Ctx, account: AccountRow, account_type: dict[str, Any], run: DataImportRow,
                         delivered: int) -> tuple[list[str], ReportRow | None, int | None]:
    """The reports of every whole day before the run's cut-off not yet reported, now that the account has
    `delivered` transactions: (their ids, the last of them, the account's new `reported_through`: the first day
    still to report). One row, however many days."""
    if not account_type["hasPspReports"] or not delivered:
        return [], None, account["reported_through"]
    when = providers.schedule_of(ctx.world.seed, account)
    first = account["reported_through"]
    if first is None:
        first = when.at(0) // DAY_US
    last = run["until_at"] // DAY_US          # days before this one are over
    if last <= first:
        return [], None, account["reported_through"]
    warnings = account_type["warnings"] + account_type["errors"] if account_type["state"] == "Degraded" else []
    row: SettlementRow = {
        "world": ctx.world.id, "partner_id": account["partner_id"], "user_id": account["user_id"],
        "account_id": account["id"], "account_seq": account["seq"], "first_day": first, "end_day": last,
        "created_at": run["due_at"], "data_import_id": run["id"], "errors": "[]", "warnings": json.dumps(warnings)}
    days = [day for day in range(first, last) if _count(when, day)]
    if not days:
        return [], None, last
    ctx.store.insert("reports", **row)
    return [report_id(account["id"], day) for day in days], _report(row, days[-1], _count(when, days[-1])), last


def days_of(ctx: Ctx, account: AccountRow, first: int, last: int) -> set[int]:
    """The days in [first, last] for which the account has a report (a page's transactions span few)."""
    rows = ctx.store.all("SELECT first_day, end_day FROM reports WHERE account_seq = ? AND first_day <= ? "
                         "AND end_day > ?", (account["seq"], last, first))
    return {day for r in rows for day in range(max(first, r["first_day"]), min(last + 1, r["end_day"]))}


def get_owned(ctx, principal, ident):
    """A report of the caller's partner (for a user token, its own) whose user is not deleted: a deleted user's
    account is 404, and so are its reports (users.of_caller); else 404."""
    row = get(ctx, ident)
    if row is None or row["partner_id"] != principal.partner_id or \
            (principal.kind == "user" and row["user_id"] != principal.user_id) or users.is_deleted(ctx, row["user_id"]):
        raise not_found("report", ident)
    return row


def of_account(ctx: Ctx, account: AccountRow) -> list[ReportRow]:
    rows = ctx.store.all("SELECT * FROM reports WHERE account_seq = ? ORDER BY first_day", (account["seq"],))
    return [report for row in rows for report in _reports(ctx, row, row["first_day"], row["end_day"])]


def forget_account(ctx: Ctx, account: AccountRow) -> None:
    ctx.store.execute("DELETE FROM reports WHERE account_seq = ?", (account["seq"],))
