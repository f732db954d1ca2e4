"""Sample data of the test events (spec §4.2 /testevents/...): plausible objects with errors and warnings
(spec §6, §7.4), in the shapes the lifecycle events carry, drawn from the world seed and the event id so a
replayed world sends the same bytes."""

import random

from ..account_types import models as account_types
from ..timestamps import DAY_US, SECOND_US, render
from ..worlds import derived_id

PROBLEMS = [
    ("InvalidCredentials", "The provider rejected the stored credentials; update the account."),
    ("ConsentExpired", "The authorization at the provider expired; authorize the account again."),
    ("ProviderUnavailable", "The provider did not answer; the import is retried later."),
]
NOTICES = [
    ("PartialImport", "Some transactions could not be read and are retried on the next import."),
    ("FieldDeprecated", "The field valueDate is deprecated for this account type."),
    ("SlowProvider", "The provider answered slowly; imports may take longer than usual."),
]


def issues(rng, pool, most=1):
    return [{"code": code, "message": text} for code, text in rng.sample(pool, rng.randint(0, most))]


def account(rng, world, now, user_id, type_id, with_problem=False):
    first = now - rng.randint(30, 400) * DAY_US
    return {
        "id": derived_id("sample-account", world.seed, rng.random()), "userId": user_id, "accountTypeId": type_id,
        "name": rng.choice(["Shop payments", "Marketplace", "POS"]), "credentials": {"username": "jane"},
        "isOauth": type_id == "dummy-auth", "createdAt": render(now - rng.randint(1, 30) * DAY_US),
        "updatedAt": render(now),
        "errors": [{"code": PROBLEMS[0][0], "message": PROBLEMS[0][1]}] if with_problem else [],
        "warnings": issues(rng, NOTICES),
        "statistics": {"count": rng.randint(10, 5000), "first": render(first), "last": render(now - SECOND_US)},
    }


def data_for(kind, ctx, number):
    """The `data` of the world's `number`th test notification, of `kind`: the same world seed gives the same
    data in any world. Shapes follow the lifecycle events of the accounts area (accounts, data imports,
    reports, account types)."""
    rng = random.Random(f"{ctx.world.seed}/{number}")
    seed, now = ctx.world.seed, ctx.now
    user_id = derived_id("sample-user", seed, number)
    if kind == "AccountTypeUpdated":
        state = rng.choice(["Degraded", "Outage"])
        account_type = account_types.require(ctx, "dummy")     # the real record, as GetAccountType shows it
        account_type.update(state=state, errors=[{"code": PROBLEMS[2][0], "message": PROBLEMS[2][1]}]
                            if state == "Outage" else [], warnings=[{"code": NOTICES[2][0], "message": NOTICES[2][1]}])
        return {"accountType": account_type}
    if kind == "TransactionsImported":
        acct = account(rng, ctx.world, now, user_id, "dummy-report")
        count = rng.randint(1, 250)
        import_id = derived_id("sample-import", seed, number)
        report_id = derived_id("sample-report", seed, number)
        day = now - now % DAY_US - DAY_US
        report = {"id": report_id, "accountId": acct["id"], "userId": user_id,
                  "name": f"Settlement report {render(day)[:10]}", "periodStart": render(day),
                  "periodEnd": render(day + DAY_US), "createdAt": render(now), "dataImportId": import_id,
                  "transactionCount": count, "errors": [], "warnings": issues(rng, NOTICES)}
        data_import = {"id": import_id, "accountId": acct["id"], "userId": user_id, "kind": "Scheduled",
                       "status": "Completed", "startedAt": render(now - rng.randint(5, 600) * SECOND_US),
                       "finishedAt": render(now), "from": render(now - 3600 * SECOND_US), "until": render(now),
                       "transactionCount": count, "reportIds": [report_id], "errors": [],
                       "warnings": issues(rng, NOTICES)}
        return {"account": acct, "userId": user_id, "dataImport": data_import, "report": report,
                "transactionCount": count}
    return {"account": account(rng, ctx.world, now, user_id, "dummy", with_problem=kind == "AccountUpdated"),
            "userId": user_id}
