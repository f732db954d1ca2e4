"""The import catch-up, a stage of every authenticated request (pipeline.py: `Simulator.catch_up`) and of every
clock move: bring the world's imports up to its clock, so reading at time T shows what would have happened by T,
with no sleeping threads.

It starts the polls that are due (a clock jump over many intervals becomes one catch-up import) and completes
the import runs that are due: transactions delivered, the days' settlement reports made, the account's import
progress and errors recorded, TransactionsImported emitted. Each table is written through its own area's models;
this service only orders the steps. With nothing due it costs two indexed queries.
"""

import json
from collections.abc import Iterator
from typing import Any

from flask import Flask

from ..account_types import models as account_types
from ..accounts import models as accounts
from ..context import Ctx
from ..dataimports import models as imports
from ..hooks import CatchUp
from ..providers import models as providers
from ..reports import models as reports
from ..rows import DataImportRow
from ..sandbox import Simulator
from ..timestamps import SECOND_US
from ..transactions import models as transactions
from ..users import models as users


def attach(app: Flask, sandbox: Simulator) -> None:
    sandbox.hooks.catch_up.append(CatchUp(run=catch_up_imports, due=imports_due))


def imports_due(ctx: Ctx) -> bool:
    """Whether a poll or a run is due: two indexed reads, so a request with nothing due opens no write
    transaction (and takes no world lock) for the catch-up."""
    return accounts.poll_due(ctx) or bool(imports.due(ctx, limit=1))


STEP_RUNS = 20      # import runs completed in one step (one transaction) of a catch-up


def catch_up_imports(ctx: Ctx) -> Iterator[None]:
    """Start due polls and complete due runs until nothing is due (a completed run may schedule the next).

    In steps (`Simulator.catch_up` runs each in a transaction of its own): the polls, then the due runs
    STEP_RUNS at a time, read again at each step (another catch-up of the world may have completed some
    meanwhile). The work and its order are those of one step, so the rows are the same however it is cut."""
    for _ in range(100):
        busy = start_due_polls(ctx)
        any_due = False
        while True:
            yield
            due = imports.due(ctx, limit=STEP_RUNS)
            if not due:
                break
            any_due = True
            for run in due:
                complete(ctx, run)
        if not busy and not any_due:
            return      # else the next round's polls join the step that found no run due


def start_due_polls(ctx: Ctx) -> int:
    started = 0
    for account in accounts.due_for_poll(ctx):
        if account["user_deleted_at"] is not None:     # a deleted user's accounts are no longer polled
            accounts.set_progress(ctx, account, next_import_at=None)
            continue
        if imports.running(ctx, account):
            continue
        interval = json.loads(account["options"])["intervalSeconds"] * SECOND_US
        boundary = account["next_import_at"] + (ctx.now - account["next_import_at"]) // interval * interval
        imports.start(ctx, account, "Scheduled", at=boundary)
        accounts.set_progress(ctx, account, next_import_at=boundary + interval)
        started += 1
    return started


def complete(ctx: Ctx, run: DataImportRow) -> None:
    """Finish an import at its due time: deliver its range, or fail on a provider outage or bad credentials."""
    account = accounts.reload(ctx, run["account_id"])
    if users.is_deleted(ctx, account["user_id"]):
        # Its accounts and imports are 404 now (docs/choices.md): the run ends with nothing delivered, and no
        # notification names data its partner can no longer read.
        imports.finish(ctx, run, errors=[{"code": "UserDeleted", "message": "The account's user was deleted."}],
                       warnings=[], transaction_count=0, report_ids=[])
        accounts.set_progress(ctx, account, next_import_at=None)
        return
    account_type = account_types.require(ctx, account["type_id"])
    options = json.loads(account["options"])
    errors: list[dict[str, Any]] = []
    warnings: list[dict[str, Any]] = []
    count, next_at = 0, account["next_import_at"]
    report_ids: list[str] = []
    last_report = None
    progress: dict[str, int | None] = {}
    rejected = providers.rejects(json.loads(account["credentials"]))
    if account_type["state"] == "Outage":
        errors = account_type["errors"] or [{"code": "ProviderUnavailable", "message": f"{account_type['name']} "
                                              "is unavailable; the import is retried at the next poll."}]
        next_at = next_at or run["until_at"] + options["intervalSeconds"] * SECOND_US
    elif rejected:
        errors = [{"code": rejected["code"], "message": rejected["message"]}]
        next_at = None      # the provider refuses until the credentials are updated (UpdateAccount)
    else:
        count, delivered = transactions.deliver(ctx, account, run)
        report_ids, last_report, progress["reported_through"] = reports.report_finished_days(
            ctx, account, account_type, run, delivered)
        progress["delivered"] = delivered
        if account_type["state"] == "Degraded":
            warnings = account_type["warnings"] + account_type["errors"]
        next_at = next_at or run["until_at"] + options["intervalSeconds"] * SECOND_US
    done = imports.finish(ctx, run, errors=errors, warnings=warnings, transaction_count=count,
                          report_ids=report_ids)
    accounts.set_progress(ctx, account, next_import_at=next_at, **progress)
    account = accounts.set_errors(ctx, accounts.reload(ctx, account["id"]), errors)
    report = reports.record(last_report) if last_report else None
    ctx.emit("TransactionsImported", account["partner_id"], {
        "account": accounts.record(ctx, account), "userId": account["user_id"], "dataImport": imports.record(done),
        "report": report, "transactionCount": count})
